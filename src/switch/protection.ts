/**
 * Protection status, a sub-reducer of the switch machine: NOT PROTECTED while the exchange refuses the switch for
 * the account (a permanent kind, re-checked every permanentRecheckMs) or the agent wallet is missing or expired;
 * protected again once a push is accepted or the agent is valid. Its gauge follows each reason.
 */
import type { Ctx } from "./context.js";

/** The agent wallet's validity. Returns whether to push now (valid again). */
export function agent(ctx: Ctx, state: "ok" | "missing" | "expired", detail: string | undefined): boolean {
  const m = ctx.m;
  if (state === "ok") {
    if (m.agentReason === null) return false;
    ctx.notProtectedGauge(m.agentReason, 0);
    ctx.emit({ type: "protected", previousReason: m.agentReason, by: "agent" });
    m.agentReason = null;
    m.notProtectedReason = null;
    ctx.becomeHolding();
    return true;
  }
  const reason = state === "missing" ? "agent_missing" : "agent_expired";
  if (m.agentReason === reason) return false;
  if (m.notProtectedReason !== null && m.notProtectedReason !== reason)
    ctx.notProtectedGauge(m.notProtectedReason, 0);
  m.agentReason = reason;
  m.notProtectedReason = reason;
  ctx.becomeNotProtected();
  ctx.notProtectedGauge(reason, 1);
  ctx.emit({ type: "agentInvalid", reason, state, ...(detail ? { message: detail } : {}) });
  return false;
}

/** The exchange refused the switch for this account (a permanent kind): NOT PROTECTED, re-checked slowly. */
export function exchangeRefuses(ctx: Ctx, kind: string): boolean {
  const m = ctx.m;
  const first = m.notProtectedReason !== kind;
  if (m.notProtectedReason !== null && first) ctx.notProtectedGauge(m.notProtectedReason, 0);
  m.notProtectedReason = kind;
  ctx.becomeNotProtected();
  m.nextPermanentCheckMono = ctx.now.mono + m.cfg.permanentRecheckMs;
  ctx.notProtectedGauge(kind, 1);
  return first;
}

/** The exchange accepted a push: protected again, whatever refused it before. */
export function exchangeAccepts(ctx: Ctx) {
  const m = ctx.m;
  if (m.notProtectedReason === null) return;
  ctx.notProtectedGauge(m.notProtectedReason, 0);
  ctx.emit({ type: "protected", previousReason: m.notProtectedReason, by: "exchange" });
  m.notProtectedReason = null;
}

/** Not protected after a permanent refusal: no push until the slow re-check is due. */
export function recheckPending(ctx: Ctx): boolean {
  return ctx.m.state === "not_protected" && ctx.now.mono < ctx.m.nextPermanentCheckMono;
}
