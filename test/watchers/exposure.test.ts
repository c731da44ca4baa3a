import { Writable } from "node:stream";
import { afterEach, describe, expect, test } from "vitest";
import { type Clock, ManualClock, offsetClock, systemClock } from "../../src/core/clock.js";
import { createEventBus, type DaemonEvent } from "../../src/core/events.js";
import { createLogger } from "../../src/core/logger.js";
import { createRuntime, systemTimers, type Timers } from "../../src/core/runtime.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import type { ClearinghouseState } from "../../src/protocol/hyperliquid/schemas.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { clockLog, clockMetrics } from "../../src/surface/watchers/clock.js";
import { createExposurePoller, type ExposureInfo } from "../../src/watchers/exposure.js";
import { watcherBus } from "../helpers/watcher-bus.js";

const A = `0x${"a".repeat(40)}`;
const B = `0x${"b".repeat(40)}`;
const C = `0x${"c".repeat(40)}`; // never funded: a zeroed state

type Line = Record<string, unknown> & { event?: string; level: number };

function capture() {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: createLogger({ level: "debug", destination, pretty: false }), lines };
}

const users = [
  {
    address: A,
    positions: [
      { coin: "BTC", szi: 0.5, entryPx: 60000, leverage: 10, marginMode: "cross" as const },
      { coin: "ETH", szi: -2, entryPx: 3000, leverage: 5, marginMode: "isolated" as const },
    ],
  },
  // fully covered long: the exchange reports a null liquidation price
  { address: B, balanceUsd: 1_000_000, positions: [{ coin: "SOL", szi: 1, entryPx: 100 }] },
];

async function rawStates(sim: SimulatorHandle, who: string[]): Promise<ClearinghouseState[]> {
  const res = await fetch(`${sim.apiUrl}/info`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "batchClearinghouseStates", users: who }),
  });
  return (await res.json()) as ClearinghouseState[];
}

let sim: SimulatorHandle | undefined;
const clients: InfoClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await sim?.close();
  sim = undefined;
});

function setup({
  clock = new ManualClock(),
  pollerClock,
  thresholds = {},
  intervalMs = 30_000,
  timers,
  clockSkewWarnMs = 2_000,
  info,
  timeoutMs = 2_000,
}: {
  clock?: Clock;
  pollerClock?: Clock;
  thresholds?: Parameters<typeof createExposurePoller>[0]["thresholds"];
  intervalMs?: number;
  timers?: Timers;
  clockSkewWarnMs?: number;
  info?: ExposureInfo;
  timeoutMs?: number;
} = {}) {
  const client = new InfoClient({
    apiUrl: sim!.apiUrl,
    clock: pollerClock ?? clock,
    timeoutMs,
    retryLimit: 0,
  });
  clients.push(client);
  const metrics = createMetrics({ defaultMetrics: false });
  const { logger, lines } = capture();
  const poller = createExposurePoller({
    info: info ?? client,
    users: [A, B, C],
    runtime: createRuntime({ clock: pollerClock ?? clock, timers: timers ?? systemTimers() }),
    bus: watcherBus(logger, metrics),
    intervalMs,
    thresholds,
    clockSkewWarnMs,
  });
  return { poller, metrics, lines, client };
}

const events = (lines: Line[], event: string) => lines.filter((l) => l.event === event);

describe("exposure poller against the simulator", () => {
  test("default", async () => {
    const clock = new ManualClock();
    sim = await startSimulator({ clock, users, ipWeightPerMinute: null });
    sim.state.setMark("BTC", 61_000);
    sim.state.setMark("ETH", 2_900);
    sim.state.setMark("SOL", 150);
    const { poller, lines } = setup({ clock });
    await poller.pollNow("start");
    const [sa, sb, sc] = await rawStates(sim, [A, B, C]);

    const exposure = events(lines, "exposure");
    expect(exposure.map((l) => [l.account, l.reason, l.module, l.level])).toEqual([
      [A, "start", "exposure", 30],
      [B, "start", "exposure", 30],
      [C, "start", "exposure", 30],
    ]);
    const [la, lb, lc] = exposure as Line[];
    // the contract's fields, as received
    expect(la).toMatchObject({
      accountValue: sa!.marginSummary.accountValue,
      totalNtlPos: sa!.marginSummary.totalNtlPos,
      totalMarginUsed: sa!.marginSummary.totalMarginUsed,
      withdrawable: sa!.withdrawable,
    });
    expect(la).not.toHaveProperty("dex");
    // derived figures, computed here independently from the marks we set
    const notional = 0.5 * 61_000 + 2 * 2_900;
    expect(Number(sa!.marginSummary.totalNtlPos)).toBeCloseTo(notional, 6);
    expect(la!.leverage).toBeCloseTo(notional / Number(sa!.marginSummary.accountValue), 12);
    expect(la!.marginUsage).toBeCloseTo(
      Number(sa!.marginSummary.totalMarginUsed) / Number(sa!.marginSummary.accountValue),
      12,
    );
    expect(la!.maintenanceMarginRatio).toBeCloseTo(
      Number(sa!.crossMaintenanceMarginUsed) / Number(sa!.crossMarginSummary.accountValue),
      12,
    );
    const [btc, eth] = la!.positions as Record<string, unknown>[];
    const btcLiq = Number(sa!.assetPositions[0]!.position.liquidationPx);
    const ethLiq = Number(sa!.assetPositions[1]!.position.liquidationPx);
    expect(btc).toMatchObject({ coin: "BTC", szi: "0.5", entryPx: "60000.0" });
    expect(btc!.markPx).toBeCloseTo(61_000, 6);
    expect(btcLiq).toBeLessThan(61_000); // a long is liquidated below the mark
    expect(btc!.liquidationDistancePct).toBeCloseTo(((61_000 - btcLiq) / 61_000) * 100, 6);
    expect(eth).toMatchObject({ coin: "ETH", szi: "-2.0" });
    expect(eth!.markPx).toBeCloseTo(2_900, 6);
    expect(ethLiq).toBeGreaterThan(2_900); // a short above
    expect(eth!.liquidationDistancePct).toBeCloseTo(((ethLiq - 2_900) / 2_900) * 100, 6);
    expect(Number(eth!.unrealizedPnl)).toBeCloseTo(-2 * (2_900 - 3_000), 6);

    const [sol] = lb!.positions as Record<string, unknown>[];
    expect(sb!.assetPositions[0]!.position.liquidationPx).toBeNull();
    expect(sol).toMatchObject({ coin: "SOL", liquidationPx: null });
    expect(sol!.markPx).toBeCloseTo(150, 6);
    expect(sol).not.toHaveProperty("liquidationDistancePct");

    expect(sc!.assetPositions).toEqual([]);
    expect(lc).toMatchObject({ accountValue: "0.0", leverage: null, marginUsage: null, positions: [] });

    expect(poller.status()).toEqual({
      enabled: true,
      intervalMs: 30_000,
      lastSuccessAt: clock.now(),
      lastAttemptAt: clock.now(),
      lastError: null,
      clockSkewMs: 0,
    });
  });

  test("behavior: cross and isolated positions carry their leverage type", async () => {
    sim = await startSimulator({ users, ipWeightPerMinute: null });
    const { poller, lines } = setup({ clock: systemClock });
    await poller.pollNow("start");
    const [la, lb] = events(lines, "exposure");
    expect(
      [...(la!.positions as Record<string, unknown>[]), ...(lb!.positions as Record<string, unknown>[])].map(
        (p) => [p.coin, p.leverageType, p.leverageValue],
      ),
    ).toEqual([
      ["BTC", "cross", 10],
      ["ETH", "isolated", 5],
      ["SOL", "cross", 10],
    ]);
  });

  test("behavior: alerts fire once per crossing and clear when back inside", async () => {
    const clock = new ManualClock();
    sim = await startSimulator({ clock, users, ipWeightPerMinute: null });
    sim.state.setMark("BTC", 60_000);
    sim.state.setMark("ETH", 3_000);
    const { poller, lines } = setup({ clock, thresholds: { minLiquidationDistancePct: 15 } });
    await poller.pollNow("interval");
    expect(events(lines, "exposure.alert")).toEqual([]);

    sim.state.setMark("BTC", 50_000); // liquidation ~42.9k: about 14 % away
    await poller.pollNow("interval");
    await poller.pollNow("interval");
    const alerts = events(lines, "exposure.alert");
    expect(alerts).toHaveLength(1);
    const [sa] = await rawStates(sim, [A]);
    const liq = Number(sa!.assetPositions[0]!.position.liquidationPx);
    expect(alerts[0]).toMatchObject({
      level: 40,
      account: A,
      metric: "liquidationDistancePct",
      coin: "BTC",
      limit: 15,
    });
    expect(alerts[0]!.value as number).toBeCloseTo(((50_000 - liq) / 50_000) * 100, 6);
    expect(alerts[0]!.value as number).toBeLessThan(15);

    sim.state.setMark("BTC", 60_000);
    await poller.pollNow("interval");
    await poller.pollNow("interval");
    expect(events(lines, "exposure.alert.cleared")).toHaveLength(1);
    expect(events(lines, "exposure.alert.cleared")[0]).toMatchObject({
      level: 30,
      metric: "liquidationDistancePct",
      coin: "BTC",
    });

    sim.state.setMark("BTC", 49_000);
    await poller.pollNow("interval");
    expect(events(lines, "exposure.alert")).toHaveLength(2);
  });

  test("behavior: leverage and notional thresholds", async () => {
    const clock = new ManualClock();
    sim = await startSimulator({ clock, users, ipWeightPerMinute: null });
    sim.state.setMark("BTC", 60_000);
    sim.state.setMark("ETH", 3_000);
    const { poller, lines } = setup({ clock, thresholds: { maxLeverage: 3, maxNotionalUsd: 35_000 } });
    await poller.pollNow("interval");
    await poller.pollNow("interval");
    // A: notional 36,000 on 10,000 of value: leverage 3.6 and notional above both limits; B is far inside
    expect(events(lines, "exposure.alert").map((l) => [l.account, l.metric, l.value, l.limit])).toEqual([
      [A, "leverage", 3.6, 3],
      [A, "totalNtlPos", 36_000, 35_000],
    ]);
  });

  test("behavior: a failed poll is logged, does not throw, and the next tick succeeds", async () => {
    const clock = new ManualClock();
    sim = await startSimulator({ clock, users, ipWeightPerMinute: null });
    const fired: Array<{ fn: () => void; ms: number }> = [];
    const timers: Timers = {
      after: (ms, fn) => {
        fired.push({ fn, ms });
        return { cancel: () => {} };
      },
    };
    const { poller, lines, metrics } = setup({ clock, timers, intervalMs: 30_000 });
    sim.faults.set("info", { errorRate: 1, errorStatus: 500 });
    poller.start();
    await vi_waitFor(() => events(lines, "exposure.failed").length === 1);
    // the first poll runs at once, the first tick is planned one interval later (the runtime's `every`)
    expect(fired.map((f) => f.ms)).toEqual([30_000]);
    const failed = events(lines, "exposure.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 40, reason: "start", kind: "server_error" });
    expect(poller.status()).toMatchObject({
      lastSuccessAt: null,
      lastError: expect.stringMatching(/^server_error: /),
    });
    expect(
      (await metrics.registry.getSingleMetricAsString("hl_deadman_exposure_poll_failures_total")).trim(),
    ).toMatch(/ 1$/);

    sim.faults.clear("info");
    clock.advance(30_000);
    fired[0]!.fn();
    await vi_waitFor(() => events(lines, "exposure").length === 3);
    expect(events(lines, "exposure").map((l) => l.reason)).toEqual(["interval", "interval", "interval"]);
    await vi_waitFor(() => poller.status().lastError === null);
    expect(poller.status()).toMatchObject({ lastSuccessAt: clock.now(), lastError: null });
    // drift-free: the next tick is planned one interval after the previous plan
    expect(fired.map((f) => f.ms)).toEqual([30_000, 30_000]);
    await poller.stop();
  });

  test("behavior: polls never overlap; a trigger poll runs once more after the running one", async () => {
    sim = await startSimulator({ users, ipWeightPerMinute: null });
    const { poller, lines } = setup({ clock: systemClock });
    sim.faults.set("info", { latencyMs: 150 });
    const before = sim.state.requestCount("info");
    await Promise.all([poller.pollNow("interval"), poller.pollNow("interval"), poller.pollNow("start")]);
    expect(sim.state.requestCount("info") - before).toBe(1);
    await Promise.all([poller.pollNow("interval"), poller.pollNow("trigger"), poller.pollNow("trigger")]);
    expect(sim.state.requestCount("info") - before).toBe(3);
    expect(events(lines, "exposure").map((l) => l.reason)).toEqual([
      ...Array(3).fill("interval"),
      ...Array(3).fill("interval"),
      ...Array(3).fill("trigger"),
    ]);
  });

  test("behavior: clock skew is estimated from the states' time and warned once per crossing", async () => {
    sim = await startSimulator({ users, ipWeightPerMinute: null });
    // the poller's clock is 3 s fast; real round trips add a few ms of uncertainty
    const { poller, lines, metrics } = setup({
      clock: systemClock,
      pollerClock: offsetClock(systemClock, 3_000),
    });
    await poller.pollNow("interval");
    await poller.pollNow("interval");
    const skew = poller.status().clockSkewMs!;
    expect(Math.abs(skew - 3_000)).toBeLessThan(150);
    const gauge = await metrics.registry.getSingleMetricAsString("hl_deadman_clock_skew_seconds");
    expect(Number(gauge.trim().split("\n").pop()!.split(" ").pop())).toBeCloseTo(skew / 1000, 1);
    const warnings = events(lines, "clock.skew");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, limitMs: 2_000, source: "time" });
    expect(String(warnings[0]!.msg)).toMatch(/ahead of the exchange.*nonces/);
  });

  test("behavior: the skew is the clock's event on the bus; its line and gauge are the clock's subscribers", async () => {
    sim = await startSimulator({ users, ipWeightPerMinute: null });
    const pollerClock = offsetClock(systemClock, 3_000);
    const client = new InfoClient({
      apiUrl: sim.apiUrl,
      clock: pollerClock,
      timeoutMs: 2_000,
      retryLimit: 0,
    });
    clients.push(client);
    const run = async (subscribed: boolean) => {
      const metrics = createMetrics({ defaultMetrics: false });
      const { logger, lines } = capture();
      const bus = createEventBus(...(subscribed ? [clockLog(logger), clockMetrics(metrics)] : []));
      const published: DaemonEvent[] = [];
      bus.subscribe((e) => {
        if (e.module === "clock") published.push(e);
      });
      const poller = createExposurePoller({
        info: client,
        users: [A],
        runtime: createRuntime({ clock: pollerClock, timers: systemTimers() }),
        intervalMs: 30_000,
        clockSkewWarnMs: 2_000,
        bus,
      });
      await poller.pollNow("interval");
      const gauge = await metrics.registry.getSingleMetric("hl_deadman_clock_skew_seconds")?.get();
      return { published, lines, gauge: gauge?.values.map((v) => v.value) ?? [] };
    };
    const bare = await run(false);
    expect(bare.published).toHaveLength(1);
    expect(bare.published[0]).toMatchObject({
      module: "clock",
      origin: "exposure",
      type: "clockSkew",
      source: "time",
      limitMs: 2_000,
      change: "crossed",
    });
    expect(events(bare.lines, "clock.skew")).toEqual([]);
    expect(bare.gauge).toEqual([0]); // an unlabelled gauge starts at 0: nothing set it
    const subscribed = await run(true);
    expect(events(subscribed.lines, "clock.skew")).toMatchObject([
      { module: "exposure", level: 40, limitMs: 2_000, source: "time" },
    ]);
    expect(subscribed.gauge[0]).toBeCloseTo(3, 0);
  });

  test("behavior: a clock 3 s slow is estimated negative", async () => {
    sim = await startSimulator({ users, ipWeightPerMinute: null });
    const { poller, lines } = setup({ clock: systemClock, pollerClock: offsetClock(systemClock, -3_000) });
    await poller.pollNow("interval");
    expect(Math.abs(poller.status().clockSkewMs! + 3_000)).toBeLessThan(150);
    expect(String(events(lines, "clock.skew")[0]!.msg)).toMatch(/behind the exchange/);
  });

  test("behavior: metrics per account and coin, closed positions' series removed", async () => {
    sim = await startSimulator({ users, ipWeightPerMinute: null });
    const [sa] = await rawStates(sim, [A]);
    let positions = sa!.assetPositions;
    const info: ExposureInfo = {
      async batchClearinghouseStatesWithMeta({ users: who }) {
        const t = Date.now();
        return {
          states: who.map(() => ({ ...sa!, assetPositions: positions, time: t })),
          serverDate: undefined,
          sentAt: t,
          receivedAt: t,
        };
      },
    };
    const { poller, metrics } = setup({ clock: systemClock, info });
    await poller.pollNow("interval");
    let text = await metrics.registry.metrics();
    expect(text).toContain(`hl_deadman_position_size{account="${A}",dex="",coin="ETH"} -2`);
    expect(text).toMatch(
      new RegExp(`hl_deadman_liquidation_distance_ratio\\{account="${A}",dex="",coin="BTC"\\} 0\\.\\d+`),
    );
    positions = positions.filter((p) => p.position.coin !== "ETH");
    await poller.pollNow("interval");
    text = await metrics.registry.metrics();
    expect(text).not.toContain('coin="ETH"');
    expect(text).toContain(`hl_deadman_position_size{account="${A}",dex="",coin="BTC"} 0.5`);
  });

  test("behavior: intervalMs 0 disables the poller", async () => {
    sim = await startSimulator({ users, ipWeightPerMinute: null });
    const { poller } = setup({ clock: systemClock, intervalMs: 0 });
    poller.start();
    await poller.pollNow("trigger");
    expect(sim.state.requestCount("info")).toBe(0);
    expect(poller.status()).toMatchObject({ enabled: false, lastAttemptAt: null });
  });

  test("error: an invalid user address is named", () => {
    expect(() =>
      createExposurePoller({
        info: {
          batchClearinghouseStatesWithMeta: async () => ({
            states: [],
            serverDate: undefined,
            sentAt: 0,
            receivedAt: 0,
          }),
        },
        users: [A, "0x123"],
        runtime: createRuntime({ clock: systemClock, timers: systemTimers() }),
        bus: watcherBus(capture().logger, createMetrics({ defaultMetrics: false })),
        intervalMs: 1000,
        clockSkewWarnMs: 2000,
      }),
    ).toThrow(/Invalid address "0x123" in exposure users\[1\]/);
  });
});

/** Waits (bounded) for a condition that async work will make true. */
async function vi_waitFor(cond: () => boolean, timeoutMs = 3_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
