import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { parseAgentSpec, parseUserSpec } from "../../src/cli/commands/sim.js";
import { post, signedScheduleCancel, testWallet } from "./helpers.js";

const BIN = fileURLToPath(new URL("../../dist/bin/hl-deadman.js", import.meta.url));
const user = testWallet("cli-user");
const agent = testWallet("cli-agent");
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

type Started = {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  api: string;
  rpc: string;
  exit: Promise<number | null>;
};

/** Spawns `hl-deadman sim ...` and resolves once it printed its "Running" line. */
function startCli(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [BIN, "sim", "--port", "0", ...args], {
    env: { PATH: process.env.PATH },
  });
  children.push(child);
  const exit = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`no "Running" line in 10 s: ${out}${err}`)), 10_000);
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("Running;")) {
        clearTimeout(timer);
        const lines = out.split("\n");
        const api = lines.find((l) => l.startsWith("API "))?.split(/\s+/)[1] ?? "";
        const rpc = lines.find((l) => l.startsWith("RPC "))?.split(/\s+/)[1] ?? "";
        resolve({ child, lines, api, rpc, exit });
      }
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} early: ${out}${err}`)));
  });
}

function runToEnd(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, "sim", ...args], { env: { PATH: process.env.PATH } });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  // 'close' (stdio drained), not 'exit'.
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

describe("hl-deadman sim", () => {
  test("default", async () => {
    const s = await startCli(["--seed", "9"]);
    expect(s.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.rpc).toBe(`${s.api}/evm`);
    const key =
      s.lines
        .find((l) => l.startsWith("DEMO") && l.includes("key"))
        ?.split(/\s+/)
        .at(-1) ?? "";
    expect(key).toMatch(/^0x[0-9a-f]{64}$/);
    expect(s.lines.some((l) => /WARNING: .*SIMULATOR ONLY/.test(l))).toBe(true);
    // The printed demo key arms the switch on the printed API URL.
    const now = Date.now();
    const body = await signedScheduleCancel({ privateKey: key, nonce: now, time: now + 60_000 });
    expect((await post(`${s.api}/exchange`, body)).json).toMatchObject({ status: "ok" });
    const rpc = await post(s.rpc, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    expect(rpc.json).toEqual({ jsonrpc: "2.0", id: 1, result: "0x3e7" });
    s.child.kill("SIGTERM");
    expect(await s.exit).toBe(0);
  });

  test("behavior: --user, --agent, --no-demo, --success-type; SIGINT exits 0", async () => {
    const s = await startCli([
      "--no-demo",
      "--user",
      `${user.address}:1500000`,
      "--agent",
      `${agent.address}=${user.address}`,
      "--success-type",
      "default",
    ]);
    expect(s.lines.some((l) => l.startsWith("DEMO"))).toBe(false);
    expect(s.lines).toContain(`USER   ${user.address.toLowerCase()} volume $1500000`);
    const now = Date.now();
    const body = await signedScheduleCancel({ privateKey: agent.privateKey, nonce: now, time: now + 60_000 });
    expect((await post(`${s.api}/exchange`, body)).json).toEqual({
      status: "ok",
      response: { type: "default" },
    });
    s.child.kill("SIGINT");
    expect(await s.exit).toBe(0);
  });

  test("error: invalid --user and --agent exit 2 naming the value", async () => {
    const [badUser, badVolume, badAgent, orphan, badPort] = await Promise.all([
      runToEnd(["--user", "0x1234:5"]),
      runToEnd(["--user", `${user.address}:lots`]),
      runToEnd(["--agent", "nope"]),
      runToEnd(["--no-demo", "--agent", `${agent.address}=${user.address}`]),
      runToEnd(["--port", "70000"]),
    ]);
    expect(badUser.code).toBe(2);
    expect(badUser.stderr).toContain('--user "0x1234:5" is invalid');
    expect(badVolume.code).toBe(2);
    expect(badVolume.stderr).toContain(`${user.address}:lots`);
    expect(badAgent.code).toBe(2);
    expect(badAgent.stderr).toContain('--agent "nope" is invalid');
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toContain("is not a registered user");
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--port "70000"');
  });

  test("behavior: the flag parsers", () => {
    expect(parseUserSpec(user.address)).toEqual({ address: user.address });
    expect(parseUserSpec(`${user.address}:373.47`)).toEqual({ address: user.address, volumeUsd: 373.47 });
    expect(() => parseUserSpec(`${user.address}:`)).toThrow(/--user/);
    expect(() => parseUserSpec(`${user.address}:-1`)).toThrow(/>= 0/);
    expect(parseAgentSpec(`${agent.address}=${user.address}`)).toEqual({
      agent: agent.address,
      user: user.address,
    });
    expect(() => parseAgentSpec(`${agent.address}`)).toThrow(/AGENT=USER/);
  });
});
