import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { createGuard, type Guard } from "../../src/watchers/guard.js";

/**
 * A URL guard checking `url` every `intervalMs`; `changes` records each up/down it reports. `onCleanup` receives
 * what stops it (the test's cleanup list).
 */
export function urlGuardFor(
  url: string,
  onCleanup: (close: () => void) => void,
  intervalMs = 1_000,
): { guard: Guard; changes: Array<[boolean, string | null]>; clock: ManualClock } {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const timers = new ManualTimers(clock);
  const changes: Array<[boolean, string | null]> = [];
  const guard = createGuard({
    url,
    intervalMs,
    runtime: createRuntime({ clock, timers }),
    onChange: (up, detail) => changes.push([up, detail]),
  });
  if (!guard) throw new Error("createGuard made no guard for a URL");
  onCleanup(() => {
    guard.stop();
    timers.dispose();
  });
  return { guard, changes, clock };
}
