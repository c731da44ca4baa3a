/**
 * The trigger ledger's pure model: one account's entry and every change to it, as functions of the entry and
 * `now` (ms on the exchange's clock). Nothing here reads a clock, touches the disk or logs; the store
 * (daemon/ledger.ts) persists what these return, and the switch machine (daemon/switch/machine.ts) decides
 * when. Rules (docs/daemon.md "The ledger"):
 * - the UTC day only moves forward: a `now` on an earlier day (a clock stepped back) never rolls the entry back,
 *   and a day's count is never reset by a step;
 * - `armedUntil` is the cancel time of the last confirmed push; `pendingUntil` the earliest cancel time of a
 *   push that may have been accepted without its confirmation recorded (write-ahead). Pending counts for the
 *   conservative trigger count, never as armed;
 * - a deadline is counted at most once (`lastCountedDeadline`), and only on its own UTC day;
 * - the history keeps the last `historySize` notable events (also applied to an entry read from disk).
 */
import { utcDay } from "../utils/clock.js";
import type { LedgerEntry, LedgerEvent } from "./ledger.js";

export const HISTORY_SIZE = 50;

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
  };
  return assumed && corruptDetail
    ? withHistory(entry, { at: now, type: "corrupt", detail: corruptDetail })
    : entry;
}

export type RollResult = { entry: LedgerEntry; rolled: null | { from: string; to: string; was: number } };

/**
 * The entry as it stands at `now`: a later UTC day resets the count (with a history line); an earlier one
 * (the clock stepped back) changes nothing.
 */
export function rollEntry(entry: LedgerEntry, now: number, size = HISTORY_SIZE): RollResult {
  const today = utcDay(now);
  if (today <= entry.day) return { entry, rolled: null };
  const from = entry.day;
  const was = entry.triggersToday;
  const rolled = withHistory(
    { ...entry, day: today, triggersToday: 0, assumed: false },
    { at: now, type: "rollover", triggersToday: 0, detail: `${from} -> ${today} (${was} used)` },
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
  { deadline, at, detail }: { deadline: number; at: number; detail?: string | undefined },
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
  let next: LedgerEntry = {
    ...entry,
    triggersToday: sameDay && !entry.assumed ? entry.triggersToday + 1 : entry.triggersToday,
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
  const reachedLimit = next.triggersToday >= next.limit;
  if (reachedLimit && sameDay && !next.assumed)
    next = withHistory(next, { at, type: "exhausted", triggersToday: next.triggersToday }, size);
  return { entry: next, counted: sameDay, reachedLimit };
}

/** The exchange answered with its daily-limit error: the count is the limit, whatever was counted. */
export function withLimitReached(entry: LedgerEntry, at: number, message: string, size = HISTORY_SIZE) {
  const triggersToday = Math.max(entry.triggersToday, entry.limit);
  return withHistory(
    { ...entry, triggersToday, assumed: false },
    { at, type: "limit_error", triggersToday, detail: message },
    size,
  );
}

/** The schedule was removed: nothing is armed. */
export function withRemoval(entry: LedgerEntry, at: number, size = HISTORY_SIZE): LedgerEntry {
  return withHistory(
    { ...entry, armedUntil: null, pendingUntil: null, pendingLatest: null },
    { at, type: "removed", deadline: entry.armedUntil },
    size,
  );
}

export const isExhausted = (e: LedgerEntry) => e.triggersToday >= e.limit;

/** What the exchange's record proved about today (from reconcileLedger, src/reconcile/record.ts). */
export type ReconciledView = {
  day: string;
  triggersToday: number;
  assumed: boolean;
  armedUntil: number | null;
};

/**
 * Applies the exchange's record (docs/exchange-record.md), conservative direction only:
 * - a counted (not assumed) trigger count never goes down; an assumed one takes the record's count (the
 *   reconcile lowers it only when the record covers the whole UTC day) and stays assumed unless it says not;
 * - a later armed deadline from the record is taken (a deadline it proves the exchange holds);
 * - a deadline the record shows as fired (`fired`) is marked counted, so the switch never counts it again.
 * A view for another UTC day changes nothing. Returns the same object when nothing changes.
 */
export function withReconciled(entry: LedgerEntry, view: ReconciledView, fired: number[]): LedgerEntry {
  if (view.day !== entry.day) return entry;
  const triggersToday = entry.assumed
    ? view.triggersToday
    : Math.max(entry.triggersToday, view.triggersToday);
  const assumed = entry.assumed && view.assumed;
  let armedUntil = entry.armedUntil;
  if (view.armedUntil !== null && (armedUntil === null || armedUntil < view.armedUntil))
    armedUntil = view.armedUntil;
  let { pendingUntil, pendingLatest, lastCountedDeadline } = entry;
  // A fire the record shows is counted in `triggersToday` above: the same deadline is never counted again.
  for (const d of fired) {
    if (d === armedUntil) {
      armedUntil = null;
      lastCountedDeadline = d;
    }
    if (d === pendingUntil) {
      pendingUntil = null;
      pendingLatest = null;
      lastCountedDeadline = d;
    }
  }
  if (
    triggersToday === entry.triggersToday &&
    assumed === entry.assumed &&
    armedUntil === entry.armedUntil &&
    pendingUntil === entry.pendingUntil &&
    lastCountedDeadline === entry.lastCountedDeadline
  )
    return entry;
  return { ...entry, triggersToday, assumed, armedUntil, pendingUntil, pendingLatest, lastCountedDeadline };
}
