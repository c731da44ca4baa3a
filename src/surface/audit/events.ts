/**
 * Which of the daemon's events the audit trail keeps, and as what (docs/operations.md, "The audit trail"). The
 * trail keeps every change of protection and every action on the account's orders, not every push: a push that
 * only moves the deadline forward is routine and is in the log and the metrics; likewise a repeat cancel pass that
 * cancelled nothing.
 */
import type { DaemonEvent } from "../../core/events.js";
import type { AuditEntry } from "./record.js";

const pick = (e: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (e[k] !== undefined) out[k] = e[k];
  return out;
};

/** The switch's event types the trail keeps, with the record type and the fields it copies. */
const SWITCH: Readonly<Record<string, readonly [type: string, fields: readonly string[]]>> = {
  triggerCounted: [
    "switch.fired",
    ["deadline", "triggersToday", "triggerLimit", "triggersLeft", "day", "forDay", "detail"],
  ],
  limitReached: ["switch.exhausted", ["triggersToday", "triggerLimit", "resumesAt", "why", "message"]],
  limitReset: ["switch.limit-reset", ["day", "triggersToday"]],
  // issue 40: a ledger day a wrong clock wrote ahead of the verified time, set back
  dayRepaired: ["ledger.day-repaired", ["from", "to", "triggersToday"]],
  // and its last verified time (the ledger's updatedAt) ahead of the verified time, no longer believed
  timeFloorRepaired: ["clock.floor-repaired", ["from", "to"]],
  notProtected: ["switch.not-protected", ["reason", "message"]],
  protected: ["switch.protected-again", ["previousReason", "by"]],
  recovered: ["switch.recovered", ["outageMs"]],
  engineDown: ["engine.down", ["action", "detail", "armedUntil"]],
  engineUp: ["engine.up", ["action", "detail"]],
  ordersCancelled: ["cancel.done", ["pass", "cancelled", "kept", "repeat", "detail"]],
  cancelFailed: ["cancel.failed", ["pass", "cancelled", "kept", "detail"]],
  removed: ["switch.removed", ["previousDeadline", "token"]],
  kept: ["switch.kept", ["armedUntil", "reason"]],
  removalFailed: ["switch.removal-failed", ["reason", "message", "armedUntil"]],
  removalSkipped: ["switch.removal-skipped", ["reason", "message"]],
  escalated: ["escalation.halted", ["rule", "reason", "token"]],
  closeOrders: ["escalation.close-orders", ["pass", "orders", "token"]],
  closeDone: ["escalation.closed", ["pass", "orders", "filledUsd", "dust"]],
  closeIncomplete: [
    "escalation.close-incomplete",
    ["pass", "orders", "filledUsd", "refusal", "detail", "retryInMs"],
  ],
  haltReleased: ["escalation.reset", ["by", "since", "reason", "token"]],
  resetRefused: ["escalation.reset-refused", ["by", "reason"]],
  escalationHeld: ["escalation.held", ["rule", "reason", "gate"]],
  escalationResumed: ["escalation.resumed", ["rule", "reason", "pass", "held"]],
  closeStoppedAtRestart: ["escalation.stopped-at-restart", ["pass", "since", "reason", "remaining"]],
  killed: ["kill.started", ["by", "close", "latched", "detail", "token"]],
  killRefused: ["kill.refused", ["by", "reason"]],
  killCancelled: ["kill.cancelled", ["by", "confirmed", "cancelled", "kept", "detail"]],
  drillStarted: ["drill.started", ["id", "by", "triggersLeft", "token"]],
  drillRefused: ["drill.refused", ["id", "by", "reason"]],
  drillDone: ["drill.done", ["id", "by", "fired", "status", "statusTimestamp", "cancelAt", "detail"]],
};

/**
 * A bus subscriber that turns the events worth keeping into audit entries. The switch's `armedUntil` gauge is
 * published on every change of the deadline; only its edges (nothing armed → armed, armed → nothing) are changes
 * of protection, so the subscriber remembers, per account, whether the last value was armed.
 */
export function auditSubscriber(append: (entry: AuditEntry) => void): (event: DaemonEvent) => void {
  const armed = new Map<string, boolean>();
  return (event) => {
    if (event.module !== "switch") return;
    const e = event as Readonly<Record<string, unknown>> & { type: string; account: string };
    if (e.type === "gauge" && e.name === "armedUntil") {
      const now = e.value !== null;
      const before = armed.get(e.account) ?? false;
      armed.set(e.account, now);
      if (now !== before)
        append({
          type: now ? "switch.armed" : "switch.disarmed",
          account: e.account,
          data: { armedUntil: e.value },
        });
      return;
    }
    if (e.type === "pushFailed") {
      // a refusal stops the pushes (the exchange's daily limit or a permanent refusal): a change of protection
      if (e.refused === true)
        append({
          type: "switch.refused",
          account: e.account,
          data: pick(e, ["reason", "message", "armedUntil"]),
        });
      return;
    }
    // A death's cancel passes: the first pass (what it cancelled, even nothing) is the edge; a repeat pass, one each
    // interval while the engine stays down, is kept only when it cancelled something (an order placed since). Kept
    // all, an engine down for a day would add 5,760 records an account at 15 s, and hide the ones that matter.
    if (e.type === "ordersCancelled" && e.repeat === true && !(Number(e.cancelled) > 0)) return;
    const rule = SWITCH[e.type];
    if (rule) append({ type: rule[0], account: e.account, data: pick(e, rule[1]) });
  };
}
