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
 */
import { utcDay } from "../core/clock.js";
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

function capList<T>(list: T[], size: number): T[] {
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

export type ProofCounts = Record<TriggerProof | "unrecorded" | "assumed", number>;

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

/** What the exchange's record proved about today (from reconcileLedger, src/switch/record.ts). */
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

// ------------------------------------------------------------------------------------- the exchange's record

/** The exchange's record as the ledger reads it (src/switch/record.ts `readFinding`; bounded by its list). */
export type RecordEvidence = {
  /** exchange-clock ms when the record was read */
  at: number;
  /** every scheduleCancel transaction listed, oldest first (`error` null when accepted; `deadline` null: removal) */
  schedules: ReadonlyArray<{ txTime: number; deadline: number | null; error: string | null }>;
  /** the fires the record shows (src/switch/record.ts `Fire`) */
  fires: ReadonlyArray<{
    deadline: number;
    day: string;
    cancelledOrders: number;
    proof: "orders" | "lapse" | "orders-only";
  }>;
  /** the newest transaction time listed (any type), or null for an empty list */
  newestTx: number | null;
};

/** What this run of the switch knows better than any record: its own pushes (memory only, bounded). */
export type OwnKnowledge = {
  /** exchange-clock ms now */
  now: number;
  /** how much later than a deadline the record's newest entry must be for the record to speak for it */
  marginMs: number;
  /** cancel times of this run's recent pushes, answered or not */
  sent: ReadonlyArray<number>;
  /** this run's recent confirmed pushes: when (exchange clock) and their cancel time */
  confirmed: ReadonlyArray<{ at: number; cancelAt: number }>;
  /** how long before its deadline a push may have been sent (the deadline + the request time-out) */
  pushLeadMs: number;
  /** how long after a deadline its `scheduledCancel` orders may be stamped (record.ts DEFAULT_FIRE_WINDOW_MS) */
  fireWindowMs?: number;
};

export type RecordChange = {
  field: "triggersToday" | "trigger" | "pendingUntil";
  from: number | string | null;
  to: number | string | null;
  reason: string;
};

const isoOf = (ms: number) => new Date(ms).toISOString();

/**
 * Applies the exchange's record to the ledger, in both directions, only within what the record covers and is
 * fresh for (docs/daemon.md "What the switch believes about triggers"):
 * - a GUESS is withdrawn when the record lists one of this daemon's own pushes (a cancel time it sent, or one
 *   the guess names as the alternative) accepted before the guessed deadline and later than it: the schedule was
 *   replaced in time and did not fire. The replacing push then becomes a possible deadline (pending), so its own
 *   lapse is counted in turn unless a newer push is confirmed;
 * - a fire with `scheduledCancel` orders is counted with proof `orders` (a guess for the same deadline is
 *   upgraded, not counted twice);
 * - a lapse without orders counts (proof `record`) only when the record is fresh for it (its newest entry later
 *   than the deadline by `marginMs`), it is not one of the ledger's own removals, and no push this daemon
 *   confirmed between its setting and the deadline contradicts it;
 * - nothing here stops the pushes: a record-implied count at the limit is not a proven limit.
 * A record of another UTC day changes nothing. Returns the same entry when nothing changes.
 */
export function withRecord(
  entry: LedgerEntry,
  rec: RecordEvidence,
  own: OwnKnowledge,
): { entry: LedgerEntry; changes: RecordChange[]; notes: string[] } {
  const changes: RecordChange[] = [];
  const notes: string[] = [];
  // A record read on another UTC day than the ledger's changes nothing of the ledger's day; read on a later day, it
  // still settles the guesses kept for later days (`later`: they hold no count today, and a push never held was
  // never held whatever day the ledger is on; random seed 842085083: a ledger left on Jan 1 by a clock nothing
  // verified kept a Jan 2 guess a fresh Jan 2 record showed never held).
  const otherDay = utcDay(rec.at) !== entry.day;
  if (otherDay && !(utcDay(rec.at) > entry.day && (entry.later ?? []).length > 0)) {
    notes.push(`the record was read on ${utcDay(rec.at)}, the ledger is on ${entry.day}; nothing changed`);
    return { entry, changes, notes };
  }
  const window = own.fireWindowMs ?? 60_000;
  const accepted = rec.schedules.filter((s) => s.error === null);
  const fresh = (d: number) => rec.newestTx !== null && rec.newestTx >= d + own.marginMs && d <= own.now;
  const ordersAt = (d: number) =>
    rec.fires.some((f) => f.proof !== "lapse" && f.deadline >= d - 2_000 && f.deadline <= d + window);
  let triggers = [...entry.triggers];
  let count = entry.triggersToday;
  let next: LedgerEntry = entry;
  // A record that leaves out a push this daemon saw confirmed, within what it lists, lags unevenly or lies: it
  // neither withdraws a guess nor proves a lapse.
  const listed = new Set(accepted.map((s) => s.deadline));
  const oldest = rec.schedules[0]?.txTime ?? null;
  const omitted =
    oldest === null || rec.newestTx === null
      ? undefined
      : own.confirmed.find(
          (c) => c.at > oldest && c.at < rec.newestTx! - own.marginMs && !listed.has(c.cancelAt),
        );
  if (omitted) {
    notes.push(
      `the record leaves out this daemon's push confirmed at ${isoOf(omitted.at)} (for ${isoOf(omitted.cancelAt)}): it neither withdraws a guess nor proves a lapse`,
    );
  }
  const trusted = omitted === undefined;

  // 1. Guesses the record shows replaced in time by one of this daemon's own pushes, or never held: those counted
  // today and those kept for a later day (`later`, counted when the day rolls; they hold no count today).
  let rearm: { deadline: number; txTime: number } | null = null;
  // Deadlines the ledger already follows (an alternative among them needs nothing more).
  const followed = new Set<number>(
    [entry.armedUntil, entry.pendingUntil, entry.pendingLatest, entry.lastCountedDeadline].filter(
      (d): d is number => d !== null,
    ),
  );
  for (const t of [...entry.triggers, ...(entry.later ?? [])])
    if (t.deadline !== null) followed.add(t.deadline);
  /** alternatives of guesses never held that are still ahead: possible deadlines again (pending) */
  const reopened: number[] = [];
  // A guess is counted for the earliest cancel time the exchange may hold, with the others as `alt` (it fires at
  // most one). When the record shows the earliest was never held, the exchange may still hold, or have fired, one
  // of the others: withdrawing the guess with them left a fire at one of them uncounted (a push planned on the
  // earliest candidate judged lapsed on the latest while the confirmed push it was to replace fired; random seeds
  // -1931838477 and 2117239909). An alternative is settled only by a record fresh for it that shows no fire there,
  // or by a push confirmed after the guess and before it (the schedule replaced in time); the others stand.
  const openAlternatives = (t: TriggerRecord): number[] =>
    [...new Set(t.alt ?? [])]
      .filter(
        (a) =>
          a !== t.deadline &&
          !followed.has(a) &&
          !(fresh(a) && !rec.fires.some((f) => f.deadline >= a - 2_000 && f.deadline <= a + window)) &&
          !own.confirmed.some((c) => c.at > t.at && c.at < a && c.cancelAt !== a) &&
          !(entry.lastPushAt !== null && entry.lastPushAt > t.at && entry.lastPushAt < a),
      )
      .sort((x, y) => x - y);
  /** The guess after the record: itself, moved to an alternative that may have fired, or null (withdrawn). */
  const settle = (t: TriggerRecord, counted: boolean): TriggerRecord | null => {
    if (!trusted || (t.proof !== "guess" && t.proof !== "record") || t.deadline === null) return t;
    const d = t.deadline;
    const mine = (x: number) => own.sent.includes(x) || (t.alt ?? []).includes(x);
    // the push that set the guessed deadline must be listed, and the replacing one after it (an expedite sets
    // an earlier deadline after a later one: only a push after the setting replaced it)
    const setter = accepted.filter((s) => s.deadline === d && s.txTime < d).at(-1);
    const by =
      setter &&
      accepted.find(
        (s) =>
          s.deadline !== null &&
          s.txTime > setter.txTime &&
          s.txTime < d &&
          s.deadline > d &&
          mine(s.deadline),
      );
    if (ordersAt(d)) return t;
    if (!by) {
      // Never held: the record covers the time its push was sent and is fresh for the deadline, and lists no
      // accepted push for it (the push never reached the exchange, or was refused).
      const covers = oldest !== null && oldest <= d - own.pushLeadMs;
      if (setter || listed.has(d) || !covers || !fresh(d)) return t;
      const why = `the record covers ${isoOf(oldest!)} to ${isoOf(rec.newestTx!)} and lists no accepted push for this deadline: the exchange never held it`;
      const open = t.proof === "guess" ? openAlternatives(t) : [];
      const passed = open.filter((x) => x <= own.now);
      if (passed.length > 0) {
        // one of them has passed: the guess stands for the earliest (the record may prove it: step 2)
        const to = passed[0]!;
        const others = open.filter((x) => x !== to);
        followed.add(to);
        changes.push({
          field: "trigger",
          from: `${isoOf(d)} (${t.proof})`,
          to: `${isoOf(to)} (guess)`,
          reason: `${why}; the exchange may have held ${isoOf(to)} instead (this guess's alternative), which has passed and which the record does not settle: the guess stands for it`,
        });
        const { alt: _alt, ...rest } = t;
        return { ...rest, deadline: to, ...(others.length > 0 ? { alt: others } : {}) };
      }
      if (counted && !t.slot) count = Math.max(0, count - 1);
      changes.push({ field: "trigger", from: `${isoOf(d)} (${t.proof})`, to: null, reason: why });
      // still ahead: possible deadlines again, their lapse judged in turn
      for (const x of open) followed.add(x);
      reopened.push(...open);
      return null;
    }
    if (counted && !t.slot) count = Math.max(0, count - 1);
    changes.push({
      field: "trigger",
      from: `${isoOf(d)} (${t.proof})`,
      to: null,
      reason: `the record lists this daemon's push for ${isoOf(by.deadline!)} accepted at ${isoOf(by.txTime)}, before the guessed deadline: it was replaced in time and did not fire`,
    });
    const last = accepted.at(-1);
    if (last?.deadline != null && mine(last.deadline) && (rearm === null || last.txTime > rearm.txTime))
      rearm = { deadline: last.deadline, txTime: last.txTime };
    return null;
  };
  if (!otherDay)
    triggers = triggers.map((t) => settle(t, true)).filter((t): t is TriggerRecord => t !== null);
  const laterBefore = entry.later ?? [];
  const later = laterBefore.map((t) => settle(t, false)).filter((t): t is TriggerRecord => t !== null);
  if (later.length !== laterBefore.length || later.some((t, i) => t !== laterBefore[i])) {
    const { later: _all, ...rest } = next;
    next = later.length > 0 ? { ...rest, later } : rest;
  }
  // A guess of today moved to an alternative on a later day: counted for that day instead.
  const movedOn = triggers.filter((t) => t.deadline !== null && utcDay(t.deadline) > entry.day);
  if (movedOn.length > 0) {
    triggers = triggers.filter((t) => !movedOn.includes(t));
    for (const t of movedOn) if (!t.slot) count = Math.max(0, count - 1);
    const { later: _all, ...rest } = next;
    next = { ...rest, later: keptLater([...(next.later ?? []), ...movedOn]) };
  }
  for (const x of reopened) {
    const before = next.pendingUntil;
    next = withIntent(next, x);
    changes.push({
      field: "pendingUntil",
      from: before,
      to: next.pendingUntil,
      reason: `a withdrawn guess's alternative ${isoOf(x)} is still ahead and the record does not settle it: it may fire`,
    });
  }

  // 2. Fires the record shows (of the ledger's day).
  for (const f of rec.fires) {
    if (otherDay || f.day !== entry.day) continue;
    const d = f.deadline;
    let proof: TriggerProof;
    if (f.proof === "lapse") {
      if (!trusted) continue;
      if (entry.removals.includes(d)) {
        notes.push(`${isoOf(d)} was removed by this daemon (graceful stop): not a fire`);
        continue;
      }
      if (!fresh(d)) {
        notes.push(
          `the lapse at ${isoOf(d)} is newer than the record's freshness (newest entry ${rec.newestTx === null ? "none" : isoOf(rec.newestTx)}, margin ${own.marginMs} ms): not counted from the record`,
        );
        continue;
      }
      const setAt = accepted.filter((s) => s.deadline === d && s.txTime <= d).at(-1)?.txTime ?? d;
      const contradicted = own.confirmed.find((c) => c.at > setAt && c.at < d && c.cancelAt !== d);
      if (contradicted) {
        notes.push(
          `the record's lapse at ${isoOf(d)} contradicts this daemon's push confirmed at ${isoOf(contradicted.at)}: not counted`,
        );
        continue;
      }
      proof = "record";
    } else proof = "orders";
    const near = (t: TriggerRecord) =>
      t.deadline !== null &&
      (f.proof === "orders-only" ? t.deadline >= d - window && t.deadline <= d + 2_000 : t.deadline === d);
    const i = triggers.findIndex(near);
    if (i >= 0) {
      const had = triggers[i]!;
      if (had.proof === "guess" || (had.proof === "record" && proof === "orders")) {
        triggers[i] = {
          deadline: had.deadline,
          proof,
          at: Math.floor(own.now),
          ...(had.slot ? { slot: true } : {}),
        };
        changes.push({
          field: "trigger",
          from: `${isoOf(had.deadline!)} (${had.proof})`,
          to: `${isoOf(had.deadline!)} (${proof})`,
          reason: `the record proves it (${f.proof === "lapse" ? "accepted and not replaced before it" : `${f.cancelledOrders} order(s) scheduledCancel`})`,
        });
      }
      continue;
    }
    // A fire the ledger did not count: it claims a count of unrecorded proof first (an older file, the limit
    // error), else it raises the count.
    const unlisted = count - triggers.length;
    triggers.push({ deadline: d, proof, at: Math.floor(own.now), ...(unlisted > 0 ? { slot: true } : {}) });
    if (unlisted <= 0) count++;
    changes.push({
      field: "trigger",
      from: null,
      to: `${isoOf(d)} (${proof})`,
      reason: `the record shows a fire at ${isoOf(d)} (${f.proof === "lapse" ? "accepted, not replaced, fresh" : `${f.cancelledOrders} order(s) scheduledCancel`})`,
    });
    // the same deadline is never counted again by the switch
    if (d === next.armedUntil) next = { ...next, armedUntil: null, lastCountedDeadline: d };
    if (d === next.pendingUntil)
      next = { ...next, pendingUntil: null, pendingLatest: null, lastCountedDeadline: d };
  }
  if (changes.length === 0) return { entry, changes, notes };
  if (count !== entry.triggersToday)
    changes.unshift({
      field: "triggersToday",
      from: entry.triggersToday,
      to: count,
      reason: "the record corrects the count (see the trigger changes)",
    });
  next = { ...next, triggersToday: count, triggers: capList(triggers, TRIGGER_LIST_SIZE) };
  // The push that replaced a withdrawn guess may itself lapse: it becomes a possible deadline, unless a push
  // confirmed after it and before its deadline replaced it in time, or it is already known. A push confirmed only
  // after that deadline came too late: the deadline lapsed (then counted at once, switch/triggers.ts `record`).
  // The ledger keeps only the last confirmed push, this run the recent ones: a replacement is believed only when
  // one of them shows it, so a deadline is never left uncounted on a push that may have come too late.
  const r = rearm as { deadline: number; txTime: number } | null;
  const replacedInTime = (d: { deadline: number; txTime: number }) =>
    (next.lastPushAt !== null && next.lastPushAt > d.txTime && next.lastPushAt < d.deadline) ||
    own.confirmed.some((c) => c.at > d.txTime && c.at < d.deadline);
  if (
    r !== null &&
    r.deadline !== next.armedUntil &&
    r.deadline !== next.lastCountedDeadline &&
    !triggers.some((t) => t.deadline === r.deadline) &&
    !replacedInTime(r)
  ) {
    const before = next.pendingUntil;
    next = withIntent(next, r.deadline);
    if (next.pendingUntil !== before)
      changes.push({
        field: "pendingUntil",
        from: before,
        to: next.pendingUntil,
        reason: `the record lists this daemon's push for ${isoOf(r.deadline)} accepted: it may fire in turn`,
      });
  }
  return { entry: next, changes, notes };
}
