/**
 * The cancel executor against the simulator over real HTTP: reduce-only TP/SL stops stay, everything else
 * goes in at most two signed `cancel`s (resting orders with the fast flag, trigger orders without), each order's status is read, a second read confirms, and no trigger is spent.
 */
import { describe, expect, test } from "vitest";
import { ManualClock, utcDay } from "../../../src/core/clock.js";
import {
  type CancelReport,
  createCancelExecutor,
  createMetaCache,
} from "../../../src/protocol/hyperliquid/cancel.js";
import { ExchangeClient } from "../../../src/protocol/hyperliquid/exchange.js";
import { InfoClient } from "../../../src/protocol/hyperliquid/info.js";
import { localSigner } from "../../../src/protocol/hyperliquid/signing.js";
import { simulatorPerTest, testWallet } from "../../sim/helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const sims = simulatorPerTest();

async function setup(signerKey?: string) {
  const clock = new ManualClock(T0);
  const sim = await sims.start({ clock, demo: true });
  const demo = sim.demo!;
  const info = new InfoClient({ apiUrl: sim.apiUrl, retryLimit: 0 });
  const exchange = new ExchangeClient({
    apiUrl: sim.apiUrl,
    signer: localSigner(signerKey ?? demo.privateKey),
    isMainnet: true,
    clock,
  });
  sims.onClose(
    () => info.close(),
    () => exchange.close(),
  );
  const reports: CancelReport[] = [];
  const cancelOpenOrders = createCancelExecutor({ info, exchange, onReport: (r) => reports.push(r) });
  return { clock, sim, demo, info, exchange, cancelOpenOrders, reports };
}

describe("cancelOpenOrders (engine-down policy cancel)", () => {
  test("default: leaves the reduce-only TP/SL stops, cancels the rest, confirms, spends no trigger", async () => {
    const { clock, sim, demo, exchange, cancelOpenOrders, reports, info } = await setup();
    const armed = await exchange.scheduleCancel({ time: clock.now() + 60_000 });
    const before = sim.state.getOpenOrders(demo.address).map((o) => o.oid);
    expect(before).toHaveLength(6);

    const result = await cancelOpenOrders({ account: demo.address, cancelStops: false });

    expect(result).toEqual({ confirmed: true, cancelled: 4, kept: 2 });
    const left = sim.state.getOpenOrders(demo.address);
    expect(left.map((o) => [o.coin, o.orderType, o.reduceOnly])).toEqual([
      ["BTC", "Stop Market", true],
      ["ETH", "Take Profit Market", true],
    ]);
    // No trigger spent, and the scheduled cancel is still armed as the backstop.
    expect(sim.state.triggersOn(demo.address, utcDay(clock.now()))).toBe(0);
    expect(sim.state.getSchedule(demo.address)).toBe(armed.time);
    // One signed fast cancel (no trigger order among them) with an {a, o} per order, assets from meta
    // (BTC 0, ETH 1, SOL 5), f after cancels.
    const cancels = sim.state.actions.filter((a) => (a.action as { type: string }).type === "cancel");
    expect(cancels).toHaveLength(1);
    const cancel = cancels[0]!;
    expect(cancel.accepted).toBe(true);
    expect(Object.keys(cancel.action as object)).toEqual(["type", "cancels", "f"]);
    expect((cancel.action as { f?: boolean }).f).toBe(true);
    expect((cancel.action as { cancels: Array<{ a: number }> }).cancels.map((c) => c.a)).toEqual([
      0, 0, 1, 5,
    ]);
    expect(reports[0]!.actions).toEqual([{ fast: true, oids: expect.any(Array) }]);
    expect(reports[0]!.statuses.every((s) => s.ok)).toBe(true);
    // The record says "canceled" for them, not scheduledCancel.
    const history = await info.historicalOrders({ user: demo.address });
    expect(history.map((h) => h.status)).toEqual(["canceled", "canceled", "canceled", "canceled"]);
  });

  test("cancelStops: the stops go too", async () => {
    const { sim, demo, cancelOpenOrders } = await setup();
    expect(await cancelOpenOrders({ account: demo.address, cancelStops: true })).toEqual({
      confirmed: true,
      cancelled: 6,
      kept: 0,
    });
    expect(sim.state.getOpenOrders(demo.address)).toEqual([]);
    // Two actions: the resting orders fast, the trigger stops in a normal cancel (a fast one would be refused).
    const cancels = sim.state.actions.filter((a) => (a.action as { type: string }).type === "cancel");
    expect(cancels).toHaveLength(2);
    const fast = cancels.filter((a) => (a.action as { f?: boolean }).f === true);
    const plain = cancels.filter((a) => !("f" in (a.action as object)));
    expect(fast.map((a) => (a.action as { cancels: unknown[] }).cancels.length)).toEqual([4]);
    expect(plain.map((a) => (a.action as { cancels: unknown[] }).cancels.length)).toEqual([2]);
    expect(cancels.every((a) => a.accepted)).toBe(true);
  });

  test("a trigger order that is not a reduce-only stop goes in the normal cancel, never a fast one", async () => {
    const { sim, demo, cancelOpenOrders, reports } = await setup();
    sim.addUser({
      address: demo.address,
      orders: [
        { coin: "BTC", side: "B", limitPx: "1000", sz: "0.01", orderType: "Stop Market", triggerPx: "1100" },
      ],
    });
    const entry = sim.state.getOpenOrders(demo.address).find((o) => o.isTrigger && !o.reduceOnly)!;
    const result = await cancelOpenOrders({ account: demo.address, cancelStops: false });
    expect(result).toEqual({ confirmed: true, cancelled: 5, kept: 2 });
    expect(reports[0]!.actions).toEqual([
      { fast: true, oids: expect.any(Array) },
      { fast: false, oids: [entry.oid] },
    ]);
    expect(reports[0]!.statuses.every((s) => s.ok)).toBe(true);
  });

  test("nothing to cancel: confirmed without sending anything", async () => {
    const { sim, demo, cancelOpenOrders } = await setup();
    await cancelOpenOrders({ account: demo.address, cancelStops: false });
    const sent = sim.state.actions.length;
    expect(await cancelOpenOrders({ account: demo.address, cancelStops: false })).toEqual({
      confirmed: true,
      cancelled: 0,
      kept: 2,
    });
    expect(sim.state.actions.length).toBe(sent);
  });

  test("an API wallet (agent) signs the cancel for the master", async () => {
    const agent = testWallet("cancel-agent");
    const { sim, demo, cancelOpenOrders } = await setup(agent.privateKey);
    sim.state.approveAgent({ user: demo.address, agent: agent.address, name: "hl-deadman" });
    expect((await cancelOpenOrders({ account: demo.address, cancelStops: false })).confirmed).toBe(true);
    expect(sim.state.actions.at(-1)!.signer).toBe(agent.address.toLowerCase());
  });

  test("error: the cancel action fails (fault) → not confirmed, orders still open, detail says why", async () => {
    const { sim, demo, cancelOpenOrders } = await setup();
    sim.faults.set("exchange", { errorRate: 1, types: ["cancel"] });
    const result = await cancelOpenOrders({ account: demo.address, cancelStops: false });
    expect(result.confirmed).toBe(false);
    expect(result.cancelled).toBe(0);
    expect(result.detail).toMatch(/cancel failed \(server_error/);
    expect(result.detail).toMatch(/4 still open/);
    expect(sim.state.getOpenOrders(demo.address)).toHaveLength(6);
  });

  test("error: the open-orders read fails → not confirmed, nothing sent", async () => {
    const { sim, demo, cancelOpenOrders } = await setup();
    sim.faults.set("info", { rateLimit: true, types: ["frontendOpenOrders"] });
    const result = await cancelOpenOrders({ account: demo.address, cancelStops: false });
    expect(result).toMatchObject({
      confirmed: false,
      cancelled: 0,
      failure: { kind: "rate_limited", request: "read", retryable: true },
      weight: 0,
    });
    expect(result.detail).toMatch(/reading the open orders failed \(rate_limited/);
    expect(sim.state.actions).toHaveLength(0);
  });

  test("per-order statuses: an unknown oid gets the exchange's error string", async () => {
    const { exchange } = await setup();
    const result = await exchange.cancel([{ asset: 1, oid: 42 }]);
    expect(result.statuses).toEqual([
      { asset: 1, oid: 42, ok: false, error: "Order was never placed, already canceled, or filled. asset=1" },
    ]);
  });

  test("behavior: a known list is cancelled before the read, the read catches what it missed, an order of unknown kind goes without f", async () => {
    const { sim, demo, info, exchange } = await setup();
    const open = await info.frontendOpenOrders({ user: demo.address });
    const resting = open.filter((o) => !o.isTrigger);
    expect(resting.length).toBeGreaterThanOrEqual(3);
    const [missed, unknownKind, ...rest] = resting;
    // the list the feed holds: one order missing, one that does not say whether it is a trigger
    const { isTrigger: _dropped, ...withoutKind } = unknownKind!;
    const known = [withoutKind as typeof unknownKind & object, ...rest, ...open.filter((o) => o.isTrigger)];
    const metaCache = createMetaCache(info);
    await metaCache.prime();
    const reports: CancelReport[] = [];
    const cancelOpenOrders = createCancelExecutor({
      info,
      exchange,
      onReport: (r) => reports.push(r),
      knownOrders: (user) => (user === demo.address ? known : null),
      metaCache,
    });
    const result = await cancelOpenOrders({ account: demo.address, cancelStops: false });
    expect(result).toEqual({ confirmed: true, cancelled: 4, kept: 2 });
    const actions = sim.state.actions
      .filter((a) => (a.action as { type: string }).type === "cancel")
      .map((a) => ({
        fast: (a.action as { f?: boolean }).f === true,
        oids: (a.action as { cancels: Array<{ o: number }> }).cancels.map((c) => c.o),
      }));
    // from the known list: the resting orders fast, the one of unknown kind without f; then the missed one alone
    expect(actions).toEqual([
      { fast: true, oids: rest.map((o) => o.oid) },
      { fast: false, oids: [unknownKind!.oid] },
      { fast: true, oids: [missed!.oid] },
    ]);
    expect(reports[0]!.actions).toEqual(actions);
    expect(reports[0]!.targeted.map((t) => t.oid).sort()).toEqual(resting.map((o) => o.oid).sort());
    expect(sim.state.getOpenOrders(demo.address).every((o) => o.reduceOnly && o.isTrigger)).toBe(true);
  });
});
