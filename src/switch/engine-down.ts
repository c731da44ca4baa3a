/**
 * The engine-down policy, a sub-reducer of the switch machine (docs/daemon.md "Engine guard"): `expedite` (one push
 * at the 5 s minimum, then none), `lapse` (no more pushes), `cancel` (cancel the open orders, one pass each
 * interval while the engine stays down, and keep renewing the schedule as the backstop; not confirmed: expedite).
 * A pass refused for the IP's weight or a transient error is tried again while the deadline the exchange holds
 * leaves time for the fall-back (`cancelRetryAt`); only then does it fall back, saying why.
 */
import type { EngineDownCause } from "../core/events.js";
import type { Ctx } from "./context.js";
import { drillEnd } from "./drill.js";
import { escalationEngine } from "./escalation.js";
import {
  BACKOFF_BASE_MS,
  type CancelFailure,
  type Event,
  EXPEDITE_LEAD_MS,
  lapseDeadline,
  RATE_LIMIT_BACKOFF_BASE_MS,
  reportedDeadline,
  type SwitchModel,
} from "./model.js";

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
  m.cancelRetries = 0;
  m.wake.cancel = null;
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
      ctx.effect({ kind: "cancelOrders", cancelStops: m.cfg.cancelStops });
    }
    return policy === "expedite";
  }
  ctx.becomeHolding({ unlessRefused: true });
  ctx.emit({ type: "engineUp", detail, action: policy, renewing });
  return true;
}

/**
 * When a refused pass is tried again, or null to fall back now. Tried again: a failed read (the open orders, meta)
 * whose kind the error policy says a new request may help (429, 5xx, no answer), or any request refused with 429 (the
 * IP's weight, shared with the engine and every client of the IP: it comes back within the minute). Backing off
 * from 2 s after a 429 (0.5 s otherwise), doubling. The last try must still leave room, before the earliest
 * deadline the exchange may hold, for the fall-back: a push at the 5 s minimum (EXPEDITE_LEAD_MS) within one
 * request time-out; a try takes up to two request time-outs (a read, then a cancel). Nothing armed: no room.
 */
export function cancelRetryAt(
  ctx: Ctx,
  failure: CancelFailure | undefined,
): { at: number; giveUpAt: number } | null {
  const m = ctx.m;
  if (!failure) return null;
  const limited = failure.kind === "rate_limited";
  if (!limited && !(failure.retryable && failure.request === "read")) return null;
  const deadline = lapseDeadline(m);
  if (deadline === null) return null;
  const timeout = m.cfg.requestTimeoutMs;
  const giveUpAt = ctx.now.mono + (deadline - ctx.now.wall) - EXPEDITE_LEAD_MS - timeout;
  const latest = giveUpAt - 2 * timeout;
  const base = limited ? RATE_LIMIT_BACKOFF_BASE_MS : BACKOFF_BASE_MS;
  const wanted = ctx.now.mono + base * 2 ** Math.min(m.cancelRetries, 20);
  const at = Math.min(wanted, latest);
  // one last try at the latest moment, never one sooner than a back-off's first step
  if (at < ctx.now.mono + base) return null;
  return { at, giveUpAt };
}

/** The canceller answered. Returns whether to push now (renew the backstop, or the expedite fallback). */
export function ordersCancelled(ctx: Ctx, ev: Extract<Event, { type: "ordersCancelled" }>): boolean {
  const m = ctx.m;
  const repeatRunning = m.ordersCancel === "confirmed" && m.cancelPass;
  // (a pass waiting to be tried again has no answer to give)
  if (m.engineUp || m.wake.cancel !== null || (m.ordersCancel !== "waiting" && !repeatRunning)) return false;
  // the pushes were held for this pass (the first, or one tried again): they resume once it is confirmed
  const held = m.ordersCancel === "waiting";
  m.cancelPass = false;
  const fields = {
    pass: m.cancelPasses,
    cancelled: ev.cancelled,
    kept: ev.kept,
    ...(ev.detail ? { detail: ev.detail } : {}),
  };
  if (ev.confirmed) {
    m.ordersCancel = "confirmed";
    m.cancelRetries = 0;
    ctx.emit({ type: "ordersCancelled", ...fields, repeat: m.cancelPasses > 1 });
    return held;
  }
  const weight = ev.weight !== undefined ? { weight: ev.weight } : {};
  const retry = m.phase.name === "running" ? cancelRetryAt(ctx, ev.failure) : null;
  if (retry !== null && ev.failure) {
    // Tried again: the pushes stay held (the deadline the exchange holds is the bound), nothing is spent yet.
    m.ordersCancel = "waiting";
    m.cancelRetries++;
    m.wake.cancel = retry.at;
    ctx.emit({
      type: "cancelRetry",
      ...fields,
      attempt: m.cancelRetries,
      reason: ev.failure.kind,
      request: ev.failure.request,
      retryInMs: Math.round(retry.at - ctx.now.mono),
      giveUpInMs: Math.max(0, Math.round(retry.giveUpAt - ctx.now.mono)),
      ...weight,
    });
    return false;
  }
  // Not confirmed: fall back to the expedite backstop (the exchange cancels at the 5 s minimum).
  m.ordersCancel = null;
  ctx.emit({
    type: "cancelFailed",
    ...fields,
    reason: ev.failure?.kind ?? "unconfirmed",
    retries: m.cancelRetries,
    ...weight,
  });
  m.cancelRetries = 0;
  return true;
}

/** A refused pass's wake-up is due: the same pass again (the pushes are still held for it). */
export function cancelRetryDue(ctx: Ctx) {
  const m = ctx.m;
  m.wake.cancel = null;
  if (
    m.phase.name !== "running" ||
    m.engineUp ||
    m.cfg.onEngineDown !== "cancel" ||
    m.ordersCancel !== "waiting"
  )
    return;
  ctx.effect({ kind: "cancelOrders", cancelStops: m.cfg.cancelStops });
}

/**
 * Engine down with policy `cancel`, after a confirmed cancel: orders placed since (the engine is down, a human
 * or another process is not) are cancelled again, one pass each interval, while the engine stays down.
 */
export function cancelAgain(ctx: Ctx) {
  const m = ctx.m;
  if (m.phase.name !== "running" || m.engineUp || m.cfg.onEngineDown !== "cancel") return;
  if (m.ordersCancel !== "confirmed" || m.cancelPass || m.agentReason !== null) return;
  m.cancelPass = true;
  m.cancelPasses++;
  ctx.effect({ kind: "cancelOrders", cancelStops: m.cfg.cancelStops });
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
