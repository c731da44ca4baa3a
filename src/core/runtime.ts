/**
 * The runtime every periodic task runs on: the clock (wall + monotonic), one-shot timers and drift-free
 * repetition on the monotonic clock, the exchange's time (the local clock corrected by the skew measured from
 * every answer's `Date`), wall-clock step detection, and one root AbortSignal. The switch, the engine guard,
 * the exposure poller, the budget watch and the chain watch all repeat through `every` (docs/daemon.md
 * "How time is kept").
 *
 * Why monotonic: a wall-clock step (NTP stepping the clock back 10 minutes) must not stop pushes nor count a
 * trigger that never happened. Node's setTimeout already runs on a monotonic clock; what must not happen is
 * computing a delay from two wall-clock readings. Here every delay is a monotonic difference.
 */

import { performance } from "node:perf_hooks";
import { type Clock, type ManualClock, monotonicOf } from "./clock.js";
import { ArgumentError } from "./errors/argument.js";
import type { Logger } from "./logger.js";

export type TimerHandle = { cancel(): void };

/** One-shot timers measured on the monotonic clock. */
export interface Timers {
  /**
   * Runs `fn` once, `ms` from now (at once when ms <= 0). With `afterIo`, a timer for now runs only after the I/O
   * already waiting is read (node's timers do so anyway: the next timers phase comes after the poll phase; manual
   * timers then wait for the next macrotask even inside a run).
   */
  after(ms: number, fn: () => void, options?: { afterIo?: boolean }): TimerHandle;
}

/**
 * Real timers (setTimeout, which Node runs on a monotonic clock). They keep the process alive: the push loop
 * is what the daemon exists for. `onLate`, when given, hears how late each timer fired (ms after it was due;
 * negative or zero: on time): the daemon's measure of its event loop's delay (src/surface/metrics.ts).
 */
export function systemTimers(
  _clock?: Clock,
  {
    onLate,
    unref = false,
  }: {
    onLate?: ((lateMs: number) => void) | undefined;
    /** the timers do not keep the process alive on their own (a bound on a flush, a lock's refresh) */
    unref?: boolean | undefined;
  } = {},
): Timers {
  return {
    after(ms: number, fn: () => void): TimerHandle {
      const delay = Math.max(0, ms);
      if (onLate === undefined) {
        const handle = setTimeout(fn, delay);
        if (unref) handle.unref();
        return { cancel: () => clearTimeout(handle) };
      }
      const due = performance.now() + delay;
      const handle = setTimeout(() => {
        onLate(performance.now() - due);
        fn();
      }, delay);
      if (unref) handle.unref();
      return { cancel: () => clearTimeout(handle) };
    },
  };
}

/** Timers that do not keep the process alive on their own. */
export const unrefTimers: Timers = systemTimers(undefined, { unref: true });

/**
 * `timers.after`, telling `fn` how late it ran: ms after it was due on `clock`'s monotonic time (zero or less: on
 * time). A wake-up much later than due means the process was not running meanwhile (stopped, suspended, blocked):
 * what it did not hear in that time is no evidence (src/watchers/liveness.ts). With ms <= 0 the timer runs after the
 * I/O already waiting is read (node: the next timers phase comes after the poll phase), which is how a judgement
 * reads what the sockets hold before it is made.
 */
export function afterTimed(
  { clock, timers }: { clock: Clock; timers: Timers },
  ms: number,
  fn: (info: { lateMs: number }) => void,
): TimerHandle {
  const due = monotonicOf(clock) + Math.max(0, ms);
  return timers.after(ms, () => fn({ lateMs: monotonicOf(clock) - due }), { afterIo: true });
}

/**
 * Waits `ms` on `timers`; an abort of `signal` ends the wait early (it resolves: the caller looks at the signal).
 * The one back-off wait of the transport's retries and the notifier's deliveries.
 */
export function sleep(
  ms: number,
  { timers, signal }: { timers: Timers; signal?: AbortSignal | undefined },
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = timers.after(ms, done);
    function done() {
      timer.cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Flushes a logger, bounded in time (pino's flush may never call back on an idle transport). */
export async function flushLogger(
  logger: Logger,
  timeoutMs = 1000,
  timers: Timers = unrefTimers,
): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = timers.after(timeoutMs, resolve);
    try {
      logger.flush((_err?: Error) => {
        timer.cancel();
        resolve();
      });
    } catch {
      timer.cancel();
      resolve();
    }
  });
}

/** `run` is the run (counted) a timer may not fire in: one set for now `afterIo` during that run */
type ManualTimer = { due: number; seq: number; fn: () => void; cancelled: boolean; notInRun?: number };

/**
 * Timers that fire when a ManualClock's monotonic time reaches them, in due order, right after each clock move
 * (a wall-clock `step` fires nothing). A timer set for "now" (ms <= 0) fires on the next macrotask.
 */
export class ManualTimers implements Timers {
  readonly #clock: ManualClock;
  #timers: ManualTimer[] = [];
  #seq = 0;
  /** runs started so far; `#running` while one fires timers */
  #runs = 0;
  #running = false;
  #unsubscribe: () => void;

  constructor(clock: ManualClock) {
    this.#clock = clock;
    this.#unsubscribe = clock.onChange(() => this.run());
  }

  after(ms: number, fn: () => void, options?: { afterIo?: boolean }): TimerHandle {
    const timer: ManualTimer = {
      due: this.#clock.monotonic() + Math.max(0, ms),
      seq: this.#seq++,
      fn,
      cancelled: false,
      ...(options?.afterIo && ms <= 0 && this.#running ? { notInRun: this.#runs } : {}),
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
    const run = ++this.#runs;
    const outer = this.#running;
    this.#running = true;
    try {
      for (let guard = 0; guard < 10_000; guard++) {
        const now = this.#clock.monotonic();
        this.#timers = this.#timers.filter((t) => !t.cancelled);
        const due = this.#timers
          .filter((t) => t.due <= now && t.notInRun !== run)
          .sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
        if (!due) break;
        due.cancelled = true;
        fired++;
        due.fn();
      }
    } finally {
      this.#running = outer;
    }
    return fired;
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** The earliest due time (monotonic ms) still waiting, or null. */
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
  /** when the tick was due (monotonic ms) */
  scheduledAt: number;
  /** how late it ran (ms) */
  lateMs: number;
};

export type EveryOptions = {
  clock: Clock;
  timers: Timers;
  logger?: Logger | undefined;
  /**
   * called once per stall, with how late and the slot it woke up for (the daemon counts them in
   * metrics.eventLoopStalls; the switch publishes them as its `loopStalled` event)
   */
  onStall?: ((gapMs: number, expectedAt: number) => void) | undefined;
  /**
   * called with the error of a tick that threw or rejected (a watcher publishes it as its `tickFailed` event: the
   * wording is the bus's subscribers')
   */
  onTickFailed?: ((error: unknown) => void) | undefined;
  /** default max(1 s, interval / 2) */
  stallThresholdMs?: number | undefined;
  /** what the repetition is for, in log lines */
  name?: string;
  /** run the first tick at once (default) or one interval after start */
  immediate?: boolean;
  /** stops the repetition when aborted */
  signal?: AbortSignal | undefined;
  /**
   * where slot 0 lies on the monotonic clock (default: now); with it, the first tick is the first slot strictly
   * after now (`immediate` is for repetitions without it). Repetitions with the same timers, origin and interval
   * share one timer and run in the order they were made (the daemon's clock watch, then the push loops); with
   * intervals that divide each other they are due in the same slots (the exposure poll on a push's).
   */
  startAt?: number | undefined;
};

export type Repeating = {
  stop(): void;
  readonly running: boolean;
  /** ticks run so far */
  readonly ticks: number;
  /** stalls detected so far */
  readonly stalls: number;
};

type GridMember = { due(): number; wake(): void; running(): boolean };

/**
 * The repetitions on one grid (the same timers, origin and interval): one timer for all of them, so that the daemon's
 * clock watch and the push loops wake together, once per slot, and always in the order they were made. Separate
 * timers due in the same slot are not one wake-up in node: each timeout is measured in whole milliseconds of the
 * event loop's time from when it was set, so two timers set for the same instant a fraction of a millisecond apart
 * can fire a millisecond apart, in either order.
 */
class SlotGrid {
  static readonly #grids = new WeakMap<Timers, Map<string, SlotGrid>>();
  readonly #timers: Timers;
  readonly #clock: Clock;
  readonly #members: GridMember[] = [];
  readonly #forget: () => void;
  #handle: TimerHandle | undefined;
  #handleDue = Number.POSITIVE_INFINITY;

  private constructor(timers: Timers, clock: Clock, forget: () => void) {
    this.#timers = timers;
    this.#clock = clock;
    this.#forget = forget;
  }

  /** The grid of `timers` at (`start`, `intervalMs`), made on first use. */
  static join(timers: Timers, clock: Clock, start: number, intervalMs: number): SlotGrid {
    let byKey = SlotGrid.#grids.get(timers);
    if (!byKey) {
      byKey = new Map();
      SlotGrid.#grids.set(timers, byKey);
    }
    const key = `${start}/${intervalMs}`;
    const found = byKey.get(key);
    if (found) return found;
    const map = byKey;
    const grid = new SlotGrid(timers, clock, () => map.delete(key));
    byKey.set(key, grid);
    return grid;
  }

  add(member: GridMember): void {
    this.#members.push(member);
    this.#arm();
  }

  remove(member: GridMember): void {
    const i = this.#members.indexOf(member);
    if (i >= 0) this.#members.splice(i, 1);
    if (this.#members.length > 0) return;
    this.#handle?.cancel();
    this.#handle = undefined;
    this.#handleDue = Number.POSITIVE_INFINITY;
    this.#forget();
  }

  /** One timer, for the earliest slot any member waits for. */
  #arm(): void {
    if (this.#members.length === 0) return;
    const next = Math.min(...this.#members.map((m) => m.due()));
    if (this.#handle && this.#handleDue <= next) return;
    this.#handle?.cancel();
    this.#handleDue = next;
    this.#handle = this.#timers.after(next - monotonicOf(this.#clock), () => this.#fire());
  }

  #fire(): void {
    const due = this.#handleDue;
    this.#handle = undefined;
    this.#handleDue = Number.POSITIVE_INFINITY;
    // every member due in this slot, in the order they joined (one that stops or joins meanwhile is respected)
    for (const m of [...this.#members]) if (m.running() && m.due() <= due) m.wake();
    this.#arm();
  }
}

/**
 * Runs `fn` every `intervalMs`, drift-free on the monotonic clock: tick k is due at start + k × interval (not
 * setInterval, which drifts by the callback's run time). A wake-up much later than planned (host suspended,
 * event loop blocked) is logged as `loop.stalled` and the missed ticks are skipped (one tick, never a burst).
 */
export function every(
  intervalMs: number,
  fn: (info: TickInfo) => void | Promise<void>,
  {
    clock,
    timers,
    logger,
    onStall,
    onTickFailed,
    stallThresholdMs = Math.max(1_000, intervalMs / 2),
    name = "push",
    immediate = true,
    signal,
    startAt,
  }: EveryOptions,
): Repeating {
  if (!(intervalMs > 0)) throw new ArgumentError(`loop interval must be > 0 ms, got ${intervalMs}`);
  const now0 = monotonicOf(clock);
  const start = startAt ?? now0;
  // the first slot: now (immediate, without startAt), else the first one strictly after now
  let k = immediate && startAt === undefined ? 0 : Math.max(0, Math.floor((now0 - start) / intervalMs) + 1);
  let running = true;
  let ticks = 0;
  let stalls = 0;

  const failed = (error: unknown) => {
    onTickFailed?.(error);
    logger?.error({ event: "loop.tick_failed", loop: name, err: error }, "tick failed");
  };

  const wake = () => {
    if (!running) return;
    const now = monotonicOf(clock);
    const scheduledAt = start + k * intervalMs;
    const lateMs = now - scheduledAt;
    if (lateMs > stallThresholdMs) {
      stalls++;
      onStall?.(lateMs, scheduledAt);
      logger?.warn(
        { event: "loop.stalled", loop: name, gapMs: lateMs, expectedAt: scheduledAt, intervalMs },
        `the ${name} loop woke up ${Math.round(lateMs)} ms late (host suspended or event loop blocked)`,
      );
    }
    const info: TickInfo = { k, scheduledAt, lateMs };
    // Next tick: the first slot after this one and strictly after now (missed slots are skipped, never replayed in
    // a burst). A timer can fire up to about a millisecond before its slot by this clock: node measures a timeout
    // on the event loop's time in whole milliseconds. Such a wake-up still runs its own slot, once, and never the
    // same slot again.
    k = Math.max(k + 1, Math.floor((now - start) / intervalMs) + 1);
    ticks++;
    try {
      const r = fn(info);
      if (r && typeof (r as Promise<void>).catch === "function") {
        (r as Promise<void>).catch((error: unknown) => failed(error));
      }
    } catch (error) {
      failed(error);
    }
  };

  // With an origin, the repetition joins the grid of every other one on the same timers, origin and interval: one
  // timer wakes them all, in the order they were made (below, `SlotGrid`). Without one, a timer of its own.
  const member: GridMember = { due: () => start + k * intervalMs, wake, running: () => running };
  let handle: TimerHandle | undefined;
  const own = () => {
    handle = timers.after(member.due() - monotonicOf(clock), () => {
      wake();
      if (running) own();
    });
  };
  const grid = startAt === undefined ? null : SlotGrid.join(timers, clock, start, intervalMs);
  const stop = () => {
    running = false;
    handle?.cancel();
    handle = undefined;
    grid?.remove(member);
  };
  signal?.addEventListener("abort", stop, { once: true });
  if (signal?.aborted) running = false;
  else if (grid) grid.add(member);
  else own();

  return {
    stop,
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

// ------------------------------------------------------------------------------------------- exchange time

/** A wall-clock step smaller than this is noise (scheduling jitter), not a step. */
export const CLOCK_STEP_THRESHOLD_MS = 2_000;
export type ClockStep = { deltaMs: number; wall: number; mono: number };

/**
 * The switch machine's belief about the exchange's time at (mono, local wall) (src/switch/exchange-time.ts):
 * `act`, the time it acts on; `exchange`, its estimate; `verified`, whether that estimate may be persisted;
 * `ready`, the time readiness is judged on (the later of the local clock and the estimate).
 */
export type TimeView = (
  mono: number,
  wall: number,
) => { act: number; exchange: number; verified: boolean; ready: number; plan?: number; witnessed?: boolean };

/**
 * The exchange's time, kept as monotonic time + an offset: a local wall-clock step moves nothing here. The
 * offset starts as (wall − monotonic); once the switch machine adopts its view (`adopt`), the machine's bounded
 * estimate from every answer's `Date` is what this object reports (src/switch/exchange-time.ts). `checkStep`
 * compares the wall clock to the monotonic one and reports a step when they disagree.
 */
export class ExchangeTime implements Clock {
  readonly #clock: Clock;
  #offset: number;
  #wallAnchor: number;
  #view: TimeView | null = null;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#offset = clock.now() - monotonicOf(clock);
    this.#wallAnchor = this.#offset;
  }

  /**
   * The switch machine's estimate replaces this object's own (the machine judges every Date sample; the
   * daemon's nonces, expiresAfter and ledger follow what it believes).
   */
  adopt(view: TimeView): void {
    this.#view = view;
  }

  #viewNow() {
    return this.#view ? this.#view(monotonicOf(this.#clock), this.#clock.now()) : null;
  }

  /**
   * The exchange's time now (ms since the epoch), as best known: the time the switch acts on (nonces, expiresAfter,
   * the record's and the ledger's dates). Never the earliest candidate the pushes' cancel times are planned on
   * while nothing is verified (src/switch/exchange-time.ts `Times.plan`): a record or a ledger write dated on a
   * Date 12 h behind lands on the previous UTC day, where it corrects nothing.
   */
  now(): number {
    const v = this.#viewNow();
    return v ? v.act : Math.floor(monotonicOf(this.#clock) + this.#offset);
  }

  /** The time pushes' cancel times are planned on (the machine's `Times.plan`); `now()` when none is adopted. */
  planNow(): number {
    const v = this.#viewNow();
    return v ? (v.plan ?? v.act) : this.now();
  }

  /**
   * The time readiness is judged on: the later of the local clock and the exchange estimate (the switch machine's
   * `Times.ready`), so that neither clock alone makes the schedule look further ahead than the other says.
   */
  readinessNow(): number {
    const v = this.#viewNow();
    return v ? v.ready : Math.max(this.now(), Math.floor(this.#clock.now()));
  }

  /**
   * The exchange's time when it is verified (an answer's Date, plausible and in agreement with the local clock or
   * the verified window), else 0: what may be persisted (the ledger's updatedAt, the nonce floor).
   */
  verifiedNow(): number {
    const v = this.#viewNow();
    return (v?.witnessed ?? v?.verified) ? v.exchange : 0;
  }

  monotonic(): number {
    return monotonicOf(this.#clock);
  }

  /** Local wall clock minus the exchange's time (ms): the current skew estimate. */
  get skewMs(): number {
    const v = this.#viewNow();
    return this.#clock.now() - (v ? v.exchange : this.now());
  }

  /**
   * The exchange's time is at least `ms` (e.g. the ledger's last write at start: a wall clock stepped back
   * while the daemon was down cannot put the time before what was already written).
   */
  notBefore(ms: number): void {
    const now = this.now();
    if (Number.isFinite(ms) && ms > now) this.#offset += ms - now;
  }

  /** True while two witnesses agree on the machine's estimate (whatever the local clock says). */
  get verified(): boolean {
    const v = this.#viewNow();
    return v?.witnessed ?? v?.verified ?? false;
  }

  /** Compares the wall clock to the monotonic one; a disagreement beyond the threshold is a step. */
  checkStep(): ClockStep | null {
    const mono = monotonicOf(this.#clock);
    const wall = this.#clock.now();
    const anchor = wall - mono;
    const deltaMs = anchor - this.#wallAnchor;
    if (Math.abs(deltaMs) < CLOCK_STEP_THRESHOLD_MS) return null;
    this.#wallAnchor = anchor;
    return { deltaMs, wall, mono };
  }
}

/** One root AbortSignal for the process: aborted on shutdown, every repetition listens to it. */
export function createRootSignal(): { signal: AbortSignal; abort(reason?: string): void } {
  const controller = new AbortController();
  return { signal: controller.signal, abort: (reason) => controller.abort(reason) };
}

// ------------------------------------------------------------------------------------------------ runtime

/** `every`'s options on a runtime: the clock, the timers and the stop signal are the runtime's own. */
export type RuntimeEveryOptions = Omit<EveryOptions, "clock" | "timers" | "signal">;

/**
 * What every long-lived component runs on: one clock, one set of timers, one stop signal, and `every` bound to
 * the three. The daemon makes one (`createRuntime`) and hands it to each component it starts, so that a test
 * swaps the whole of time (a ManualClock and ManualTimers) in one place and one abort stops every repetition.
 */
export type Runtime = {
  readonly clock: Clock;
  readonly timers: Timers;
  /** aborted when the daemon stops (or fails to start): every repetition made through `every` ends */
  readonly signal: AbortSignal;
  /** drift-free repetition on this runtime's clock and timers, stopped by its signal (see `every` above) */
  every(
    intervalMs: number,
    fn: (info: TickInfo) => void | Promise<void>,
    options?: RuntimeEveryOptions,
  ): Repeating;
  /**
   * The same timers and signal over another clock: the exchange's time (ExchangeTime), for what must judge
   * dates on it (the agent watch's validity, the switch).
   */
  withClock(clock: Clock): Runtime;
};

/** The runtime's owner (the daemon) also holds the one abort. */
export type RootRuntime = Runtime & { abort(reason?: string): void };

function runtimeOver(clock: Clock, timers: Timers, signal: AbortSignal): Runtime {
  return {
    clock,
    timers,
    signal,
    every: (intervalMs, fn, options = {}) => every(intervalMs, fn, { ...options, clock, timers, signal }),
    withClock: (other) => runtimeOver(other, timers, signal),
  };
}

/** One runtime with its own root signal (createRootSignal); `abort` ends every repetition made on it. */
export function createRuntime({ clock, timers }: { clock: Clock; timers: Timers }): RootRuntime {
  const root = createRootSignal();
  return { ...runtimeOver(clock, timers, root.signal), abort: root.abort };
}
