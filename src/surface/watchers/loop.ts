/**
 * A watcher's repetition (src/core/events.ts `LoopEvent`: the guard's, the exposure poll's and the open orders'
 * loops) as log lines, a subscriber of the daemon's bus, on the watcher's `module`:
 * - `loop.stalled` (warn, `loop`, `gapMs`, `expectedAt`, `intervalMs`): a wake-up late past its threshold;
 * - `loop.tick_failed` (error, `loop`, `err`): a tick that threw.
 * The same lines as the runtime's own (src/core/runtime.ts `every`) and the switch's push loop's.
 */
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";

export function loopLog(logger: Logger): EventSubscriber {
  const logs = { guard: logger.child({ module: "guard" }), exposure: logger.child({ module: "exposure" }) };
  return (e) => {
    if (e.module !== "loop") return;
    const log = logs[e.origin];
    if (e.type === "loopStalled")
      log.warn(
        {
          event: "loop.stalled",
          loop: e.loop,
          gapMs: e.gapMs,
          expectedAt: e.expectedAt,
          intervalMs: e.intervalMs,
        },
        `the ${e.loop} loop woke up ${Math.round(e.gapMs)} ms late (host suspended or event loop blocked)`,
      );
    else log.error({ event: "loop.tick_failed", loop: e.loop, err: e.error }, "tick failed");
  };
}
