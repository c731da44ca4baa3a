/**
 * A cancel pass at a rate-limited IP (issue 38, finding 3), in-process on the simulator's ManualClock over real HTTP
 * and a real guard socket. The simulator enforces the IP's 1,200 weight a minute (fixed windows of its clock); the
 * test spends the IP's weight itself, as another client of the same IP (the engine) would, then the engine dies:
 * - the weight comes back within the minute: the pass is tried again until it is taken, the orders are cancelled,
 *   and no trigger is spent (no push at the 5 s minimum);
 * - the IP stays spent: the pass falls back only when the deadline the exchange holds leaves no more room, and the
 *   fall-back says `rate_limited`.
 */
import { mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { HyperliquidApiError } from "../../src/protocol/hyperliquid/errors.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { eventually } from "../helpers/eventually.js";
import { type Harness, harness } from "./helpers.js";

let h: Harness | undefined;
const sockets: Socket[] = [];
const clients: InfoClient[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const c of clients.splice(0)) c.close();
  await h?.close();
  h = undefined;
});

const START = Date.UTC(2026, 0, 1, 12, 0, 0);
const ORDERS = [
  { coin: "BTC", side: "B" as const, limitPx: 90_000, sz: 0.1 },
  { coin: "ETH", side: "A" as const, limitPx: 5_000, sz: 1 },
  { coin: "SOL", side: "B" as const, limitPx: 100, sz: 10 },
];

async function engine(path: string, account: string) {
  const s = connect({ path });
  sockets.push(s);
  s.setEncoding("utf8");
  let answer = "";
  s.on("data", (c: string) => {
    answer += c;
  });
  await new Promise<void>((r) => s.once("connect", () => r()));
  s.write(`hl-deadman-guard/1 ${account}\n`);
  await eventually(() => answer.includes("\n"), { what: "the daemon's answer" });
  expect(answer).toBe("ok\n");
  return s;
}

/** Another client of the IP: spends what is left of this minute's weight (reads of 20, then of 2). */
async function spendTheIp(info: InfoClient, account: string): Promise<number> {
  let spent = 0;
  const until429 = async (read: () => Promise<unknown>, weight: number) => {
    for (let i = 0; i < 100; i++) {
      try {
        await read();
        spent += weight;
      } catch (error) {
        if (error instanceof HyperliquidApiError && error.kind === "rate_limited") return;
        throw error;
      }
    }
    throw new Error("the simulator never refused: is its IP limit on?");
  };
  await until429(() => info.meta(), 20);
  await until429(() => info.positions({ user: account }), 2);
  return spent;
}

async function guarded(label: string) {
  const wallet = Wallet.createRandom() as unknown as Wallet;
  const account = wallet.address.toLowerCase();
  const socket = join(mkdtempSync(join(tmpdir(), `hl-weight-${label}-`)), "guard.sock");
  h = await harness({
    start: START,
    wallet,
    config: { guardSocket: socket, onEngineDown: "cancel" },
    user: { orders: ORDERS },
    sim: { ipWeightPerMinute: 1_200 },
  });
  const run = h;
  const one = await engine(socket, account);
  await eventually(() => run.events("order_feed.fresh").length > 0, { what: "the list fresh" });
  const info = new InfoClient({ apiUrl: run.sim.apiUrl, retryLimit: 0 });
  clients.push(info);
  return { run, account, one, info };
}

describe("daemon: a cancel pass at a rate-limited IP", () => {
  test("behavior: the IP's weight spent by another client, the engine dies: the pass is tried again and cancels within the minute, no trigger spent", async () => {
    const { run, account, one, info } = await guarded("back");
    // 40 s into the simulator's minute: the IP's weight comes back 20 s after the death
    await run.advance(40_000 - (run.clock.now() - START));
    const deadline = run.sim.state.getSchedule(account)!;
    expect(deadline).toBeGreaterThan(run.clock.now() + 30_000);
    expect(await spendTheIp(info, account)).toBeGreaterThan(1_000);
    one.destroy();
    await eventually(() => run.events("engine.down").length > 0, { what: "engine.down" });
    await run.advance(1_000, 100);
    // refused, tried again: nothing spent, no push at the 5 s minimum
    const retry = run.events("engine.cancel_retry")[0]!;
    expect(retry).toMatchObject({ reason: "rate_limited", attempt: 1 });
    expect(retry.giveUpInMs as number).toBeGreaterThan(20_000);
    await run.advance(deadline + 10_000 - run.clock.now(), 500);
    expect(run.events("engine.cancel_failed")).toEqual([]);
    // the first pass confirmed (after its tries again), then a pass each interval as before
    expect(run.events("engine.orders_cancelled")[0]).toMatchObject({ pass: 1 });
    expect(run.sim.state.getOpenOrders(account)).toEqual([]);
    expect(run.sim.state.getTriggers(account)).toHaveLength(0);
    // never expedited: every schedule since the death a full deadline ahead (the renewal resumed)
    expect(run.sim.state.getSchedule(account)!).toBeGreaterThan(run.clock.now() + 30_000);
    const expedites = run.sim.state.actions.filter(
      (a) =>
        a.accepted &&
        (a.action as { type?: string }).type === "scheduleCancel" &&
        (a.action as { time: number }).time - a.receivedAt <= 6_000,
    );
    expect(expedites).toEqual([]);
  });

  test("behavior: the IP stays spent: the fall-back comes only when the deadline leaves no more room, and says rate_limited", async () => {
    const { run, account, one, info } = await guarded("spent");
    await run.advance(20_000 - (run.clock.now() - START));
    const deadline = run.sim.state.getSchedule(account)!;
    await spendTheIp(info, account);
    one.destroy();
    await eventually(() => run.events("engine.down").length > 0, { what: "engine.down" });
    const downAt = run.clock.now();
    // the other client spends each new minute's weight as soon as it comes
    while (run.events("engine.cancel_failed").length === 0 && run.clock.now() < deadline) {
      await run.advance(500, 500);
      await spendTheIp(info, account);
    }
    const failed = run.events("engine.cancel_failed")[0]!;
    expect(failed).toMatchObject({ reason: "rate_limited" });
    expect(failed.retries as number).toBeGreaterThanOrEqual(3);
    expect(String(failed.msg)).toContain("rate_limited");
    // given up only near the end: past the deadline minus the fall-back's room (5.5 s + a request time-out) minus
    // a try (two request time-outs), never at the first refusal
    expect(run.clock.now() - downAt).toBeGreaterThan(deadline - downAt - 5_500 - 3 * 5_000 - 1_000);
    expect(run.events("engine.cancel_retry").length).toBe(failed.retries);
  });
});
