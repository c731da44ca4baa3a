/**
 * The address budget monitor. Every scheduleCancel push is an action, and actions spend the address's lifetime
 * budget: 10,000 requests plus one per USDC ever traded (docs/exchange-behaviour.md §10). When it is used up the
 * address is throttled to one request per 10 s and the switch can no longer be refreshed (the exchange answers
 * "Too many cumulative requests sent…", which the switch reports as NOT PROTECTED). This monitor reads
 * `userRateLimit` for each account on a slow cadence, publishes used / cap / left and the days left at the
 * daemon's own push rate, and warns once per crossing when fewer than `warnDays` remain. It publishes what it
 * reads and each crossing as typed events on the bus (src/core/events.ts `BudgetEvent`); its log lines
 * and metrics are subscribers in src/surface/watchers/budget.ts.
 */

import type { BudgetEvent, BudgetFigures, EventBus } from "../core/events.js";
import type { Repeating, Runtime } from "../core/runtime.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";
import type { UserRateLimit } from "../protocol/hyperliquid/schemas.js";

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
  /** the daemon's event bus, where its log lines and metrics subscribe (src/surface/watchers/budget.ts) */
  bus: EventBus;
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
  bus,
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
