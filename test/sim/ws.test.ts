/**
 * The simulator's WebSocket at /ws (src/sim/ws.ts), over real sockets on 127.0.0.1: `openOrders` answers
 * `subscriptionResponse` and the whole list, then the whole list again on every change; `ping` answers `pong`; at
 * most 10 unique users per IP across connections, the 11th refused with the exchange's error text.
 */
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import type { SimStore } from "../../src/sim/state.js";
import { eventually } from "../helpers/eventually.js";

type Client = { send(s: string): void; close(): void; on(e: string, f: (...a: unknown[]) => void): void };

let sim: SimulatorHandle | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await sim?.close();
  sim = undefined;
});

/** A raw client (the `ws` package), collecting every message it hears. */
async function client(url: string) {
  const name = "ws";
  const { WebSocket } = (await import(name)) as { WebSocket: new (url: string) => Client };
  const ws = new WebSocket(url);
  clients.push(ws);
  const heard: Array<{ channel: string; data?: unknown }> = [];
  ws.on("message", (data) => heard.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    ws.on("open", () => resolve());
    ws.on("error", (e) => reject(e));
  });
  const send = (m: unknown) => ws.send(JSON.stringify(m));
  const subscribe = (user: string) =>
    send({ method: "subscribe", subscription: { type: "openOrders", user } });
  const lists = (user: string) =>
    heard
      .filter((m) => m.channel === "openOrders" && (m.data as { user: string }).user === user)
      .map((m) => (m.data as { orders: Array<{ oid: number; isTrigger: boolean }> }).orders);
  return { ws, heard, send, subscribe, lists };
}

const address = () => Wallet.createRandom().address.toLowerCase();

describe("simulator: the WebSocket's openOrders", () => {
  test("default: the whole list at once, then again on every placed or cancelled order; ping answers pong", async () => {
    const user = address();
    sim = await startSimulator({
      users: [
        {
          address: user,
          orders: [
            { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" },
            {
              coin: "BTC",
              side: "A",
              limitPx: "40000",
              sz: "0.01",
              reduceOnly: true,
              orderType: "Stop Market",
              triggerPx: "40000",
            },
          ],
        },
      ],
    });
    expect(sim.wsUrl).toBe(`${sim.apiUrl.replace("http", "ws")}/ws`);
    const c = await client(sim.wsUrl);
    c.subscribe(user);
    await eventually(() => c.lists(user).length === 1, { what: "the first list" });
    expect(c.heard[0]).toEqual({
      channel: "subscriptionResponse",
      data: { method: "subscribe", subscription: { type: "openOrders", user, dex: "" } },
    });
    const [first] = c.lists(user);
    expect(first!.map((o) => o.isTrigger)).toEqual([false, true]);
    expect(first!.map((o) => o.oid)).toEqual(sim.state.getOpenOrders(user).map((o) => o.oid));

    const placed = sim.state.addOrder(user, { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" });
    await eventually(() => c.lists(user).length === 2, { what: "the list after a placed order" });
    expect(c.lists(user)[1]!.map((o) => o.oid)).toContain(placed.oid);

    // a cancel through the exchange's own path: the list without it
    // the store's cancel (what the exchange's `cancel` action calls)
    const store = sim.state as SimStore;
    store.endOrder(store.account(user)!, placed.oid, "canceled", sim.clock.now());
    await eventually(() => c.lists(user).length === 3, { what: "the list after a cancel" });
    expect(c.lists(user)[2]!.map((o) => o.oid)).not.toContain(placed.oid);
    expect(c.lists(user)[2]).toHaveLength(2);

    c.send({ method: "ping" });
    await eventually(() => c.heard.some((m) => m.channel === "pong"), { what: "pong" });
    // another user's change is not pushed here
    sim.state.addOrder(address(), { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" });
    c.send({ method: "ping" });
    await eventually(() => c.heard.filter((m) => m.channel === "pong").length === 2, { what: "second pong" });
    expect(c.lists(user)).toHaveLength(3);
  });

  test("error: an 11th unique user per IP is refused with the exchange's text, across connections", async () => {
    const users = Array.from({ length: 11 }, address);
    sim = await startSimulator({ users: users.map((u) => ({ address: u })) });
    const a = await client(sim.wsUrl);
    const b = await client(sim.wsUrl);
    for (const u of users.slice(0, 6)) a.subscribe(u);
    for (const u of users.slice(6, 10)) b.subscribe(u);
    // the same user again is no new user
    b.subscribe(users[0]!);
    await eventually(() => a.heard.length + b.heard.length === 22, { what: "ten subscriptions answered" });
    b.subscribe(users[10]!);
    await eventually(() => b.heard.some((m) => m.channel === "error"), { what: "the refusal" });
    expect(b.heard.find((m) => m.channel === "error")).toEqual({
      channel: "error",
      data: "Cannot track more than 10 total users.",
    });
    expect(b.lists(users[10]!)).toEqual([]);
    expect(sim.ws.subscriptions().flat().sort()).toEqual([...users.slice(0, 10), users[0]!].sort());
    // a connection closed frees its users
    a.ws.close();
    await eventually(() => sim!.ws.subscriptions().length === 1, { what: "the closed connection gone" });
    b.subscribe(users[10]!);
    await eventually(() => b.lists(users[10]!).length === 1, { what: "the 11th user's list" });
  });

  test("behavior: drop() closes every connection (the reconnect path of the daemon's feed)", async () => {
    sim = await startSimulator();
    const c = await client(sim.wsUrl);
    let closed = false;
    c.ws.on("close", () => {
      closed = true;
    });
    expect(sim.ws.drop()).toBe(1);
    await eventually(() => closed, { what: "the client's close" });
  });
});
