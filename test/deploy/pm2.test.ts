import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
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
  node_args?: string[];
  exec_mode: string;
  instances: number;
  kill_timeout: number;
  autorestart: boolean;
  min_uptime: number;
  max_restarts: number;
  exp_backoff_restart_delay?: number;
  restart_delay?: number;
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

  test("behavior: restarts a crash at once, gives up on a crash loop, a config error (78) ends errored, not stopped", () => {
    expect(app.autorestart).toBe(true);
    expect(app.min_uptime).toBeGreaterThanOrEqual(1000);
    expect(app.max_restarts).toBeGreaterThan(0);
    // Either delay makes pm2 show "waiting restart" after an exit it will never restart (the real-pm2 test below).
    expect(app.exp_backoff_restart_delay).toBeUndefined();
    expect(app.restart_delay).toBeUndefined();
    // A configuration error must not look like a clean stop: no stop_exit_codes, so it ends "errored" (below).
    expect(app.stop_exit_codes ?? []).not.toContain(78);
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

    // pm2 puts node_args before the script.
    const out = spawnNode([...(app.node_args ?? []), cli, ...args], { cwd: app.cwd, env });
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

// ---------------------------------------------------------------- under real pm2 (the devDependency)

/** pm2's own CLI from node_modules; a missing one fails with the install command (never a silent skip). */
function pm2Cli(): string {
  try {
    return require.resolve("pm2/bin/pm2");
  } catch {
    throw new Error("pm2 is not installed: run `npm ci` (pm2 is an exact-pinned devDependency)");
  }
}

type Pm2Process = {
  name: string;
  pid: number;
  pm2_env: { status: string; exit_code?: number; restart_time: number; unstable_restarts: number };
};

describe("under pm2: a configuration error ends the app errored with exit 78", () => {
  const run = promisify(execFile);
  let home: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const pm2 = (...args: string[]) =>
    run(process.execPath, [pm2Cli(), ...args], { env, timeout: 30_000, maxBuffer: 16 << 20 });

  beforeAll(() => {
    // A private pm2 daemon: its own PM2_HOME in a temp dir (socket, pid file, logs), never the user's ~/.pm2.
    home = mkdtempSync(join(tmpdir(), "hl-deadman-pm2home-"));
    dir = mkdtempSync(join(tmpdir(), "hl-deadman-pm2app-"));
    env = { PATH: process.env.PATH, HOME: dir, PM2_HOME: home, PM2_DISCRETE_MODE: "true" };
  });
  afterAll(async () => {
    try {
      await pm2("kill");
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** Starts `apps` (the ecosystem's app with overrides) and polls `pm2 jlist` until each has left "online". */
  async function startAndWait(apps: Pm2App[]): Promise<Map<string, Pm2Process>> {
    const appFile = join(dir, `ecosystem-${apps[0]!.name}.config.cjs`);
    writeFileSync(appFile, `module.exports = ${JSON.stringify({ apps })};\n`);
    await pm2("start", appFile);
    const seen = new Map<string, Pm2Process>();
    await eventually(
      async () => {
        const { stdout } = await pm2("jlist");
        for (const p of JSON.parse(stdout) as Pm2Process[]) seen.set(p.name, p);
        return apps.every((a) => {
          const status = seen.get(a.name)?.pm2_env.status;
          return status === "errored" || status === "stopped";
        });
      },
      {
        timeoutMs: 45_000,
        everyMs: 250,
        what: () =>
          `pm2 still shows ${JSON.stringify([...seen.values()].map((p) => [p.name, p.pm2_env.status, p.pm2_env.exit_code]))}`,
      },
    );
    return seen;
  }

  test("behavior: key file mode 0644 -> exit 78, ends errored (not stopped like a clean stop), no process left", async () => {
    const keyFile = join(dir, "key");
    writeFileSync(keyFile, `${Wallet.createRandom().privateKey}\n`);
    chmodSync(keyFile, 0o644);
    const configFile = join(dir, "config.json");
    writeFileSync(configFile, JSON.stringify({ keyFile, health: "off", exposureInterval: 0 }, null, 2));
    // The ecosystem file's app as it is; only the config path, the name, the logs and the state directory are the
    // test's.
    const args = app.args.split(/\s+/);
    args[args.indexOf("--config") + 1] = configFile;
    const asShipped: Pm2App = {
      ...app,
      name: `hl-deadman-test-${process.pid}`,
      args: args.join(" "),
      out_file: join(dir, "shipped.out.log"),
      error_file: join(dir, "shipped.err.log"),
      env: { ...app.env, HL_STATE_DIR: join(dir, "state") },
    };
    const seen = await startAndWait([asShipped]);
    // Between two of its quick restarts pm2 may show the app "stopped" for a moment: wait for the end state it
    // settles in (no process and no restart still planned), then read it (a clean-stop label would never settle
    // as "errored", so the assertions below still fail on it).
    await eventually(
      async () => {
        const { stdout } = await pm2("jlist");
        for (const p of JSON.parse(stdout) as Pm2Process[]) seen.set(p.name, p);
        const p = seen.get(asShipped.name);
        return p?.pm2_env.status === "errored" && p.pid === 0;
      },
      {
        timeoutMs: 30_000,
        everyMs: 250,
        what: () => `pm2 shows ${JSON.stringify(seen.get(asShipped.name)?.pm2_env.status)}`,
      },
    ).catch(() => undefined);

    const p = seen.get(asShipped.name)!;
    const what = JSON.stringify({
      status: p.pm2_env.status,
      exit: p.pm2_env.exit_code,
      restarts: p.pm2_env.restart_time,
      pid: p.pid,
    });
    expect(p.pm2_env.exit_code, what).toBe(78);
    // "errored": not online, not "stopped" (a clean `pm2 stop`), not "waiting restart" (a restart delay): pm2 gave
    // up after max_restarts unstable starts, each refused before anything was armed, and no process is left.
    expect(p.pm2_env.status, what).toBe("errored");
    // pm2 counts the restarts of max_restarts starts: 9 restarts for max_restarts 10
    expect(p.pm2_env.restart_time, what).toBe(app.max_restarts - 1);
    expect(p.pid, what).toBe(0);
    expect(readFileSync(join(dir, "shipped.err.log"), "utf8")).toContain("has mode 644");
  }, 90_000);
});
