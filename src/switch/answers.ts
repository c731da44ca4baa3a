/**
 * What a step takes the same way in more than one phase: the push in flight's answer (running, stopping and
 * stopped each go on from it in their own step: running.ts, stopping.ts) and the wake-ups due (running and
 * stopping). Recorded and said here; what follows is the phase's.
 */
import { andThen, type Ctx, type Decision, merge, timeRefusal } from "./context.js";
import { cancelRetryDue } from "./engine-down.js";
import { type Times, timeAccepted } from "./exchange-time.js";
import { drill, FEATURE_WAKE_ORDER, featureDue } from "./features.js";
import { withConfirmedPush } from "./ledger-model.js";
import {
  type Event,
  EXPIRY_MARGIN_MS,
  type Inflight,
  inflight,
  type Now,
  OWN_PUSHES_KEPT,
  type SwitchModel,
  type Wake,
} from "./model.js";
import { exchangeAccepts } from "./protection.js";
import { checkLapse, readRecord } from "./triggers.js";

/** A push in flight answered: the push, and whether another was asked for meanwhile. */
export type Answered = { push: Inflight; again: boolean };
/** A push in flight failed: the failure (`syncFailed` as the failure it is), and whether it never left. */
export type Failed = Answered & { ev: Extract<Event, { type: "pushFailed" }>; neverLeft: boolean };

/**
 * The push in flight confirmed, in any phase: recorded and said (`confirmation`), and nothing is out any more.
 * Returns the push and whether another was asked for meanwhile (the phase's step goes on from there), or null
 * when the answer is not the push in flight's.
 */
export function confirmedPush(s: Ctx, ev: Extract<Event, { type: "pushConfirmed" }>): Answered | null {
  const c = confirmation(s.m, s.now, s.times, ev);
  if (c === null) return null;
  s.apply(c.decision);
  s.apply({ become: { to: "idle" } });
  return c.answered;
}

/**
 * What the push in flight's confirmation decides (context.ts `Decision`): the lapse its answer may show, the
 * confirmed deadline, the end of the failures and of the time refusals, said. Null when the answer is not the push
 * in flight's.
 */
export function confirmation(
  m: SwitchModel,
  now: Now,
  times: Times,
  ev: Extract<Event, { type: "pushConfirmed" }>,
): { answered: Answered; decision: Decision } | null {
  const f = inflight(m);
  if (!f || f.id !== ev.id) return null;
  const again = m.phase.pipe.kind === "sending" && m.phase.pipe.again;
  // The answer's Date may have corrected the clock: a deadline that passed before this push landed fired.
  const lapsed = checkLapse(m, now, times);
  const decision = andThen(m, lapsed, (c) => {
    const at = now.wall;
    const recorded: Decision = {
      set: {
        // The exchange took a push computed on the time used: the streak of time refusals ends.
        time: timeAccepted(c.time!),
        entry: withConfirmedPush(c.entry, f.cancelAt, at),
        ownConfirmed: [...c.ownConfirmed, { at: Math.floor(at), cancelAt: f.cancelAt }].slice(
          -OWN_PUSHES_KEPT,
        ),
        ...(f.mode === "expedite" ? { expedited: true } : {}),
        lastPushAt: at,
        armedKnown: true,
        retryAtMono: 0,
        consecutiveFailures: 0,
        lastError: null,
        clockStepped: false,
        failingSinceMono: null,
      },
      wake: { gate: null, retry: null },
      persist: true,
      ...(c.failingSinceMono !== null
        ? { events: [{ type: "recovered", outageMs: Math.round(now.mono - c.failingSinceMono) }] }
        : {}),
    };
    const armed =
      f.mode === "drill" ? drill(c, now, times, { type: "pushConfirmed", cancelAt: f.cancelAt }) : {};
    // (the state that goes with it is the phase's: its step sets it; the event is said first, no become says any)
    const said: Decision = {
      events: [
        {
          type: "pushConfirmed",
          deadline: f.cancelAt,
          latencyMs: ev.latencyMs,
          expedited: f.mode === "expedite",
        },
      ],
    };
    return merge(merge(merge(armed, recorded), exchangeAccepts(c)), said);
  });
  return { answered: { push: f, again }, decision };
}

/**
 * The push in flight failed (or its write-ahead was not durable within its budget: `syncFailed`, the request
 * never left), in any phase: what the failure proves about the schedule and the time (`failure`), applied; the
 * pipe goes idle, or gated after an unknown outcome, and the step goes on with the times the refusal left. Returns
 * what the phase's step goes on from, or null when the answer is not the push in flight's.
 */
export function failedPush(
  s: Ctx,
  answer: Extract<Event, { type: "pushFailed" | "syncFailed" }>,
): Failed | null {
  const f = failure(s.m, s.now, s.times, answer);
  if (f === null) return null;
  s.apply({ become: { to: "idle" } });
  s.apply(f.decision);
  s.times = f.times;
  if (f.gateUntil !== null) s.apply({ become: { to: "gated", until: f.gateUntil } });
  return f.failed;
}

/**
 * What the push in flight's failure decides (context.ts `Decision`): the time refusal's verdict, an explicit
 * refusal's pending deadline withdrawn, the lapse its answer may show; with the unknown outcome's gate (`gateUntil`)
 * and the step's times as the refusal leaves them. Null when the answer is not the push in flight's.
 */
export function failure(
  m: SwitchModel,
  now: Now,
  times: Times,
  answer: Extract<Event, { type: "pushFailed" | "syncFailed" }>,
): { failed: Failed; decision: Decision; gateUntil: number | null; times: Times } | null {
  const f = inflight(m);
  if (!f || f.id !== answer.id) return null;
  const neverLeft = answer.type === "syncFailed";
  // The exchange's schedule stays as it is (and lapses as if the daemon were dead).
  const ev: Extract<Event, { type: "pushFailed" }> = neverLeft
    ? {
        type: "pushFailed",
        id: answer.id,
        kind: "ledger_slow",
        message: `the write-ahead record was not durable within ${m.cfg.requestTimeoutMs} ms (${answer.reason}); the push was not sent`,
        permanent: false,
        retryable: true,
        outcomeUnknown: false,
      }
    : answer;
  const again = m.phase.pipe.kind === "sending" && m.phase.pipe.again;
  const refusal = timeRefusal(m, now, times, ev);
  let d = refusal.decision;
  let gateUntil: number | null = null;
  if (ev.outcomeUnknown && !neverLeft) {
    // The old request may still land until its expiresAfter: the next one waits (docs/daemon.md). It left when
    // the driver says, no earlier than it was asked for and no later than the write-ahead's budget allows.
    const latestLeave = f.askedMono + (f.synced ? m.cfg.requestTimeoutMs : 0);
    const sent = Number.isFinite(ev.sentMono)
      ? Math.min(Math.max(ev.sentMono!, f.askedMono), latestLeave)
      : latestLeave;
    gateUntil = sent + m.cfg.requestTimeoutMs + EXPIRY_MARGIN_MS;
  } else if (m.entry.pendingUntil === f.cancelAt || neverLeft) {
    // An explicit refusal (or a request that never left) armed nothing; a deadline counted meanwhile is gone.
    const prev = f.previousPending;
    const counted = m.entry.lastCountedDeadline;
    const restored = prev !== null && (counted === null || prev > counted) ? prev : null;
    d = merge(d, {
      set: {
        entry: {
          ...m.entry,
          pendingUntil: restored,
          pendingLatest: restored === null ? null : m.entry.pendingLatest,
        },
      },
      persist: true,
    });
  }
  // the answer's Date may have corrected the clock (decided with nothing out any more: the pipe idle or gated)
  const idle: SwitchModel = { ...m, phase: { name: m.phase.name, pipe: { kind: "idle" } } };
  d = andThen(idle, d, (c) => checkLapse(c, now, refusal.times));
  return { failed: { push: f, again, ev, neverLeft }, decision: d, gateUntil, times: refusal.times };
}

/** The wake-ups a `wake` found due. */
export type Due = { lapse: boolean; retry: boolean; gate: boolean };

/**
 * Whichever wake-ups are due at this step: each cleared, and what the record, the drill, the escalation and the
 * cancel retry wait for decided (`decision`, context.ts `Decision`, in that order). The lapse, the retry and the
 * gate are the phase's to act on: returned (`due`).
 */
export function wokenDue(m: SwitchModel, now: Now, times: Times): { due: Due; decision: Decision } {
  const due = (t: number | null) => t !== null && t <= now.mono;
  const w = m.wake;
  const lapse = due(w.lapse);
  const retry = due(w.retry);
  const gate = due(w.gate);
  const cleared: Partial<Wake> = {
    ...(lapse ? { lapse: null } : {}),
    ...(retry ? { retry: null } : {}),
    ...(gate ? { gate: null } : {}),
  };
  let d: Decision = Object.keys(cleared).length > 0 ? { wake: cleared } : {};
  const then = (next: (c: SwitchModel) => Decision) => {
    d = andThen(m, d, next);
  };
  if (due(w.record)) {
    d = merge(d, { wake: { record: null } });
    then((c) => readRecord(c, "guesses remain"));
  }
  // the features' wake-ups (the drill's deadline passed, the escalation's time rule or retry)
  for (const name of FEATURE_WAKE_ORDER.filter((n) => due(m.features[n].wakeAt)))
    then((c) => featureDue(c, now, times, name));
  if (due(w.cancel)) then(cancelRetryDue);
  return { due: { lapse, retry, gate }, decision: d };
}
