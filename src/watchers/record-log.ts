/**
 * The log lines of the reconcile and of the cancel mode, in one place so the switch's wiring stays small:
 * `ledger.reconciled` (info: what changed and why), `record.unavailable` (warn, once per outage),
 * `record.available` (info, when it comes back), and `orders.cancelled` (info or error) with the counters.
 */

import type { Logger } from "../core/logger.js";
import type { CancelReport } from "../protocol/hyperliquid/cancel.js";
import type { Metrics } from "../surface/metrics.js";
import {
  type LedgerView,
  type ReconcileOutcome,
  type RecordResult,
  reconcileLedger,
} from "../switch/record.js";
import { createUnavailableGate } from "./record-read.js";

export type ReconcileLogger = {
  /** Reconciles a ledger view (an ASSUMED count at start-up, `status --reconcile`) and logs the changes. */
  (account: string, view: LedgerView, result: RecordResult): ReconcileOutcome;
  /** Only says whether the record can be read (once per outage); the switch's machine applies the record. */
  availability(account: string, result: RecordResult): void;
  /** The same as calling it: for an assumed count at start-up. */
  assumed(account: string, view: LedgerView, result: RecordResult): ReconcileOutcome;
};

/** Reconciles and logs; the unavailable message is said once per outage (per account). */
export function createReconcileLogger(logger: Logger): ReconcileLogger {
  const log = logger.child({ module: "reconcile" });
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
        log.warn(
          { event: "record.unavailable", account, reason: result.reason, detail: result.detail },
          "the exchange's record cannot be read; the ledger keeps its own count (a lapse counts as a guessed trigger)",
        );
      }
      return;
    }
    gate(result);
    if (down.delete(account)) {
      log.info({ event: "record.available", account }, "the exchange's record can be read again");
    }
  };
  const reconcile = (account: string, view: LedgerView, result: RecordResult): ReconcileOutcome => {
    availability(account, result);
    const outcome = reconcileLedger(view, result);
    if (!result.available) return outcome;
    if (outcome.changes.length > 0) {
      log.info(
        {
          event: "ledger.reconciled",
          account,
          changes: outcome.changes,
          notes: outcome.notes,
          firesToday: result.firesToday,
          coversDay: result.coversDay,
        },
        outcome.changes.map((c) => `${c.field} ${String(c.from)} → ${String(c.to)}: ${c.reason}`).join("; "),
      );
    } else {
      log.debug(
        {
          event: "record.checked",
          account,
          firesToday: result.firesToday,
          coversDay: result.coversDay,
          notes: outcome.notes,
        },
        "the ledger agrees with the exchange's record",
      );
    }
    return outcome;
  };
  return Object.assign(reconcile, { availability, assumed: reconcile });
}

/** An `onReport` for createCancelExecutor: logs `orders.cancelled` and counts cancelled and kept orders. */
export function cancelReportLogger(
  logger: Logger,
  metrics?: Pick<Metrics, "ordersCancelled" | "ordersKept">,
): (report: CancelReport) => void {
  const log = logger.child({ module: "cancel" });
  // The cancel mode runs a pass at every interval while the engine is down: a stop kept is counted once (by its
  // order id), and a pass that found nothing to do says so at debug level only.
  const keptSeen = new Map<string, Set<number>>();
  return (report) => {
    const cancelled = report.statuses.filter((s) => s.ok).length;
    const seen = keptSeen.get(report.account) ?? new Set<number>();
    keptSeen.set(report.account, seen);
    const newlyKept = report.kept.filter((k) => !seen.has(k.oid));
    for (const k of newlyKept) seen.add(k.oid);
    if (seen.size > 10_000) seen.clear();
    metrics?.ordersCancelled.inc({ account: report.account }, cancelled);
    metrics?.ordersKept.inc({ account: report.account }, newlyKept.length);
    if (report.confirmed && report.targeted.length === 0 && newlyKept.length === 0) {
      log.debug(
        { event: "orders.checked", account: report.account, kept: report.kept.length },
        "no open order to cancel",
      );
      return;
    }
    const fields = {
      event: "orders.cancelled",
      account: report.account,
      ...(report.dex !== undefined ? { dex: report.dex } : {}),
      confirmed: report.confirmed,
      cancelled,
      kept: report.kept.length,
      keptOrders: report.kept,
      refused: report.statuses.filter((s) => !s.ok),
      stillOpen: report.stillOpen,
      ...(report.weight !== undefined ? { weight: report.weight } : {}),
      ...(report.detail !== undefined ? { detail: report.detail } : {}),
    };
    const message = `${report.dex !== undefined ? `dex ${report.dex}: ` : ""}cancelled ${cancelled} order(s), kept ${report.kept.length} reduce-only stop(s); no trigger spent${report.confirmed ? "" : ` — NOT confirmed: ${report.detail ?? "unknown"}`}`;
    if (report.confirmed) log.info(fields, message);
    else log.error(fields, message);
  };
}
