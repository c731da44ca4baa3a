/**
 * The stop (docs/daemon.md "Stopping"): `shutdown` ends the drill and enters stopping; the stopping phase's step
 * waits for the push in flight and the unknown outcome's gate, then keeps the schedule (asked to, or refused by
 * the coordination) or removes it and answers how the removal went; the stopped phase's step sends nothing more
 * and only records the answer of a push a halt left out.
 */

import { confirmedPush, failedPush, wokenDue } from "./answers.js";
import type { Ctx } from "./context.js";
import { gateToken, removalRefusal } from "./coordination.js";
import { drill } from "./features.js";
import { withRemoval } from "./ledger-model.js";
import {
  type Event,
  gateUntil,
  inflight,
  reportedDeadline,
  type SwitchModel,
  VOLUME_GATE_USD,
} from "./model.js";
import { stepShared } from "./shared.js";
import { checkLapse } from "./triggers.js";

/** Stopping: the stop waits for the push in flight and the gate, then removes (or keeps) the schedule. */
export function stepStopping(s: Ctx, ev: Event) {
  switch (ev.type) {
    case "tick":
      // a deadline that passes while the removal waits has fired
      s.apply(checkLapse(s.m, s.now, s.times));
      return;
    case "wake": {
      const { due, decision } = wokenDue(s.m, s.now, s.times);
      s.apply(decision);
      const { lapse, retry, gate } = due;
      if (gate) return continueShutdown(s);
      if (lapse || retry) s.apply(checkLapse(s.m, s.now, s.times));
      return;
    }
    case "removalConfirmed":
      return removalConfirmed(s);
    case "removalFailed":
      return removalFailed(s, ev);
    // the stop waits for the push in flight: answered, it goes on
    case "pushConfirmed":
      if (confirmedPush(s, ev) === null) return;
      s.armLapseTimer();
      return continueShutdown(s);
    case "syncFailed":
    case "pushFailed":
      if (failedPush(s, ev) === null) return;
      return continueShutdown(s);
    default:
      return stepShared(s, ev);
  }
}

/** Stopped (halted, or a stop done): nothing more is sent; what the exchange holds stays as it is. */
export function stepStopped(s: Ctx, ev: Event) {
  switch (ev.type) {
    case "shutdown":
      s.ready.done = {
        account: s.m.cfg.account,
        outcome: ev.mode === "keep" ? "kept" : "skipped",
        reason: "stopped",
      };
      return;
    // a halt still records the answer of the push it left out
    case "pushConfirmed":
      if (confirmedPush(s, ev) !== null) s.armLapseTimer();
      return;
    case "syncFailed":
    case "pushFailed":
      failedPush(s, ev);
      return;
    default:
      return stepShared(s, ev);
  }
}

/** A stop asked for: the drill ends, the switch enters stopping, and goes on at once unless a push is out. */
export function shutdown(s: Ctx, mode: "remove" | "keep") {
  const m = s.m;
  s.apply(drill(m, s.now, s.times, { type: "end", detail: "the daemon is stopping" }));
  m.shutdownMode = mode;
  s.apply({ become: { to: "stopping" } });
  if (!inflight(m)) continueShutdown(s);
}

function continueShutdown(s: Ctx) {
  const m = s.m;
  if (m.phase.name !== "stopping" || m.phase.pipe.kind === "sending" || m.phase.pipe.kind === "removing")
    return;
  s.apply(checkLapse(s.m, s.now, s.times));
  // Asked to remove, a coordinated replica keeps the schedule while another replica is alive (it pushes on), while
  // another's lease expired without its stopped mark (dead or cut off: etcd cannot tell), or while etcd cannot say
  // (coordination.ts): a kept schedule fails safe, a removal under a replica still pushing would not.
  const refusal = m.shutdownMode === "keep" ? null : removalRefusal(m);
  if (m.shutdownMode === "keep" || refusal !== null) {
    const armedUntil = reportedDeadline(m);
    s.apply({ become: { to: "stopped" } });
    s.emit({ type: "kept", armedUntil, ...(refusal !== null ? { reason: refusal } : {}) });
    s.ready.done = {
      account: m.cfg.account,
      outcome: "kept",
      ...(refusal !== null ? { reason: "coordination", message: refusal } : {}),
    };
    return;
  }
  // An attempt with unknown outcome could still land: remove only after it can no longer.
  if (s.now.mono < gateUntil(m)) {
    m.wake.gate = gateUntil(m);
    return;
  }
  s.apply({ become: { to: "removing" } });
  s.effect({ kind: "removal", expiresAfterMs: m.cfg.requestTimeoutMs });
}

function removalConfirmed(s: Ctx) {
  const m = s.m;
  if (m.phase.pipe.kind !== "removing") return;
  s.apply(checkLapse(s.m, s.now, s.times)); // a deadline that passed before the removal landed fired
  const previous = m.entry.armedUntil;
  m.entry = withRemoval(m.entry, s.now.wall, m.cfg.historySize);
  s.apply({ become: { to: "stopped" } });
  s.persist = true;
  s.emit({ type: "removed", previousDeadline: previous, ...tokenField(m) });
  s.ready.done = { account: m.cfg.account, outcome: "removed" };
}

function removalFailed(s: Ctx, ev: Extract<Event, { type: "removalFailed" }>) {
  const m = s.m;
  if (m.phase.pipe.kind !== "removing") return;
  s.apply(checkLapse(s.m, s.now, s.times));
  s.apply({ become: { to: "stopped" } });
  const account = m.cfg.account;
  const skipped = { account, outcome: "skipped" as const, reason: ev.kind, message: ev.message };
  const v = ev.cumulativeVolume;
  if (ev.kind === "volume_gate" && typeof v === "number" && Number.isFinite(v) && v < VOLUME_GATE_USD) {
    // Below the exchange's volume gate no schedule can have been set: there is nothing to remove.
    m.entry = withRemoval(m.entry, s.now.wall, m.cfg.historySize);
    s.persist = true;
    s.emit({ type: "nothingArmed", reason: ev.kind, message: ev.message, belowVolumeGate: true });
    s.ready.done = skipped;
    return;
  }
  if (ev.permanent && m.notProtectedReason !== null && m.entry.armedUntil === null) {
    s.emit({ type: "removalSkipped", reason: ev.kind, message: ev.message });
    s.ready.done = skipped;
    return;
  }
  if (
    m.entry.armedUntil === null &&
    m.entry.pendingUntil === null &&
    m.entry.pendingLatest === null &&
    inflight(m) === null
  ) {
    // No push was ever accepted nor left without an answer: the exchange holds no schedule of ours to remove.
    s.emit({ type: "nothingArmed", reason: ev.kind, message: ev.message, belowVolumeGate: false });
    s.ready.done = skipped;
    return;
  }
  s.emit({
    type: "removalFailed",
    reason: ev.kind,
    message: ev.message,
    armedUntil: reportedDeadline(m),
  });
  s.ready.done = { account, outcome: "failed", reason: ev.kind, message: ev.message };
}

/** The fencing token field of a gated action's event (none without coordination). */
function tokenField(m: SwitchModel): { token?: string } {
  const token = gateToken(m);
  return token === undefined ? {} : { token };
}
