/**
 * The watchers' wording and metrics: each watcher (src/watchers/) publishes typed events on the daemon's bus and
 * words nothing; these subscribers turn them into the log lines of docs/operations.md and the metrics.
 * The app subscribes them once, on the daemon's bus (src/app/parts/notifications.ts).
 */
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";
import { agentLog, agentMetrics } from "./agent.js";
import { budgetLog, budgetMetrics } from "./budget.js";
import { chainLog, chainMetrics } from "./chain.js";
import { clockLog, clockMetrics } from "./clock.js";
import { exposureLog, exposureMetrics } from "./exposure.js";
import { guardLog, guardMetrics } from "./guard.js";
import { loopLog } from "./loop.js";
import { recordLog, recordMetrics } from "./record.js";

export { agentLog, agentMetrics } from "./agent.js";
export { budgetLog, budgetMetrics } from "./budget.js";
export { chainLog, chainMetrics } from "./chain.js";
export { clockLog, clockMetrics } from "./clock.js";
export { exposureLog, exposureMetrics } from "./exposure.js";
export { guardLog, guardMetrics } from "./guard.js";
export { loopLog } from "./loop.js";
export { recordLog, recordMetrics } from "./record.js";

/** Every watcher's log and metrics subscribers, on `logger` and `metrics`, in one order. */
export function watcherSubscribers(logger: Logger, metrics: Metrics): EventSubscriber[] {
  return [
    guardLog(logger),
    guardMetrics(metrics),
    agentLog(logger),
    agentMetrics(metrics),
    budgetLog(logger),
    budgetMetrics(metrics),
    chainLog(logger),
    chainMetrics(metrics),
    clockLog(logger),
    clockMetrics(metrics),
    exposureLog(logger),
    exposureMetrics(metrics),
    recordLog(logger),
    recordMetrics(metrics),
    loopLog(logger),
  ];
}
