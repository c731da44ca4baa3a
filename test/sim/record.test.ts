/**
 * The simulator's record, agents and cancel, checked on the wire (raw HTTP, the real shapes and strings):
 * explorer userDetails on its own path, historicalOrders after a fire, extraAgents / userRole, agent expiry
 * and same-name deregistration, frontendOpenOrders on the demo account, the cancel action, and faults.
 */
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { signL1Action } from "../../src/protocol/hyperliquid/signing.js";
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from "../../src/sim/server.js";
import { post, signedScheduleCancel, testWallet } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const user = testWallet("record-user");
const agent = testWallet("record-agent");
const U = user.address.toLowerCase();
const A = agent.address.toLowerCase();
let sim: SimulatorHandle | undefined;
let clock: ManualClock;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: SimulatorOptions = {}) {
  clock = new ManualClock(T0);
  sim = await startSimulator({
    clock,
    users: [{ address: U, agents: [A], orders: [{ coin: "ETH", side: "B", limitPx: 3000, sz: 1 }] }],
    ...options,
  });
  return sim;
}
const s = () => sim as SimulatorHandle;
const info = (body: unknown) => post(`${s().apiUrl}/info`, body);
const explorer = (body: unknown) => post(s().explorerUrl, body);
async function schedule(time: number | undefined, key = agent.privateKey) {
  const body = await signedScheduleCancel({
    privateKey: key,
    nonce: clock.now(),
    ...(time !== undefined ? { time } : {}),
  });
  return post(`${s().apiUrl}/exchange`, body);
}
async function cancel(cancels: Array<{ a: number; o: number }>, key = agent.privateKey) {
  const action = { type: "cancel", cancels };
  const nonce = clock.now() + 1;
  const signature = await signL1Action({ privateKey: key, action, nonce, isMainnet: true });
  return post(`${s().apiUrl}/exchange`, { action, nonce, signature });
}

describe("explorer userDetails", () => {
  test("default: every scheduleCancel that reached the chain, newest first, error null or the refusal", async () => {
    await start();
    await schedule(clock.now() + 60_000);
    clock.advance(1_000);
    await schedule(clock.now() + 1_000); // too early: refused on chain
    const r = await explorer({ type: "userDetails", user: U });
    expect(r.status).toBe(200);
    const body = r.json as { type: string; txs: Array<Record<string, unknown>> };
    expect(body.type).toBe("userDetails");
    expect(body.txs.map((t) => t.error)).toEqual([
      "Scheduled cancel time too early, must be at least 5 seconds from now.",
      null,
    ]);
    const tx = body.txs[1]!;
    expect(Object.keys(tx).sort()).toEqual(["action", "block", "error", "hash", "time", "user"]);
    expect(tx).toMatchObject({ action: { type: "scheduleCancel", time: T0 + 60_000 }, time: T0, user: U });
    expect(tx.hash).toMatch(/^0x[0-9a-f]{64}$/);
    // The agent's address lists the same transactions.
    expect(((await explorer({ type: "userDetails", user: A })).json as { txs: unknown[] }).txs).toHaveLength(
      2,
    );
    // Not on /info, and a bad body is refused like the API refuses one.
    expect((await info({ type: "userDetails", user: U })).status).toBe(422);
    expect((await explorer({ type: "nope" })).status).toBe(422);
  });

  test("the list keeps the newest explorerTxLimit transactions", async () => {
    await start({ explorerTxLimit: 2 });
    for (let i = 0; i < 4; i++) {
      await schedule(clock.now() + 60_000);
      clock.advance(1_000);
    }
    const txs = ((await explorer({ type: "userDetails", user: U })).json as { txs: Array<{ time: number }> })
      .txs;
    expect(txs.map((t) => t.time)).toEqual([T0 + 3_000, T0 + 2_000]);
  });

  test("faults: explorer rate limit (429) and 500 without touching /info", async () => {
    await start();
    s().faults.set("explorer", { rateLimit: true });
    expect((await explorer({ type: "userDetails", user: U })).status).toBe(429);
    expect((await info({ type: "extraAgents", user: U })).status).toBe(200);
  });
});

describe("historicalOrders, cancel and the demo's open orders", () => {
  test("default: a fire ends every order with status scheduledCancel at the deadline", async () => {
    await start();
    await schedule(T0 + 60_000);
    clock.advance(61_000);
    const h = (await info({ type: "historicalOrders", user: U })).json as Array<Record<string, unknown>>;
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({
      status: "scheduledCancel",
      statusTimestamp: T0 + 60_000,
      order: { coin: "ETH", side: "B" },
    });
    expect(s().state.triggersOn(U, "2026-01-01")).toBe(1);
  });

  test("cancel: per-order statuses, history says canceled, no trigger, listed by the explorer", async () => {
    await start();
    const oid = s().state.getOpenOrders(U)[0]!.oid;
    const r = await cancel([
      { a: 1, o: oid },
      { a: 1, o: 999 },
    ]);
    expect(r.json).toEqual({
      status: "ok",
      response: {
        type: "cancel",
        data: {
          statuses: ["success", { error: "Order was never placed, already canceled, or filled. asset=1" }],
        },
      },
    });
    expect(s().state.getOpenOrders(U)).toEqual([]);
    expect(
      ((await info({ type: "historicalOrders", user: U })).json as Array<{ status: string }>)[0]!.status,
    ).toBe("canceled");
    expect(s().state.getTriggers(U)).toEqual([]);
    const txs = (
      (await explorer({ type: "userDetails", user: U })).json as { txs: Array<{ action: { type: string } }> }
    ).txs;
    expect(txs[0]!.action.type).toBe("cancel");
  });

  test("cancel: the wrong asset index for the oid is refused per order; a bad signature recovers a stranger", async () => {
    await start();
    const oid = s().state.getOpenOrders(U)[0]!.oid;
    expect(
      ((await cancel([{ a: 0, o: oid }])).json as { response: { data: { statuses: unknown[] } } }).response
        .data.statuses,
    ).toEqual([{ error: "Order was never placed, already canceled, or filled. asset=0" }]);
    const stranger = testWallet("record-stranger");
    const refused = (await cancel([{ a: 1, o: oid }], stranger.privateKey)).json as {
      status: string;
      response: string;
    };
    expect(refused.status).toBe("err");
    expect(refused.response).toMatch(/^L1 error: User or API Wallet 0x[0-9a-f]{40} does not exist\.$/);
  });

  test("meta lists the universe (asset index = position); the demo has trigger and reduce-only orders", async () => {
    await start({ demo: true });
    const meta = (await info({ type: "meta" })).json as { universe: Array<{ name: string }> };
    expect(meta.universe.slice(0, 6).map((u) => u.name)).toEqual([
      "BTC",
      "ETH",
      "ATOM",
      "MATIC",
      "DYDX",
      "SOL",
    ]);
    const orders = (await info({ type: "frontendOpenOrders", user: s().demo!.address })).json as Array<
      Record<string, unknown>
    >;
    const kinds = orders.map(
      (o) => `${o.coin} ${o.orderType} trigger=${o.isTrigger} reduceOnly=${o.reduceOnly}`,
    );
    expect(kinds).toContain("BTC Stop Market trigger=true reduceOnly=true");
    expect(kinds).toContain("ETH Take Profit Market trigger=true reduceOnly=true");
    expect(kinds).toContain("SOL Limit trigger=false reduceOnly=true");
  });
});

describe("agents", () => {
  test("default: extraAgents lists named agents with validUntil; userRole names the master", async () => {
    await start();
    expect((await info({ type: "extraAgents", user: U })).json).toEqual([
      { address: A, name: "agent-1", validUntil: T0 + 180 * 86_400_000 },
    ]);
    expect((await info({ type: "userRole", user: A })).json).toEqual({ role: "agent", data: { user: U } });
    expect((await info({ type: "userRole", user: U })).json).toEqual({ role: "user" });
  });

  test("expiry: an expired agent is no longer listed and its signature is refused", async () => {
    await start();
    await post(`${s().adminUrl}/agents`, { user: U, agent: A, name: "bot", validUntil: T0 + 10_000 });
    expect(((await schedule(clock.now() + 60_000)).json as { status: string }).status).toBe("ok");
    clock.advance(20_000);
    expect((await info({ type: "extraAgents", user: U })).json).toEqual([]);
    const refused = (await schedule(clock.now() + 60_000)).json as { status: string; response: string };
    expect(refused).toEqual({ status: "err", response: `L1 error: User or API Wallet ${A} does not exist.` });
    expect((await info({ type: "userRole", user: A })).json).toEqual({ role: "missing" });
  });

  test("same-name approval deregisters the previous agent", async () => {
    await start();
    const next = testWallet("record-next").address.toLowerCase();
    const r = await post(`${s().adminUrl}/agents`, { user: U, agent: next, name: "agent-1" });
    expect(r.status).toBe(200);
    expect(
      ((await info({ type: "extraAgents", user: U })).json as Array<{ address: string }>).map(
        (a) => a.address,
      ),
    ).toEqual([next]);
    const refused = (await schedule(clock.now() + 60_000)).json as { response: string };
    expect(refused.response).toBe(`L1 error: User or API Wallet ${A} does not exist.`);
  });

  test("faults limited to one info type: extraAgents fails, clearinghouseState still answers", async () => {
    await start();
    s().faults.set("info", { errorRate: 1, types: ["extraAgents"] });
    expect((await info({ type: "extraAgents", user: U })).status).toBe(500);
    expect((await info({ type: "clearinghouseState", user: U })).status).toBe(200);
  });
});
