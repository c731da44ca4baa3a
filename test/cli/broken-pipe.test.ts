/**
 * A reader that goes away is not an error (issue 31, item 2): `hl-deadman … | head` stops quietly, status 0, no
 * stack trace, through a real pipe whose read end is closed before the CLI writes; and the daemon keeps running
 * when its log reader goes away (a journald restart must never disarm the switch).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertBuilt, baseEnv, CLI, ROOT } from "../helpers/process.js";

const tmp = mkdtempSync(path.join(tmpdir(), "hl-pipe-"));
let sim: SimulatorHandle;
beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({});
});
afterAll(async () => {
  await sim?.close();
});

/** Runs the CLI with its stdout on a pipe whose read end is closed at once: every write meets EPIPE. */
function withClosedReader(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: baseEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("a closed pipe on stdout", () => {
  const file = path.join(tmp, "config.json");
  writeFileSync(file, JSON.stringify({ interval: "15s" }));
  test.each([
    ["config check --no-key --config FILE", ["config", "check", "--no-key", "--config", file]],
    ["run --help", ["run", "--help"]],
    ["help run", ["help", "run"]],
    ["evm txs 99 --all", ["evm", "txs", "99", "--all", "--rpc-url", "RPC"]],
  ])("error: %s exits 0 with nothing on stderr (no EPIPE stack trace)", async (_name, args) => {
    const r = await withClosedReader(args.map((a) => (a === "RPC" ? sim.rpcUrl : a)));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  test("error: `help run | head -3` in a shell prints three lines, pipefail sees 0", async () => {
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(
        "bash",
        ["-c", `set -o pipefail; "${process.execPath}" "${CLI}" help run | head -3`],
        { cwd: ROOT, env: baseEnv(), stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
      child.on("close", (code) => resolve({ code, out, err }));
    });
    expect(r.err).toBe("");
    expect(r.out.trimEnd().split("\n")).toHaveLength(3);
    expect(r.code).toBe(0);
  });

  test("default: the daemon keeps pushing when its log reader goes away", async () => {
    const child = spawn(
      process.execPath,
      [CLI, "run", "--sim", "--health", "off", "--state-dir", path.join(tmp, "state")],
      { cwd: ROOT, env: baseEnv(), stdio: ["ignore", "pipe", "pipe"] },
    );
    // read up to the first confirmed push (the daemon is up, its signal handlers installed), then go away
    await new Promise<void>((resolve) => {
      let seen = "";
      child.stdout.on("data", (d: Buffer) => {
        seen += d.toString();
        if (seen.includes('"event":"heartbeat.ok"')) resolve();
      });
    });
    child.stdout.destroy();
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r("running"), 1_500))]);
    expect(early).toBe("running");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
