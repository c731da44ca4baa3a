/**
 * The exchange record's reconciliation and the engine-down cancel (src/core/events.ts `ReconcileEvent`,
 * `CancelEvent`; src/watchers/record-log.ts) as log lines and counters, subscribers of the daemon's bus:
 * `ledger.reconciled` (info: what changed and why; `record.checked` at debug when nothing did),
 * `record.unavailable` (warn, once per outage), `record.available` (info, when it comes back), and
 * `orders.cancelled` (info, or error when not confirmed; `orders.checked` at debug for a pass with nothing to do)
 * with the cancelled and kept counters.
 */
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";

/** The reconcile's and the cancel's log lines (on the logger's `reconcile` and `cancel` modules). */
export function recordLog(logger: Logger): EventSubscriber {
  const reconcileLog = logger.child({ module: "reconcile" });
  const cancelLog = logger.child({ module: "cancel" });
  return (e) => {
    if (e.module === "reconcile") {
      const log = reconcileLog;
      const { account } = e;
      switch (e.type) {
        case "recordUnavailable":
          log.warn(
            { event: "record.unavailable", account, reason: e.reason, detail: e.detail },
            "the exchange's record cannot be read; the ledger keeps its own count (a lapse counts as a guessed trigger)",
          );
          return;
        case "recordAvailable":
          log.info({ event: "record.available", account }, "the exchange's record can be read again");
          return;
        case "ledgerReconciled": {
          const { outcome, finding } = e;
          if (outcome.changes.length > 0)
            log.info(
              {
                event: "ledger.reconciled",
                account,
                changes: outcome.changes,
                notes: outcome.notes,
                firesToday: finding.firesToday,
                coversDay: finding.coversDay,
              },
              outcome.changes
                .map((c) => `${c.field} ${String(c.from)} → ${String(c.to)}: ${c.reason}`)
                .join("; "),
            );
          else
            log.debug(
              {
                event: "record.checked",
                account,
                firesToday: finding.firesToday,
                coversDay: finding.coversDay,
                notes: outcome.notes,
              },
              "the ledger agrees with the exchange's record",
            );
          return;
        }
      }
    }
    if (e.module !== "cancel") return;
    const log = cancelLog;
    const report = e.pass;
    const { cancelled } = e;
    // a pass that found nothing to do says so at debug level only
    if (report.confirmed && report.targeted.length === 0 && e.newlyKept === 0) {
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

/** The engine-down cancel's counters: orders cancelled, reduce-only stops kept (each once). */
export function recordMetrics(metrics: Pick<Metrics, "ordersCancelled" | "ordersKept">): EventSubscriber {
  return (e) => {
    if (e.module !== "cancel") return;
    metrics.ordersCancelled.inc({ account: e.pass.account }, e.cancelled);
    metrics.ordersKept.inc({ account: e.pass.account }, e.newlyKept);
  };
}
