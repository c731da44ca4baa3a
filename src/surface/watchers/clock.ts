/**
 * The clock's events as log lines and metrics: subscribers of the daemon's bus (src/core/events.ts `ClockEvent`).
 * The exposure poll (from the states' `time`) and, with the poll off, the clock watch (from the answers' `Date`)
 * publish the skew; the clock watch publishes wall-clock steps and the failures of the per-interval hook.
 * - `clock.skew` (warn) / `clock.skew.cleared` (info): once per crossing of the skew limit, with `skewMs`,
 *   `limitMs`, `source` (and `uncertaintyMs` when the poll measured it), on the measuring part's `module`;
 * - `clock.step` (warn, `deltaMs`) and `daemon.interval_failed` (warn), on the daemon's `module`;
 * - `clock.block_unavailable` (warn, `error`) once per outage of the HyperEVM block time and
 *   `clock.block_available` (info) at its end (src/watchers/block-time.ts), on `module` `clock`;
 * - `hl_deadman_clock_skew_seconds` on every measure, `hl_deadman_clock_steps_total` on every step.
 */
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";

export function clockLog(logger: Logger): EventSubscriber {
  const logs = {
    daemon: logger.child({ module: "daemon" }),
    exposure: logger.child({ module: "exposure" }),
    clock: logger.child({ module: "clock" }),
  };
  return (e) => {
    if (e.module !== "clock") return;
    const log = logs[e.origin];
    if (e.type === "clockStepped") {
      log.warn(
        { event: "clock.step", deltaMs: e.deltaMs },
        `the wall clock was stepped by ${e.deltaMs} ms; timers run on the monotonic clock, deadlines on the exchange's`,
      );
      return;
    }
    if (e.type === "intervalHookFailed") {
      log.warn({ event: "daemon.interval_failed", err: e.error }, "the per-interval hook threw");
      return;
    }
    if (e.type === "blockTimeAvailable") {
      log.info({ event: "clock.block_available" }, "the HyperEVM block time is read again");
      return;
    }
    if (e.type === "blockTimeUnavailable") {
      log.warn(
        { event: "clock.block_unavailable", error: e.error },
        "the HyperEVM block time cannot be read: the exchange's time has one witness less (answers' Date and the exchange's verdicts remain)",
      );
      return;
    }
    if (e.change === null) return;
    const skewMs = Math.round(e.skewMs);
    const fields = {
      event: e.change === "crossed" ? "clock.skew" : "clock.skew.cleared",
      skewMs,
      ...(e.uncertaintyMs === null ? {} : { uncertaintyMs: Math.round(e.uncertaintyMs) }),
      limitMs: e.limitMs,
      source: e.source,
    };
    const from = e.source === "time" ? "the clearinghouse states' time" : "the answers' Date";
    if (e.change === "crossed")
      log.warn(
        fields,
        `the local clock is ${Math.abs(skewMs)} ms ${skewMs > 0 ? "ahead of" : "behind"} the exchange's (from ${from}; ` +
          `limit ${e.limitMs} ms): deadlines and nonces use the exchange's time, but fix the host's time sync (chrony/NTP)`,
      );
    else log.info(fields, `the local clock is within ${e.limitMs} ms of the exchange's again`);
  };
}

export function clockMetrics(metrics: Metrics): EventSubscriber {
  return (e) => {
    if (e.module !== "clock") return;
    if (e.type === "clockSkew") metrics.clockSkew.set(e.skewMs / 1000);
    else if (e.type === "clockStepped") metrics.clockSteps.inc();
  };
}
