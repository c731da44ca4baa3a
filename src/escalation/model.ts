import type { EngineDownCause } from "../core/events.js";
import type { FeatureStatus, SwitchView } from "../core/feature.js";

/** The escalation's model (machine.ts has the rules); the HALTED latch itself is the switch's, on the ledger. */

export type { EscalationConfig } from "../core/feature.js";

/** The exposure poll's figures the rules read. */
export type ExposureFigures = {
  accountValue: number;
  notionalUsd: number;
  /** the smallest distance to liquidation among the positions (percent), null when none can be liquidated */
  minLiquidationPct: number | null;
};

export type EscalationModel = {
  /** monotonic ms the engine went down (this episode), null while it is up */
  downSinceMono: number | null;
  /**
   * why it is down: `seen` (a death observed) or `absent` (no engine named the account within the connect grace
   * after a restart; `downSinceMono` is then the grace's end). Absent, only the time rule (`afterDownMs`) holds.
   */
  downCause: EngineDownCause | null;
  /** the account value when the engine went down (the last poll before), for the drawdown rule */
  baseline: number | null;
  /** the last exposure poll */
  exposure: ExposureFigures | null;
  /**
   * The latched account's closes: none yet (`idle`); a pass is out (`waiting`); due again after a pass that did not
   * finish, while the engine stays down (`retry`); stopped, to resume only when the engine is down again and a
   * rule holds (`held`: the engine came back, or the daemon restarted with a pass open); the last pass reported
   * the account flat (`done`).
   */
  closing: "idle" | "waiting" | "retry" | "held" | "done";
  /** close passes since the latch */
  passes: number;
  /** the pass out is the operator's `kill --close`: the command is its evidence, not the engine's absence */
  killPass: boolean;
  /** why the closes are held (`held`), for the status and the page; null otherwise */
  heldWhy: string | null;
  /** the positions left at the last pass's last read ("BTC 0.25, ETH -3"), "" when none was read */
  remaining: string;
  /** the gate's refusal last said for a held escalation (said once, not on every tick) */
  heldSaid: string | null;
  /** the fencing token the running close pass was started under */
  passToken: string | null;
  /**
   * The pass out (or due) is within the death it opened under: set when a pass opens with the engine down, cleared
   * when the engine comes back. A pass that answers incomplete is due again only while it holds: a return of the
   * engine ended the evidence the pass acted on, and a new death needs a rule of its own (machine.ts
   * `escalationClosed`).
   */
  passDown: boolean;
};

export const initialEscalation = (): EscalationModel => ({
  downSinceMono: null,
  downCause: null,
  baseline: null,
  exposure: null,
  closing: "idle",
  passes: 0,
  killPass: false,
  heldWhy: null,
  remaining: "",
  heldSaid: null,
  passToken: null,
  passDown: false,
});

/** The ledger's `halted.closing` after a restart: the closes were stopped by it (machine.ts `escalationStart`). */
export const STOPPED_AT_RESTART = "closing stopped at restart";

/** A pass reports at most this many orders to the machine (and so to the log and the audit trail). */
export const CLOSE_REPORTS_KEPT = 50;

/** HALTED as the status, readiness and the page say it: the latch, and where its closes stand. */
export function escalationStatus(esc: EscalationModel, view: SwitchView): FeatureStatus {
  const h = view.halted;
  if (h === null) return { halted: null };
  const closes =
    esc.closing === "waiting"
      ? "closing"
      : esc.closing === "retry"
        ? "retrying"
        : esc.closing === "done"
          ? "closed"
          : esc.closing === "held"
            ? esc.heldWhy === STOPPED_AT_RESTART
              ? "stopped at restart"
              : "held"
            : "none";
  return {
    halted: {
      since: h.since,
      reason: h.reason,
      closes,
      heldWhy: esc.closing === "held" ? esc.heldWhy : null,
      remaining: esc.remaining,
      passes: esc.passes,
    },
  };
}
