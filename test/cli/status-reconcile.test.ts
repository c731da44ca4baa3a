/**
 * `hl-deadman status --reconcile` in-process against the simulator over real HTTP (shared ManualClock): the
 * record beside the ledger, text and --json, and nothing written.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, test } from "vitest";
import type { StatusAccount } from "../../src/cli/commands/status.js";
import { runCli } from "../../src/cli/program.js";
import { ManualClock, utcDay } from "../../src/core/clock.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { localSigner } from "../../src/protocol/hyperliquid/signing.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { testWallet } from "../sim/helpers.js";

const T0 = Date.UTC(2026, 0, 1, 9, 0, 0);
const wallet = testWallet("status-reconcile");
const account = wallet.address.toLowerCase();
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function cli(args: string[], clock: ManualClock) {
  let stdout = "";
  let stderr = "";
  const sink = (f: (s: string) => void) =>
    new Writable({
      write(c, _e, cb) {
        f(String(c));
        cb();
      },
    });
  const code = await runCli(["node", "hl-deadman", "status", ...args], {
    stdout: sink((s) => {
      stdout += s;
    }),
    stderr: sink((s) => {
      stderr += s;
    }),
    env: {},
    clock,
    cwd: process.cwd(),
  });
  return { code, stdout, stderr };
}

async function fired() {
  const clock = new ManualClock(T0);
  sim = await startSimulator({
    clock,
    users: [{ address: account, orders: [{ coin: "BTC", side: "B", limitPx: 90_000, sz: 0.1 }] }],
  });
  const exchange = new ExchangeClient({
    apiUrl: sim.apiUrl,
    signer: localSigner(wallet.privateKey),
    isMainnet: true,
    clock,
  });
  await exchange.scheduleCancel({ time: clock.now() + 60_000 });
  exchange.close();
  clock.advance(120_000); // the deadline passes: the simulator fires
  const stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-status-"));
  return { clock, sim, stateDir };
}

describe("status --reconcile", () => {
  test("default: a deleted ledger, one fire in the record → shows it and what a reconcile would set", async () => {
    const { clock, sim, stateDir } = await fired();
    const args = [
      "--reconcile",
      "--state-dir",
      stateDir,
      "--api-url",
      sim.apiUrl,
      "--explorer-url",
      sim.explorerUrl,
      "--account",
      account,
    ];
    const json = await cli([...args, "--json"], clock);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as { accounts: StatusAccount[] };
    expect(doc.accounts).toHaveLength(1);
    const a = doc.accounts[0]!;
    expect(a.triggersToday).toBe(0);
    if (!a.record?.available) throw new Error("record unavailable");
    expect(a.record.firesToday).toBe(1);
    expect(a.record.fires[0]).toMatchObject({ proof: "orders", cancelledOrders: 1, day: utcDay(T0) });
    expect(a.reconcile?.changes).toEqual([
      expect.objectContaining({ field: "triggersToday", from: 0, to: 1 }),
    ]);
    const text = await cli(args, clock);
    expect(text.stdout).toMatch(/record: 1 fire\(s\) today/);
    expect(text.stdout).toMatch(/order\(s\) scheduledCancel \(orders\)/);
    expect(text.stdout).toMatch(/reconcile would set triggersToday 0 → 1/);
  });

  test("writes nothing: an existing ledger file is byte for byte the same afterwards", async () => {
    const { clock, sim, stateDir } = await fired();
    const ledger = {
      version: 1,
      updatedAt: T0,
      assumeLimitOn: null,
      accounts: {
        [account]: {
          account,
          day: utcDay(T0),
          triggersToday: 10,
          limit: 10,
          assumed: true,
          armedUntil: null,
          lastPushAt: null,
          pendingUntil: null,
          lastCountedDeadline: null,
          history: [],
        },
      },
    };
    const path = join(stateDir, "ledger.json");
    writeFileSync(path, JSON.stringify(ledger));
    const before = readFileSync(path, "utf8");
    const out = await cli(
      ["--reconcile", "--state-dir", stateDir, "--api-url", sim.apiUrl, "--explorer-url", sim.explorerUrl],
      clock,
    );
    expect(out.code).toBe(0);
    // The record does not reach back across midnight: the assumed count stays (and nothing is written).
    expect(out.stdout).toMatch(/does not reach back to 00:00 UTC/);
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  test("error: the record host is down → says unavailable, exit 0, the ledger stands", async () => {
    const { clock, sim, stateDir } = await fired();
    sim.faults.set("explorer", { errorRate: 1 });
    const out = await cli(
      [
        "--reconcile",
        "--state-dir",
        stateDir,
        "--api-url",
        sim.apiUrl,
        "--explorer-url",
        sim.explorerUrl,
        "--account",
        account,
      ],
      clock,
    );
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(
      /record: unavailable \(error\) from explorer http:\/\/127\.0\.0\.1:\d+\/\S*, API \S+: explorer userDetails: server_error HTTP 500/,
    );
  });
});
