/**
 * The graceful stop (removed or kept), and what the driver met carrying out a step (its effects, the push loop).
 * Rows of the switch's one table (./index.ts `PUBLISH`).
 */
import { iso, line, type Rows, tok } from "./line.js";

type Types =
  | "kept"
  | "removed"
  | "nothingArmed"
  | "removalSkipped"
  | "removalFailed"
  | "effectFailed"
  | "loopStalled"
  | "tickFailed";

export const SHUTDOWN_ROWS: Rows<Types> = {
  kept: {
    log: (e) =>
      line(
        "info",
        "shutdown.kept",
        { armedUntil: e.armedUntil, ...(e.reason ? { reason: e.reason } : {}) },
        (e.armedUntil === null
          ? "graceful stop: nothing is armed"
          : `graceful stop: the schedule stays armed until ${iso(e.armedUntil)}`) +
          (e.reason ? ` (not removed: ${e.reason})` : ""),
      ),
  },
  removed: {
    log: (e) =>
      line(
        "info",
        "shutdown.removed",
        { previousDeadline: e.previousDeadline, ...tok(e) },
        "graceful stop: the scheduled cancel is removed",
      ),
  },
  nothingArmed: {
    log: (e) =>
      line(
        "info",
        "shutdown.nothing_armed",
        { reason: e.reason, message: e.message },
        e.belowVolumeGate
          ? "graceful stop: nothing is armed (the account is below the exchange's volume gate)"
          : `graceful stop: nothing was armed (no push was accepted), so there is nothing to remove (the removal failed: ${e.reason})`,
      ),
  },
  removalSkipped: {
    log: (e) =>
      line(
        "warn",
        "shutdown.skipped",
        { reason: e.reason, message: e.message },
        "graceful stop: nothing to remove (the exchange refuses the switch for this account)",
      ),
  },
  removalFailed: {
    log: (e) =>
      line(
        "error",
        "shutdown.remove_failed",
        { reason: e.reason, message: e.message, armedUntil: e.armedUntil },
        `graceful stop: could not remove the scheduled cancel (${e.reason}); it fires at the armed deadline`,
      ),
  },
  effectFailed: {
    log: (e) =>
      line(
        "error",
        "switch.effect_failed",
        { effect: e.effect, err: e.error },
        `carrying out ${e.effect} threw; the switch goes on`,
      ),
  },
  loopStalled: {
    log: (e) =>
      line(
        "warn",
        "loop.stalled",
        { loop: e.loop, gapMs: e.gapMs, expectedAt: e.expectedAt, intervalMs: e.intervalMs },
        `the ${e.loop} loop woke up ${Math.round(e.gapMs)} ms late (host suspended or event loop blocked)`,
      ),
    metrics: (m) => m.eventLoopStalls.inc(),
  },
  tickFailed: {
    log: (e) => line("error", "loop.tick_failed", { loop: e.loop, err: e.error }, "tick failed"),
  },
};
