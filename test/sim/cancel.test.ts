/**
 * The simulator's cancel over real HTTP: the fast flag (accepted, recorded, refused for trigger orders, `f:false`
 * hashed as absent), the cumulative cancel limit min(limit + 100000, 2 × limit) (docs/exchange-record.md, "The cancel mode") and the injected
 * round-trip time.
 */
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { signL1Action } from "../../src/protocol/hyperliquid/signing.js";
import { cancelLimit, fastTriggerError } from "../../src/sim/exchange.js";
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from "../../src/sim/server.js";
import { post, testWallet } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const user = testWallet("cancel-user");
let sim: SimulatorHandle | undefined;
let clock: ManualClock;
let nonce = T0;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const ORDERS = [
  { coin: "BTC", side: "B" as const, limitPx: "90000", sz: "0.01" },
  { coin: "ETH", side: "A" as const, limitPx: "5000", sz: "0.1" },
  {
    coin: "BTC",
    side: "A" as const,
    limitPx: "80000",
    sz: "0.01",
    reduceOnly: true,
    orderType: "Stop Market" as const,
    triggerPx: "80000",
  },
];

async function start(options: SimulatorOptions = {}, addressBudget?: number): Promise<SimulatorHandle> {
  clock = new ManualClock(T0);
  sim = await startSimulator({
    clock,
    users: [
      { address: user.address, orders: ORDERS, ...(addressBudget !== undefined ? { addressBudget } : {}) },
    ],
    ...options,
  });
  return sim;
}

async function cancel(action: Record<string, unknown>) {
  nonce += 1;
  const signature = await signL1Action({ privateKey: user.privateKey, action, nonce, isMainnet: true });
  return post(`${sim!.apiUrl}/exchange`, { action, nonce, signature });
}
const oids = () => sim!.state.getOpenOrders(user.address).map((o) => o.oid);
const byType = (trigger: boolean) =>
  sim!.state.getOpenOrders(user.address).filter((o) => o.isTrigger === trigger);

describe("simulator cancel: the fast flag", () => {
  test("f: true cancels resting orders and is recorded (actions and GET /admin/state)", async () => {
    await start();
    const resting = byType(false);
    const r = await cancel({
      type: "cancel",
      cancels: resting.map((o) => ({ a: o.coin === "BTC" ? 0 : 1, o: o.oid })),
      f: true,
    });
    expect(r.json).toEqual({
      status: "ok",
      response: { type: "cancel", data: { statuses: ["success", "success"] } },
    });
    expect(oids()).toEqual(byType(true).map((o) => o.oid));
    const state = (await (await fetch(`${sim!.adminUrl}/state`)).json()) as {
      cancels: Array<{ fast: boolean; oids: number[]; accepted: boolean }>;
    };
    expect(state.cancels).toEqual([
      expect.objectContaining({ fast: true, oids: resting.map((o) => o.oid), accepted: true }),
    ]);
  });

  test("a fast cancel of a trigger order is refused for that order, which stays; a normal cancel takes it", async () => {
    await start();
    const [stop] = byType(true);
    const fast = await cancel({ type: "cancel", cancels: [{ a: 0, o: stop!.oid }], f: true });
    expect(fast.json).toEqual({
      status: "ok",
      response: { type: "cancel", data: { statuses: [{ error: fastTriggerError(0) }] } },
    });
    expect(fastTriggerError(0)).toBe("Fast cancel cannot be used to cancel trigger orders. asset=0");
    expect(oids()).toContain(stop!.oid);
    const plain = await cancel({ type: "cancel", cancels: [{ a: 0, o: stop!.oid }] });
    expect(plain.json).toEqual({
      status: "ok",
      response: { type: "cancel", data: { statuses: ["success"] } },
    });
    expect(oids()).not.toContain(stop!.oid);
  });

  test("an action signed with f: false recovers another signer and is refused (f is hashed only when true)", async () => {
    await start();
    const [order] = byType(false);
    const r = await cancel({ type: "cancel", cancels: [{ a: 0, o: order!.oid }], f: false });
    expect(r.json).toMatchObject({ status: "err" });
    expect(String((r.json as { response: string }).response)).toMatch(
      /^L1 error: User or API Wallet 0x[0-9a-f]{40} does not exist\.$/,
    );
    expect(oids()).toContain(order!.oid);
  });
});

describe("simulator cancel: the cumulative cancel limit", () => {
  test("cancelLimit is min(limit + 100000, limit * 2)", () => {
    expect(cancelLimit(10)).toBe(20);
    expect(cancelLimit(100_000)).toBe(200_000);
    expect(cancelLimit(150_000)).toBe(250_000);
  });

  test("past the request budget, cancels still go until min(limit + 100000, 2 × limit); other actions are refused", async () => {
    await start({}, 2);
    const sched = async () => {
      nonce += 1;
      const action = { type: "scheduleCancel", time: clock.now() + 60_000 };
      const signature = await signL1Action({ privateKey: user.privateKey, action, nonce, isMainnet: true });
      return post(`${sim!.apiUrl}/exchange`, { action, nonce, signature });
    };
    expect((await sched()).json).toMatchObject({ status: "ok" }); // 1 of 2
    expect((await sched()).json).toMatchObject({ status: "ok" }); // 2 of 2
    expect(String(((await sched()).json as { response: string }).response)).toMatch(
      /^Too many cumulative requests sent \(3 > 2\)/,
    );
    // cancels: limit 4 (min(2 + 100000, 4)); the 4th request counts as used 4 → accepted, the 5th refused
    const r4 = await cancel({ type: "cancel", cancels: [{ a: 0, o: 999 }] });
    expect(r4.json).toMatchObject({ status: "ok" });
    const r5 = await cancel({ type: "cancel", cancels: [{ a: 0, o: 999 }] });
    expect(String((r5.json as { response: string }).response)).toMatch(
      /^Too many cumulative requests sent \(5 > 4\)/,
    );
  });
});

describe("simulator: injected round-trip time", () => {
  test("rttMs holds every API answer back (no answer 40 ms into a 150 ms round trip, then the answer)", async () => {
    sim = await startSimulator({ clock: systemClock, rttMs: 150, users: [{ address: user.address }] });
    let answered = false;
    const pending = fetch(`${sim.apiUrl}/info`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "openOrders", user: user.address }),
    }).then(async (r) => {
      answered = true;
      return r.json();
    });
    await new Promise((r) => setTimeout(r, 40));
    expect(answered).toBe(false);
    expect(await pending).toEqual([]);
    expect(answered).toBe(true);
  });

  test("rttMs out of range is refused at start", async () => {
    await expect(startSimulator({ rttMs: -1 })).rejects.toThrow(
      /rttMs must be a number of milliseconds in 0\.\.60000/,
    );
  });
});
