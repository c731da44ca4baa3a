import type { EngineDownCause } from "../core/events.js";

/** The escalation ladder's configuration and its part of the switch's model (escalation.ts has the rules). */

export type EscalationConfig = {
  /** the engine down this long closes the positions (ms); null: not by time alone */
  afterDownMs: number | null;
  /** while the engine is down, a position this close to liquidation (percent of the mark) closes them */
  liquidationPct: number | null;
  /** while the engine is down, the account value this many percent below its level at the engine's death */
  drawdownPct: number | null;
  /** while the engine is down, a total notional above this (USD) */
  notionalCapUsd: number | null;
  /** a close pass that did not finish is tried again after this (ms) */
  retryMs: number;
};

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
  /** a close pass is out (`waiting`), due again after a pass that did not finish (`retry`), or none */
  closing: "idle" | "waiting" | "retry";
  /** close passes since the latch */
  passes: number;
};

export const initialEscalation = (): EscalationModel => ({
  downSinceMono: null,
  downCause: null,
  baseline: null,
  exposure: null,
  closing: "idle",
  passes: 0,
});

/** A pass reports at most this many orders to the machine (and so to the log and the audit trail). */
export const CLOSE_REPORTS_KEPT = 50;
