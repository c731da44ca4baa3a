/**
 * `hl-deadman sim`: the server runs as a real process (it stops on SIGINT/SIGTERM); flag errors are checked
 * in-process (`cli()`), except one that is found only after the simulator started.
 */
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { parseAgentSpec, parseUserSpec } from "../../src/cli/commands/sim.js";
import { cli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { assertBuilt, runCliProcess, type SpawnedProcess, spawnCli } from "../helpers/process.js";
import { post, signedScheduleCancel, testWallet } from "./helpers.js";

const user = testWallet("cli-user");
const agent = testWallet("cli-agent");
const children: SpawnedProcess[] = [];

beforeAll(assertBuilt);
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

type Started = { proc: SpawnedProcess; lines: string[]; api: string; rpc: string };

/** Spawns `hl-deadman sim ...` and resolves once it printed its "Running" line. */
async function startCli(args: string[]): Promise<Started> {
  const proc = spawnCli(["sim", "--port", "0", ...args]);
  children.push(proc);
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  await eventually(
    () => {
      if (exited) throw new Error(`exited early: ${proc.stdout()}${proc.stderr()}`);
      return proc.stdout().includes("Running;");
    },
    { what: () => `the "Running" line: ${proc.stdout()}${proc.stderr()}` },
  );
  const lines = proc.stdout().split("\n");
  const api = lines.find((l) => l.startsWith("API "))?.split(/\s+/)[1] ?? "";
  const rpc = lines.find((l) => l.startsWith("RPC "))?.split(/\s+/)[1] ?? "";
  return { proc, lines, api, rpc };
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
    s.proc.kill("SIGTERM");
    expect((await s.proc.exitWithin(10_000)).code).toBe(0);
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
      "--rtt-ms",
      "20",
    ]);
    expect(s.lines.some((l) => l.startsWith("DEMO"))).toBe(false);
    expect(s.lines).toContain(
      "RTT    20 ms injected on every API answer (half of it on each WebSocket message pushed)",
    );
    expect(s.lines).toContain(
      `WS     ${s.api.replace("http", "ws")}/ws  (openOrders, ping; the daemon derives it from the API URL)`,
    );
    expect(s.lines).toContain(`USER   ${user.address.toLowerCase()} volume $1500000`);
    const now = Date.now();
    const body = await signedScheduleCancel({ privateKey: agent.privateKey, nonce: now, time: now + 60_000 });
    expect((await post(`${s.api}/exchange`, body)).json).toEqual({
      status: "ok",
      response: { type: "default" },
    });
    s.proc.kill("SIGINT");
    expect((await s.proc.exitWithin(10_000)).code).toBe(0);
  });

  test("error: invalid --user and --agent exit 2 naming the value", async () => {
    const sim = (args: string[]) => cli(["sim", ...args]);
    const [badUser, badVolume, badAgent, badPort, badRtt] = await Promise.all([
      sim(["--user", "0x1234:5"]),
      sim(["--user", `${user.address}:lots`]),
      sim(["--agent", "nope"]),
      sim(["--port", "70000"]),
      sim(["--rtt-ms", "-5"]),
    ]);
    // Found only once the simulator runs (which users exist), so this one is a real process.
    const orphan = await runCliProcess([
      "sim",
      "--port",
      "0",
      "--no-demo",
      "--agent",
      `${agent.address}=${user.address}`,
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
    expect(badRtt.code).toBe(2);
    expect(badRtt.stderr).toContain('--rtt-ms "-5" is invalid');
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
