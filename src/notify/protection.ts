/**
 * "Protection low" has no log event of its own: readiness computes it (docs/observability.md "Readiness").
 * This watcher looks at the switches' status every `everyMs` and emits `protection.low` once when an armed
 * (or retrying) account has less than the readiness margin left, and `protection.restored` when it is back.
 */
import { defaultMinMarginMs } from "../daemon/health.js";
import type { Timers } from "../daemon/loop.js";
import type { SwitchStatus } from "../daemon/types.js";
import type { Clock } from "../utils/clock.js";
import type { LoggedEvent } from "./tap.js";

export type ProtectionWatchOptions = {
  status: () => SwitchStatus[];
  clock: Clock;
  timers: Timers;
  intervalMs: number;
  deadlineMs: number;
  onEvent: (e: LoggedEvent) => void;
  /** check cadence (ms, default 1 s) */
  everyMs?: number;
};

export function watchProtection({
  status,
  clock,
  timers,
  intervalMs,
  deadlineMs,
  onEvent,
  everyMs = 1_000,
}: ProtectionWatchOptions): { check(): void; stop(): void } {
  const marginMs = defaultMinMarginMs({ intervalMs, deadlineMs });
  const low = new Set<string>();
  let handle: { cancel(): void } | undefined;
  let stopped = false;

  const check = () => {
    const now = clock.now();
    for (const s of status()) {
      const watched = (s.state === "armed" || s.state === "retrying") && s.armedUntil !== null;
      const left = s.armedUntil === null ? 0 : s.armedUntil - now;
      const fields = {
        account: s.account,
        protectionLeftMs: left,
        marginMs,
        armedUntil: s.armedUntil,
        consecutiveFailures: s.consecutiveFailures,
      };
      if (watched && left < marginMs && !low.has(s.account)) {
        low.add(s.account);
        onEvent({ event: "protection.low", level: "warn", ...fields });
      } else if (low.has(s.account) && watched && left >= marginMs) {
        low.delete(s.account);
        onEvent({ event: "protection.restored", level: "info", ...fields });
      } else if (low.has(s.account) && !watched) {
        // lapsed, exhausted, refused, engine down or stopped: those have their own events
        low.delete(s.account);
      }
    }
  };
  const loop = () => {
    if (stopped) return;
    check();
    handle = timers.after(everyMs, loop);
  };
  handle = timers.after(everyMs, loop);
  return {
    check,
    stop() {
      stopped = true;
      handle?.cancel();
    },
  };
}
