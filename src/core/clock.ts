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
  // The switch asks for the day many times a step, nearly always the same one: the last day's name is remembered,
  // and the Date (and its ISO string) is asked only for another day. Outside the Date's range, the Date's RangeError.
  if (!(Math.abs(ms) <= MAX_DATE_MS)) return new Date(ms).toISOString().slice(0, 10);
  const days = Math.floor(ms / DAY_MS);
  if (days !== lastDay.days) lastDay = { days, day: new Date(ms).toISOString().slice(0, 10) };
  return lastDay.day;
}

const DAY_MS = 86_400_000;
/** The Date's range: ±100,000,000 days from 1970 */
const MAX_DATE_MS = 8.64e15;
let lastDay = { days: Number.NaN, day: "" };

/** Milliseconds of the next 00:00 UTC strictly after `ms`. */
export function nextUtcMidnight(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}
