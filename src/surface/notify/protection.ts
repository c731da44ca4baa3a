/**
 * "Protection low" has no log event of its own: readiness computes it (docs/observability.md "Readiness").
 * This watcher looks at the switches' status and emits `protection.low` once when an armed (or retrying)
 * account has less than the readiness margin left, and `protection.restored` when it is back.
 *
 * When it looks: an account that is not low can only become low when its protection left crosses the margin
 * (at `armedUntil - margin`, a time known in advance: pushes only move it later) or when its status changes,
 * and every status change of a switch is an event of the switch on the bus. So the watcher checks at the earliest
 * such crossing, on every switch event (`nudge`, wired by surface/notify/index.ts), and at least every `maxWaitMs`
 * (a wall-clock step, a change that published nothing); while an account is low it checks every `everyMs` until it
 * is restored. A healthy daemon is not woken once a second for this (docs/daemon.md "How time is kept"), nor
 * once per push: `maxWaitMs` is two push intervals, so the push's own `pushConfirmed` (a nudge, one interval
 * after the last) always comes first; at one interval the timer fired just before each push's answer.
 */

import type { Clock } from "../../core/clock.js";
import type { DomainEvent } from "../../core/events.js";
import type { Timers } from "../../core/runtime.js";
import type { SwitchStatus } from "../../core/status.js";
import { defaultMinMarginMs } from "../health.js";

export type ProtectionWatchOptions = {
  status: () => SwitchStatus[];
  clock: Clock;
  timers: Timers;
  intervalMs: number;
  deadlineMs: number;
  onEvent: (e: DomainEvent) => void;
  /** check cadence while an account is low (ms, default 1 s) */
  everyMs?: number;
  /** longest wait between two checks while no account is low (ms, default two push intervals, at least everyMs) */
  maxWaitMs?: number;
};

export function watchProtection({
  status,
  clock,
  timers,
  intervalMs,
  deadlineMs,
  onEvent,
  everyMs = 1_000,
  maxWaitMs = Math.max(everyMs, 2 * intervalMs),
}: ProtectionWatchOptions): { check(): void; nudge(): void; stop(): void } {
  const marginMs = defaultMinMarginMs({ intervalMs, deadlineMs });
  const low = new Set<string>();
  let handle: { cancel(): void } | undefined;
  let stopped = false;
  let checking = false;

  /** Checks every account; returns how long until the next check is needed (ms). */
  const check = (): number => {
    const now = clock.now();
    let waitMs = maxWaitMs;
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
      if (low.has(s.account)) waitMs = Math.min(waitMs, everyMs);
      // not low: it crosses the margin `left - marginMs` from now unless a push moves armedUntil later (whatever
      // its state now: a switch that starts retrying is looked at by then even if that change logged nothing)
      else if (s.armedUntil !== null && left >= marginMs) waitMs = Math.min(waitMs, left - marginMs + 1);
    }
    return waitMs;
  };
  const run = () => {
    if (stopped || checking) return;
    checking = true;
    let waitMs = everyMs;
    try {
      waitMs = check();
    } finally {
      checking = false;
      handle?.cancel();
      if (!stopped) handle = timers.after(waitMs, run);
    }
  };
  handle = timers.after(everyMs, run);
  return {
    check: () => {
      check();
    },
    /** A switch's status may have changed (an event of the switch): check now and plan the next check again. */
    nudge: run,
    stop() {
      stopped = true;
      handle?.cancel();
    },
  };
}
