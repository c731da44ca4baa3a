/**
 * Time for the daemon: one-shot timers on a Clock (real ones, or ones driven by a ManualClock in tests), and
 * the drift-free loop that drives pushes. The loop's k-th tick is due at start + k x interval on the clock
 * (not setInterval, which drifts by the callback's run time); a wake-up much later than planned (host
 * suspended, event loop blocked) is logged as `loop.stalled` and counted in metrics.eventLoopStalls, and the
 * missed ticks are skipped (one tick, never a burst).
 */
import type { Clock, ManualClock } from "../utils/clock.js";
import type { Logger } from "../utils/logger.js";
import type { Metrics } from "./metrics.js";

export type TimerHandle = { cancel(): void };

/** One-shot timers measured on a clock. */
export interface Timers {
  /** Runs `fn` once, `ms` from now on the clock (at once when ms <= 0). */
  after(ms: number, fn: () => void): TimerHandle;
}

/** Real timers (setTimeout). Long waits are re-armed in slices so a clock step is noticed. */
export function systemTimers(clock: Clock, { maxSliceMs = 60_000 }: { maxSliceMs?: number } = {}): Timers {
  return {
    after(ms: number, fn: () => void): TimerHandle {
      const due = clock.now() + ms;
      let handle: NodeJS.Timeout | undefined;
      let cancelled = false;
      const arm = () => {
        const left = due - clock.now();
        if (left <= 0) {
          handle = undefined;
          fn();
          return;
        }
        handle = setTimeout(arm, Math.min(left, maxSliceMs));
      };
      handle = setTimeout(arm, Math.max(0, Math.min(ms, maxSliceMs)));
      return {
        cancel() {
          if (cancelled) return;
          cancelled = true;
          if (handle) clearTimeout(handle);
        },
      };
    },
  };
}

type ManualTimer = { due: number; seq: number; fn: () => void; cancelled: boolean };

/**
 * Timers that fire when a ManualClock reaches them, in due order, right after each clock move. A timer set
 * for "now" (ms <= 0) fires on the next macrotask, like setTimeout(fn, 0).
 */
export class ManualTimers implements Timers {
  readonly #clock: ManualClock;
  #timers: ManualTimer[] = [];
  #seq = 0;
  #unsubscribe: () => void;

  constructor(clock: ManualClock) {
    this.#clock = clock;
    this.#unsubscribe = clock.onChange(() => this.run());
  }

  after(ms: number, fn: () => void): TimerHandle {
    const timer: ManualTimer = {
      due: this.#clock.now() + Math.max(0, ms),
      seq: this.#seq++,
      fn,
      cancelled: false,
    };
    this.#timers.push(timer);
    if (ms <= 0) setImmediate(() => this.run());
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Fires every timer that is due (bounded: at most 10,000 callbacks per call). */
  run(): number {
    let fired = 0;
    for (let guard = 0; guard < 10_000; guard++) {
      const now = this.#clock.now();
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      const due = this.#timers.filter((t) => t.due <= now).sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!due) break;
      due.cancelled = true;
      fired++;
      due.fn();
    }
    return fired;
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** The earliest due time still waiting, or null. */
  nextDue(): number | null {
    const live = this.#timers.filter((t) => !t.cancelled);
    return live.length === 0 ? null : Math.min(...live.map((t) => t.due));
  }

  dispose(): void {
    this.#unsubscribe();
    this.#timers = [];
  }
}

export type TickInfo = {
  /** tick number since start (0 is the first, immediate tick) */
  k: number;
  /** when the tick was due (clock ms) */
  scheduledAt: number;
  /** how late it ran (ms) */
  lateMs: number;
};

export type CreateLoopParameters = {
  intervalMs: number;
  clock: Clock;
  timers: Timers;
  onTick: (info: TickInfo) => void | Promise<void>;
  logger?: Logger | undefined;
  metrics?: Metrics | undefined;
  /** default max(1 s, interval / 2) */
  stallThresholdMs?: number | undefined;
  /** what the loop is for, in log lines */
  name?: string;
};

export type Loop = {
  /** Starts the loop; the first tick runs at once. */
  start(): void;
  stop(): void;
  readonly running: boolean;
  /** ticks run so far */
  readonly ticks: number;
  /** stalls detected so far */
  readonly stalls: number;
};

/** A drift-free loop: tick k is due at start + k x interval. */
export function createLoop({
  intervalMs,
  clock,
  timers,
  onTick,
  logger,
  metrics,
  stallThresholdMs = Math.max(1_000, intervalMs / 2),
  name = "push",
}: CreateLoopParameters): Loop {
  if (!(intervalMs > 0)) throw new RangeError(`loop interval must be > 0 ms, got ${intervalMs}`);
  let start = 0;
  let k = 0;
  let handle: TimerHandle | undefined;
  let running = false;
  let ticks = 0;
  let stalls = 0;

  const schedule = () => {
    const due = start + k * intervalMs;
    handle = timers.after(due - clock.now(), wake);
  };

  const wake = () => {
    if (!running) return;
    const now = clock.now();
    const scheduledAt = start + k * intervalMs;
    const lateMs = now - scheduledAt;
    if (lateMs > stallThresholdMs) {
      stalls++;
      metrics?.eventLoopStalls.inc();
      logger?.warn(
        { event: "loop.stalled", loop: name, gapMs: lateMs, expectedAt: scheduledAt, intervalMs },
        `the ${name} loop woke up ${lateMs} ms late (host suspended or event loop blocked)`,
      );
    }
    const info: TickInfo = { k, scheduledAt, lateMs };
    // Next tick: the first slot strictly after now (missed slots are skipped, never replayed in a burst).
    k = Math.floor((now - start) / intervalMs) + 1;
    ticks++;
    try {
      const r = onTick(info);
      if (r && typeof (r as Promise<void>).catch === "function") {
        (r as Promise<void>).catch((error: unknown) =>
          logger?.error({ event: "loop.tick_failed", loop: name, err: error }, "tick failed"),
        );
      }
    } catch (error) {
      logger?.error({ event: "loop.tick_failed", loop: name, err: error }, "tick failed");
    }
    if (running) schedule();
  };

  return {
    start() {
      if (running) return;
      running = true;
      start = clock.now();
      k = 0;
      schedule();
    },
    stop() {
      running = false;
      handle?.cancel();
      handle = undefined;
    },
    get running() {
      return running;
    },
    get ticks() {
      return ticks;
    },
    get stalls() {
      return stalls;
    },
  };
}
