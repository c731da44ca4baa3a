/**
 * Issue 29, each statement of docs/operations.md "When cancelling is not enough" as a process: the built CLI runs
 * against an in-process simulator (real HTTP on loopback; its marks, books, faults and recorded actions driven and
 * read directly), a fake engine holds the guard socket. Each step-2 rule (liquidation distance, drawdown from the
 * engine's death, notional cap) is ignored while the engine is connected and latches HALTED and closes the account
 * flat once it is gone; each exchange refusal (the post-only window, the 1,000-open-orders rule, nothing inside the
 * slippage cap) is said, retried and never turned into another kind of order; the latch survives a restart.
 */
import { mkdtempSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Wallet } from "ethers";
import { beforeAll, describe, expect, type OnTestFinishedHandler, test } from "vitest";
import { type SimulatorHandle, type SimulatorUser, startSimulator } from "../../src/sim/server.js";
import { connectEngine as engine } from "../helpers/engine.js";
import type { LogLine } from "../helpers/json-lines.js";
import { assertBuilt, runCliProcess, type SpawnedProcess, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());

type Rig = {
  sim: SimulatorHandle;
  account: string;
  key: string;
  dir: string;
  stateDir: string;
  guard: string;
  daemon: SpawnedProcess;
  health: string;
  engine: Socket;
};

/** Registers a cleanup for the running test (the test context's own hook: the tests of this file run concurrently). */
type Cleanup = (fn: OnTestFinishedHandler) => void;

/** BTC long (cross) and ETH short (isolated), 5,000 USD of collateral: account value 5,000 at the entry marks. */
const POSITIONS: NonNullable<SimulatorUser["positions"]> = [
  { coin: "BTC", szi: "0.5", entryPx: "95000", leverage: 10 },
  { coin: "ETH", szi: "-3", entryPx: "3300", leverage: 5, marginMode: "isolated" },
];

function spawnDaemon(r: Omit<Rig, "daemon" | "health" | "engine">, rule: string[]): SpawnedProcess {
  return spawnCli(
    [
      "run",
      "--api-url",
      r.sim.apiUrl,
      "--state-dir",
      r.stateDir,
      "--interval",
      "1s",
      "--deadline",
      "15s",
      "--request-timeout",
      "1s",
      "--exposure-interval",
      "1s",
      "--guard-socket",
      r.guard,
      "--on-engine-down",
      "cancel",
      "--escalate-account",
      r.account,
      "--close-retry-interval",
      "2s",
      "--health",
      "127.0.0.1:0",
      ...rule,
    ],
    { HL_PRIVATE_KEY: r.key },
  );
}

/**
 * A simulator with the account, the daemon with `rule`, the engine connected and one push done; all of it
 * stopped when the test finishes (`cleanup`: the test's `onTestFinished`).
 */
async function rig(cleanup: Cleanup, rule: string[], user: Partial<SimulatorUser> = {}): Promise<Rig> {
  const wallet = Wallet.createRandom();
  const account = wallet.address.toLowerCase();
  const sim = await startSimulator({
    ipWeightPerMinute: null,
    users: [{ address: account, balanceUsd: 5_000, positions: POSITIONS, ...user }],
  });
  const dir = mkdtempSync(path.join(tmpdir(), "hl-esc-rules-"));
  const base = {
    sim,
    account,
    key: wallet.privateKey,
    dir,
    stateDir: path.join(dir, "s"),
    guard: path.join(dir, "guard.sock"),
  };
  const daemon = spawnDaemon(base, rule);
  const r: Rig = { ...base, daemon, health: "", engine: null as unknown as Socket };
  cleanup(async () => {
    (r.engine as Socket | null)?.destroy();
    r.daemon.kill("SIGKILL");
    await r.daemon.exited;
    await sim.close();
  });
  r.health = String((await daemon.waitForEvent("health.listening", 15_000)).url);
  await daemon.waitForEvent("guard.listening", 15_000);
  r.engine = await engine(r.guard, account);
  await daemon.waitForEvent("heartbeat.ok", 10_000);
  return r;
}

const count = (d: SpawnedProcess, event: string) => d.lines.filter((l) => l.event === event).length;

/**
 * The next `n` exposure lines of the account (after those already seen) that satisfy `match`, with no
 * `escalation.halted` among them: these are polls whose figures the switch read and did not act on.
 */
async function quietExposures(r: Rig, n: number, match: (l: LogLine) => boolean = () => true) {
  const seen: LogLine[] = [];
  const start = r.daemon.lines.length;
  for (let i = 0; i < n; i++) {
    const l = await r.daemon.waitFor(
      (x) =>
        r.daemon.lines.indexOf(x) >= start &&
        (x.event === "escalation.halted" ||
          (x.event === "exposure" && x.account === r.account && !seen.includes(x) && match(x))),
      10_000,
      "an exposure line",
    );
    expect(l.event, `escalation while it should not: ${JSON.stringify(l)}`).toBe("exposure");
    seen.push(l);
  }
  return seen;
}

const minDistance = (l: LogLine) =>
  Math.min(
    ...(l.positions as { liquidationDistancePct?: number }[])
      .map((p) => p.liquidationDistancePct)
      .filter((x): x is number => typeof x === "number"),
  );

const positionsOf = (r: Rig) =>
  r.sim.state.getPositions(r.account).map((p) => ({ coin: p.coin, szi: p.szi }));

/** Every order the simulator received in `order` actions, in arrival order. */
function ordersSent(r: Rig) {
  return r.sim.state.actions.flatMap((a) => {
    const action = a.action as { type?: string; orders?: { r: boolean; t: Record<string, unknown> }[] };
    return action?.type === "order" ? (action.orders ?? []) : [];
  });
}

/** The engine goes: HALTED for `rule`, then closed flat on the simulator. */
async function dropAndExpectClosed(r: Rig, rule: string, reason: RegExp) {
  r.engine.destroy();
  const halted = await r.daemon.waitForEvent("escalation.halted", 10_000);
  expect(halted.rule).toBe(rule);
  expect(String(halted.reason)).toMatch(reason);
  const closed = await r.daemon.waitForEvent("escalation.closed", 15_000);
  expect(closed.orders).toBeGreaterThanOrEqual(2);
  expect(positionsOf(r)).toEqual([]);
  // reduce-only IOC, nothing else
  for (const o of ordersSent(r)) expect(o).toMatchObject({ r: true, t: { limit: { tif: "Ioc" } } });
  return halted;
}

describe.concurrent("each step-2 rule as a process: never under a live engine, HALTED and flat once it is gone", () => {
  test("behavior: liquidation distance below --escalate-liquidation-pct", async ({ onTestFinished }) => {
    const r = await rig(onTestFinished, ["--escalate-liquidation-pct", "5"]);
    const [first] = await quietExposures(r, 1);
    expect(minDistance(first!)).toBeGreaterThan(5);
    // BTC toward its liquidation price (about 86,000 with 5,000 USD of collateral): under 5 % away
    r.sim.state.setMark("BTC", 89_000);
    const near = await quietExposures(r, 2, (l) => minDistance(l) < 5);
    expect(minDistance(near[1]!)).toBeLessThan(5);
    expect(count(r.daemon, "escalation.halted")).toBe(0);
    expect(positionsOf(r)).toHaveLength(2);
    await dropAndExpectClosed(r, "liquidation", /from liquidation \(limit 5 %\)/);
  }, 40_000);

  test("behavior: account value down --escalate-drawdown-pct from its level when the engine went down", async ({
    onTestFinished,
  }) => {
    const r = await rig(onTestFinished, ["--escalate-drawdown-pct", "10"]);
    await quietExposures(r, 1, (l) => Number(l.accountValue) === 5_000);
    // a 20 % drawdown while the engine is up: not read (no baseline, and a live engine manages its own risk)
    r.sim.state.setMark("BTC", 93_000);
    await quietExposures(r, 2, (l) => Number(l.accountValue) === 4_000);
    expect(count(r.daemon, "escalation.halted")).toBe(0);
    // the engine goes at 4,000: that is the baseline; the same figures after its death hold no rule
    r.engine.destroy();
    await r.daemon.waitForEvent("engine.down", 5_000);
    await quietExposures(r, 2, (l) => Number(l.accountValue) === 4_000);
    expect(count(r.daemon, "escalation.halted")).toBe(0);
    // 3,500 is 12.5 % below 4,000
    r.sim.state.setMark("BTC", 92_000);
    const halted = await r.daemon.waitForEvent("escalation.halted", 10_000);
    expect(halted.rule).toBe("drawdown");
    expect(String(halted.reason)).toContain(
      "down 12.5 % from 4000 USD when the engine went down (limit 10 %)",
    );
    await r.daemon.waitForEvent("escalation.closed", 15_000);
    expect(positionsOf(r)).toEqual([]);
  }, 40_000);

  test("behavior: total notional above --escalate-notional-usd; the latch survives a restart until reset", async ({
    onTestFinished,
  }) => {
    const r = await rig(onTestFinished, ["--escalate-notional-usd", "10000"]);
    // 47,500 + 9,900 USD of notional, far above the cap, under a live engine: nothing
    await quietExposures(r, 2, (l) => Number(l.totalNtlPos) > 10_000);
    expect(count(r.daemon, "escalation.halted")).toBe(0);
    await dropAndExpectClosed(r, "notional", /total notional is 57400 USD \(cap 10000 USD\)/);

    // SIGTERM: a graceful stop removes the schedule; the latch is in the ledger
    r.daemon.kill("SIGTERM");
    expect((await r.daemon.exitWithin(10_000)).code).toBe(0);
    expect(r.sim.state.getSchedule(r.account)).toBeNull();
    r.daemon = spawnDaemon(r, ["--escalate-notional-usd", "10000"]);
    r.health = String((await r.daemon.waitForEvent("health.listening", 15_000)).url);
    await r.daemon.waitForEvent("heartbeat.ok", 10_000);
    // it starts HALTED: readiness and the metric say so, and the pushes go on
    const ready = await fetch(`${r.health}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain(`account ${r.account}: HALTED since`);
    expect(await (await fetch(`${r.health}/metrics`)).text()).toMatch(
      new RegExp(`hl_deadman_halted\\{account="${r.account}"\\} 1`),
    );
    expect(r.sim.state.getSchedule(r.account)).not.toBeNull();
    // only reset releases it
    r.engine = await engine(r.guard, r.account);
    const reset = await runCliProcess([
      "reset",
      "--account",
      r.account,
      "--state-dir",
      r.stateDir,
      "--yes",
      "--json",
    ]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ ok: true, account: r.account, released: true });
    await r.daemon.waitForEvent("escalation.reset", 5_000);
    expect(await (await fetch(`${r.health}/metrics`)).text()).toMatch(
      new RegExp(`hl_deadman_halted\\{account="${r.account}"\\} 0`),
    );
  }, 60_000);
});

describe.concurrent("each exchange refusal as a process: said, retried, never turned into another kind of order", () => {
  test("behavior: the post-only window refuses the close: close_incomplete post_only_window, retried, closed once it ends", async ({
    onTestFinished,
  }) => {
    const r = await rig(onTestFinished, ["--escalate-after", "1s"]);
    r.sim.faults.set("exchange", { postOnlyWindow: true });
    const before = positionsOf(r);
    r.engine.destroy();
    await r.daemon.waitForEvent("escalation.halted", 10_000);
    const first = await r.daemon.waitForEvent("escalation.close_incomplete", 10_000);
    expect(first).toMatchObject({ pass: 1, refusal: "post_only_window", retryInMs: 2_000 });
    expect(String(first.detail)).toContain(
      "Only post-only orders allowed immediately after a network upgrade",
    );
    const second = await r.daemon.waitForEvent("escalation.close_incomplete", 10_000, (l) => l.pass === 2);
    expect(second.refusal).toBe("post_only_window");
    // nothing else was tried: every order sent is reduce-only IOC (no Alo, no Gtc), the positions as they were
    const sent = ordersSent(r);
    expect(sent.length).toBeGreaterThanOrEqual(4);
    for (const o of sent) expect(o).toMatchObject({ r: true, t: { limit: { tif: "Ioc" } } });
    expect(positionsOf(r)).toEqual(before);
    // the window ends: the next pass closes
    r.sim.faults.clear("exchange");
    await r.daemon.waitForEvent("escalation.closed", 15_000);
    expect(positionsOf(r)).toEqual([]);
    for (const o of ordersSent(r)) expect(o).toMatchObject({ r: true, t: { limit: { tif: "Ioc" } } });
  }, 40_000);

  test("behavior: 1,000 resting reduce-only stops: the close cancels them first, then closes", async ({
    onTestFinished,
  }) => {
    const stops = Array.from({ length: 1_000 }, (_, i) => ({
      coin: "BTC",
      side: "A" as const,
      limitPx: 50_000 - i,
      sz: 0.01,
      reduceOnly: true,
      orderType: "Stop Market" as const,
      triggerPx: 50_000 - i,
    }));
    const r = await rig(onTestFinished, ["--escalate-after", "1s"], { orders: stops });
    expect(r.sim.state.getOpenOrders(r.account)).toHaveLength(1_000);
    await dropAndExpectClosed(r, "engine_down", /the engine has been down/);
    expect(r.sim.state.getOpenOrders(r.account)).toHaveLength(0);
    // the order of what reached the exchange: the stops' cancel, then the close orders (never refused)
    const actions = r.sim.state.actions.map((a) => a.action as { type?: string; cancels?: unknown[] });
    const firstOrder = actions.findIndex((a) => a?.type === "order");
    const cancelledBefore = actions
      .slice(0, firstOrder)
      .filter((a) => a?.type === "cancel")
      .reduce((n, a) => n + (a.cancels?.length ?? 0), 0);
    expect(firstOrder).toBeGreaterThan(0);
    expect(cancelledBefore).toBe(1_000);
    expect(count(r.daemon, "escalation.close_incomplete")).toBe(0);
    const reports = r.daemon.lines
      .filter((l) => l.event === "escalation.close_orders")
      .flatMap((l) => l.orders as { status: string }[]);
    expect(reports.every((o) => o.status === "filled")).toBe(true);
  }, 40_000);

  test("behavior: the position flips while a close order is out: refused reduce-only, the next slice from a fresh read, never grown", async ({
    onTestFinished,
  }) => {
    // every order answered 1.5 s late (the request timeout is 3 s): the test changes the position meanwhile
    const r = await rig(onTestFinished, ["--escalate-after", "1s", "--request-timeout", "3s"]);
    r.sim.faults.set("exchange", { latencyMs: 1_500, types: ["order"] });
    const exchangeActions = () => r.sim.state.actions.length;
    r.engine.destroy();
    await r.daemon.waitForEvent("escalation.halted", 10_000);
    // an order is out when the exchange has counted more requests than it has handled, for a while (a push or a
    // cancel is handled within milliseconds; the order waits 1.5 s)
    const outFor = async (ms: number) => {
      const until = Date.now() + 10_000;
      let since: number | null = null;
      while (Date.now() < until) {
        const out = r.sim.state.requestCount("exchange") > exchangeActions();
        since = out ? (since ?? Date.now()) : null;
        if (since !== null && Date.now() - since >= ms) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error("no close order went out");
    };
    await outFor(300);
    expect(ordersSent(r)).toEqual([]);
    // someone else turns the BTC long into a short of the same size while the sell is in flight
    r.sim.state.addPosition(r.account, { coin: "BTC", szi: "-0.5", entryPx: "95000" });
    const closed = await r.daemon.waitForEvent("escalation.closed", 15_000);
    expect(closed.pass).toBe(1);
    expect(positionsOf(r)).toEqual([]);
    const reports = r.daemon.lines
      .filter((l) => l.event === "escalation.close_orders")
      .flatMap((l) => l.orders as { coin: string; side: string; status: string; error: string | null }[]);
    expect(reports).toContainEqual(
      expect.objectContaining({
        coin: "BTC",
        side: "sell",
        status: "refused",
        error: expect.stringContaining("Reduce only order would increase position"),
      }),
    );
    expect(reports).toContainEqual(expect.objectContaining({ coin: "BTC", side: "buy", status: "filled" }));
    // the short was bought back from -0.5 to zero: never grown, never flipped
    const btc = r.sim.state.getFills(r.account).filter((f) => f.coin === "BTC");
    expect(btc.map((f) => [f.side, f.startPosition, f.sz])).toEqual([["B", "-0.5", "0.5"]]);
    for (const o of ordersSent(r)) expect(o).toMatchObject({ r: true, t: { limit: { tif: "Ioc" } } });
  }, 40_000);

  test("behavior: nothing inside the slippage cap (spread wider than 1 %): close_incomplete no_match, retried, closed once the book is back", async ({
    onTestFinished,
  }) => {
    const r = await rig(onTestFinished, ["--escalate-after", "1s"]);
    for (const coin of ["BTC", "ETH"]) r.sim.state.setBook(coin, { spreadBps: 200 });
    const before = positionsOf(r);
    r.engine.destroy();
    const first = await r.daemon.waitForEvent("escalation.close_incomplete", 10_000);
    expect(first).toMatchObject({ pass: 1, refusal: "no_match" });
    const second = await r.daemon.waitForEvent("escalation.close_incomplete", 10_000, (l) => l.pass === 2);
    expect(second.refusal).toBe("no_match");
    expect(positionsOf(r)).toEqual(before);
    for (const o of ordersSent(r)) expect(o).toMatchObject({ r: true, t: { limit: { tif: "Ioc" } } });
    for (const coin of ["BTC", "ETH"]) r.sim.state.setBook(coin, { spreadBps: 10 });
    await r.daemon.waitForEvent("escalation.closed", 15_000);
    expect(positionsOf(r)).toEqual([]);
  }, 40_000);
});
