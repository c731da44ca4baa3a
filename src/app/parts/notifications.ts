/** The daemon's bus and what follows it first: the log and metrics subscribers, the notifier, the status page. */
import { createEventBus, type EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import { createDaemonNotifications } from "../../surface/notify/index.js";
import { replicaSubscribers } from "../../surface/replicas.js";
import { createStatusModel } from "../../surface/status-page/index.js";
import { switchSubscribers } from "../../surface/switch/index.js";
import { watcherSubscribers } from "../../surface/watchers/index.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";

export function notificationsComponent(): Component<
  Base,
  {
    logger: Logger;
    log: Logger;
    bus: EventBus;
    notifications: ReturnType<typeof createDaemonNotifications>;
    statusModel: ReturnType<typeof createStatusModel>;
  }
> {
  let notifications: ReturnType<typeof createDaemonNotifications> | undefined;
  return {
    name: "notifications",
    start({ params, config, metrics, runtime }) {
      // The daemon's events: the switches, the watchers, the replicas' election and the exposure report publish
      // typed events; their log lines and metrics (the switch's, src/surface/switch/; the watchers',
      // src/surface/watchers/; the election's, src/surface/replicas.ts), the notifier and the status page subscribe
      // (src/core/events.ts), in this order, once. The log is only written, never read back.
      const logger = params.logger;
      const bus = createEventBus(
        ...switchSubscribers(logger, metrics),
        ...watcherSubscribers(logger, metrics),
        ...replicaSubscribers(logger, metrics),
      );
      notifications = createDaemonNotifications({
        urls: config.notifyUrls,
        logger,
        registry: metrics.registry,
        runtime,
        bus,
      });
      const statusModel = createStatusModel({ now: () => runtime.clock.now() });
      bus.subscribe(statusModel.onEvent);
      return { notifications, statusModel, bus, logger, log: logger.child({ module: "daemon" }) };
    },
    close: () => notifications?.close(),
  };
}
