/**
 * The address budget monitor. Every scheduleCancel push is an action, and actions spend the address's lifetime
 * budget: 10,000 requests plus one per USDC ever traded (docs/exchange-behaviour.md §10). When it is used up the
 * address is throttled to one request per 10 s and the switch can no longer be refreshed (the exchange answers
 * "Too many cumulative requests sent…", which the switch reports as NOT PROTECTED). This monitor reads
 * `userRateLimit` for each account on a slow cadence, publishes used / cap / left and the days left at the
 * daemon's own push rate, and warns once per crossing when fewer than `warnDays` remain. It publishes what it
 * reads and each crossing as typed events on the bus (src/core/events.ts `BudgetEvent`); its log lines
 * (`budgetLog`) and metrics (`budgetMetrics`) are subscribers.
 */

import {
  type BudgetEvent,
  type BudgetFigures,
  createEventBus,
  type EventBus,
  type EventSubscriber,
} from "../core/events.js";
import type { Logger } from "../core/logger.js";
import type { Repeating, Runtime } from "../core/runtime.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";
import type { UserRateLimit } from "../protocol/hyperliquid/schemas.js";
import type { Metrics } from "../surface/metrics.js";

export type BudgetStatus = {
  account: string;
  used: number;
  cap: number;
  left: number;
  /** days until the budget runs out at this daemon's push rate alone (the engine's actions come on top) */
  daysLeft: number;
  checkedAt: number;
};

export type BudgetMonitor = {
  start(): void;
  stop(): void;
  /** One check of every account now; never rejects (failures are logged). */
  checkNow(): Promise<void>;
  status(): BudgetStatus[];
};

export type CreateBudgetMonitorParameters = {
  info: Pick<InfoClient, "userRateLimit">;
  accounts: string[];
  /** the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts) */
  runtime: Runtime;
  logger: Logger;
  metrics: Metrics;
  /**
   * the daemon's event bus, where `budgetLog` and `budgetMetrics` subscribe once (src/app/parts/io.ts); without
   * one, the monitor's own bus with those two on `logger` and `metrics`
   */
  bus?: EventBus | undefined;
  /** check cadence (ms); 0 turns the monitor off */
  intervalMs: number;
  /** this daemon's pushes per day per account (86,400 s / interval) */
  actionsPerDay: number;
  /** warn when fewer days than this remain */
  warnDays: number;
};

export function createBudgetMonitor({
  info,
  accounts,
  runtime,
  logger,
  metrics,
  bus = createEventBus(budgetLog(logger), budgetMetrics(metrics)),
  intervalMs,
  actionsPerDay,
  warnDays,
}: CreateBudgetMonitorParameters): BudgetMonitor {
  const { clock } = runtime;
  const publish = (e: BudgetEvent) => bus.publish(e);
  const latest = new Map<string, BudgetStatus>();
  /** accounts currently below warnDays / exhausted: each is logged once per crossing */
  const low = new Set<string>();
  const exhausted = new Set<string>();
  let failing = false;
  let repeating: Repeating | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;

  const record = (account: string, r: UserRateLimit) => {
    const cap = r.nRequestsCap + (r.nRequestsSurplus ?? 0);
    const left = Math.max(0, cap - r.nRequestsUsed);
    const daysLeft = actionsPerDay > 0 ? left / actionsPerDay : Number.POSITIVE_INFINITY;
    const status = { account, used: r.nRequestsUsed, cap, left, daysLeft, checkedAt: clock.now() };
    const first = !latest.has(account);
    latest.set(account, status);
    const figures: BudgetFigures = { account, used: status.used, cap, left, daysLeft, actionsPerDay };
    if (left === 0) {
      if (!exhausted.has(account)) {
        exhausted.add(account);
        publish({ module: "budget", type: "budgetExhausted", ...figures });
      }
    } else if (exhausted.delete(account)) {
      publish({ module: "budget", type: "budgetRecovered", ...figures });
    }
    if (left > 0 && daysLeft < warnDays) {
      if (!low.has(account)) {
        low.add(account);
        publish({ module: "budget", type: "budgetLow", ...figures, warnDays });
      }
    } else if (daysLeft >= warnDays && low.delete(account)) {
      publish({ module: "budget", type: "budgetOk", ...figures });
    }
    publish({ module: "budget", type: "budgetRead", ...figures, first });
  };

  const checkOnce = async () => {
    for (const account of accounts) {
      if (stopped) return;
      try {
        record(account, await info.userRateLimit({ user: account }));
        if (failing) {
          failing = false;
          publish({ module: "budget", type: "budgetCheckRecovered" });
        }
      } catch (error) {
        const message = (error instanceof Error ? error.message.split("\n")[0] : String(error)) ?? "";
        // Once per streak at warn; the budget is advisory and never touches the heartbeat.
        if (!failing) publish({ module: "budget", type: "budgetCheckFailed", account, message });
        failing = true;
      }
    }
  };

  const checkNow = async () => {
    if (running) return running;
    running = checkOnce().finally(() => {
      running = null;
    });
    return running;
  };

  // Repeats through the runtime (drift-free on the monotonic clock); a check still running is joined.
  const schedule = () => {
    if (stopped || intervalMs <= 0 || repeating) return;
    repeating = runtime.every(intervalMs, () => void checkNow(), { immediate: false, name: "budget" });
  };

  return {
    start() {
      if (intervalMs <= 0 || accounts.length === 0) return;
      void checkNow().then(schedule);
    },
    stop() {
      stopped = true;
      repeating?.stop();
    },
    checkNow,
    status: () => [...latest.values()],
  };
}

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
