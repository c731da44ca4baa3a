/**
 * The order feed (src/protocol/hyperliquid/order-feed.ts): the daemon's kept-fresh open-order lists, against the
 * simulator's WebSocket over real sockets on 127.0.0.1, and its liveness rules on a socket that goes silent.
 */
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../../src/core/clock.js";
import { ManualTimers, systemTimers } from "../../../src/core/runtime.js";
import {
  type FeedSocket,
  loadWsClient,
  OpenOrderFeed,
  type OrderFeedEvent,
  wsUrlOf,
} from "../../../src/protocol/hyperliquid/order-feed.js";
import { type SimulatorHandle, startSimulator } from "../../../src/sim/server.js";
import type { SimStore } from "../../../src/sim/state.js";
import { eventually } from "../../helpers/eventually.js";

let sim: SimulatorHandle | undefined;
let feed: OpenOrderFeed | undefined;
afterEach(async () => {
  feed?.stop();
  feed = undefined;
  await sim?.close();
  sim = undefined;
});

const address = () => Wallet.createRandom().address.toLowerCase();

describe("order feed", () => {
  test("args: the WebSocket URL is the API's host at /ws, ws for http and wss for https", () => {
    expect(wsUrlOf("https://api.hyperliquid.xyz")).toBe("wss://api.hyperliquid.xyz/ws");
    expect(wsUrlOf("https://api.hyperliquid-testnet.xyz/")).toBe("wss://api.hyperliquid-testnet.xyz/ws");
    expect(wsUrlOf("http://u:p@127.0.0.1:8080/base?x=1")).toBe("ws://127.0.0.1:8080/ws");
    expect(() => wsUrlOf("ftp://x")).toThrow(/http\(s\)/);
  });

  test("error: more than 10 users is refused (the exchange's limit per IP)", async () => {
    const connect = await loadWsClient();
    const users = Array.from({ length: 11 }, address);
    expect(
      () => new OpenOrderFeed({ url: "ws://127.0.0.1:1/ws", users, timers: systemTimers(), connect }),
    ).toThrow(/at most 10 users/);
  });

  test("default: the list stays in step with placed and cancelled orders; unfresh before the first list", async () => {
    const user = address();
    sim = await startSimulator({
      users: [{ address: user, orders: [{ coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" }] }],
    });
    feed = new OpenOrderFeed({
      url: sim.wsUrl,
      users: [user],
      timers: systemTimers(),
      connect: await loadWsClient(),
    });
    expect(feed.fresh(user)).toBeNull();
    feed.start();
    const oids = () => feed!.fresh(user)?.map((o) => o.oid);
    const onBook = () => sim!.state.getOpenOrders(user).map((o) => o.oid);
    await eventually(() => oids()?.length === 1, { what: "the first list" });
    expect(oids()).toEqual(onBook());
    const placed = sim.state.addOrder(user, {
      coin: "ETH",
      side: "A",
      limitPx: "5000",
      sz: "0.5",
      orderType: "Stop Market",
      triggerPx: "5000",
    });
    await eventually(() => oids()?.length === 2, { what: "the placed order" });
    expect(oids()).toEqual(onBook());
    expect(feed.fresh(user)!.find((o) => o.oid === placed.oid)?.isTrigger).toBe(true);
    const store = sim.state as SimStore;
    store.endOrder(store.account(user)!, onBook()[0]!, "canceled", sim.clock.now());
    await eventually(() => oids()?.length === 1, { what: "the cancelled order gone" });
    expect(oids()).toEqual([placed.oid]);
    // an unknown user has no list
    expect(feed.fresh(address())).toBeNull();
  });

  test("behavior: the simulator drops the socket: unfresh at once, then reconnected and fresh again", async () => {
    const user = address();
    sim = await startSimulator({
      users: [{ address: user, orders: [{ coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" }] }],
    });
    const events: OrderFeedEvent[] = [];
    feed = new OpenOrderFeed({
      url: sim.wsUrl,
      users: [user],
      timers: systemTimers(),
      connect: await loadWsClient(),
      reconnectInitialMs: 50,
      onEvent: (e) => events.push(e),
    });
    feed.start();
    await eventually(() => feed!.fresh(user), { what: "the first list" });
    expect(sim.ws.drop()).toBe(1);
    await eventually(() => feed!.fresh(user) === null, { what: "the list unfresh" });
    // an order placed while the socket is down is in the list after the reconnect
    const placed = sim.state.addOrder(user, { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" });
    await eventually(() => feed!.fresh(user)?.some((o) => o.oid === placed.oid), { what: "fresh again" });
    expect(events.map((e) => e.type).filter((t) => t !== "snapshot")).toEqual([
      "connected",
      "disconnected",
      "connected",
    ]);
    expect(sim.ws.subscriptions()).toEqual([[user]]);
  });

  test("behavior: a socket that answers nothing is closed at the next ping and reopened after the back-off", async () => {
    const clock = new ManualClock(0);
    const timers = new ManualTimers(clock);
    const opened: Array<{
      sent: string[];
      terminated: boolean;
      fire: Record<string, (...a: unknown[]) => void>;
    }> = [];
    const connect = (): FeedSocket => {
      const s = {
        sent: [] as string[],
        terminated: false,
        fire: {} as Record<string, (...a: unknown[]) => void>,
      };
      opened.push(s);
      return {
        send: (d) => s.sent.push(d),
        terminate: () => {
          s.terminated = true;
        },
        on: (event: string, listener: (...a: unknown[]) => void) => {
          s.fire[event] = listener;
        },
      } as FeedSocket;
    };
    const user = address();
    feed = new OpenOrderFeed({ url: "ws://x/ws", users: [user], timers, connect, pingIntervalMs: 1_000 });
    feed.start();
    opened[0]!.fire.open!();
    opened[0]!.fire.message!(
      JSON.stringify({ channel: "openOrders", data: { dex: "", user, orders: [] } }),
      false,
    );
    expect(feed.fresh(user)).toEqual([]);
    expect(JSON.parse(opened[0]!.sent[0]!)).toEqual({
      method: "subscribe",
      subscription: { type: "openOrders", user },
    });
    clock.advance(1_000); // first ping: something was heard since the open
    expect(opened[0]!.sent.at(-1)).toBe('{"method":"ping"}');
    expect(feed.fresh(user)).toEqual([]);
    clock.advance(1_000); // nothing since the ping: dead
    expect(opened[0]!.terminated).toBe(true);
    expect(feed.fresh(user)).toBeNull();
    expect(opened).toHaveLength(1);
    clock.advance(500); // the back-off
    expect(opened).toHaveLength(2);
    // a list of the wrong shape is no list
    opened[1]!.fire.open!();
    opened[1]!.fire.message!(
      JSON.stringify({ channel: "openOrders", data: { dex: "", user, orders: [{}] } }),
      false,
    );
    expect(feed.fresh(user)).toBeNull();
  });
});
