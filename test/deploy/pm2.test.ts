import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULTS } from "../../src/config/schema.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { eventually } from "../helpers/eventually.js";
import { jsonLines } from "../helpers/json-lines.js";
import { spawnNode } from "../helpers/process.js";

const root = resolve(import.meta.dirname, "../..");
const require = createRequire(import.meta.url);

type Pm2App = {
  name: string;
  script: string;
  args: string;
  cwd: string;
  interpreter?: string;
  exec_mode: string;
  instances: number;
  kill_timeout: number;
  autorestart: boolean;
  min_uptime: number;
  max_restarts: number;
  exp_backoff_restart_delay: number;
  stop_exit_codes?: number[];
  time?: boolean;
  merge_logs?: boolean;
  log_date_format?: string;
  log_type?: string;
  env?: Record<string, string>;
  [key: string]: unknown;
};

const ecosystem = require(join(root, "ecosystem.config.cjs")) as { apps: Pm2App[] };
const app = ecosystem.apps[0] as Pm2App;

describe("ecosystem.config.cjs", () => {
  test("default: one hl-deadman app, fork mode, one instance, the built CLI's run", () => {
    expect(ecosystem.apps).toHaveLength(1);
    expect(app.name).toBe("hl-deadman");
    expect(app.exec_mode).toBe("fork");
    expect(app.instances).toBe(1);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    expect(app.script).toBe(pkg.bin["hl-deadman"]);
    expect(app.cwd).toBe(root);
    const args = app.args.split(/\s+/);
    expect(args[0]).toBe("run");
    expect(args[args.indexOf("--config") + 1]).toMatch(/\.json$/);
  });

  test("behavior: kill_timeout well above the daemon's shutdown bound (pm2's 1.6 s default is too short)", () => {
    expect(app.kill_timeout).toBeGreaterThanOrEqual(2 * DEFAULTS.shutdownTimeout);
    expect(app.kill_timeout).toBeGreaterThanOrEqual(DEFAULTS.shutdownTimeout + 10_000);
    // SIGINT, pm2's default stop signal, is what the daemon gets (no message-based shutdown).
    expect(app.shutdown_with_message).not.toBe(true);
  });

  test("behavior: restarts with back-off, gives up on a crash loop, never restarts a config error (78)", () => {
    expect(app.autorestart).toBe(true);
    expect(app.min_uptime).toBeGreaterThanOrEqual(1000);
    expect(app.max_restarts).toBeGreaterThan(0);
    expect(app.exp_backoff_restart_delay).toBeGreaterThan(0);
    expect(app.stop_exit_codes).toContain(78);
  });

  test("behavior: keeps pino's JSON lines: no pm2 timestamp prefix, no pm2 JSON wrapping", () => {
    expect(app.time).toBe(false);
    expect(app.log_date_format).toBeUndefined();
    expect(app.log_type).toBeUndefined();
    expect(app.merge_logs).toBe(true);
  });

  test("behavior: no key in the file; the key comes from the environment or a key file", () => {
    const text = readFileSync(join(root, "ecosystem.config.cjs"), "utf8");
    expect(text).not.toMatch(/0x[0-9a-fA-F]{64}/);
    expect(app.env?.HL_PRIVATE_KEY).toBeUndefined();
    expect(JSON.stringify(app)).not.toMatch(/private.?key"?\s*:/i);
    expect(text).toMatch(/HL_PRIVATE_KEY/);
    expect(text).toMatch(/--key-file|HL_KEY_FILE/);
  });
});

// ---------------------------------------------------------------- the real CLI, stopped the way pm2 stops it

const cli = join(root, app.script);
describe("pm2 stop: SIGINT to the real CLI", () => {
  let sim: SimulatorHandle;
  let dir: string;
  const wallet = Wallet.createRandom();
  const user = wallet.address.toLowerCase();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hl-deadman-pm2-"));
    sim = await startSimulator({
      users: [
        {
          address: user,
          orders: [{ coin: "BTC", side: "B", limitPx: "50000", sz: "0.1" }],
        },
      ],
    });
  });
  afterAll(async () => {
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("default: SIGINT removes the schedule, logs shutdown.removed and exits 0 well within kill_timeout", async () => {
    const configFile = join(dir, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify(
        { interval: "1s", deadline: "10s", requestTimeout: "1s", health: "off", exposureInterval: 0 },
        null,
        2,
      ),
    );
    // The ecosystem file's own script, args, cwd and env; only the config path points at the test's file.
    const args = app.args.split(/\s+/);
    args[args.indexOf("--config") + 1] = configFile;
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("HL_")) env[k] = v;
    Object.assign(env, app.env, {
      HL_PRIVATE_KEY: wallet.privateKey,
      HL_API_URL: sim.apiUrl,
      HL_STATE_DIR: join(dir, "state"),
    });
    delete env.CREDENTIALS_DIRECTORY;

    const out = spawnNode([cli, ...args], { cwd: app.cwd, env });
    try {
      await eventually(
        () => sim.state.getSchedule(user) !== null && /"event":"heartbeat.ok"/.test(out.stdout()),
        {
          timeoutMs: 10_000,
          what: () => `no heartbeat.ok; stdout:\n${out.stdout()}\nstderr:\n${out.stderr()}`,
        },
      );
      const armed = sim.state.getSchedule(user);
      expect(armed).toBeGreaterThan(Date.now());

      const stoppedAt = Date.now();
      out.kill("SIGINT");
      const { code } = await out.exitWithin(app.kill_timeout);
      const elapsed = Date.now() - stoppedAt;

      expect(code, `stderr:\n${out.stderr()}`).toBe(0);
      expect(elapsed).toBeLessThan(app.kill_timeout);
      expect(elapsed).toBeLessThanOrEqual(DEFAULTS.shutdownTimeout + 1000);
      expect(sim.state.getSchedule(user)).toBeNull();
      // A removal cancels nothing: the engine's order is still there.
      expect(sim.state.getOpenOrders(user)).toHaveLength(1);
      // Every stdout line is one of pino's JSON objects: what pm2 (time: false) writes to its log file as is.
      const removed = jsonLines(out.stdout()).find((e) => e.event === "shutdown.removed");
      expect(String(removed?.account).toLowerCase()).toBe(user);
      expect(out.stdout() + out.stderr()).not.toContain(wallet.privateKey.slice(2));
    } finally {
      out.kill("SIGKILL");
    }
  });
});
