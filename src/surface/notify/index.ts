/**
 * The daemon's notifications (`--notify-url`, config `notifyUrls`, env `HL_NOTIFY_URLS`): a logger tap turns
 * the events that matter into JSON documents (./events.ts) delivered by ./notifier.ts; the protection watcher
 * adds `protection.low` / `protection.restored`. Wired into the daemon in src/app/daemon.ts.
 */
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import type { Logger } from "../../core/logger.js";
import type { Runtime } from "../../core/runtime.js";
import type { SwitchStatus } from "../../core/status.js";
import { VERSION } from "../../core/version.js";
import { toNotification } from "./events.js";
import { createNotifier, type Notifier, type NotifierOptions } from "./notifier.js";
import { watchProtection } from "./protection.js";
import { type EventListener, type LoggedEvent, tapLogger } from "./tap.js";

export { toNotification } from "./events.js";
export { createNotifier } from "./notifier.js";
export { tapLogger } from "./tap.js";

export type DaemonNotifications = {
  /** the daemon's logger, tapped: give it to every module */
  logger: Logger;
  /** adds a listener for every logged event (the status page uses this) */
  listen(listener: EventListener): void;
  /** starts the protection watcher once the switches run */
  watch(params: { status: () => SwitchStatus[]; intervalMs: number; deadlineMs: number }): void;
  close(waitMs?: number): Promise<void>;
  notifier: Notifier | null;
};

export function createDaemonNotifications({
  urls,
  logger,
  registry,
  runtime,
  notifier: notifierOptions,
}: {
  urls: readonly string[];
  logger: Logger;
  registry: Registry;
  /** the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts) */
  runtime: Runtime;
  notifier?: Partial<NotifierOptions>;
}): DaemonNotifications {
  const { clock, timers } = runtime;
  const listeners: EventListener[] = [];
  const notifier = urls.length > 0 ? createNotifier({ ...notifierOptions, urls, logger, registry }) : null;
  const host = hostname();
  let watcher: { nudge(): void; stop(): void } | null = null;
  const dispatch = (e: LoggedEvent) => {
    for (const l of listeners) l(e);
    // every change of a switch's status is logged by the switch: the protection watcher looks again
    // (./protection.ts); other lines (exposure, notifications, the ledger) change no switch's protection
    if (e.module === "switch") watcher?.nudge();
    if (!notifier) return;
    const n = toNotification(e, { now: clock.now(), host, version: VERSION });
    if (n) notifier.send(n);
  };
  return {
    logger: tapLogger(logger, dispatch),
    listen(listener) {
      listeners.push(listener);
    },
    watch({ status, intervalMs, deadlineMs }) {
      watcher ??= watchProtection({ status, clock, timers, intervalMs, deadlineMs, onEvent: dispatch });
    },
    async close(waitMs) {
      watcher?.stop();
      await notifier?.close(waitMs);
    },
    notifier,
  };
}
