/**
 * The trigger ledger and the exchange's record: the day's roll-over, a push pending at start, the record applied,
 * each trigger counted and the daily limit (docs/exchange-record.md).
 * Rows of the switch's one table (./index.ts `PUBLISH`).
 */
import { iso, line, type Rows } from "./line.js";

type Types =
  | "dayRolled"
  | "pendingAtStart"
  | "ledgerAssumed"
  | "recordSkipped"
  | "reconciled"
  | "recordChecked"
  | "triggerCounted"
  | "triggerSkipped"
  | "triggersLow"
  | "limitSuspected"
  | "limitReached"
  | "limitReset";

export const LEDGER_ROWS: Rows<Types> = {
  dayRolled: {
    log: (e) =>
      line(
        "info",
        "ledger.rollover",
        { from: e.from, to: e.to, previousTriggers: e.previousTriggers },
        "new UTC day: the trigger count is reset",
      ),
  },
  pendingAtStart: {
    log: (e) =>
      line(
        "info",
        "ledger.pending",
        { pendingUntil: e.pendingUntil, confirmedUntil: e.confirmedUntil },
        "a push sent before the last stop has no recorded confirmation: it may be armed, it is not counted as armed",
      ),
  },
  ledgerAssumed: {
    log: (e) =>
      line(
        "error",
        "trigger.exhausted",
        { triggersToday: e.triggersToday, triggerLimit: e.triggerLimit, assumed: true },
        "the trigger ledger was unreadable: assuming the daily limit is used; pushes continue, readiness fails until 00:00 UTC",
      ),
  },
  recordSkipped: {
    log: (e) =>
      line("debug", "record.skipped", { detail: e.detail }, `the record was not applied: ${e.detail}`),
  },
  reconciled: {
    log: (e) =>
      line(
        "info",
        "ledger.reconciled",
        { changes: e.changes, notes: e.notes, marginMs: e.marginMs, proofs: e.proofs },
        e.changes.map((c) => `${c.field} ${String(c.from)} → ${String(c.to)}: ${c.reason}`).join("; "),
      ),
  },
  recordChecked: {
    log: (e) => line("debug", "record.checked", { notes: e.notes }, e.notes.join("; ")),
  },
  triggerCounted: {
    log: (e) =>
      line(
        "warn",
        "trigger.counted",
        {
          triggersToday: e.triggersToday,
          triggerLimit: e.triggerLimit,
          triggersLeft: e.triggersLeft,
          deadline: e.deadline,
          proof: "guess",
          ...(e.forDay !== undefined ? { forDay: e.forDay } : {}),
          ...(e.detail ? { detail: e.detail } : {}),
        },
        e.forDay !== undefined
          ? `the scheduled cancel may have fired at ${iso(e.deadline)} (by the later of two disagreeing clocks): counted for ${e.forDay}, where that day's count starts with it once both clocks reach it (${e.triggersToday}/${e.triggerLimit} on ${e.day}; a guess until the exchange's record proves it)`
          : `the scheduled cancel fired at ${iso(e.deadline)} (${e.triggersToday}/${e.triggerLimit} today; a guess until the exchange's record proves it)`,
      ),
    metrics: (m, account) => m.triggersTotal.inc({ account }),
  },
  triggerSkipped: {
    log: (e) =>
      line(
        "warn",
        "trigger.skipped",
        { deadline: e.deadline, ...(e.detail ? { detail: e.detail } : {}) },
        "a lapsed deadline from an earlier UTC day (or one already counted) is not counted today",
      ),
  },
  triggersLow: {
    log: (e) =>
      line(
        "warn",
        "trigger.low",
        { triggersToday: e.triggersToday, triggersLeft: e.triggersLeft, triggerLimit: e.triggerLimit },
        `only ${e.triggersLeft} scheduled-cancel trigger(s) left today`,
      ),
  },
  limitSuspected: {
    log: (e) =>
      line(
        "error",
        "trigger.limit_suspected",
        { triggersToday: e.triggersToday, triggerLimit: e.triggerLimit, proofs: e.proofs },
        `the count reaches the daily limit (${e.triggersToday}/${e.triggerLimit}) without the exchange's proof: not ready; pushes continue until the exchange itself refuses`,
      ),
  },
  limitReached: {
    log: (e) =>
      line(
        "error",
        "trigger.exhausted",
        {
          triggersToday: e.triggersToday,
          triggerLimit: e.triggerLimit,
          resumesAt: e.resumesAt,
          ...(e.message ? { message: e.message } : {}),
        },
        `daily trigger limit reached (${e.why}): the switch cannot protect until ${iso(e.resumesAt)}`,
      ),
  },
  limitReset: {
    log: (e) =>
      line(
        "info",
        "trigger.reset",
        { day: e.day, triggersToday: e.triggersToday },
        "new UTC day: the trigger budget is back, re-arming",
      ),
  },
};
