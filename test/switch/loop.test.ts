import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createLoop, ManualTimers } from "../../src/switch/loop.js";
import { captureLogger, tick } from "../app/helpers.js";

describe("createLoop", () => {
  test("default: ticks at start + k x interval, however late each callback runs", async () => {
    const clock = new ManualClock(1_000_000);
    const timers = new ManualTimers(clock);
    const at: number[] = [];
    const loop = createLoop({
      intervalMs: 15_000,
      clock,
      timers,
      onTick: ({ scheduledAt }) => void at.push(scheduledAt),
    });
    loop.start();
    await tick();
    for (let i = 0; i < 10; i++) clock.advance(15_000 + (i % 3) * 100);
    // scheduledAt is monotonic time (the ManualClock's starts at 0), never the wall clock
    expect(at.slice(0, 4)).toEqual([0, 15_000, 30_000, 45_000]);
    expect(at.every((t) => t % 15_000 === 0)).toBe(true);
    loop.stop();
  });

  test("behavior: a stall is logged with the gap, counted, and missed ticks are skipped (no burst)", async () => {
    const clock = new ManualClock(0);
    const timers = new ManualTimers(clock);
    const log = captureLogger();
    const metrics = createMetrics({ defaultMetrics: false });
    let ticks = 0;
    const loop = createLoop({
      intervalMs: 1_000,
      clock,
      timers,
      logger: log.logger,
      metrics,
      onTick: () => void ticks++,
    });
    loop.start();
    await tick();
    clock.advance(60_000);
    expect(ticks).toBe(2);
    expect(log.events("loop.stalled")[0]).toMatchObject({ gapMs: 59_000 });
    expect((await metrics.eventLoopStalls.get()).values[0]!.value).toBe(1);
    clock.advance(1_000);
    expect(ticks).toBe(3);
    loop.stop();
  });
});
