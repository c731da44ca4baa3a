/**
 * The trigger ledger and the exchange's record: the day's roll-over, a push pending at start, the record applied,
 * each trigger counted and the daily limit (docs/exchange-record.md).
 * Rows of the switch's one table (./index.ts `PUBLISH`); and the ledger's store (src/core/ledger-events.ts
 * `LedgerStoreEvent`: what it read, repaired, migrated and failed to write) as log lines (`ledgerStoreLog`).
 */
import { basename } from "node:path";
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
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

/**
 * The trigger ledger's store as log lines, a subscriber of the bus (on the logger's `{ module: "ledger" }` child):
 * `ledger.loaded`, `ledger.corrupt`, `ledger.migrated`, `ledger.migration_failed`, `ledger.rollover`,
 * `ledger.updated_at_repaired`, `ledger.write_failed`, `ledger.write_recovered`, `ledger.temp_removed`.
 */
export function ledgerStoreLog(logger: Logger): EventSubscriber {
  const log = logger.child({ module: "ledger" });
  return (e) => {
    if (e.module !== "ledger") return;
    switch (e.type) {
      case "ledgerLoaded":
        log.info(
          { event: "ledger.loaded", path: e.path, accounts: e.accounts },
          `trigger ledger read from ${e.path}`,
        );
        return;
      case "ledgerCorrupt": {
        const whom = e.account === null ? "every account not in the ledger" : e.account;
        log.error(
          {
            event: "ledger.corrupt",
            path: e.path,
            account: e.account,
            reason: e.reason,
            movedTo: e.movedTo,
            assumedTriggersToday: e.assumedTriggersToday,
          },
          `the trigger ledger's ${e.path} ${e.reason}; ${e.movedTo ? `moved it to ${e.movedTo}; ` : ""}assuming the ` +
            `daily limit (${e.assumedTriggersToday}) is used today for ${whom}: pushes continue, but the switch reports not ready ` +
            "until 00:00 UTC",
        );
        return;
      }
      case "ledgerAsideFailed":
        log.error(
          { event: "ledger.corrupt", path: e.path, reason: e.reason },
          "could not move the damaged ledger file aside",
        );
        return;
      case "ledgerMigrated":
        log.warn(
          { event: "ledger.migrated", from: e.from, to: e.to, kept: e.kept, accounts: e.accounts },
          e.why === null
            ? `the trigger ledger moved to one file per account in ${e.to}; the old ${basename(e.from)} is kept as ${e.kept}`
            : `${e.why}: renamed ${e.kept} (the per-account ledger in ${e.to} is the ledger)`,
        );
        return;
      case "ledgerMigrationFailed":
        if (e.stage === "write")
          log.error(
            { event: "ledger.migration_failed", path: e.path, reason: e.reason },
            `could not write the per-account ledger in ${e.dir} (${e.reason}); ${e.path} is kept and ` +
              "read again at the next start, the in-memory ledger stays authoritative",
          );
        else
          log.error(
            { event: "ledger.migration_failed", path: e.path, reason: e.reason },
            `could not rename ${e.path} aside after the migration; the per-account ledger in ${e.dir} is the ledger`,
          );
        return;
      case "ledgerRolled":
        log.info(
          {
            event: "ledger.rollover",
            account: e.account,
            from: e.from,
            to: e.to,
            previousTriggers: e.previousTriggers,
          },
          "new UTC day: the trigger count is reset",
        );
        return;
      case "ledgerUpdatedAtRepaired": {
        const from = new Date(e.from).toISOString();
        const to = new Date(e.to).toISOString();
        log.warn(
          {
            event: "ledger.updated_at_repaired",
            from,
            to,
            aheadMs: e.from - e.to,
            lastNonce: e.lastNonce,
            lastNonceBefore: e.lastNonceBefore,
          },
          `the ledger's updatedAt ${from} is ${e.from - e.to} ms ahead of the exchange's verified time (a wrong clock wrote it): set back to ${to} in every file; the nonce floor it gave a restart is kept in lastNonce (${e.lastNonce})`,
        );
        return;
      }
      case "ledgerWriteFailed":
        if (e.stage === "round")
          log.error(
            { event: "ledger.write_failed", path: e.path, reason: e.reason },
            `cannot write the trigger ledger in ${e.path} (${e.reason}); the in-memory ledger stays authoritative, ` +
              "the previous files are intact, protection continues",
          );
        else
          log.error(
            { event: "ledger.write_failed", path: e.path, reason: e.reason },
            "cannot create the ledger's directory; the ledger lives in memory only",
          );
        return;
      case "ledgerWriteRecovered":
        log.info({ event: "ledger.write_recovered", path: e.path }, "the trigger ledger is written again");
        return;
      case "ledgerTempRemoved":
        log.info({ event: "ledger.temp_removed", path: e.path }, "removed a temp file a crash left");
        return;
    }
  };
}
