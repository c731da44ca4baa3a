/**
 * What the reconcile and the cancel mode publish, in one place so the switch's wiring stays small: the record's
 * unavailability (once per outage) and its return, each reconciliation of a ledger view with it (what changed and
 * why), and each engine-down cancel pass (its kept stops counted once). Their log lines (`ledger.reconciled`,
 * `record.unavailable`, `record.available`, `orders.cancelled`) and counters are subscribers
 * (src/surface/watchers/record.ts).
 */

import type { EventBus } from "../core/events.js";
import type { LedgerView, ReconcileOutcome, RecordResult } from "../core/record.js";
import type { CancelReport } from "../protocol/hyperliquid/cancel.js";
import { createUnavailableGate } from "./record-read.js";

export type ReconcileReporter = {
  /** Reconciles a ledger view (an ASSUMED count at start-up, `status --reconcile`) and publishes the changes. */
  (account: string, view: LedgerView, result: RecordResult): ReconcileOutcome;
  /** Only says whether the record can be read (once per outage); the switch's machine applies the record. */
  availability(account: string, result: RecordResult): void;
  /** The same as calling it: for an assumed count at start-up. */
  assumed(account: string, view: LedgerView, result: RecordResult): ReconcileOutcome;
};

export type CreateReconcileReporterParameters = {
  /** the daemon's event bus */
  bus: EventBus;
  /**
   * the rule that corrects a ledger view from the record (src/switch/record.ts `reconcileLedger`, pure), handed in by
   * the app: this room does not see the switch's
   */
  reconcile: (view: LedgerView, result: RecordResult) => ReconcileOutcome;
};

/** Reconciles and publishes; the unavailable record is published once per outage (per account). */
export function createReconcileReporter({
  bus,
  reconcile: rule,
}: CreateReconcileReporterParameters): ReconcileReporter {
  const gates = new Map<string, ReturnType<typeof createUnavailableGate>>();
  const down = new Set<string>();
  const availability = (account: string, result: RecordResult) => {
    let gate = gates.get(account);
    if (!gate) {
      gate = createUnavailableGate();
      gates.set(account, gate);
    }
    if (!result.available) {
      if (gate(result)) {
        down.add(account);
        bus.publish({
          module: "reconcile",
          type: "recordUnavailable",
          account,
          reason: result.reason,
          detail: result.detail,
        });
      }
      return;
    }
    gate(result);
    if (down.delete(account)) bus.publish({ module: "reconcile", type: "recordAvailable", account });
  };
  const reconcile = (account: string, view: LedgerView, result: RecordResult): ReconcileOutcome => {
    availability(account, result);
    const outcome = rule(view, result);
    if (!result.available) return outcome;
    bus.publish({ module: "reconcile", type: "ledgerReconciled", account, finding: result, outcome });
    return outcome;
  };
  return Object.assign(reconcile, { availability, assumed: reconcile });
}

/**
 * An `onReport` for createCancelExecutor: publishes each pass. The cancel mode runs a pass at every interval while
 * the engine is down: a stop kept is counted once (by its order id).
 */
export function cancelReporter(bus: EventBus): (report: CancelReport) => void {
  const keptSeen = new Map<string, Set<number>>();
  return (report) => {
    const cancelled = report.statuses.filter((s) => s.ok).length;
    const seen = keptSeen.get(report.account) ?? new Set<number>();
    keptSeen.set(report.account, seen);
    const newlyKept = report.kept.filter((k) => !seen.has(k.oid));
    for (const k of newlyKept) seen.add(k.oid);
    if (seen.size > 10_000) seen.clear();
    bus.publish({
      module: "cancel",
      type: "ordersCancelled",
      pass: report,
      cancelled,
      newlyKept: newlyKept.length,
    });
  };
}
