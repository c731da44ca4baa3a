/**
 * A real connection guard (src/watchers/connection-guard.ts) on a Unix socket for the engine tests, on a ManualClock
 * (its timers never fire on their own: only a connection's open and close count), recording each account's changes.
 * Not started: the caller starts it, and may stop it and start another on the same socket (a daemon's restart).
 */
import { Registry } from "prom-client";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createConnectionGuard } from "../../src/watchers/connection-guard.js";
import { captureLogger } from "../app/helpers.js";
import { watcherBus } from "./watcher-bus.js";

export function socketGuard(socket: string, accounts: readonly string[]) {
  const clock = new ManualClock(0);
  const timers = new ManualTimers(clock);
  const changes: Array<[string, boolean]> = [];
  const g = createConnectionGuard({
    address: { kind: "unix", path: socket },
    accounts,
    heartbeatGapMs: 0,
    runtime: createRuntime({ clock, timers }),
    bus: watcherBus(
      captureLogger().logger,
      createMetrics({ registry: new Registry(), defaultMetrics: false }),
    ),
    onChange: (a, up) => changes.push([a, up]),
  });
  return { g, changes, timers };
}
