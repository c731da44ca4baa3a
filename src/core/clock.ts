/**
 * The clock is passed in, never reached for: everything that needs "now" takes a Clock, so tests can
 * cross a UTC midnight or a deadline without sleeping. `Date.now()` is read only here.
 */
import { ArgumentError } from "./errors/argument.js";
export interface Clock {
  /** Milliseconds since the Unix epoch (the wall clock: may be stepped by NTP or an operator). */
  now(): number;
  /**
   * Milliseconds on a clock that never jumps (performance.now()); every timer, retry and time-out runs on it.
   * Optional so plain `{ now }` clocks still fit; `monotonicOf` falls back to `now`.
   */
  monotonic?(): number;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
});

/** The clock's monotonic reading (its wall reading for clocks without one). */
export function monotonicOf(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/** A clock that only moves when told to. Listeners run after every move (the simulator uses them). */
export class ManualClock implements Clock {
  #now: number;
  #mono = 0;
  readonly #listeners = new Set<(now: number) => void>();

  constructor(startMs: number = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  /** Time actually passed (moves with `advance`, not with `set`/`step`). */
  monotonic(): number {
    return this.#mono;
  }

  /** Moves both clocks forward by `ms` (never backwards) and notifies listeners. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0)
      throw new ArgumentError(`advance(ms) needs a finite ms >= 0, got ${ms}`);
    this.#now += ms;
    this.#mono += ms;
    this.#emit();
    return this.#now;
  }

  /** Steps the wall clock by `deltaMs` (either way) while no time passes: an NTP step. */
  step(deltaMs: number): number {
    return this.set(this.#now + deltaMs);
  }

  /**
   * Sets the wall clock to an absolute time (may go backwards, to model a clock step) and notifies listeners.
   * The monotonic clock does not move.
   */
  set(ms: number): number {
    if (!Number.isFinite(ms)) throw new ArgumentError(`set(ms) needs a finite ms, got ${ms}`);
    this.#now = ms;
    this.#emit();
    return this.#now;
  }

  onChange(listener: (now: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(): void {
    for (const l of this.#listeners) l(this.#now);
  }
}

/** A clock offset from another one (models a skewed local clock in tests). */
export function offsetClock(base: Clock, offsetMs: number): Clock {
  return { now: () => base.now() + offsetMs, monotonic: () => monotonicOf(base) };
}

/** `YYYY-MM-DD` of the UTC day containing `ms`. */
export function utcDay(ms: number): string {
  // Years 1970-9999 by arithmetic (the switch asks many times a step; a Date and its ISO string cost more), the
  // day before remembered; any other time as the Date says (and throws).
  if (!(ms >= 0 && ms < MAX_ARITHMETIC_MS)) return new Date(ms).toISOString().slice(0, 10);
  const days = Math.floor(ms / DAY_MS);
  if (days !== lastDay.days) lastDay = { days, day: civilDay(days) };
  return lastDay.day;
}

const DAY_MS = 86_400_000;
/** 10000-01-01T00:00:00Z: from there the ISO string has a six-digit year */
const MAX_ARITHMETIC_MS = 253_402_300_800_000;
let lastDay = { days: Number.NaN, day: "" };

/**
 * `YYYY-MM-DD` of the day `days` after 1970-01-01, for days >= 0: H. Hinnant's civil_from_days
 * (https://howardhinnant.github.io/date_algorithms.html#civil_from_days).
 */
function civilDay(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1_460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${m < 10 ? "0" : ""}${m}-${d < 10 ? "0" : ""}${d}`;
}

/** Milliseconds of the next 00:00 UTC strictly after `ms`. */
export function nextUtcMidnight(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}
