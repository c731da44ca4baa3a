/**
 * The engine-down policy, a sub-step of the switch machine (docs/daemon.md "Engine guard"): `expedite` (one push
 * at the 5 s minimum, then none), `lapse` (no more pushes), `cancel` (cancel the open orders, one pass each
 * interval while the engine stays down, and keep renewing the schedule as the backstop; not confirmed: expedite).
 * A pass refused for the IP's weight or a transient error is tried again while the deadline the exchange holds
 * leaves time for the fall-back (`cancelRetryAt`); only then does it fall back, saying why. Each returns what it
 * decides (context.ts `Decision`); the step applies it.
 */
import type { EngineDownCause } from "../core/events.js";
import type { Decision } from "./context.js";
import {
  BACKOFF_BASE_MS,
  type CancelFailure,
  type Event,
  EXPEDITE_LEAD_MS,
  lapseDeadline,
  type Now,
  RATE_LIMIT_BACKOFF_BASE_MS,
  reportedDeadline,
  type SwitchModel,
} from "./model.js";

/**
 * The guard's view of the engine changed: what the policy decides (the flags of the episode reset; down: the
 * retries dropped, `engine_down`, the first cancel pass under `cancel`, a push now under `expedite`; up: the
 * state it holds, a push now), or null when the view did not change. The escalation's and the drill's part of
 * the same event are the step's (machine.ts), taken before this is applied.
 */
export function engine(
  m: SwitchModel,
  up: boolean,
  detail: string | null,
  cause: EngineDownCause = "seen",
): Decision | null {
  if (up === m.engineUp) return null;
  // under `cancel`, a confirmed pass kept the schedule renewed through the death (engine.up says so)
  const renewing = m.ordersCancel === "confirmed";
  const policy = m.cfg.onEngineDown;
  const episode = {
    engineUp: up,
    expedited: false,
    ordersCancel: null,
    cancelPass: false,
    cancelPasses: 0,
    cancelRetries: 0,
  } as const;
  if (!up) {
    const cancel = policy === "cancel";
    return {
      set: {
        ...episode,
        retryAtMono: 0,
        ...(cancel ? { ordersCancel: "waiting", cancelPasses: 1 } : {}),
      },
      wake: { cancel: null, retry: null },
      become: { to: "engineDown", unlessRefused: true },
      events: [{ type: "engineDown", action: policy, detail, armedUntil: reportedDeadline(m), cause }],
      effects: cancel ? [{ kind: "cancelOrders", cancelStops: m.cfg.cancelStops }] : [],
      ...(policy === "expedite" ? { push: "engine-down" } : {}),
    };
  }
  return {
    set: episode,
    wake: { cancel: null },
    become: { to: "holding", unlessRefused: true },
    events: [{ type: "engineUp", detail, action: policy, renewing }],
    push: "engine-up",
  };
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
  m: SwitchModel,
  now: Now,
  failure: CancelFailure | undefined,
): { at: number; giveUpAt: number } | null {
  if (!failure) return null;
  const limited = failure.kind === "rate_limited";
  if (!limited && !(failure.retryable && failure.request === "read")) return null;
  const deadline = lapseDeadline(m);
  if (deadline === null) return null;
  const timeout = m.cfg.requestTimeoutMs;
  const giveUpAt = now.mono + (deadline - now.wall) - EXPEDITE_LEAD_MS - timeout;
  const latest = giveUpAt - 2 * timeout;
  const base = limited ? RATE_LIMIT_BACKOFF_BASE_MS : BACKOFF_BASE_MS;
  const wanted = now.mono + base * 2 ** Math.min(m.cancelRetries, 20);
  const at = Math.min(wanted, latest);
  // one last try at the latest moment, never one sooner than a back-off's first step
  if (at < now.mono + base) return null;
  return { at, giveUpAt };
}

/** The canceller answered: the pass confirmed, tried again, or fallen back; a push now to renew or expedite. */
export function ordersCancelled(
  m: SwitchModel,
  now: Now,
  ev: Extract<Event, { type: "ordersCancelled" }>,
): Decision {
  const repeatRunning = m.ordersCancel === "confirmed" && m.cancelPass;
  // (a pass waiting to be tried again has no answer to give)
  if (m.engineUp || m.wake.cancel !== null || (m.ordersCancel !== "waiting" && !repeatRunning)) return {};
  // the pushes were held for this pass (the first, or one tried again): they resume once it is confirmed
  const held = m.ordersCancel === "waiting";
  const fields = {
    pass: m.cancelPasses,
    cancelled: ev.cancelled,
    kept: ev.kept,
    ...(ev.detail ? { detail: ev.detail } : {}),
  };
  if (ev.confirmed)
    return {
      set: { cancelPass: false, ordersCancel: "confirmed", cancelRetries: 0 },
      events: [{ type: "ordersCancelled", ...fields, repeat: m.cancelPasses > 1 }],
      ...(held ? { push: "orders-cancelled" } : {}),
    };
  const weight = ev.weight !== undefined ? { weight: ev.weight } : {};
  const retry = m.phase.name === "running" ? cancelRetryAt(m, now, ev.failure) : null;
  if (retry !== null && ev.failure) {
    // Tried again: the pushes stay held (the deadline the exchange holds is the bound), nothing is spent yet.
    const attempt = m.cancelRetries + 1;
    return {
      set: { cancelPass: false, ordersCancel: "waiting", cancelRetries: attempt },
      wake: { cancel: retry.at },
      events: [
        {
          type: "cancelRetry",
          ...fields,
          attempt,
          reason: ev.failure.kind,
          request: ev.failure.request,
          retryInMs: Math.round(retry.at - now.mono),
          giveUpInMs: Math.max(0, Math.round(retry.giveUpAt - now.mono)),
          ...weight,
        },
      ],
    };
  }
  // Not confirmed: fall back to the expedite backstop (the exchange cancels at the 5 s minimum).
  return {
    set: { cancelPass: false, ordersCancel: null, cancelRetries: 0 },
    events: [
      {
        type: "cancelFailed",
        ...fields,
        reason: ev.failure?.kind ?? "unconfirmed",
        retries: m.cancelRetries,
        ...weight,
      },
    ],
    push: "orders-cancelled",
  };
}

/** A refused pass's wake-up is due: the same pass again (the pushes are still held for it). */
export function cancelRetryDue(m: SwitchModel): Decision {
  const again =
    m.phase.name === "running" &&
    !m.engineUp &&
    m.cfg.onEngineDown === "cancel" &&
    m.ordersCancel === "waiting";
  return {
    wake: { cancel: null },
    effects: again ? [{ kind: "cancelOrders", cancelStops: m.cfg.cancelStops }] : [],
  };
}

/**
 * Engine down with policy `cancel`, after a confirmed cancel: orders placed since (the engine is down, a human
 * or another process is not) are cancelled again, one pass each interval, while the engine stays down.
 */
export function cancelAgain(m: SwitchModel): Decision {
  if (m.phase.name !== "running" || m.engineUp || m.cfg.onEngineDown !== "cancel") return {};
  if (m.ordersCancel !== "confirmed" || m.cancelPass || m.agentReason !== null) return {};
  return {
    set: { cancelPass: true, cancelPasses: m.cancelPasses + 1 },
    effects: [{ kind: "cancelOrders", cancelStops: m.cfg.cancelStops }],
  };
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
