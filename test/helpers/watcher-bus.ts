/**
 * A bus with every watcher's log and metrics subscribers (src/surface/watchers/), as the daemon subscribes them:
 * a watcher under test publishes on it, and its lines and metrics are the daemon's.
 */
import { Registry } from "prom-client";
import { createEventBus, type EventBus } from "../../src/core/events.js";
import type { Logger } from "../../src/core/logger.js";
import { createMetrics, type Metrics } from "../../src/surface/metrics.js";
import { watcherSubscribers } from "../../src/surface/watchers/index.js";

export function watcherBus(
  logger: Logger,
  metrics: Metrics = createMetrics({ registry: new Registry(), defaultMetrics: false }),
): EventBus {
  return createEventBus(...watcherSubscribers(logger, metrics));
}
