/**
 * The image's process, without a container engine: ENTRYPOINT + CMD from the Dockerfile, its ENV with the paths
 * pointed at temp dirs (HL_HEALTH on a free loopback port, never 9464), the key as a file in
 * $CREDENTIALS_DIRECTORY with Docker's default secret mode 0444, the HEALTHCHECK command run against the live
 * daemon, and STOPSIGNAL delivered the way `docker stop` does.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
import { type DockerStage, dockerEnv, execForm, instructions, parseDockerfile } from "./parsers.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const dockerfile = parseDockerfile(readFileSync(join(root, "Dockerfile"), "utf8"));
const runtime = dockerfile.stages.at(-1) as DockerStage;
const imageEnv = dockerEnv(runtime);
const last = (op: string) => instructions(runtime, op).at(-1)?.args ?? "";
/** `docker stop`'s default grace period before SIGKILL. */
const DOCKER_STOP_GRACE_MS = 10_000;

describe("the image's entry point, run as the container would run it", () => {
  let sim: SimulatorHandle;
  let dir: string;
  const wallet = Wallet.createRandom();
  const user = wallet.address.toLowerCase();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hl-deadman-container-"));
    sim = await startSimulator({ users: [{ address: user }] });
  });
  afterAll(async () => {
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("default: arms, passes its HEALTHCHECK, and on STOPSIGNAL removes the schedule and exits 0", async () => {
    const secrets = join(dir, "secrets");
    const state = join(dir, "state");
    mkdirSync(secrets);
    const keyPath = join(secrets, "hl-private-key");
    writeFileSync(keyPath, `${wallet.privateKey}\n`);
    chmodSync(keyPath, 0o444); // what a Docker/Compose file secret looks like

    // The image's ENV, with its paths mapped into the temp dir.
    const mapped: Record<string, string> = {
      [imageEnv.get("HL_STATE_DIR") as string]: state,
      [imageEnv.get("CREDENTIALS_DIRECTORY") as string]: secrets,
      [imageEnv.get("HL_HEALTH") as string]: "127.0.0.1:0",
    };
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (!k.startsWith("HL_") && k !== "CREDENTIALS_DIRECTORY" && k !== "STATE_DIRECTORY") env[k] = v;
    }
    for (const [k, v] of imageEnv) env[k] = mapped[v] ?? v;
    Object.assign(env, {
      HL_API_URL: sim.apiUrl,
      HL_INTERVAL: "1s",
      HL_DEADLINE: "10s",
      HL_REQUEST_TIMEOUT: "1s",
      HL_EXPOSURE_INTERVAL: "0",
    });
    expect(env.HL_PRIVATE_KEY).toBeUndefined();

    const [command, ...entryArgs] = [
      ...(execForm(last("ENTRYPOINT")) ?? []),
      ...(execForm(last("CMD")) ?? []),
    ];
    expect(command).toBe("node");
    const out = spawnNode(entryArgs, { cwd: root, env });
    try {
      await eventually(
        () =>
          sim.state.getSchedule(user) !== null &&
          /"event":"heartbeat.ok"/.test(out.stdout()) &&
          /"event":"health.listening"/.test(out.stdout()),
        { timeoutMs: 10_000, what: () => `not armed; stdout:\n${out.stdout()}\nstderr:\n${out.stderr()}` },
      );
      const events = jsonLines(out.stdout());
      expect(events.find((e) => e.event === "key.loaded")?.source).toMatch(/^credentials /);
      const url = String(events.find((e) => e.event === "health.listening")?.url);
      const origin = new URL(url).origin;
      expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(origin).not.toContain(":9464");

      // The image's HEALTHCHECK command, pointed at this daemon.
      const check = execForm(last("HEALTHCHECK").replace(/^(--\S+\s+)*CMD\s+/, "")) ?? [];
      const args = check.slice(1).map((a) => a.replace(/http:\/\/127\.0\.0\.1:\d+/, origin));
      await expect(run(process.execPath, args, { timeout: 10_000 })).resolves.toBeDefined();
      const ready = await fetch(`${origin}/readyz`);
      expect(ready.status).toBe(200);

      // docker stop: STOPSIGNAL, then SIGKILL after the grace period.
      const signal = last("STOPSIGNAL") as NodeJS.Signals;
      const stoppedAt = Date.now();
      out.kill(signal);
      const { code } = await out.exitWithin(DOCKER_STOP_GRACE_MS);
      expect(code, out.stderr()).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThanOrEqual(DEFAULTS.shutdownTimeout + 1000);
      expect(sim.state.getSchedule(user)).toBeNull();
      expect(jsonLines(out.stdout()).some((e) => e.event === "shutdown.removed" && e.account === user)).toBe(
        true,
      );

      // The ledger landed in the volume's directory, and the key went nowhere.
      expect(readdirSync(state)).toContain("ledger");
      const secret = wallet.privateKey.slice(2);
      for (const name of readdirSync(join(state, "ledger")))
        expect(readFileSync(join(state, "ledger", name), "utf8")).not.toContain(secret);
      expect(out.stdout() + out.stderr()).not.toContain(secret);
    } finally {
      out.kill("SIGKILL");
    }
  });
});
