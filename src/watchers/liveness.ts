/**
 * When silence is evidence of a dead engine (issue 38): silence counts only over time the daemon was awake to hear
 * it. A pure rule, no I/O and no clock: its driver (the connection guard, src/watchers/connection-guard.ts) tells it
 * what happened and when, and carries out what it answers.
 *
 * - `heard(at)`: a line from the engine was read at `at` (monotonic ms).
 * - `checked(at, lateMs)`: the check the rule asked for ran at `at`, `lateMs` after it was due.
 *   - A wake-up later than `toleranceMs` POSTPONES the judgement, never makes it: the daemon was not running for at
 *     least that long (stopped, suspended, blocked), so what it did not hear then is not the engine's silence; the
 *     silence restarts counting from this wake-up (`wait` one gap from now).
 *   - Silent for less than the gap: `wait` until it is due.
 *   - Silent for the gap on an on-time check: `confirm` first. The driver reads what the connection already holds
 *     (one I/O turn: after a stall the loop runs its due timers before it reads the sockets) and checks again.
 *   - The confirming check, on time, with nothing heard meanwhile: `down`.
 * A hung engine (connected, silent) is therefore down within the gap plus one check (the confirming turn) of a daemon
 * that stays awake; every stall only moves that point later by the stall.
 */

/** A wake-up later than this (ms) is a stall of the daemon, not a check: a quarter of the window, at most this. */
export const LATE_TOLERANCE_MAX_MS = 250;

/** The lateness (ms) beyond which a check of a `windowMs` silence (or age) is a stall's wake-up, not a check. */
export function lateToleranceMs(windowMs: number): number {
  return Math.max(1, Math.min(LATE_TOLERANCE_MAX_MS, Math.floor(windowMs / 4)));
}

export type Liveness = {
  readonly gapMs: number;
  readonly toleranceMs: number;
  /** when the last line was heard (monotonic ms) */
  readonly heardAt: number;
  /** silence is counted from here at the earliest: the connection's start or the last late wake-up */
  readonly countFrom: number;
  /** an on-time check found the gap reached: the next check (after one I/O turn) decides */
  readonly confirming: boolean;
};

export type LivenessVerdict =
  /** check again at `at` (monotonic ms) */
  | { kind: "wait"; at: number; postponed: boolean }
  /** read what the connection holds (one I/O turn), then check again */
  | { kind: "confirm" }
  /** silent for `silentMs` of time the daemon was awake: the engine is down */
  | { kind: "down"; silentMs: number };

/** A connection heard from at `at` (its first line). */
export function livenessStart(gapMs: number, at: number, toleranceMs = lateToleranceMs(gapMs)): Liveness {
  return { gapMs, toleranceMs, heardAt: at, countFrom: at, confirming: false };
}

/** A line read at `at`: the engine is alive; a judgement in progress is dropped. */
export function heard(s: Liveness, at: number): Liveness {
  return { ...s, heardAt: Math.max(s.heardAt, at), confirming: false };
}

/** When the silence reaches the gap, if nothing is heard (monotonic ms). */
export function dueAt(s: Liveness): number {
  return Math.max(s.heardAt, s.countFrom) + s.gapMs;
}

/** A check ran at `at`, `lateMs` after it was due. */
export function checked(
  s: Liveness,
  at: number,
  lateMs: number,
): { state: Liveness; verdict: LivenessVerdict } {
  if (lateMs > s.toleranceMs) {
    const state = { ...s, countFrom: Math.max(s.countFrom, at), confirming: false };
    return { state, verdict: { kind: "wait", at: dueAt(state), postponed: true } };
  }
  const due = dueAt(s);
  if (at < due)
    return { state: { ...s, confirming: false }, verdict: { kind: "wait", at: due, postponed: false } };
  if (!s.confirming) return { state: { ...s, confirming: true }, verdict: { kind: "confirm" } };
  return {
    state: { ...s, confirming: false },
    verdict: { kind: "down", silentMs: at - Math.max(s.heardAt, s.countFrom) },
  };
}
