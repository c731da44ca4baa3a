/**
 * The event loop's delay as the daemon reports it (src/surface/metrics.ts, docs/observability.md "Event loop"):
 * prom-client's seven `nodejs_eventloop_lag_*_seconds` gauges read how late the daemon's own timers fired, and
 * nothing in the metrics wakes the process on its own.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { systemTimers } from "../../src/core/runtime.js";
import { createMetrics, EVENT_LOOP_SAMPLE_MS } from "../../src/surface/metrics.js";

const P = "hl_deadman_";
const STATS = ["min", "max", "mean", "stddev", "p50", "p90", "p99"] as const;

async function scrape(metrics: ReturnType<typeof createMetrics>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await metrics.registry.metrics()).split("\n")) {
    const m = /^([a-z0-9_]+) (\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("event-loop delay gauges", () => {
  it("read the lateness of the daemon's timers, once per scrape, in seconds", async () => {
    const metrics = createMetrics();
    for (const ms of [2, 5, 40]) metrics.recordTimerLateness(ms);
    const first = await scrape(metrics);
    const lag = (s: string) => first.get(`${P}nodejs_eventloop_lag_${s}_seconds`);
    expect(lag("min")).toBeCloseTo(0.002, 5);
    expect(lag("max")).toBeCloseTo(0.04, 4);
    expect(lag("p50")).toBeCloseTo(0.005, 5);
    expect(lag("p99")).toBeCloseTo(0.04, 4);
    expect(lag("mean")).toBeCloseTo((0.002 + 0.005 + 0.04) / 3, 4);
    expect(lag("stddev")).toBeGreaterThan(0.015);
    // the scrape took the figures: nothing came due since, so nothing was late
    const second = await scrape(metrics);
    for (const s of STATS) expect(second.get(`${P}nodejs_eventloop_lag_${s}_seconds`)).toBe(0);
    // each gauge is there once (prom-client's own were replaced, not duplicated)
    const text = await metrics.registry.metrics();
    for (const s of STATS)
      expect(text.match(new RegExp(`^# TYPE ${P}nodejs_eventloop_lag_${s}_seconds `, "gm"))).toHaveLength(1);
    expect(text).toMatch(new RegExp(`^# TYPE ${P}nodejs_eventloop_lag_seconds gauge`, "m"));
  });

  it("count a timer that fired early or on time as no delay", async () => {
    const metrics = createMetrics();
    metrics.recordTimerLateness(-3);
    metrics.recordTimerLateness(0);
    const got = await scrape(metrics);
    expect(got.get(`${P}nodejs_eventloop_lag_max_seconds`)).toBeLessThan(1e-6);
  });

  it("hear from real timers how late a blocked loop made them", async () => {
    const late: number[] = [];
    const timers = systemTimers(undefined, { onLate: (ms) => late.push(ms) });
    const fired = new Promise<void>((resolve) => timers.after(10, resolve));
    busy(80);
    await fired;
    expect(late).toHaveLength(1);
    expect(late[0]).toBeGreaterThanOrEqual(60);
    expect(late[0]).toBeLessThan(5_000);
    // a cancelled timer reports nothing
    timers.after(5, () => late.push(-1)).cancel();
    await new Promise((r) => setTimeout(r, 30));
    expect(late).toHaveLength(1);
  });

  it("show a busy event loop in event_loop_utilization_ratio", async () => {
    const metrics = createMetrics();
    await scrape(metrics);
    busy(120);
    const got = await scrape(metrics);
    expect(got.get(`${P}event_loop_utilization_ratio`)).toBeGreaterThan(0.5);
    // idle again: the ratio since the last scrape falls below a half. A loaded machine (CI beside other work) can
    // keep one 150 ms window busy, so up to ten windows are looked at; a gauge stuck at 1 still fails.
    let idleRatio = 1;
    for (let i = 0; i < 10 && idleRatio >= 0.5; i++) {
      await new Promise((r) => setTimeout(r, 150));
      idleRatio = (await scrape(metrics)).get(`${P}event_loop_utilization_ratio`) ?? 1;
    }
    expect(idleRatio).toBeLessThan(0.5);
  });
});

describe("the metrics' cost at rest", () => {
  const dist = path.resolve("dist/surface/metrics.js");

  it("prom-client's monitor is given a resolution it never reaches", () => {
    expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThanOrEqual(2 ** 31 - 1);
  });

  it("no timer of their own wakes an idle process (voluntary context switches of the main thread, 2.5 s)", () => {
    expect(existsSync(dist), "dist/ is built by `npm test` (npm run build)").toBe(true);
    // The child builds the daemon's metrics (or not), then sleeps on one timer and counts how often its main
    // thread went to sleep in that time: once for the timer, plus whatever the metrics wake it for.
    const child = (withMetrics: boolean) => {
      const script = `
        const { readFileSync } = await import("node:fs");
        if (${withMetrics}) (await import(${JSON.stringify(dist)})).createMetrics();
        const cs = () => Number(/voluntary_ctxt_switches:\\s+(\\d+)/.exec(readFileSync("/proc/thread-self/status", "utf8"))[1]);
        await new Promise((r) => setTimeout(r, 200));
        const before = cs();
        setTimeout(() => console.log(cs() - before), 2_500);`;
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      return Number(r.stdout.trim());
    };
    const bare = child(false);
    const withMetrics = child(true);
    // a 1 s sampler would add 2-3 wake-ups in 2.5 s
    expect(withMetrics).toBeLessThanOrEqual(bare + 1);
  });
});

describe("the switch's gauges", () => {
  const A = "0x00000000000000000000000000000000000000aa";
  const value = async (metrics: ReturnType<typeof createMetrics>, name: string) =>
    (await metrics.registry.getSingleMetric(`${P}${name}`)!.get()).values.find((v) => v.labels.account === A)
      ?.value;

  it("protection_left_seconds is computed at each scrape from the armed deadline, on the daemon's clock", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    let now = Date.UTC(2026, 0, 1, 12);
    metrics.setProtectionClock(() => now);
    metrics.setArmedUntil(A, now + 60_000);
    expect(await value(metrics, "protection_left_seconds")).toBe(60);
    expect(await value(metrics, "armed_deadline_timestamp_seconds")).toBe((now + 60_000) / 1000);
    // no push in between: the next scrape still sees it fall (it was the value of the last step before)
    now += 25_000;
    expect(await value(metrics, "protection_left_seconds")).toBe(35);
    now += 40_000;
    expect(await value(metrics, "protection_left_seconds")).toBe(-5);
    metrics.setArmedUntil(A, null);
    expect(await value(metrics, "protection_left_seconds")).toBe(0);
    expect(await value(metrics, "armed_deadline_timestamp_seconds")).toBe(0);
  });

  it("an unchanged armed deadline is not set again", () => {
    const metrics = createMetrics({ defaultMetrics: false });
    let sets = 0;
    const set = metrics.armedDeadline.set.bind(metrics.armedDeadline);
    metrics.armedDeadline.set = ((...args: Parameters<typeof set>) => {
      sets++;
      return set(...args);
    }) as typeof set;
    for (const until of [null, 1_000, 1_000, 1_000, 2_000, 2_000, null, null])
      metrics.setArmedUntil(A, until);
    expect(sets).toBe(4);
  });
});
