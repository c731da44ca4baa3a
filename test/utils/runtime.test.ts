/**
 * The runtime's repetition (src/utils/runtime.ts `every`): each slot runs once, even when its timer fires a
 * little before the slot by the monotonic clock. Node measures a timeout from the event loop's cached time in
 * whole milliseconds, so a timer set at 1000.9 ms for 100 ms can fire at 1100.0 ms: 0.9 ms "early". The
 * repetition used to recompute the same slot from such a wake-up, set a timer for the rest and run the slot a
 * second time: a second exposure poll a few ms after the first, a second push tick (docs/daemon.md, "How time is
 * kept").
 */
import { performance } from "node:perf_hooks";
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/utils/clock.js";
import { every, systemTimers, type Timers } from "../../src/utils/runtime.js";

/** Timers whose callbacks the test fires by hand, moving the clock to `due - earlyMs` first. */
function earlyTimers(clock: ManualClock, earlyMs: number) {
  const pending: { due: number; fn: () => void; cancelled: boolean }[] = [];
  const timers: Timers = {
    after(ms, fn) {
      const t = { due: clock.monotonic() + Math.max(0, ms), fn, cancelled: false };
      pending.push(t);
      return {
        cancel: () => {
          t.cancelled = true;
        },
      };
    },
  };
  /** Fires the earliest live timer `earlyMs` before it is due (or at once when that is already past). */
  const fireNext = () => {
    const live = pending.filter((t) => !t.cancelled).sort((a, b) => a.due - b.due);
    const next = live[0];
    if (!next) throw new Error("no timer is set");
    next.cancelled = true;
    const at = Math.max(clock.monotonic(), next.due - earlyMs);
    clock.advance(at - clock.monotonic());
    next.fn();
  };
  return { timers, fireNext };
}

describe("every", () => {
  test("behavior: a timer that fires before its slot runs that slot once, and the next timer aims at the next slot", () => {
    const clock = new ManualClock(0);
    const { timers, fireNext } = earlyTimers(clock, 0.9);
    const slots: number[] = [];
    const loop = every(1_000, ({ k }) => void slots.push(k), { clock, timers, immediate: false });
    for (let i = 0; i < 6; i++) fireNext();
    loop.stop();
    // Six wake-ups, six slots, each once (before the fix: [1, 1, 2, 2, 3, 3]).
    expect(slots).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test("behavior: after a stall the missed slots are skipped, and an early wake-up after it still moves on", () => {
    const clock = new ManualClock(0);
    const { timers, fireNext } = earlyTimers(clock, 0.5);
    const seen: { k: number; lateMs: number }[] = [];
    const loop = every(1_000, ({ k, lateMs }) => void seen.push({ k, lateMs }), {
      clock,
      timers,
      immediate: false,
    });
    fireNext(); // slot 1, 0.5 ms early
    clock.advance(4_200); // the loop was blocked through slots 2..5 (now 5,199.5)
    fireNext(); // the timer for slot 2 fires now, 3.2 s late: it runs once, the next one aims at slot 6
    fireNext(); // slot 6, 0.5 ms early
    loop.stop();
    expect(seen.map((s) => s.k)).toEqual([1, 2, 6]);
    expect(seen[1]!.lateMs).toBeCloseTo(3_199.5, 5);
    expect(seen[2]!.lateMs).toBeCloseTo(-0.5, 5);
  });

  test("behavior: with node's own timers each slot runs once, however long the callbacks keep the loop busy", async () => {
    // A busy callback leaves node's cached loop time behind when the next timer is set; sub-millisecond
    // offsets of the slots make the whole-millisecond rounding matter. Counted: no slot ever runs twice.
    const clock = { now: () => Date.now(), monotonic: () => performance.now() };
    const timers = systemTimers();
    const slots: number[] = [];
    const wakeups: number[] = [];
    const intervalMs = 40.37;
    let stop: () => void = () => {};
    await new Promise<void>((done) => {
      const loop = every(
        intervalMs,
        ({ k }) => {
          slots.push(k);
          wakeups.push(performance.now());
          const busyUntil = performance.now() + 7.3;
          while (performance.now() < busyUntil) {}
          if (slots.length >= 25) done();
        },
        { clock, timers, immediate: false, stallThresholdMs: 10_000 },
      );
      stop = () => loop.stop();
    });
    stop();
    expect(new Set(slots).size).toBe(slots.length);
    // and the slots are consecutive unless the machine stalled longer than an interval in between
    for (let i = 1; i < slots.length; i++) {
      const gap = wakeups[i]! - wakeups[i - 1]!;
      if (gap < 1.5 * intervalMs) expect(slots[i]).toBe(slots[i - 1]! + 1);
    }
  });
});

describe("every with an origin", () => {
  test("behavior: slots lie on the origin's grid, the first strictly after now; two such repetitions wake together", () => {
    const clock = new ManualClock(0);
    const { timers, fireNext } = earlyTimers(clock, 0);
    clock.advance(4_321); // started later than the origin (0)
    const push: number[] = [];
    const poll: number[] = [];
    const a = every(15_000, ({ scheduledAt }) => void push.push(scheduledAt), { clock, timers, startAt: 0 });
    const b = every(30_000, ({ scheduledAt }) => void poll.push(scheduledAt), { clock, timers, startAt: 0 });
    for (let i = 0; i < 6; i++) fireNext();
    a.stop();
    b.stop();
    expect(push).toEqual([15_000, 30_000, 45_000, 60_000]);
    expect(poll).toEqual([30_000, 60_000]);
  });

  test("behavior: an origin in the future makes it slot 0", () => {
    const clock = new ManualClock(0);
    const { timers, fireNext } = earlyTimers(clock, 0);
    const seen: number[] = [];
    const r = every(1_000, ({ scheduledAt, k }) => void seen.push(k * 1_000_000 + scheduledAt), {
      clock,
      timers,
      startAt: 500,
    });
    fireNext();
    fireNext();
    r.stop();
    expect(seen).toEqual([500, 1_000_000 + 1_500]);
  });
});
