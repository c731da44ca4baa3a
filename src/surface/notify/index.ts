/**
 * The daemon's notifications (`--notify-url`, config `notifyUrls`, env `HL_NOTIFY_URLS`): a subscriber of the
 * daemon's event bus (src/core/events.ts) turns the events that matter into JSON documents (./events.ts) delivered
 * by ./notifier.ts; the protection watcher publishes `protection.low` / `protection.restored` on the same bus.
 * Wired into the daemon in src/app/parts/notifications.ts.
 */
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import type { DaemonEvent, EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Runtime } from "../../core/runtime.js";
import type { ProtectionView } from "../../core/status.js";
import { VERSION } from "../../core/version.js";
import { describeSwitchEvent } from "../switch/index.js";
import { toNotification } from "./events.js";
import { createNotifier, type Notifier, type NotifierOptions } from "./notifier.js";
import { watchProtection } from "./protection.js";

export { toNotification } from "./events.js";
export { createNotifier } from "./notifier.js";

export type DaemonNotifications = {
  /** starts the protection watcher once the switches run */
  watch(params: {
    status: () => ProtectionView[];
    statusOf?: (account: string) => ProtectionView | undefined;
    intervalMs: number;
    deadlineMs: number;
  }): void;
  close(waitMs?: number): Promise<void>;
  notifier: Notifier | null;
};

export function createDaemonNotifications({
  urls,
  logger,
  registry,
  runtime,
  bus,
  notifier: notifierOptions,
}: {
  urls: readonly string[];
  logger: Logger;
  /** the daemon's event bus: notifications follow it, and the protection watcher publishes on it */
  bus: EventBus;
  registry: Registry;
  /** the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts) */
  runtime: Runtime;
  /** delivery tuning (tests); the timers are always the runtime's */
  notifier?: Partial<Omit<NotifierOptions, "urls" | "logger" | "registry" | "timers">>;
}): DaemonNotifications {
  const { clock, timers } = runtime;
  const notifier =
    urls.length > 0 ? createNotifier({ ...notifierOptions, urls, logger, registry, timers }) : null;
  const host = hostname();
  let watcher: { nudge(account?: string): void; stop(): void } | null = null;
  const unsubscribe = bus.subscribe((e: DaemonEvent) => {
    // every change of a switch's status is an event of the switch: the protection watcher looks again
    // (./protection.ts); other events (exposure, the watchers') change no switch's protection
    if (e.module === "switch") watcher?.nudge(typeof e.account === "string" ? e.account : undefined);
    if (!notifier) return;
    // what notifies: a switch's events as the switch's table describes them (src/surface/switch/
    // `describeSwitchEvent`: its contract name and figures, null when it does not concern people), and the named
    // events (protection); the watchers' own events reach people through the switches (engine down is each
    // switch's `engineDown`)
    const named =
      e.module === "switch"
        ? describeSwitchEvent(e)
        : e.module === "notify" || e.module === "exposure"
          ? e
          : null;
    if (!named) return;
    const n = toNotification(named, { now: clock.now(), host, version: VERSION });
    if (n) notifier.send(n);
  });
  return {
    watch({ status, statusOf, intervalMs, deadlineMs }) {
      watcher ??= watchProtection({
        status,
        statusOf,
        clock,
        timers,
        intervalMs,
        deadlineMs,
        onEvent: (e) => bus.publish({ ...e, module: "notify" }),
      });
    },
    async close(waitMs) {
      watcher?.stop();
      unsubscribe();
      await notifier?.close(waitMs);
    },
    notifier,
  };
}
