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
 *
 * A fleet (above 10 accounts): a switch's event looks at that account alone (`nudge(account)`) and the timer's look
 * at every account comes at most once per `everyMs` (a crossing without any event is then said up to 1 s late).
 * Otherwise each of N accounts' pushes would look at all N (and the earliest crossing of a fleet whose pushes are
 * spread is always a step away): at 1,000 accounts that was the whole CPU, and the pushes' own write-ahead records
 * timed out behind it (BENCHMARKS.md, "The growth curve").
 */

import type { Clock } from "../../core/clock.js";
import type { DomainEvent } from "../../core/events.js";
import type { Timers } from "../../core/runtime.js";
import type { ProtectionView } from "../../core/status.js";
import { defaultMinMarginMs } from "../health.js";

export type ProtectionWatchOptions = {
  status: () => ProtectionView[];
  /** one account's view (its own events look at it alone); absent: an event looks at every account */
  statusOf?: ((account: string) => ProtectionView | undefined) | undefined;
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
  statusOf,
}: ProtectionWatchOptions): { check(): void; nudge(account?: string): void; stop(): void } {
  const marginMs = defaultMinMarginMs({ intervalMs, deadlineMs });
  const low = new Set<string>();
  let handle: { cancel(): void } | undefined;
  let stopped = false;
  let checking = false;

  /** Looks at one account; returns how long until it needs to be looked at again (ms). */
  const look = (s: ProtectionView, now: number): number => {
    let waitMs = maxWaitMs;
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
    return waitMs;
  };
  /** Checks every account; returns how long until the next check is needed (ms). */
  const check = (): number => {
    const now = clock.now();
    let waitMs = maxWaitMs;
    const all = status();
    for (const s of all) waitMs = Math.min(waitMs, look(s, now));
    // a fleet (more than 10 accounts) looked at as a whole at most once per `everyMs`
    fleet = all.length > 10 && statusOf !== undefined;
    return fleet ? Math.max(everyMs, waitMs) : waitMs;
  };
  /** more than 10 accounts (the last look at them all): a switch's event looks at its account alone */
  let fleet = false;
  /** When the timer fires next (clock time), to move it earlier only. */
  let due = Number.POSITIVE_INFINITY;
  const plan = (waitMs: number) => {
    handle?.cancel();
    due = clock.now() + waitMs;
    handle = timers.after(waitMs, run);
  };
  const run = () => {
    if (stopped || checking) return;
    checking = true;
    let waitMs = everyMs;
    try {
      waitMs = check();
    } finally {
      checking = false;
      if (!stopped) plan(waitMs);
    }
  };
  /** One account's event: that account alone, the timer moved earlier if it needs looking at sooner. */
  const nudgeOne = (account: string) => {
    const s = statusOf?.(account);
    if (stopped || !s) return;
    const waitMs = look(s, clock.now());
    if (clock.now() + waitMs < due) plan(waitMs);
  };
  plan(everyMs);
  return {
    check: () => {
      check();
    },
    /**
     * A switch's status may have changed (an event of the switch): look at its account now (a fleet's), or at
     * every account (up to 10, or when it is not named), and plan the next check again.
     */
    nudge: (account?: string) => (account !== undefined && fleet ? nudgeOne(account) : run()),
    stop() {
      stopped = true;
      handle?.cancel();
    },
  };
}
