/**
 * `hl-deadman evm ...` against the simulator's chain. In-process (`cli()`, test/helpers/cli.ts) except one test
 * that runs the built CLI as a process, for the exit codes as the OS sees them.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ManualClock } from "../../../src/core/clock.js";
import { type SimulatorHandle, startSimulator } from "../../../src/sim/server.js";
import { cli } from "../../helpers/cli.js";
import { assertBuilt, runCliProcess } from "../../helpers/process.js";
import { noOtsAnswer, startFakeRpc } from "./helpers.js";

const KEY = "cliSecretEndpointKey777";
let sim: SimulatorHandle;
let url: string;
const cwd = mkdtempSync(join(tmpdir(), "hl-evm-cwd-"));

/** `hl-deadman ...args` in-process, with only PATH and `env` in its environment. */
const run = (args: string[], env: Record<string, string> = {}) =>
  cli(args, { env: { PATH: process.env.PATH ?? "", ...env }, cwd });

beforeAll(async () => {
  // The clock of client.test.ts's simulators: the same chain, so a worker that ran that file has the 5,000-tx body
  // built already (src/sim/chain.ts keeps it per process): a worker that runs both files builds it once.
  sim = await startSimulator({ ipWeightPerMinute: null, clock: new ManualClock(Date.UTC(2026, 0, 1, 12)) });
  url = sim.rpcUrl.replace(/\/evm$/, `/${KEY}/evm`);
  // Sign the 5,000 transactions once up front (2-3 s), so no CLI request waits for it.
  sim.chain.transactions(sim.chain.bigBlock);
});
afterAll(async () => {
  await sim.close();
});

describe("hl-deadman evm (in-process)", () => {
  test("default: header for people and --json exactly as returned", async () => {
    const people = await run(["evm", "header", "7", "--rpc-url", url]);
    expect(people.code).toBe(0);
    const h = sim.chain.header(7)!;
    expect(people.stdout).toContain(`block        7 (0x7)`);
    expect(people.stdout).toContain(`hash         ${h.hash}`);
    expect(people.stdout).toContain(new Date(Number(h.timestamp) * 1000).toISOString());
    expect(people.stdout).toMatch(/base fee +0\.1\d* gwei/);
    const json = await run(["evm", "header", "0x7", "--json"], { HL_RPC_URL: url });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(h);
  });

  test("default: one page --json in the contract's shape", async () => {
    const big = sim.chain.bigBlock;
    const r = await run([
      "evm",
      "txs",
      String(big),
      "--page",
      "3",
      "--size",
      "7",
      "--json",
      "--rpc-url",
      url,
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(["fullblock", "receipts", "txs"]);
    expect(out.fullblock.transactionCount).toBe(5000);
    expect(out.fullblock.transactions).toBeUndefined();
    expect(out.txs.map((t: { transactionIndex: string }) => Number(t.transactionIndex))).toEqual([
      21, 22, 23, 24, 25, 26, 27,
    ]);
    expect(out.receipts.map((x: { transactionHash: string }) => x.transactionHash)).toEqual(
      out.txs.map((t: { hash: string }) => t.hash),
    );
  });

  test("behavior: --all fetches the 5,000-tx block completely, in block order; no progress when stderr is not a TTY", async () => {
    const big = sim.chain.bigBlock;
    const r = await run(["evm", "txs", String(big), "--all", "--json", "--rpc-url", url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout);
    const full = sim.chain.transactions(big);
    expect(out.txs).toHaveLength(5000);
    expect(out.txs.map((t: { hash: string }) => t.hash)).toEqual(full.map((x) => x.tx.hash));
    expect(out.receipts.map((x: { status: string }) => x.status)).toEqual(full.map((x) => x.receipt.status));
  });

  test("default: readable rows: HYPE values, gas, status, created contract", async () => {
    const big = sim.chain.bigBlock;
    const r = await run(["evm", "txs", String(big), "--size", "10", "--rpc-url", url]);
    expect(r.code).toBe(0);
    const full = sim.chain.transactions(big).slice(0, 10);
    expect(r.stdout).toContain("page 0 of size 10: 10 of 5000 transactions");
    const create = full.find((t) => t.tx.to === null)!;
    expect(r.stdout).toContain(`${create.tx.from} → create ${create.receipt.contractAddress}`);
    for (const t of full) expect(r.stdout).toContain(t.tx.hash);
    const failedLine = r.stdout
      .split("\n")
      .find((l) => l.includes(full.find((t) => t.receipt.status === "0x0")?.tx.hash ?? "none"));
    if (failedLine) expect(failedLine).toMatch(/failed$/);
    expect(r.stdout).toMatch(/\d+(\.\d+)? HYPE/);
  });

  test("error: bad BLOCK, --page, --size, conflicting options → exit 2 naming the value", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["evm", "header", "12abc"], /invalid BLOCK "12abc"/],
      [["evm", "txs", "-1"], /./],
      [["evm", "txs", "5", "--page", "x"], /invalid --page "x"/],
      [["evm", "txs", "5", "--size", "0"], /invalid --size "0": expected an integer from 1 to 1000/],
      [["evm", "txs", "5", "--size", "1001"], /invalid --size "1001"/],
      [["evm", "txs", "5", "--all", "--page", "1"], /--all and --page cannot be used together/],
    ];
    for (const [args, message] of cases) {
      const r = await run([...args, "--rpc-url", url]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });

  test("error: unknown block → exit 1 'block N not found'", async () => {
    const r = await run(["evm", "header", "123456789", "--rpc-url", url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("hl-deadman: block 123456789 not found\n");
    const t = await run(["evm", "txs", "123456789", "--rpc-url", url]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain("block 123456789 not found");
  });

  test("behavior: probe → 0 yes; 69 no; 69 unreachable; the key never printed", async () => {
    const yes = await run(["evm", "probe", "--rpc-url", url, "--json"]);
    expect(yes.code).toBe(0);
    expect(JSON.parse(yes.stdout)).toEqual({
      rpc: expect.stringMatching(/\/\*\*\*\/evm$/),
      supported: true,
      apiLevel: 8,
    });
    const fake = await startFakeRpc(noOtsAnswer);
    try {
      const no = await run(["evm", "probe", "--rpc-url", fake.url]);
      expect(no.code).toBe(69);
      expect(no.stderr).toContain("does not serve the ots_ namespace");
      const header = await run(["evm", "header", "1", "--rpc-url", fake.url]);
      expect(header.code).toBe(69);
      expect(header.stderr).toContain("does not serve ots_getHeaderByNumber");
    } finally {
      await fake.close();
    }
    const down = await run(["evm", "probe", "--rpc-url", `http://127.0.0.1:1/${KEY}/evm`]);
    expect(down.code).toBe(69);
    expect(down.stderr).toContain("ECONNREFUSED");
    for (const r of [yes, down]) expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  test("behavior: rpcUrl from the config file; a bad config file → 78", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-evm-"));
    writeFileSync(join(dir, "ok.json"), JSON.stringify({ rpcUrl: url }));
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ rpcUrl: "not a url" }));
    const ok = await run(["evm", "probe", "--config", join(dir, "ok.json")]);
    expect(ok.code).toBe(0);
    const bad = await run(["evm", "probe"], { HL_CONFIG: join(dir, "bad.json") });
    expect(bad.code).toBe(78);
  });
});

describe("hl-deadman evm (process)", () => {
  beforeAll(assertBuilt);

  test("behavior: the built CLI exits 0 with the header, 69 when the node does not serve ots_, 2 on a bad BLOCK", async () => {
    const fake = await startFakeRpc(noOtsAnswer);
    try {
      const [ok, no, usage] = await Promise.all([
        runCliProcess(["evm", "header", "7", "--json", "--rpc-url", url], {}, { cwd }),
        runCliProcess(["evm", "probe", "--rpc-url", fake.url], {}, { cwd }),
        runCliProcess(["evm", "header", "12abc", "--rpc-url", url], {}, { cwd }),
      ]);
      expect([ok.code, ok.stderr]).toEqual([0, ""]);
      expect(JSON.parse(ok.stdout)).toEqual(sim.chain.header(7));
      expect(no.code).toBe(69);
      expect(no.stderr).toContain("does not serve the ots_ namespace");
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/invalid BLOCK "12abc"/);
      for (const r of [ok, no, usage]) expect(r.stdout + r.stderr).not.toContain(KEY);
    } finally {
      await fake.close();
    }
  });
});
