/**
 * The running switch (docs/daemon.md "The switch machine"): the start, the running phase's step (the interval,
 * the wake-ups, the push answers, the stop), the decision to push (`kick`) and what a failed push means while
 * running (`failing`): counted, said, retried or held as its kind says.
 */
import { nextUtcMidnight } from "../core/clock.js";
import { confirmedPush, type Failed, failedPush, wokenDue } from "./answers.js";
import type { Ctx } from "./context.js";
import { cancelAgain, engineHoldsPushes, pushMode } from "./engine-down.js";
import { MIN_PLAUSIBLE_MS } from "./exchange-time.js";
import { drill, escalation, featurePushLead, featuresHoldPushes } from "./features.js";
import { isExhausted, limitRefused, withIntent, withLimitReached } from "./ledger-model.js";
import {
  BACKOFF_BASE_MS,
  type Event,
  EXPEDITE_LEAD_MS,
  gateUntil,
  type Inflight,
  lapseDeadline,
  OWN_PUSHES_KEPT,
  RATE_LIMIT_BACKOFF_BASE_MS,
  reportedDeadline,
} from "./model.js";
import { exchangeRefuses, recheckPending } from "./protection.js";
import { stepShared } from "./shared.js";
import { shutdown } from "./stopping.js";
import { checkLapse, exhausted, limitHolds, limitReached, limitReset, limitSuspected } from "./triggers.js";
import { writeAhead } from "./write-ahead.js";

/** New: nothing is out until the start (or a stop before it); what every phase takes alike, shared.ts. */
export function stepStarting(s: Ctx, ev: Event) {
  if (ev.type === "start") return start(s);
  if (ev.type === "shutdown") return shutdown(s, ev.mode);
  return stepShared(s, ev);
}

/** Running: the interval, the wake-ups, the push answers and the stop; what every phase takes alike, shared.ts. */
export function stepRunning(s: Ctx, ev: Event) {
  switch (ev.type) {
    case "tick":
      s.apply(checkLapse(s.m, s.now, s.times));
      s.apply(cancelAgain(s.m));
      s.apply(escalation(s.m, s.now, s.times, { type: "check" }));
      return kick(s, "interval");
    case "wake": {
      const { due, decision } = wokenDue(s.m, s.now, s.times);
      s.apply(decision);
      const { lapse, retry, gate } = due;
      if (!lapse && !retry && !gate) return;
      s.apply(checkLapse(s.m, s.now, s.times));
      return kick(s, lapse ? "lapsed" : retry ? "retry" : "gate");
    }
    case "shutdown":
      return shutdown(s, ev.mode);
    case "pushConfirmed": {
      const a = confirmedPush(s, ev);
      if (a === null) return;
      if (a.push.mode === "expedite" || !s.m.engineUp) s.apply({ become: { to: "engineDown" } });
      else s.apply({ become: { to: "armed" } });
      if (a.again) kick(s, "after-inflight");
      return;
    }
    case "syncFailed":
    case "pushFailed": {
      const a = failedPush(s, ev);
      if (a === null) return;
      failing(s, a);
      if (a.again) kick(s, "after-inflight");
      return;
    }
    default:
      return stepShared(s, ev);
  }
}

function start(s: Ctx) {
  const m = s.m;
  s.apply({ become: { to: "running" } });
  const e = m.entry;
  if (e.pendingUntil !== null) {
    s.emit({ type: "pendingAtStart", pendingUntil: e.pendingUntil, confirmedUntil: e.armedUntil });
  }
  if (e.assumed) {
    s.emit({ type: "ledgerAssumed", triggersToday: e.triggersToday, triggerLimit: e.limit });
  }
  s.apply(escalation(m, s.now, s.times, { type: "start" }));
  s.apply(checkLapse(s.m, s.now, s.times, "the deadline passed while the daemon was down"));
  if (m.state === "starting" && m.entry.armedUntil !== null && m.entry.pendingUntil === null)
    s.apply({ become: { to: "armed" } });
  else if (m.state === "starting" && lapseDeadline(m) !== null) s.armLapseTimer();
  if (isExhausted(m.entry) && m.state !== "exhausted")
    s.apply(
      exhausted(m, s.now, limitRefused(m.entry) ? "from the ledger" : "the exchange's orders prove it"),
    );
  else if (!m.entry.assumed) s.apply(limitSuspected(m));
  kick(s, "start");
}

/**
 * Decides whether to push now, and starts one: the intent persisted with mustSync, then the request. Outside the
 * running phase nothing is pushed.
 */
export function kick(s: Ctx, reason: string) {
  const m = s.m;
  if (m.phase.name !== "running") return;
  if (m.phase.pipe.kind === "sending") {
    if (reason !== "interval") s.apply({ become: { to: "sending", push: m.phase.pipe.push, again: true } });
    return;
  }
  s.apply(limitReset(m));
  // What may hold a push: the agent, the engine-down policy, a permanent refusal until its re-check, the
  // exchange's own daily-limit refusal (no count does), the unknown-outcome gate, a retry's back-off.
  if (m.agentReason !== null || engineHoldsPushes(m) || featuresHoldPushes(m) || recheckPending(s)) return;
  if (limitHolds(s)) return s.apply({ become: { to: "exhausted", unlessRefused: true } });
  const e = m.entry;
  if (s.now.mono < gateUntil(m)) {
    m.wake.gate = gateUntil(m);
    return;
  }
  if (reason === "interval" && s.now.mono < m.retryAtMono) return;
  // a feature's push (the drill's) has its own lead
  const featureLead = featurePushLead(m);
  const mode: Inflight["mode"] = featureLead !== null ? "drill" : pushMode(m);
  const lead = featureLead ?? (mode === "arm" ? m.cfg.deadlineMs : EXPEDITE_LEAD_MS);
  // Planned on the verified time, or while nothing is verified on the earliest candidate: the schedule is then
  // never more than deadline + one interval ahead of the exchange's time under any candidate (issue 40). The
  // exchange's 5 s minimum is kept on the latest candidate as far as that bound allows; beyond it the exchange's
  // answer says which candidate was right (a too-early or expired refusal rules the earliest out).
  const plan = Math.floor(s.times.plan);
  let cancelAt = plan + lead;
  if (!s.times.witnessed && s.times.latest > s.times.plan)
    cancelAt = Math.max(
      cancelAt,
      Math.min(Math.floor(s.times.latest) + EXPEDITE_LEAD_MS, plan + m.cfg.deadlineMs + m.cfg.intervalMs),
    );
  // Nor does a push move the confirmed deadline earlier but by the operator's policy (an expedite, the drill): the
  // one planned while nothing was verified, up to deadline + interval ahead, is kept by the next once the time is
  // verified, as long as it stays within that bound (invariant 3: a push for 15 s less right after `clock.verified`).
  const held = e.armedUntil;
  if (
    mode === "arm" &&
    held !== null &&
    cancelAt < held &&
    held <= plan + m.cfg.deadlineMs + m.cfg.intervalMs
  )
    cancelAt = held;
  const id = m.nextId++;
  const push = {
    id,
    cancelAt,
    mode,
    askedMono: s.now.mono,
    synced: true,
    previousPending: e.pendingUntil,
    planMs: plan,
  };
  s.apply({ become: { to: "sending", push } });
  m.ownSent = [...m.ownSent, cancelAt].slice(-OWN_PUSHES_KEPT);
  m.entry = withIntent(e, cancelAt);
  // Write-ahead: the request leaves only once the intent is durable, unless the file already says as much.
  const ahead = writeAhead(s, m.entry);
  m.disk = ahead.disk;
  if (ahead.sync) s.syncFirst();
  s.effect({ kind: "push", id, cancelAt, expiresAfterMs: m.cfg.requestTimeoutMs });
}

/** A failed push while running: counted, said, and retried (or held) as the failure's kind says. */
function failing(s: Ctx, { ev, push: f, neverLeft }: Failed) {
  const m = s.m;
  m.consecutiveFailures++;
  m.failingSinceMono ??= s.now.mono;
  m.lastError = { kind: ev.kind, message: ev.message };
  if (f.mode === "expedite") m.expedited = true; // one expedite per engine-down episode (docs/daemon.md)
  if (f.mode === "drill")
    s.apply(
      drill(m, s.now, s.times, {
        type: "pushFailed",
        cancelAt: f.cancelAt,
        outcomeUnknown: ev.outcomeUnknown && !neverLeft,
        message: ev.message,
      }),
    );
  const base = {
    type: "pushFailed" as const,
    reason: ev.kind,
    message: ev.message,
    consecutiveFailures: m.consecutiveFailures,
  };

  if (ev.permanent) {
    const refusal = exchangeRefuses(m, ev.kind, s.now.mono);
    s.apply(refusal);
    const first = refusal.first;
    s.emit({ ...base, refused: true });
    if (first)
      s.emit({
        type: "notProtected",
        reason: ev.kind,
        message: ev.message,
        recheckInMs: m.cfg.permanentRecheckMs,
      });
    m.wake.retry = m.nextPermanentCheckMono;
    return;
  }

  if (ev.kind === "daily_limit") {
    // Dated no later than the day clock (the earlier of two disagreeing clocks) nor the ledger's day, and, while
    // no answer has verified this run's clock, at the last verified time (the exchange's time is known to be
    // no earlier): a clock stepped past 00:00, or a restart on one, must not date the refusal on a day the
    // exchange has not reached, which would hold the pushes through the exchange's next day (the hold lasts
    // while both clocks are on the refusal's day; a push after it is harmless: refused again).
    const t = m.time!;
    const endOfLedgerDay = nextUtcMidnight(Date.parse(`${m.entry.day}T00:00:00Z`)) - 1;
    const known = t.anchorMono !== null ? endOfLedgerDay : Math.max(t.floor, MIN_PLAUSIBLE_MS);
    m.entry = withLimitReached(
      m.entry,
      Math.min(s.now.wall, s.times.day, endOfLedgerDay, known),
      ev.message,
      m.cfg.historySize,
    );
    s.persist = true;
    s.apply({ become: { to: "exhausted" } });
    s.emit({ ...base, refused: true });
    s.apply(limitReached(m, s.now, "the exchange refused with its daily-limit error", ev.message));
    return;
  }

  if (limitRefused(m.entry)) s.apply({ become: { to: "exhausted" } });
  else s.apply({ become: { to: "retrying" } });
  let next: number | null = null;
  if (ev.retryable) {
    const limited = ev.kind === "rate_limited";
    const b = limited ? RATE_LIMIT_BACKOFF_BASE_MS : BACKOFF_BASE_MS;
    const cap = limited ? m.cfg.intervalMs : Math.max(1_000, m.cfg.intervalMs / 2);
    const delay = Math.min(b * 2 ** Math.min(m.consecutiveFailures - 1, 20), cap);
    next = Math.max(s.now.mono + delay, gateUntil(m));
  }
  s.emit({
    ...base,
    refused: false,
    retryInMs: next === null ? null : Math.round(next - s.now.mono),
    armedUntil: reportedDeadline(m),
  });
  if (next !== null && m.engineUp) {
    m.retryAtMono = next;
    m.wake.retry = next;
  }
}
