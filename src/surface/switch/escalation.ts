/**
 * The escalation (HALTED, its closes and the operator's reset) and the drill (switch/escalation.ts, drill.ts);
 * the kill's and the held closes' rows are in halted.ts.
 * Rows of the switch's one table (./index.ts `PUBLISH`).
 */
import { iso, line, type Rows, tok } from "./line.js";

type Types =
  | "escalated"
  | "escalationHeld"
  | "closeOrders"
  | "closeDone"
  | "closeIncomplete"
  | "haltReleased"
  | "resetRefused"
  | "drillRefused"
  | "drillStarted"
  | "drillDone";

export const ESCALATION_ROWS: Rows<Types> = {
  escalated: {
    log: (e) =>
      line(
        "error",
        "escalation.halted",
        { rule: e.rule, reason: e.reason, ...tok(e) },
        `HALTED: ${e.reason}; cancelling the open orders and closing the positions reduce-only. The switch keeps pushing; only \`hl-deadman reset\` releases the account`,
      ),
  },
  escalationHeld: {
    log: (e) =>
      line(
        e.rule === "halted" ? "error" : "warn",
        "escalation.held",
        { rule: e.rule, reason: e.reason, gate: e.gate },
        `escalation held, not closing here: ${e.reason}; ${e.gate}`,
      ),
  },
  closeOrders: {
    log: (e) =>
      line(
        "warn",
        "escalation.close_orders",
        { pass: e.pass, orders: e.orders, ...tok(e) },
        `HALTED: ${e.orders.length} reduce-only close order(s) in pass ${e.pass}: ${e.orders.map((o) => `${o.side} ${o.size} ${o.coin} @ ${o.price} ${o.status}`).join("; ")}`,
      ),
  },
  closeDone: {
    log: (e) =>
      line(
        "warn",
        "escalation.closed",
        { pass: e.pass, orders: e.orders, filledUsd: e.filledUsd, dust: e.dust },
        `HALTED: the positions are closed (pass ${e.pass}, ${e.orders} order(s), ${e.filledUsd} USD filled${e.dust > 0 ? `, ${e.dust} position(s) left as dust below the $10 minimum` : ""})`,
      ),
    metrics: (m, account) => m.closePasses.inc({ account, outcome: "flat" }),
  },
  closeIncomplete: {
    log: (e) =>
      line(
        "error",
        "escalation.close_incomplete",
        {
          pass: e.pass,
          orders: e.orders,
          filledUsd: e.filledUsd,
          refusal: e.refusal,
          detail: e.detail,
          retryInMs: e.retryInMs,
        },
        `HALTED: the positions are not closed yet (pass ${e.pass}${e.refusal ? `, ${e.refusal}` : ""}${e.detail ? `: ${e.detail}` : ""}); ${e.retryInMs === null ? "no retry while the engine is up: the closes are held" : `trying again in ${Math.round(e.retryInMs / 1000)} s`}`,
      ),
    metrics: (m, account) => m.closePasses.inc({ account, outcome: "incomplete" }),
  },
  haltReleased: {
    log: (e) =>
      line(
        "warn",
        "escalation.reset",
        { by: e.by, since: e.since, reason: e.reason, ...tok(e) },
        `HALTED released by ${e.by} (halted since ${iso(e.since)}: ${e.reason})`,
      ),
  },
  resetRefused: {
    log: (e) =>
      line("warn", "escalation.reset_refused", { by: e.by, reason: e.reason }, `reset refused: ${e.reason}`),
  },
  drillRefused: {
    log: (e) =>
      line(
        "warn",
        "drill.refused",
        { id: e.id, by: e.by, reason: e.reason },
        `drill ${e.id} refused: ${e.reason}`,
      ),
  },
  drillStarted: {
    log: (e) =>
      line(
        "warn",
        "drill.started",
        { id: e.id, by: e.by, triggersLeft: e.triggersLeft, ...tok(e) },
        `drill ${e.id} by ${e.by}: a resting order far from the market, then a cancel a few seconds ahead; it spends 1 of the ${e.triggersLeft} trigger(s) left today`,
      ),
  },
  drillDone: {
    log: (e) =>
      line(
        e.fired ? "warn" : "error",
        e.fired ? "drill.passed" : "drill.failed",
        {
          id: e.id,
          by: e.by,
          fired: e.fired,
          status: e.status,
          statusTimestamp: e.statusTimestamp,
          cancelAt: e.cancelAt,
          detail: e.detail,
        },
        `drill ${e.id}: ${e.detail}; pushing again`,
      ),
  },
};
