/**
 * The clock is passed in, never reached for: everything that needs "now" takes a Clock, so tests can
 * cross a UTC midnight or a deadline without sleeping. `Date.now()` is read only here.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** A clock that only moves when told to. Listeners run after every move (the simulator uses them). */
export class ManualClock implements Clock {
  #now: number;
  readonly #listeners = new Set<(now: number) => void>();

  constructor(startMs: number = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  /** Moves the clock forward by `ms` (never backwards) and notifies listeners. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms) needs a finite ms >= 0, got ${ms}`);
    this.#now += ms;
    this.#emit();
    return this.#now;
  }

  /** Sets the clock to an absolute time (may go backwards, to model a clock step) and notifies listeners. */
  set(ms: number): number {
    if (!Number.isFinite(ms)) throw new RangeError(`set(ms) needs a finite ms, got ${ms}`);
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
  return { now: () => base.now() + offsetMs };
}

/** `YYYY-MM-DD` of the UTC day containing `ms`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Milliseconds of the next 00:00 UTC strictly after `ms`. */
export function nextUtcMidnight(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}
