/** The clock watch component: the daemon's own once-per-interval work (src/app/daemon.ts, `daemonComponents`). */
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import { CrossingLatch } from "../../watchers/skew.js";
import type { Component } from "../components.js";
import type { Base, Feed } from "../context.js";
import { feed } from "../context.js";

/**
 * The daemon's own once-per-interval work, on its own repetition on the push loops' grid (`slotOrigin`, which it
 * sets for the switches and the exposure poll, and the push interval): `every` wakes it with the pushes, on one
 * timer, just before them, never in a wake-up of its own (CPU per hour, BENCHMARKS.md). Per slot: `onInterval` (the service's lock refresh); with the exposure poll
 * off, the skew of the local clock from the answers' Date (the poll watches it otherwise); a wall-clock step
 * (wall and monotonic disagree), which is logged, counted and handed to the switches (readiness then waits for a
 * confirmed push). Deadlines are on the exchange's time, which a step does not move: this only reports.
 */
export function clockWatchComponent(): Component<
  Base & { bus: EventBus; log: Logger },
  { slotOrigin: number; clockSteps: Feed<number> }
> {
  let loop: { stop(): void } | undefined;
  return {
    name: "clock watch",
    start({ params, config, runtime, time, bus, log }) {
      const steps = feed<number>();
      const skewLatch = new CrossingLatch(config.clockSkewWarn);
      const watchSkew = config.exposureInterval <= 0;
      const slotOrigin = time.monotonic();
      const from = { module: "clock", origin: "daemon" } as const;
      const work = () => {
        if (params.onInterval) {
          try {
            params.onInterval();
          } catch (error) {
            bus.publish({ ...from, type: "intervalHookFailed", error });
          }
        }
        if (watchSkew && time.verified) {
          const skewMs = time.skewMs;
          const change = skewLatch.update(Math.abs(skewMs));
          bus.publish({
            ...from,
            type: "clockSkew",
            skewMs,
            uncertaintyMs: null,
            limitMs: config.clockSkewWarn,
            source: "date",
            change,
          });
        }
        const stepped = time.checkStep();
        if (!stepped) return;
        bus.publish({ ...from, type: "clockStepped", deltaMs: stepped.deltaMs });
        steps.publish(stepped.deltaMs);
      };
      // On the push loops' grid, made before them: one timer wakes it and then the pushes, no wake-up of its own.
      loop = runtime.withClock(time).every(config.interval, work, {
        name: "clock",
        immediate: false,
        startAt: slotOrigin,
        logger: log,
        // a stall is the push loop's to report and count, once (it wakes in the same wake-up)
        stallThresholdMs: Number.POSITIVE_INFINITY,
      });
      return { slotOrigin, clockSteps: { subscribe: steps.subscribe } };
    },
    close: () => loop?.stop(),
  };
}
