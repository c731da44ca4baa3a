/**
 * A HALTED account's closes held and resumed, the restart that stopped them, and the operator's kill
 * (src/escalation/; docs/daemon.md event table). Rows of the switch's one table (./index.ts `PUBLISH`).
 */
import { iso, line, type Rows, tok } from "./line.js";

type Types = "escalationResumed" | "closeStoppedAtRestart" | "killed" | "killRefused" | "killCancelled";

export const HALTED_ROWS: Rows<Types> = {
  escalationResumed: {
    log: (e) =>
      line(
        "error",
        "escalation.resumed",
        { rule: e.rule, reason: e.reason, pass: e.pass, held: e.held },
        `HALTED: the closes resume (pass ${e.pass}): the engine is down again and ${e.reason} (they were held: ${e.held})`,
      ),
  },
  closeStoppedAtRestart: {
    log: (e) =>
      line(
        "error",
        "escalation.stopped_at_restart",
        { pass: e.pass, since: e.since, reason: e.reason, remaining: e.remaining },
        `HALTED since ${iso(e.since)} (${e.reason}): closing stopped at restart (pass ${e.pass} was open)${e.remaining ? `; positions left at its last read: ${e.remaining}` : ""}; the closes resume when the engine is down and a rule holds; \`hl-deadman reset\` releases the account`,
      ),
  },
  killed: {
    log: (e) =>
      line(
        "error",
        "kill.started",
        {
          by: e.by,
          close: e.close,
          latched: e.latched,
          ...(e.detail ? { detail: e.detail } : {}),
          ...tok(e),
        },
        `KILL by ${e.by}: HALTED${e.latched ? "" : " (already)"}; cancelling every resting order${e.close ? " and closing the positions reduce-only" : ""}${e.detail ? ` (${e.detail})` : ""}; only \`hl-deadman reset\` releases the account`,
      ),
  },
  killRefused: {
    log: (e) =>
      line("warn", "kill.refused", { by: e.by, reason: e.reason }, `kill by ${e.by} refused: ${e.reason}`),
  },
  killCancelled: {
    log: (e) =>
      line(
        e.confirmed ? "warn" : "error",
        "kill.cancelled",
        {
          by: e.by,
          confirmed: e.confirmed,
          cancelled: e.cancelled,
          kept: e.kept,
          ...(e.detail ? { detail: e.detail } : {}),
        },
        `KILL by ${e.by}: ${e.cancelled} order(s) cancelled, ${e.kept} left${e.confirmed ? " (confirmed by a read)" : ` - NOT confirmed${e.detail ? `: ${e.detail}` : ""}`}`,
      ),
  },
};
