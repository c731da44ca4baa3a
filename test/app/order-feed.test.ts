/**
 * The daemon with the connection guard and `--on-engine-down cancel` keeps its accounts' open orders fresh over
 * the simulator's WebSocket (docs/operations.md, "The orders known at death"), in-process on the ManualClock over
 * real sockets: with a fresh list the cancel leaves before any read is answered; with the feed down it reads
 * first, as without a feed; at most `orderFeedAccounts` (≤ 10) accounts are followed.
 */
import { mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import type { SimRequestEvent } from "../../src/sim/server.js";
import { eventually } from "../helpers/eventually.js";
import { type Harness, harness } from "./helpers.js";

let h: Harness | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  h?.sim.faults.clear();
  await h?.close();
  h = undefined;
});

async function engine(path: string, accounts: string[]) {
  const s = connect({ path });
  sockets.push(s);
  s.setEncoding("utf8");
  let answer = "";
  s.on("data", (c: string) => {
    answer += c;
  });
  await new Promise<void>((r) => s.once("connect", () => r()));
  s.write(`hl-deadman-guard/1 ${accounts.join(",")}\n`);
  await eventually(() => answer.includes("\n"), { what: "the daemon's answer" });
  return s;
}

const ORDERS = [
  { coin: "BTC", side: "B" as const, limitPx: 90_000, sz: 0.1 },
  { coin: "ETH", side: "A" as const, limitPx: 5_000, sz: 1 },
  // an entry stop: cancelled, never in the fast action
  {
    coin: "ETH",
    side: "B" as const,
    limitPx: 6_000,
    sz: 1,
    orderType: "Stop Market" as const,
    triggerPx: 6_000,
  },
];

async function guarded(label: string) {
  const wallet = Wallet.createRandom() as unknown as Wallet;
  const account = wallet.address.toLowerCase();
  const socket = join(mkdtempSync(join(tmpdir(), `hl-feed-${label}-`)), "guard.sock");
  const requests: SimRequestEvent[] = [];
  h = await harness({
    wallet,
    config: { guardSocket: socket, onEngineDown: "cancel" },
    user: { orders: ORDERS },
    sim: { onRequest: (e) => requests.push(e) },
  });
  const run = h;
  const one = await engine(socket, [account]);
  await eventually(() => run.events("order_feed.fresh").length > 0, { what: "the list fresh" });
  // meta is read in the background at start: the known list is used once it is in
  await eventually(() => requests.some((r) => r.type === "meta" && r.phase === "answered"), {
    what: "meta read",
  });
  expect(run.events("order_feed.fresh")[0]).toMatchObject({ account, orders: 3 });
  return { run, account, one, requests };
}

const cancels = (run: Harness) =>
  run.sim.state.actions.filter((a) => (a.action as { type?: string } | null)?.type === "cancel");

describe("daemon: the orders known at death", () => {
  test("behavior: with a fresh list the cancel leaves before any read is answered (reads blackholed)", async () => {
    const { run, account, one, requests } = await guarded("fresh");
    // from now on no read of orders or meta is ever answered
    run.sim.faults.set("info", { blackhole: true, types: ["frontendOpenOrders", "meta"] });
    const from = requests.length;
    one.destroy();
    await eventually(() => run.sim.state.getOpenOrders(account).length === 0, {
      what: "every order cancelled",
    });
    const after = requests.slice(from);
    expect(after.filter((r) => r.endpoint === "info" && r.phase === "answered")).toEqual([]);
    expect(
      after.filter((r) => r.endpoint === "exchange" && r.type === "cancel" && r.phase === "received"),
    ).toHaveLength(2);
    // two actions: the resting orders fast, the entry stop without the flag
    expect(cancels(run).map((a) => [(a.action as { f?: boolean }).f === true, a.accepted])).toEqual([
      [true, true],
      [false, true],
    ]);
    expect(run.sim.state.getTriggers(account)).toHaveLength(0);
  });

  test("behavior: with the feed down (the simulator dropped it) the cancel reads the orders first", async () => {
    const { run, account, one, requests } = await guarded("stale");
    run.sim.ws.drop();
    await eventually(() => run.events("order_feed.disconnected").length > 0, { what: "the feed down" });
    // the reads answered a second late: a cancel that did not wait for them would reach the exchange first
    run.sim.faults.set("info", { latencyMs: 1_000, types: ["frontendOpenOrders", "meta"] });
    const from = requests.length;
    one.destroy();
    await eventually(() => run.sim.state.getOpenOrders(account).length === 0, {
      what: "every order cancelled",
    });
    const after = requests.slice(from);
    const firstCancel = after.findIndex((r) => r.type === "cancel" && r.phase === "received");
    const firstRead = after.findIndex((r) => r.type === "frontendOpenOrders" && r.phase === "answered");
    expect(firstRead).toBeGreaterThanOrEqual(0);
    expect(firstCancel).toBeGreaterThan(firstRead);
    expect(run.sim.state.getTriggers(account)).toHaveLength(0);
  });

  test("behavior: an 11th account is not followed (it reads at death), and no subscription is refused", async () => {
    const wallet = Wallet.createRandom() as unknown as Wallet;
    const account = wallet.address.toLowerCase();
    const vaults = Array.from({ length: 10 }, () => Wallet.createRandom().address.toLowerCase());
    const socket = join(mkdtempSync(join(tmpdir(), "hl-feed-11-")), "guard.sock");
    h = await harness({
      wallet,
      config: { accounts: [account, ...vaults], guardSocket: socket, onEngineDown: "cancel" },
      user: { vaults },
      sim: { users: [{ address: account, vaults }, ...vaults.map((address) => ({ address }))] },
    });
    const run = h;
    await eventually(() => run.sim.ws.subscriptions().flat().length === 10, { what: "ten subscriptions" });
    const followed = run.sim.ws.subscriptions().flat();
    expect(followed).toHaveLength(10);
    expect(new Set(followed).size).toBe(10);
    const [limit] = run.events("order_feed.limit");
    expect(limit).toMatchObject({ followed: 10 });
    const left = limit!.readAtDeath as string[];
    expect(left).toHaveLength(1);
    expect(followed).not.toContain(left[0]);
    expect(run.events("order_feed.refused")).toEqual([]);
  });

  test("args: orderFeedAccounts lowers the count; 0 follows none", async () => {
    const wallet = Wallet.createRandom() as unknown as Wallet;
    const account = wallet.address.toLowerCase();
    const vault = Wallet.createRandom().address.toLowerCase();
    const socket = join(mkdtempSync(join(tmpdir(), "hl-feed-n-")), "guard.sock");
    h = await harness({
      wallet,
      config: {
        accounts: [account, vault],
        guardSocket: socket,
        onEngineDown: "cancel",
        orderFeedAccounts: 1,
      },
      user: { vaults: [vault] },
      sim: { users: [{ address: account, vaults: [vault] }, { address: vault }] },
    });
    const run = h;
    await eventually(() => run.sim.ws.subscriptions().flat().length === 1, { what: "one subscription" });
    expect(run.sim.ws.subscriptions()).toEqual([[account]]);
    expect(run.events("order_feed.limit")[0]).toMatchObject({ followed: 1, readAtDeath: [vault] });
    await run.close();
    h = await harness({
      config: { guardSocket: `${socket}.2`, onEngineDown: "cancel", orderFeedAccounts: 0 },
    });
    expect(h.sim.ws.subscriptions()).toEqual([]);
    expect(h.events("order_feed.connected")).toEqual([]);
  });
});
