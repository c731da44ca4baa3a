/**
 * The runtime's repetition (src/core/runtime.ts `every`): each slot runs once, even when its timer fires a
 * little before the slot by the monotonic clock. Node measures a timeout from the event loop's cached time in
 * whole milliseconds, so a timer set at 1000.9 ms for 100 ms can fire at 1100.0 ms: 0.9 ms "early". The
 * repetition used to recompute the same slot from such a wake-up, set a timer for the rest and run the slot a
 * second time: a second exposure poll a few ms after the first, a second push tick (docs/daemon.md, "How time is
 * kept").
 */
import { performance } from "node:perf_hooks";
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import {
  afterTimed,
  createRuntime,
  every,
  ManualTimers,
  systemTimers,
  type Timers,
} from "../../src/core/runtime.js";
import { captureLogger, tick } from "../app/helpers.js";

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
    const dues: number[] = [];
    const intervalMs = 40.37;
    let stop: () => void = () => {};
    await new Promise<void>((done) => {
      const loop = every(
        intervalMs,
        ({ k, scheduledAt }) => {
          slots.push(k);
          wakeups.push(performance.now());
          dues.push(scheduledAt);
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
    // Slots only move forward, and one is skipped only when the slot after it was already due at the wake-up (a
    // late wake-up on a loaded machine runs the latest due slot once, never a burst). Node may fire a timer up to
    // 2 ms early by performance.now(): it measures timeouts on the loop's time in whole milliseconds (up to 1 ms),
    // which libuv reads from CLOCK_MONOTONIC_COARSE on Linux (up to 1 ms behind the precise clock).
    for (let i = 1; i < slots.length; i++) {
      expect(slots[i]!).toBeGreaterThan(slots[i - 1]!);
      expect(wakeups[i]!).toBeGreaterThanOrEqual(dues[i]! - 2);
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

describe("every: the drift-free repetition the push loop, the guard and the polls ride on", () => {
  test("default: ticks at start + k x interval on the monotonic clock, however late each callback runs", async () => {
    const clock = new ManualClock(1_000_000);
    const timers = new ManualTimers(clock);
    const at: number[] = [];
    const rep = every(15_000, ({ scheduledAt }) => void at.push(scheduledAt), { clock, timers });
    await tick();
    for (let i = 0; i < 10; i++) clock.advance(15_000 + (i % 3) * 100);
    // scheduledAt is monotonic time (the ManualClock's starts at 0), never the wall clock
    expect(at.slice(0, 4)).toEqual([0, 15_000, 30_000, 45_000]);
    expect(at.every((t) => t % 15_000 === 0)).toBe(true);
    rep.stop();
  });

  test("behavior: a stall is logged with the gap, counted, and missed ticks are skipped (no burst)", async () => {
    const clock = new ManualClock(0);
    const timers = new ManualTimers(clock);
    const log = captureLogger();
    const gaps: number[] = [];
    let ticks = 0;
    const rep = every(1_000, () => void ticks++, {
      clock,
      timers,
      logger: log.logger,
      onStall: (gapMs) => void gaps.push(gapMs),
    });
    await tick();
    clock.advance(60_000);
    expect(ticks).toBe(2);
    expect(log.events("loop.stalled")[0]).toMatchObject({ gapMs: 59_000 });
    expect(gaps).toEqual([59_000]);
    expect(rep.stalls).toBe(1);
    clock.advance(1_000);
    expect(ticks).toBe(3);
    rep.stop();
  });
});

describe("createRuntime: one clock, one set of timers, one stop signal", () => {
  test("default: every runs on the runtime's clock and timers; one abort stops every repetition, withClock's too", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    const runtime = createRuntime({ clock, timers });
    // the same timers and signal over another clock (the daemon's exchange time): here one 5 s ahead
    const ahead = { now: () => clock.now() + 5_000, monotonic: () => clock.monotonic() };
    const other = runtime.withClock(ahead);
    expect(other.timers).toBe(timers);
    expect(other.signal).toBe(runtime.signal);
    expect(other.clock.now()).toBe(clock.now() + 5_000);
    const ticks: string[] = [];
    runtime.every(1_000, ({ k }) => void ticks.push(`a${k}`), { immediate: false });
    other.every(2_000, ({ k }) => void ticks.push(`b${k}`), { immediate: false });
    clock.advance(1_000);
    clock.advance(1_000);
    await tick();
    expect([...ticks].sort()).toEqual(["a1", "a2", "b1"]);
    expect(runtime.signal.aborted).toBe(false);
    runtime.abort("close");
    expect(runtime.signal.aborted).toBe(true);
    expect(runtime.signal.reason).toBe("close");
    clock.advance(10_000);
    await tick();
    expect(ticks).toHaveLength(3);
    expect(timers.pending).toBe(0);
    timers.dispose();
  });
});

describe("every on one grid: the same timers, origin and interval share one timer", () => {
  test("default: one timer wakes them all, in the order they were made; each stops on its own", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    const ran: string[] = [];
    const origin = clock.monotonic();
    const options = { clock, timers, immediate: false, startAt: origin };
    const first = every(1_000, ({ k }) => void ran.push(`first${k}`), options);
    const second = every(1_000, ({ k }) => void ran.push(`second${k}`), options);
    // another interval on the same origin is another grid
    const other = every(3_000, ({ k }) => void ran.push(`other${k}`), options);
    expect(timers.pending).toBe(2);
    clock.advance(1_000);
    clock.advance(1_000);
    clock.advance(1_000);
    await tick();
    // (the order between two grids due together is not promised)
    expect(ran.filter((r) => !r.startsWith("other"))).toEqual([
      "first1",
      "second1",
      "first2",
      "second2",
      "first3",
      "second3",
    ]);
    expect(ran.filter((r) => r.startsWith("other"))).toEqual(["other1"]);
    first.stop();
    expect(timers.pending).toBe(2);
    clock.advance(1_000);
    await tick();
    expect(ran.slice(7)).toEqual(["second4"]);
    second.stop();
    other.stop();
    expect(timers.pending).toBe(0);
    // a repetition made later on the same grid starts at its next slot, on one timer again
    const late = every(1_000, ({ k }) => void ran.push(`late${k}`), options);
    const later = every(1_000, ({ k }) => void ran.push(`later${k}`), options);
    expect(timers.pending).toBe(1);
    clock.advance(1_000);
    await tick();
    expect(ran.slice(8)).toEqual(["late5", "later5"]);
    late.stop();
    later.stop();
    timers.dispose();
  });

  test("behavior: with node's own timers the two wake in the same timer callback at every slot", async () => {
    let wake = 0;
    const real = systemTimers();
    // counts the timer callbacks: two repetitions woken by one callback see the same number
    const counted: Timers = {
      after: (ms, fn) =>
        real.after(ms, () => {
          wake++;
          fn();
        }),
    };
    const clock = { now: () => Date.now(), monotonic: () => performance.now() };
    const seen = new Map<number, number[]>();
    const options = { clock, timers: counted, immediate: false, startAt: performance.now() };
    const note = (k: number) => void seen.set(k, [...(seen.get(k) ?? []), wake]);
    const a = every(10, ({ k }) => note(k), options);
    const b = every(
      10,
      ({ k }) => {
        note(k);
        // a push tick's synchronous work (signing): the next timer is set this much later
        const t = performance.now();
        while (performance.now() - t < 0.5);
      },
      options,
    );
    await new Promise((done) => real.after(300, () => done(undefined)));
    a.stop();
    b.stop();
    const both = [...seen.values()].filter((w) => w.length === 2);
    expect(both.length).toBeGreaterThan(5);
    expect(both.filter(([x, y]) => x !== y)).toEqual([]);
  });
});

// Issue 38: a timer tells how late it ran; a timer for now `afterIo` waits for the I/O already waiting.
describe("afterTimed: how late a timer ran", () => {
  test("behavior: lateness on the clock's monotonic time; a timer for now set inside a run waits for the next turn", async () => {
    const clock = new ManualClock(0);
    const timers = new ManualTimers(clock);
    const seen: number[] = [];
    afterTimed({ clock, timers }, 1_000, ({ lateMs }) => seen.push(lateMs));
    clock.advance(3_500); // the process stopped past the due time: 2.5 s late
    expect(seen).toEqual([2_500]);
    const order: string[] = [];
    afterTimed({ clock, timers }, 100, () => {
      order.push("check");
      afterTimed({ clock, timers }, 0, ({ lateMs }) => order.push(`confirm ${lateMs}`));
    });
    clock.advance(100);
    order.push("same turn");
    expect(order).toEqual(["check", "same turn"]);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(["check", "same turn", "confirm 0"]);
    timers.dispose();
  });
});
