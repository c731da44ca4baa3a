/**
 * The address budget monitor's events (src/core/events.ts `BudgetEvent`, src/watchers/budget.ts) as log lines and
 * metrics, subscribers of the daemon's bus.
 */
import type { BudgetFigures, EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";

/** The fields every budget line carries (`daysLeft` rounded to 0.1). */
const fieldsOf = (f: BudgetFigures) => ({
  account: f.account,
  used: f.used,
  cap: f.cap,
  left: f.left,
  daysLeft: Number(f.daysLeft.toFixed(1)),
  actionsPerDay: f.actionsPerDay,
});

/** The budget monitor's log lines, a subscriber of the bus (on the logger's `{ module: "budget" }` child). */
export function budgetLog(logger: Logger): EventSubscriber {
  const log = logger.child({ module: "budget" });
  return (e) => {
    if (e.module !== "budget") return;
    switch (e.type) {
      case "budgetExhausted":
        log.error(
          { event: "budget.exhausted", ...fieldsOf(e) },
          `the address's action budget is used up (${e.used} of ${e.cap}): pushes are throttled to one per 10 s; trade volume or reserveRequestWeight frees more`,
        );
        return;
      case "budgetRecovered":
        log.info({ event: "budget.recovered", ...fieldsOf(e) }, "the address's action budget has room again");
        return;
      case "budgetLow":
        log.warn(
          { event: "budget.low", ...fieldsOf(e), warnDays: e.warnDays },
          `${e.left.toLocaleString("en-US")} actions left: about ${e.daysLeft.toFixed(1)} days at ${e.actionsPerDay.toLocaleString("en-US")} pushes a day; lengthen --interval or add volume`,
        );
        return;
      case "budgetOk":
        log.info(
          { event: "budget.ok", ...fieldsOf(e) },
          "the address's action budget is above the warning level again",
        );
        return;
      case "budgetRead":
        if (e.first)
          log.info({ event: "budget", ...fieldsOf(e) }, `address budget: ${e.used} of ${e.cap} actions used`);
        return;
      case "budgetCheckFailed":
        log.warn(
          { event: "budget.failed", account: e.account, message: e.message },
          "could not read the address budget",
        );
        return;
      case "budgetCheckRecovered":
        log.info({ event: "budget.check_recovered" }, "the address budget can be read again");
        return;
    }
  };
}

/** The budget monitor's metrics, a subscriber of the bus: the figures of every read (-1 days: no pushes). */
export function budgetMetrics(metrics: Metrics): EventSubscriber {
  return (e) => {
    if (e.module !== "budget" || e.type !== "budgetRead") return;
    const labels = { account: e.account };
    metrics.addressRequestsUsed.set(labels, e.used);
    metrics.addressRequestsCap.set(labels, e.cap);
    metrics.addressRequestsLeft.set(labels, e.left);
    metrics.addressBudgetDaysLeft.set(labels, Number.isFinite(e.daysLeft) ? e.daysLeft : -1);
  };
}
