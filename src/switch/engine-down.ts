/**
 * The engine-down policy, a sub-reducer of the switch machine (docs/daemon.md "Engine guard"): `expedite` (one push
 * at the 5 s minimum, then none), `lapse` (no more pushes), `cancel` (cancel the open orders, one pass each
 * interval while the engine stays down, and keep renewing the schedule as the backstop; not confirmed: expedite).
 */
import type { EngineDownCause } from "../core/events.js";
import type { Ctx } from "./context.js";
import { drillEnd } from "./drill.js";
import { escalationEngine } from "./escalation.js";
import { type Event, reportedDeadline, type SwitchModel } from "./model.js";

/** The guard's view of the engine changed. Returns whether to push now (an expedite, or the engine back). */
export function engine(
  ctx: Ctx,
  up: boolean,
  detail: string | null,
  cause: EngineDownCause = "seen",
): boolean {
  const m = ctx.m;
  if (up === m.engineUp) return false;
  // under `cancel`, a confirmed pass kept the schedule renewed through the death (engine.up says so)
  const renewing = m.ordersCancel === "confirmed";
  m.engineUp = up;
  m.expedited = false;
  m.ordersCancel = null;
  m.cancelPass = false;
  m.cancelPasses = 0;
  const policy = m.cfg.onEngineDown;
  escalationEngine(ctx, up, cause);
  if (!up) {
    drillEnd(ctx, {
      fired: false,
      status: null,
      statusTimestamp: null,
      detail: "the engine went down during the drill",
    });
    m.wake.retry = null;
    m.retryAtMono = 0;
    ctx.becomeEngineDown({ unlessRefused: true });
    ctx.emit({ type: "engineDown", action: policy, detail, armedUntil: reportedDeadline(m), cause });
    if (policy === "cancel") {
      m.ordersCancel = "waiting";
      m.cancelPasses = 1;
      ctx.ready.cancelOrders = { cancelStops: m.cfg.cancelStops };
    }
    return policy === "expedite";
  }
  ctx.becomeHolding({ unlessRefused: true });
  ctx.emit({ type: "engineUp", detail, action: policy, renewing });
  return true;
}

/** The canceller answered. Returns whether to push now (renew the backstop, or the expedite fallback). */
export function ordersCancelled(ctx: Ctx, ev: Extract<Event, { type: "ordersCancelled" }>): boolean {
  const m = ctx.m;
  const pass = m.ordersCancel === "confirmed" && m.cancelPass;
  if (m.engineUp || (m.ordersCancel !== "waiting" && !pass)) return false;
  m.cancelPass = false;
  const fields = {
    pass: m.cancelPasses,
    cancelled: ev.cancelled,
    kept: ev.kept,
    ...(ev.detail ? { detail: ev.detail } : {}),
  };
  if (ev.confirmed) {
    m.ordersCancel = "confirmed";
    ctx.emit({ type: "ordersCancelled", ...fields, repeat: pass });
    return !pass;
  }
  // Not confirmed: fall back to the expedite backstop (the exchange cancels at the 5 s minimum).
  m.ordersCancel = null;
  ctx.emit({ type: "cancelFailed", ...fields });
  return true;
}

/**
 * Engine down with policy `cancel`, after a confirmed cancel: orders placed since (the engine is down, a human
 * or another process is not) are cancelled again, one pass each interval, while the engine stays down.
 */
export function cancelAgain(ctx: Ctx) {
  const m = ctx.m;
  if (m.phase !== "running" || m.engineUp || m.cfg.onEngineDown !== "cancel") return;
  if (m.ordersCancel !== "confirmed" || m.cancelPass || m.agentReason !== null) return;
  m.cancelPass = true;
  m.cancelPasses++;
  ctx.ready.cancelOrders = { cancelStops: m.cfg.cancelStops };
}

/**
 * Whether the engine-down policy holds the pushes now: `lapse`, or `expedite` once its one push is done; `cancel`
 * while the canceller runs (once it confirmed, the schedule is renewed as before, the backstop should the daemon
 * die too, so it never fires on the kept stops nor spends a trigger).
 */
export function engineHoldsPushes(m: SwitchModel): boolean {
  if (m.engineUp) return false;
  if (m.cfg.onEngineDown === "lapse" || m.expedited) return true;
  return m.cfg.onEngineDown === "cancel" && m.ordersCancel === "waiting";
}

/** A full deadline while the engine is up or its orders are cancelled; else the expedite (the 5 s minimum). */
export function pushMode(m: SwitchModel): "arm" | "expedite" {
  return m.engineUp || m.ordersCancel === "confirmed" ? "arm" : "expedite";
}
