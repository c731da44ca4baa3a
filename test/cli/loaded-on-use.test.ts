/**
 * Loaded on use (src/cli/program.ts): every command is registered, but what only an action needs (the daemon, the
 * HTTP client, the keys, doctor's checks) is imported when that action runs. The bundle is one file, so this is seen
 * from outside, in node's own list of the built-in modules a process loaded (`process.moduleLoadList`, written at
 * exit by a preload): the HTTP client (got) loads node:http2, prom-client node:cluster, pino node:worker_threads.
 * `--version`, `run --help` and `status` of an empty state directory load none of them; the daemon loads all three.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { assertBuilt, baseEnv, CLI, FAST_CADENCE, spawnNode } from "../helpers/process.js";

const dir = mkdtempSync(path.join(tmpdir(), "hl-loaded-"));
const preload = path.join(dir, "preload.cjs");
const DAEMON_ONLY = ["NativeModule http2", "NativeModule cluster", "NativeModule worker_threads"];

beforeAll(() => {
  assertBuilt();
  writeFileSync(
    preload,
    'process.on("exit",()=>require("node:fs").writeFileSync(process.env.HL_TEST_LOADED,JSON.stringify(process.moduleLoadList)));',
  );
});

/** Spawns the CLI with the preload; `until` ends a daemon (a stop signal) once it has done what is asked. */
async function loaded(
  name: string,
  args: string[],
  until?: (p: ReturnType<typeof spawnNode>) => Promise<void>,
) {
  const file = path.join(dir, `${name}.json`);
  const p = spawnNode(["--require", preload, CLI, ...args], { env: { ...baseEnv(), HL_TEST_LOADED: file } });
  if (until) {
    await until(p);
    p.kill("SIGTERM");
  }
  await p.exitWithin(20_000);
  return JSON.parse(readFileSync(file, "utf8")) as string[];
}

describe.concurrent("what a command loads", () => {
  test("behavior: --version, run --help and status load neither the HTTP client, nor prom-client, nor pino", async () => {
    const state = mkdtempSync(path.join(dir, "state-"));
    for (const [name, args] of [
      ["version", ["--version"]],
      ["run-help", ["run", "--help"]],
      ["status", ["status", "--state-dir", state, "--json"]],
    ] as const) {
      const list = await loaded(name, [...args]);
      for (const m of DAEMON_ONLY) expect(list, `${args.join(" ")}: ${m}`).not.toContain(m);
    }
  });

  test("behavior: the daemon loads them (what the check above looks for is there to see)", async () => {
    const list = await loaded(
      "run",
      [
        "run",
        "--sim",
        ...FAST_CADENCE,
        "--health",
        "off",
        "--state-dir",
        mkdtempSync(path.join(dir, "run-")),
      ],
      async (p) => {
        await p.waitForEvent("heartbeat.ok", 15_000);
      },
    );
    for (const m of DAEMON_ONLY) expect(list).toContain(m);
  });
});
