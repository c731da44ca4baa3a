/**
 * Reading the record from the simulator over real HTTP (explorer `userDetails` on its own path, info
 * `historicalOrders`), and correcting a deleted ledger from it. The daemon-level test (SIGKILL, fire, ledger
 * deleted, restart) comes with the wiring.
 */
import { describe, expect, test } from "vitest";
import { ManualClock, utcDay } from "../../src/core/clock.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { ExplorerClient } from "../../src/protocol/hyperliquid/explorer.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { localSigner } from "../../src/protocol/hyperliquid/signing.js";
import type { FaultSpec, SimulatorOptions } from "../../src/sim/server.js";
import { type LedgerView, readFinding, reconcileLedger } from "../../src/switch/record.js";
import { createUnavailableGate, readRecord } from "../../src/watchers/record-read.js";
import { simulatorPerTest, testWallet } from "../sim/helpers.js";

const T0 = Date.UTC(2026, 0, 1, 9, 0, 0);
const user = testWallet("reconcile-user");
const agent = testWallet("reconcile-agent");
const sims = simulatorPerTest();

async function setup(options: SimulatorOptions = {}) {
  const clock = new ManualClock(T0);
  const sim = await sims.start({
    clock,
    users: [{ address: user.address, agents: [agent.address] }],
    ...options,
  });
  const exchange = new ExchangeClient({
    apiUrl: sim.apiUrl,
    signer: localSigner(agent.privateKey),
    isMainnet: true,
    clock,
  });
  const info = new InfoClient({ apiUrl: sim.apiUrl, retryLimit: 0 });
  const explorer = new ExplorerClient({ explorerUrl: sim.explorerUrl, retryLimit: 0 });
  sims.onClose(
    () => exchange.close(),
    () => info.close(),
    () => explorer.close(),
  );
  const read = () =>
    readRecord({
      explorer,
      info,
      account: user.address,
      signer: agent.address,
      now: () => clock.now(),
      readFinding,
    });
  return { clock, sim, exchange, info, explorer, read };
}

/** Pushes every 15 s for `pushes` times (deadline now + 60 s), then lets the last deadline pass: one fire. */
async function fireOnce(s: Awaited<ReturnType<typeof setup>>, pushes = 4) {
  s.sim.state.addOrder(user.address, { coin: "BTC", side: "B", limitPx: 90_000, sz: 0.01 });
  s.sim.state.addOrder(user.address, { coin: "ETH", side: "A", limitPx: 4_000, sz: 1 });
  for (let i = 0; i < pushes; i++) {
    await s.exchange.scheduleCancel({ time: s.clock.now() + 60_000 });
    s.clock.advance(15_000);
  }
  s.clock.advance(60_000); // the process died: no more pushes; the deadline passes and the exchange fires
}

const deleted: LedgerView = {
  day: utcDay(T0),
  triggersToday: 0,
  assumed: false,
  armedUntil: null,
  pendingUntil: null,
};

describe("reconcile against the simulator", () => {
  test("default: after two fires and a deleted ledger, the record gives the count back", async () => {
    const s = await setup();
    await fireOnce(s);
    await fireOnce(s);
    expect(s.sim.state.triggersOn(user.address, utcDay(T0))).toBe(2);

    const record = await s.read();
    expect(record.available).toBe(true);
    if (!record.available) return;
    expect(record.firesToday).toBe(2);
    expect(record.fires.map((f) => [f.proof, f.cancelledOrders])).toEqual([
      ["orders", 2],
      ["orders", 2],
    ]);
    expect(record.armedUntil).toBeNull();
    const out = reconcileLedger(deleted, record);
    expect(out.ledger.triggersToday).toBe(2);
    expect(out.changes[0]!.reason).toMatch(/the record shows 2 fire\(s\) today/);
  });

  test("an armed schedule is read back as armed; refusals carry the exchange's text", async () => {
    const s = await setup();
    s.sim.state.setVolume(user.address, 10);
    await expect(s.exchange.scheduleCancel({ time: s.clock.now() + 60_000 })).rejects.toThrow();
    s.sim.state.setVolume(user.address, 2_000_000);
    const r = await s.exchange.scheduleCancel({ time: s.clock.now() + 60_000 });
    const record = await s.read();
    if (!record.available) throw new Error("record unavailable");
    expect(record.armedUntil).toBe(r.time);
    expect(record.refusedToday).toBe(1);
    expect(record.lastRefusal).toMatch(/^Cannot set scheduled cancel time until enough volume traded/);
  });

  test("a short explorer list does not cover the day: an assumed count stays", async () => {
    const s = await setup({ explorerTxLimit: 3 });
    await fireOnce(s, 5);
    const record = await s.read();
    if (!record.available) throw new Error("record unavailable");
    expect(record.coversDay).toBe(false);
    const assumed = { ...deleted, triggersToday: 10, assumed: true };
    expect(reconcileLedger(assumed, record).ledger).toEqual(assumed);
  });

  test.each<[string, "explorer" | "info", FaultSpec, string]>([
    ["explorer down", "explorer", { errorRate: 1 }, "error"],
    ["explorer rate-limited", "explorer", { rateLimit: true }, "rate_limited"],
    ["historicalOrders fails", "info", { errorRate: 1, types: ["historicalOrders"] }, "error"],
  ])("error: %s → unavailable, said once, nothing changed", async (_name, endpoint, fault, reason) => {
    const s = await setup();
    await fireOnce(s);
    s.sim.faults.set(endpoint, fault);
    const gate = createUnavailableGate();
    const first = await s.read();
    const second = await s.read();
    expect(first).toMatchObject({ available: false, reason });
    expect([gate(first), gate(second)]).toEqual([true, false]);
    const view = { ...deleted, triggersToday: 10, assumed: true };
    const out = reconcileLedger(view, first);
    expect(out.ledger).toEqual(view);
    expect(out.changes).toEqual([]);
    s.sim.faults.clear();
    expect(gate(await s.read())).toBe(false);
  });

  test("no explorer configured → unavailable (not_configured)", async () => {
    const s = await setup();
    const r = await readRecord({
      readFinding,
      explorer: null,
      info: s.info,
      account: user.address,
      now: () => s.clock.now(),
    });
    expect(r).toMatchObject({ available: false, reason: "not_configured" });
  });
});
