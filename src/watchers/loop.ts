/**
 * A watcher's repetition told on the bus: the runtime's `every` hooks that publish a late wake-up and a tick that
 * threw as the watcher's `LoopEvent` (src/core/events.ts); their log lines are a subscriber
 * (src/surface/watchers/loop.ts).
 */
import type { EventBus, LoopEvent } from "../core/events.js";
import type { EveryOptions } from "../core/runtime.js";

export function loopHooks(
  bus: EventBus,
  origin: LoopEvent["origin"],
  loop: string,
  intervalMs: number,
): Pick<EveryOptions, "onStall" | "onTickFailed" | "name"> {
  return {
    name: loop,
    onStall: (gapMs, expectedAt) =>
      bus.publish({ module: "loop", origin, loop, type: "loopStalled", gapMs, expectedAt, intervalMs }),
    onTickFailed: (error) => bus.publish({ module: "loop", origin, loop, type: "tickFailed", error }),
  };
}
