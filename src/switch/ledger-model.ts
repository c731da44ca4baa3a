/**
 * The trigger ledger's pure model: one account's entry and every change to it, as functions of the entry and
 * `now` (ms on the exchange's clock). Nothing here reads a clock, touches the disk or logs; the store
 * (switch/ledger.ts) persists what these return, and the switch machine (switch/machine.ts) decides
 * when. Rules (docs/daemon.md "The ledger"):
 * - the UTC day only moves forward: a `now` on an earlier day (a clock stepped back) never rolls the entry back,
 *   and a day's count is never reset by a step;
 * - `armedUntil` is the cancel time of the last confirmed push; `pendingUntil` the earliest cancel time of a
 *   push that may have been accepted without its confirmation recorded (write-ahead). Pending counts for the
 *   conservative trigger count, never as armed;
 * - a deadline is counted at most once (`lastCountedDeadline`), and only on its own UTC day;
 * - the history keeps the last `historySize` notable events (also applied to an entry read from disk).
 * What the exchange's record changes in an entry is decided beside this, in record-reconcile.ts.
 */
import { utcDay } from "../core/clock.js";
import type { ProofCounts, TriggerProofKind } from "../core/switch-events.js";
import type { EngineHeld, LedgerEntry, LedgerEvent, TriggerProof, TriggerRecord } from "./ledger-schema.js";

export const HISTORY_SIZE = 50;
/** Today's counted triggers kept with their proof (the file's schema allows 200). */
export const TRIGGER_LIST_SIZE = 100;
/** Today's removals kept (the file's schema allows 200). */
export const REMOVAL_LIST_SIZE = 50;

/** Appends `event`, keeping the last `size` events. */
export function withHistory(entry: LedgerEntry, event: LedgerEvent, size = HISTORY_SIZE): LedgerEntry {
  return { ...entry, history: capHistory([...entry.history, event], size) };
}

export function capHistory(history: LedgerEvent[], size = HISTORY_SIZE): LedgerEvent[] {
  return history.length > size ? history.slice(history.length - size) : history;
}

/** A fresh entry for `account` on the UTC day of `now`; `assumed` starts it at the limit (unreadable ledger). */
export function newEntry(
  account: string,
  now: number,
  {
    limit,
    assumed = false,
    corruptDetail,
  }: { limit: number; assumed?: boolean; corruptDetail?: string | null },
): LedgerEntry {
  const entry: LedgerEntry = {
    account: account.toLowerCase(),
    day: utcDay(now),
    triggersToday: assumed ? limit : 0,
    limit,
    assumed,
    armedUntil: null,
    lastPushAt: null,
    pendingUntil: null,
    pendingLatest: null,
    lastCountedDeadline: null,
    history: [],
    triggers: [],
    limitRefusedAt: null,
    removals: [],
  };
  return assumed && corruptDetail
    ? withHistory(entry, { at: now, type: "corrupt", detail: corruptDetail })
    : entry;
}

/**
 * The accounts an engine held (LedgerFile `engines`) with `account` among them: the same object when it already is
 * (the first time is kept, so a heartbeat or a reconnection never writes), else a new one with `since: at`.
 */
export function withEngineHeld(
  engines: Readonly<Record<string, EngineHeld>>,
  account: string,
  at: number,
): Readonly<Record<string, EngineHeld>> {
  const key = account.toLowerCase();
  if (Object.hasOwn(engines, key)) return engines;
  return { ...engines, [key]: { since: Math.floor(at) } };
}

export type RollResult = { entry: LedgerEntry; rolled: null | { from: string; to: string; was: number } };

/** Guesses kept for later UTC days than the ledger's (`later`: the ledger file holds at most this many). */
export const LATER_MAX = 8;

/**
 * The guesses kept for later days, at most LATER_MAX: the soonest deadlines, as the ledger reaches their days
 * first. Full, the furthest is dropped, never the soonest: dropped in the order they came, a run on a local clock
 * 3 d ahead with no answer (no witness to rule it out) pushed out the guesses kept for the exchange's next day with
 * its own for the clock's day, and that day's count went down when the ledger rolled to it (invariant 8; seeds
 * 20261128-20261130 with the start offsets drawn).
 */
export function keptLater(later: readonly TriggerRecord[]): TriggerRecord[] {
  return [...later].sort((a, b) => (a.deadline ?? 0) - (b.deadline ?? 0)).slice(0, LATER_MAX);
}

/**
 * The entry as it stands at `now`: a later UTC day resets the count (with a history line); an earlier one
 * (the clock stepped back) changes nothing.
 */
export function rollEntry(entry: LedgerEntry, now: number, size = HISTORY_SIZE): RollResult {
  const today = utcDay(now);
  if (today <= entry.day) return { entry, rolled: null };
  const from = entry.day;
  const was = entry.triggersToday;
  // A guess counted for a later day (`later`) counts on that day: the day's count starts with it, never below.
  const later = entry.later ?? [];
  const carried = later.filter((t) => t.deadline !== null && utcDay(t.deadline) === today);
  const waiting = later.filter((t) => t.deadline !== null && utcDay(t.deadline) > today);
  const { later: _dropped, ...rest } = entry;
  const rolled = withHistory(
    {
      ...rest,
      day: today,
      triggersToday: carried.length,
      assumed: false,
      triggers: carried,
      limitRefusedAt: null,
      removals: [],
      ...(waiting.length > 0 ? { later: waiting } : {}),
    },
    {
      at: now,
      type: "rollover",
      triggersToday: carried.length,
      detail: `${from} -> ${today} (${was} used${carried.length > 0 ? `; ${carried.length} counted for ${today} before the day rolled` : ""})`,
    },
    size,
  );
  return { entry: rolled, rolled: { from, to: today, was } };
}

/** Write-ahead: a push with cancel time `cancelAt` is about to leave. Keeps the earliest possible deadline. */
export function withIntent(entry: LedgerEntry, cancelAt: number): LedgerEntry {
  const pendingUntil = entry.pendingUntil === null ? cancelAt : Math.min(entry.pendingUntil, cancelAt);
  const pendingLatest = Math.max(entry.pendingLatest ?? cancelAt, cancelAt, pendingUntil);
  return { ...entry, pendingUntil, pendingLatest };
}

/** The earliest deadline an entry says may fire (where a restart counts a trigger), or null. */
export function earliestDeadline(entry: LedgerEntry): number | null {
  const { armedUntil, pendingUntil } = entry;
  if (armedUntil === null) return pendingUntil;
  return pendingUntil === null ? armedUntil : Math.min(armedUntil, pendingUntil);
}

/** The latest deadline an entry says the exchange may hold (0 when none). */
function latestDeadline(entry: LedgerEntry): number {
  return Math.max(entry.armedUntil ?? 0, entry.pendingUntil ?? 0, entry.pendingLatest ?? 0);
}

function sameLastEvent(a: LedgerEvent[], b: LedgerEvent[]): boolean {
  if (a.length !== b.length) return false;
  const x = a.at(-1);
  const y = b.at(-1);
  return (
    x === y ||
    (x !== undefined &&
      y !== undefined &&
      x.at === y.at &&
      x.type === y.type &&
      x.deadline === y.deadline &&
      x.triggersToday === y.triggersToday &&
      x.detail === y.detail)
  );
}

function sameTriggers(a: TriggerRecord[], b: TriggerRecord[]): boolean {
  if (a === b) return true;
  return a.length === b.length && a.every((x, i) => x.deadline === b[i]!.deadline && x.proof === b[i]!.proof);
}

/**
 * Whether the write-ahead record of a push (`next`, the entry with the push's intent: `withIntent`) would tell a
 * restart nothing that `onDisk`, the account's entry as last written durably, does not already tell it. Then the
 * record need not be written before the request leaves (docs/daemon.md, "The ledger"). That is so when:
 * - a confirmed deadline is on disk, and nothing but the pending times differs from it (same day, count, counted
 *   deadline, confirmed deadline, history);
 * - the earliest deadline that may fire is the same (a restart counts the same trigger at the same time: the
 *   exchange holds the confirmed deadline or this later one, and fires at most one of them);
 * - the latest deadline the exchange may hold is on the same UTC day (a restart keeps the same possible trigger
 *   pending past 00:00).
 * A push that moves the deadline earlier (an engine-down expedite), the first push after nothing was armed, one
 * across 00:00 UTC, or one after any change not yet on disk is written ahead as before.
 */
export function intentCovered(onDisk: LedgerEntry | undefined, next: LedgerEntry): boolean {
  if (onDisk === undefined || onDisk.armedUntil === null) return false;
  if (
    onDisk.account !== next.account ||
    onDisk.day !== next.day ||
    onDisk.triggersToday !== next.triggersToday ||
    onDisk.limit !== next.limit ||
    onDisk.assumed !== next.assumed ||
    onDisk.armedUntil !== next.armedUntil ||
    onDisk.lastPushAt !== next.lastPushAt ||
    onDisk.lastCountedDeadline !== next.lastCountedDeadline ||
    onDisk.limitRefusedAt !== next.limitRefusedAt ||
    onDisk.removals.length !== next.removals.length ||
    onDisk.removals.at(-1) !== next.removals.at(-1) ||
    onDisk.halted?.since !== next.halted?.since ||
    onDisk.halted?.closing !== next.halted?.closing ||
    onDisk.halted?.pass !== next.halted?.pass ||
    !sameTriggers(onDisk.triggers, next.triggers) ||
    !sameLastEvent(onDisk.history, next.history)
  )
    return false;
  if (earliestDeadline(onDisk) !== earliestDeadline(next)) return false;
  return utcDay(latestDeadline(onDisk)) === utcDay(latestDeadline(next));
}

/** A push was confirmed: the exchange's schedule is `cancelAt`, earlier or later than before. */
export function withConfirmedPush(entry: LedgerEntry, cancelAt: number, at: number): LedgerEntry {
  return { ...entry, armedUntil: cancelAt, lastPushAt: at, pendingUntil: null, pendingLatest: null };
}

export type TriggerResult = { entry: LedgerEntry; counted: boolean; reachedLimit: boolean };

/**
 * `deadline` passed without a newer confirmed push: one trigger, once per deadline, on the deadline's own UTC
 * day. Nothing is armed afterwards (the schedule is one-shot; docs/exchange-behaviour.md §3).
 */
export function withTrigger(
  entry: LedgerEntry,
  {
    deadline,
    at,
    detail,
    alt,
  }: { deadline: number; at: number; detail?: string | undefined; alt?: number[] | undefined },
  size = HISTORY_SIZE,
): TriggerResult {
  if (entry.lastCountedDeadline === deadline) {
    return {
      entry: { ...entry, armedUntil: null, pendingUntil: null, pendingLatest: null },
      counted: false,
      reachedLimit: false,
    };
  }
  // A deadline on a later UTC day than the entry's fires on that day on the exchange's clock: roll to it first.
  if (utcDay(deadline) > entry.day) entry = rollEntry(entry, deadline, size).entry;
  const sameDay = utcDay(deadline) === entry.day;
  const counted = sameDay && !entry.assumed;
  // The ledger's own inference: a guess until the exchange's record proves it (or withdraws it).
  const others = [...new Set((alt ?? []).filter((d) => d !== deadline))].slice(-8);
  const record: TriggerRecord = {
    deadline,
    proof: "guess",
    at: Math.floor(at),
    ...(others.length > 0 ? { alt: others } : {}),
  };
  let next: LedgerEntry = {
    ...entry,
    triggersToday: counted ? entry.triggersToday + 1 : entry.triggersToday,
    triggers: counted ? capList([...entry.triggers, record], TRIGGER_LIST_SIZE) : entry.triggers,
    lastCountedDeadline: deadline,
    armedUntil: null,
    pendingUntil: null,
    pendingLatest: null,
  };
  next = withHistory(
    next,
    {
      at,
      type: "trigger",
      deadline,
      triggersToday: next.triggersToday,
      ...(detail
        ? { detail: sameDay ? detail : `${detail}; on ${utcDay(deadline)}, not counted today` }
        : {}),
    },
    size,
  );
  // A guessed count at the limit is not a proven limit: no `exhausted` history line (docs/daemon.md).
  const reachedLimit = next.triggersToday >= next.limit;
  return { entry: next, counted: sameDay, reachedLimit };
}

/** The last `size` items of `list`. */
export function capList<T>(list: T[], size: number): T[] {
  return list.length > size ? list.slice(list.length - size) : list;
}

/** The exchange answered with its daily-limit error: the count is the limit, whatever was counted. */
export function withLimitReached(entry: LedgerEntry, at: number, message: string, size = HISTORY_SIZE) {
  const triggersToday = Math.max(entry.triggersToday, entry.limit);
  return withHistory(
    { ...entry, triggersToday, assumed: false, limitRefusedAt: Math.floor(at) },
    { at, type: "limit_error", triggersToday, detail: message },
    size,
  );
}

/** The schedule was removed: nothing is armed. */
export function withRemoval(entry: LedgerEntry, at: number, size = HISTORY_SIZE): LedgerEntry {
  // Every deadline the exchange may have held is gone: the record never counts one of them as a fire.
  const removed = [entry.armedUntil, entry.pendingUntil, entry.pendingLatest].filter(
    (d): d is number => d !== null && !entry.removals.includes(d),
  );
  return withHistory(
    {
      ...entry,
      armedUntil: null,
      pendingUntil: null,
      pendingLatest: null,
      removals: capList([...entry.removals, ...removed], REMOVAL_LIST_SIZE),
    },
    { at, type: "removed", deadline: entry.armedUntil },
    size,
  );
}

/** The exchange refused a push today with its own daily-limit error: the only thing that stops the pushes. */
export const limitRefused = (e: LedgerEntry) => e.limitRefusedAt !== null;

/**
 * The counts per proof, as the switch's events carry them: one definition, in core (core/switch-events.ts); the
 * schema's proofs and core's kinds are the same list (a proof added to one without the other does not compile).
 */
export type { ProofCounts } from "../core/switch-events.js";

type SameProofs = [TriggerProof] extends [TriggerProofKind]
  ? [TriggerProofKind] extends [TriggerProof]
    ? true
    : never
  : never;
const sameProofs: SameProofs = true;
void sameProofs;

/**
 * Today's count split by proof. `triggersToday` beyond the listed triggers is the limit error's (when the
 * exchange refused), the assumption's (an unreadable ledger), or of unrecorded proof (an older file).
 */
export function proofCounts(e: LedgerEntry): ProofCounts {
  const c: ProofCounts = { limit_error: 0, orders: 0, record: 0, guess: 0, unrecorded: 0, assumed: 0 };
  for (const t of e.triggers) c[t.proof]++;
  const rest = Math.max(0, e.triggersToday - e.triggers.length);
  if (limitRefused(e)) c.limit_error += rest;
  else if (e.assumed) c.assumed += rest;
  else c.unrecorded += rest;
  return c;
}

/**
 * The PROVEN daily limit (`exhausted`, `trigger.exhausted`): the exchange refused with its daily-limit error,
 * or the triggers its own `scheduledCancel` orders prove reach the limit. Guessed and record-implied counts
 * never make it (they may fail readiness: `atLimit`). Only the refusal stops the pushes (`limitRefused`).
 */
export const isExhausted = (e: LedgerEntry) => limitRefused(e) || proofCounts(e).orders >= e.limit;

/** The conservative count (every proof, guesses and assumptions included) reaches the limit. */
export const atLimit = (e: LedgerEntry) => e.triggersToday >= e.limit;

/** The entry as it stands on `today`: an entry from an earlier day reads as 0 triggers (not assumed). */
export function entryOnDay(entry: LedgerEntry, today: string): LedgerEntry {
  if (entry.day >= today) return entry;
  // guesses counted for a later day before the ledger rolled (`later`) count on that day
  const carried = (entry.later ?? []).filter((t) => t.deadline !== null && utcDay(t.deadline) === today);
  return { ...entry, day: today, triggersToday: carried.length, assumed: false };
}
