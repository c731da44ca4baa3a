/**
 * A bus with the switch's log and metrics subscribers (src/surface/switch/), as the daemon subscribes them: a
 * switch under test publishes on it, and its lines and metrics are the daemon's.
 */
import { Registry } from "prom-client";
import { createEventBus, type EventBus } from "../../src/core/events.js";
import type { Logger } from "../../src/core/logger.js";
import { createMetrics, type Metrics } from "../../src/surface/metrics.js";
import { ledgerStoreLog, switchSubscribers } from "../../src/surface/switch/index.js";

export function switchBus(
  logger: Logger,
  metrics: Metrics = createMetrics({ registry: new Registry(), defaultMetrics: false }),
): EventBus {
  return createEventBus(...switchSubscribers(logger, metrics));
}

/** A bus with the trigger ledger store's log subscriber (src/surface/switch/ledger.ts), for a ledger under test. */
export function ledgerBus(logger: Logger): EventBus {
  return createEventBus(ledgerStoreLog(logger));
}
