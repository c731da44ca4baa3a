/**
 * The exchange's record reconciled with the trigger ledger, as PURE functions beside the ledger's model
 * (ledger-model.ts; docs/exchange-record.md, docs/daemon.md "What the switch believes about triggers"). What the
 * record says is read by record.ts (`readFinding`); what follows from it for the ledger is decided here, and the
 * callers only carry it out:
 * - at start-up, before the switch reads its entry (`reconcileAtStart`, carried out by the app's record component):
 *   an ASSUMED count (an unreadable ledger) is settled by a record that covers the whole UTC day
 *   (`reconcileLedger` corrects the view, `withReconciled` applies it to the entry, conservative direction only);
 *   `status --reconcile` shows the same correction (`reconcileLedger`);
 * - while the switch runs (`withRecord`, applied by the machine: triggers.ts `record`): guesses withdrawn or
 *   proven, fires counted, in both directions, only where the record is fresh.
 * Nothing here reads a clock, touches the disk or logs.
 */
import { utcDay } from "../core/clock.js";
import type { LedgerChange, LedgerView, ReconcileOutcome, RecordResult } from "../core/record.js";
import { capList, keptLater, TRIGGER_LIST_SIZE, withIntent } from "./ledger-model.js";
import type { LedgerEntry, TriggerProof, TriggerRecord } from "./ledger-schema.js";

const isoOf = (ms: number) => new Date(ms).toISOString();

// --------------------------------------------------------------------------------------------- at start-up

/**
 * PURE: corrects the ledger view in the conservative direction only where the record proves it.
 * - Never fewer triggers than the record shows today (raises the count, whatever the flags).
 * - Lowers an assumed or guessed count only when the record covers the whole UTC day.
 * - A pending (write-ahead) push the record lists as accepted becomes the armed deadline.
 * An unavailable record changes nothing.
 */
export function reconcileLedger(view: LedgerView, result: RecordResult): ReconcileOutcome {
  const ledger: LedgerView = { ...view };
  const changes: LedgerChange[] = [];
  const notes: string[] = [];
  if (!result.available) {
    notes.push(`record unavailable (${result.reason}): ${result.detail}; nothing changed`);
    return { ledger, changes, notes };
  }
  const f = result;
  if (view.day !== f.day) {
    notes.push(`the ledger view is for ${view.day}, the record for ${f.day}; nothing changed`);
    return { ledger, changes, notes };
  }
  const set = (field: LedgerChange["field"], to: number | boolean | null, reason: string) => {
    const from = (ledger as Record<string, unknown>)[field] as number | boolean | null | undefined;
    if (from === to) return;
    changes.push({ field, from: from ?? null, to, reason });
    (ledger as Record<string, unknown>)[field] = to;
  };
  const todays = f.fires.filter((x) => x.day === f.day);
  const list = todays.map((x) => `${isoOf(x.deadline)} (${x.proof}, ${x.cancelledOrders} orders)`).join(", ");

  if (f.firesToday > ledger.triggersToday) {
    set(
      "triggersToday",
      f.firesToday,
      `the record shows ${f.firesToday} fire(s) today: ${list}; the ledger had ${ledger.triggersToday}`,
    );
  } else if ((ledger.assumed || ledger.guessed) && f.firesToday < ledger.triggersToday) {
    if (f.coversDay) {
      set(
        "triggersToday",
        f.firesToday,
        `the record covers the whole UTC day (oldest transaction ${isoOf(f.oldestTx!)}) and shows ${f.firesToday} fire(s)${list ? `: ${list}` : ""}; the ledger's ${ledger.triggersToday} was ${ledger.assumed ? "assumed" : "guessed"}`,
      );
    } else {
      notes.push(
        `the record does not reach back to 00:00 UTC${f.oldestTx !== null ? ` (oldest transaction ${isoOf(f.oldestTx)})` : " (no transactions listed)"}; the ${ledger.assumed ? "assumed" : "guessed"} count ${ledger.triggersToday} stays`,
      );
    }
  }
  // Once the count comes from a record that covers the whole day, it is a count, not a guess.
  if (f.coversDay) {
    if (ledger.assumed) set("assumed", false, "the count now comes from a record that covers the whole day");
    if (ledger.guessed) set("guessed", false, "the count now comes from a record that covers the whole day");
  }

  const last = f.lastAccepted;
  if (ledger.pendingUntil !== null && last?.deadline === ledger.pendingUntil) {
    if (f.armedUntil === ledger.pendingUntil) {
      set(
        "armedUntil",
        ledger.pendingUntil,
        `the record lists the pending push as accepted (tx ${last.hash})`,
      );
    }
    set("pendingUntil", null, `the record lists the pending push (tx ${last.hash}, error null)`);
  }
  if (
    f.armedUntil !== null &&
    ledger.armedUntil !== f.armedUntil &&
    (ledger.armedUntil ?? 0) < f.armedUntil
  ) {
    set(
      "armedUntil",
      f.armedUntil,
      `the record's last accepted scheduleCancel (tx ${last?.hash}) armed ${isoOf(f.armedUntil)}`,
    );
  }
  return { ledger, changes, notes };
}

/** What the exchange's record proved about today (from `reconcileLedger` above). */
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

/**
 * What the start-up reconciliation decides for one account (`reconcileAtStart`): the view to reconcile and say
 * (`ledger.reconciled`, published by the app's reporter with `reconcileLedger`'s outcome), and what the store
 * applies (`Ledger.reconcile`). Each null when there is nothing to do.
 */
export type StartReconcile = {
  say: LedgerView | null;
  apply: ReconciledView | null;
};

/**
 * The start-up reconciliation of an account's entry (as the store reads it) with the record read before the
 * switches start. Only an ASSUMED count (an unreadable ledger) is settled here, and only by an available record:
 * - the assumed view is reconciled and said, whatever it changes;
 * - it is applied only when the record ends the assumption (it covers the whole UTC day): the record's count,
 *   never above the assumed one, and not assumed; the armed deadline stays the entry's (the switch applies the
 *   record's own while it runs, `withRecord`);
 * - a counted (not assumed) entry and an unavailable record change nothing and say nothing here (the switch applies
 *   the record once it has started).
 */
export function reconcileAtStart(entry: LedgerEntry, result: RecordResult): StartReconcile {
  if (!entry.assumed || !result.available) return { say: null, apply: null };
  const view: LedgerView = {
    day: entry.day,
    triggersToday: entry.triggersToday,
    assumed: true,
    armedUntil: entry.armedUntil,
    pendingUntil: entry.pendingUntil,
  };
  const outcome = reconcileLedger(view, result);
  if (!outcome.changes.some((c) => c.field === "assumed")) return { say: view, apply: null };
  return {
    say: view,
    apply: {
      day: outcome.ledger.day,
      triggersToday: Math.min(entry.triggersToday, outcome.ledger.triggersToday),
      assumed: outcome.ledger.assumed,
      armedUntil: entry.armedUntil,
    },
  };
}

// ----------------------------------------------------------------------------------- while the switch runs

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
