/**
 * Protection status, a sub-step of the switch machine: NOT PROTECTED while the exchange refuses the switch for
 * the account (a permanent kind, re-checked every permanentRecheckMs) or the agent wallet is missing or expired;
 * protected again once a push is accepted or the agent is valid. Its gauge follows each reason. Each returns what
 * it decides (context.ts `Decision`); the step applies it.
 */
import { type Ctx, type Decision, notProtectedGauge } from "./context.js";
import type { SwitchModel } from "./model.js";

/** The agent wallet's validity: valid again, protected and a push now; missing or expired, NOT PROTECTED. */
export function agent(
  m: SwitchModel,
  state: "ok" | "missing" | "expired",
  detail: string | undefined,
): Decision {
  if (state === "ok") {
    if (m.agentReason === null) return {};
    return {
      set: { agentReason: null, notProtectedReason: null },
      become: { to: "holding" },
      events: [
        notProtectedGauge(m.agentReason, 0),
        { type: "protected", previousReason: m.agentReason, by: "agent" },
      ],
      push: "agent-ok",
    };
  }
  const reason = state === "missing" ? "agent_missing" : "agent_expired";
  if (m.agentReason === reason) return {};
  return {
    set: { agentReason: reason, notProtectedReason: reason },
    become: { to: "notProtected" },
    events: [
      ...(m.notProtectedReason !== null && m.notProtectedReason !== reason
        ? [notProtectedGauge(m.notProtectedReason, 0)]
        : []),
      notProtectedGauge(reason, 1),
      { type: "agentInvalid", reason, state, ...(detail ? { message: detail } : {}) },
    ],
  };
}

/**
 * The exchange refused the switch for this account (a permanent kind): NOT PROTECTED, re-checked slowly.
 * `first`: the refusal is new (not the one already said).
 */
export function exchangeRefuses(
  m: SwitchModel,
  kind: string,
  nowMono: number,
): Decision & { first: boolean } {
  const first = m.notProtectedReason !== kind;
  return {
    first,
    set: { notProtectedReason: kind, nextPermanentCheckMono: nowMono + m.cfg.permanentRecheckMs },
    become: { to: "notProtected" },
    events: [
      ...(m.notProtectedReason !== null && first ? [notProtectedGauge(m.notProtectedReason, 0)] : []),
      notProtectedGauge(kind, 1),
    ],
  };
}

/** The exchange accepted a push: protected again, whatever refused it before. */
export function exchangeAccepts(m: SwitchModel): Decision {
  if (m.notProtectedReason === null) return {};
  return {
    set: { notProtectedReason: null },
    events: [
      notProtectedGauge(m.notProtectedReason, 0),
      { type: "protected", previousReason: m.notProtectedReason, by: "exchange" },
    ],
  };
}

/** Not protected after a permanent refusal: no push until the slow re-check is due. */
export function recheckPending(ctx: Ctx): boolean {
  return ctx.m.state === "not_protected" && ctx.now.mono < ctx.m.nextPermanentCheckMono;
}
