/**
 * The switch for one account as a pure state machine in the shape of etcd's raft: `step(model, event, now) →
 * { model, ready }`. `Step.handle` takes what every phase shares (clock samples, the record, the agent, the
 * engine, ...), then the phase chooses the step (`PHASE_STEP`: `stepStarting`, `stepRunning`, `stepStopping`,
 * `stepStopped`), each taking its own events, the push answers among them; the `becomeX` of context.ts set the
 * phase and the pipeline (one tagged union, model.ts `Stage`), the state and the wake-ups. Trigger accounting
 * (triggers.ts), protection status (protection.ts) and the engine-down policy (engine-down.ts) are sub-reducers
 * the steps call. The output is one `Ready` (model.ts) the driver carries out in a fixed order. Nothing here
 * reads a clock, touches the network or the disk, or words a log line (docs/daemon.md "The switch machine").
 *
 * Time: `now.mono` is the monotonic clock (every gate, retry and re-check is measured on it); `now.wall` is the
 * exchange's time as the driver knows it (monotonic + an offset corrected from the answers' `Date`), on which
 * every cancel time, deadline and UTC day is computed. A local wall-clock step moves neither.
 *
 * Safety rules, each impossible to break by construction here:
 * - Armed means confirmed: `armedUntil` is the cancel time of the last confirmed push, earlier or later than
 *   before. A write-ahead pending push never makes the switch armed; it only lowers the reported deadline
 *   (the exchange holds one of the two) and counts for the conservative trigger count.
 * - The request leaves only after its intent is durable (the Ready's `mustSync`); a disk that cannot take it
 *   within the push's budget is a failed push (`syncFailed`).
 * - One push in flight at most; after an unknown outcome the next one waits until the old one can no longer
 *   land (its expiresAfter + EXPIRY_MARGIN_MS), so a late request never replaces a newer schedule.
 * - A trigger is counted when the earliest possibly-armed deadline passes without a newer confirmation; once
 *   per deadline; the UTC day only moves forward.
 * - After a wall-clock step the switch is not ready until a push is confirmed on the corrected clock.
 */
import { nextUtcMidnight } from "../core/clock.js";
import type { SwitchState } from "../core/status.js";
import { Ctx } from "./context.js";
import { coordination, gateToken, membersWellFormed, removalRefusal } from "./coordination.js";
import {
  DRILL_LEAD_MS,
  drillArmed,
  drillArming,
  drillDue,
  drillEnd,
  drillHoldsPushes,
  drillPlaced,
  drillPushFailed,
  drillStart,
  drillVerified,
} from "./drill.js";
import {
  cancelAgain,
  cancelRetryDue,
  engine,
  engineHoldsPushes,
  ordersCancelled,
  pushMode,
} from "./engine-down.js";
import {
  escalationCheck,
  escalationClosed,
  escalationDue,
  escalationExposure,
  escalationKill,
  escalationReset,
  escalationStart,
} from "./escalation.js";
import { initialTime, MIN_PLAUSIBLE_MS, timeAccepted, timesAt } from "./exchange-time.js";
import {
  isExhausted,
  limitRefused,
  withConfirmedPush,
  withIntent,
  withLimitReached,
  withRemoval,
} from "./ledger-model.js";
import {
  BACKOFF_BASE_MS,
  type Event,
  EXPEDITE_LEAD_MS,
  EXPIRY_MARGIN_MS,
  gateUntil,
  type Inflight,
  inflight,
  lapseDeadline,
  type Now,
  OWN_PUSHES_KEPT,
  type Phase,
  RATE_LIMIT_BACKOFF_BASE_MS,
  type Ready,
  reportedDeadline,
  type StepResult,
  type SwitchModel,
  VOLUME_GATE_USD,
  type Wake,
} from "./model.js";
import { agent, exchangeAccepts, exchangeRefuses, recheckPending } from "./protection.js";
import { repairDay, takeBlockTime, takeDate, verdictOf } from "./time-step.js";
import {
  checkLapse,
  limitHolds,
  limitReset,
  limitSuspected,
  logExhausted,
  readRecord,
  record,
} from "./triggers.js";
import { handOver, persisted, writeAhead } from "./write-ahead.js";

export * from "./model.js";

export function step(model: SwitchModel, event: Event, now: Now): StepResult {
  const bad = malformed(event, now);
  if (bad !== null) return refusedStep(model, event, bad);
  try {
    return stepChecked(model, event, now);
  } catch (error) {
    return refusedStep(
      model,
      event,
      `the step threw: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The earliest wake-up asked for. */
export function wakeAtOf(w: Wake): number | null {
  let at: number | null = null;
  for (const t of [w.lapse, w.retry, w.gate, w.record, w.escalate, w.drill, w.cancel])
    if (t !== null && (at === null || t < at)) at = t;
  return at;
}

function refusedStep(model: SwitchModel, event: unknown, reason: string): StepResult {
  const type =
    typeof (event as { type?: unknown })?.type === "string" ? (event as { type: string }).type : "?";
  return {
    model,
    ready: {
      mustSync: false,
      effects: [],
      events: [{ type: "eventRefused", eventType: type.slice(0, 40), reason: reason.slice(0, 300) }],
      wakeAt: wakeAtOf(model.wake),
    },
  };
}

const finite = (...xs: unknown[]) => xs.every((x) => typeof x === "number" && Number.isFinite(x));

/** Why `event` (or `now`) cannot be taken, or null. Values the machine judges itself (a Date) are not checked. */
function malformed(event: Event, now: Now): string | null {
  if (now === null || typeof now !== "object" || !finite(now.mono))
    return "the monotonic time is not a number";
  if (event === null || typeof event !== "object") return "not an event";
  switch (event.type) {
    case "start":
    case "tick":
    case "wake":
    case "dayRollover":
    case "shutdown":
    case "removalConfirmed":
    case "removalFailed":
    case "halt":
    case "engine":
    case "agent":
    case "ordersCancelled":
    case "pushFailed":
    case "closeResult":
      return null;
    case "kill":
      return typeof event.by === "string" && event.by.length <= 200 && typeof event.close === "boolean"
        ? null
        : "the kill names nobody";
    case "killCancelled":
      return typeof event.by === "string" && finite(event.cancelled, event.kept)
        ? null
        : "the kill's cancel figures are not numbers";
    case "coordination":
      return (event.role === "leader" || event.role === "follower" || event.role === "lost") &&
        (event.token === null || (typeof event.token === "string" && event.token.length <= 40)) &&
        (event.othersAlive === null || typeof event.othersAlive === "boolean") &&
        membersWellFormed(event.members)
        ? null
        : "the coordination's role, token or candidates are malformed";
    case "exposure":
      return finite(event.accountValue, event.notionalUsd) &&
        (event.minLiquidationPct === null || finite(event.minLiquidationPct))
        ? null
        : "the exposure figures are not numbers";
    case "reset":
      return typeof event.by === "string" && event.by.length <= 200 ? null : "the reset names nobody";
    case "drillStart":
      return typeof event.id === "string" && event.id.length <= 64 && typeof event.by === "string"
        ? null
        : "the drill has no id";
    case "drillPlaced":
      return typeof event.id === "string" && (event.oid === null || finite(event.oid))
        ? null
        : "the drill's order id is not a number";
    case "drillVerified":
      return typeof event.id === "string" && (event.statusTimestamp === null || finite(event.statusTimestamp))
        ? null
        : "the drill's order status time is not a number";
    case "syncFailed":
      return finite(event.id) ? null : "the push id is not a number";
    case "persisted":
      return finite(event.seq) && (event.updatedAt === null || finite(event.updatedAt))
        ? null
        : "the write's number or updatedAt is not a number";
    case "pushConfirmed":
      return finite(event.id, event.latencyMs) ? null : "the push id or latency is not a number";
    case "clockSample":
      return typeof event.date === "number" ? null : "the Date sample is not a number";
    case "blockSample":
      return typeof event.timestampSec === "number" ? null : "the block timestamp is not a number";
    case "clockStep":
      return finite(event.deltaMs) ? null : "the clock step is not a number";
    case "record": {
      const e = event.evidence;
      if (e === null) return null;
      return e !== undefined &&
        typeof e === "object" &&
        Number.isFinite(e.at) &&
        Array.isArray(e.schedules) &&
        Array.isArray(e.fires) &&
        (e.newestTx === null || Number.isFinite(e.newestTx))
        ? null
        : "the record is malformed";
    }
    default:
      return `unknown event type ${JSON.stringify((event as { type?: unknown }).type)?.slice(0, 40)}`;
  }
}

function stepChecked(model: SwitchModel, event: Event, now: Now): StepResult {
  // A shallow copy: the step replaces the entry, the pipeline, the error and the other nested values rather than
  // changing them, except the wake-ups, which are copied too. (The property tests run every step on a deep-frozen
  // model, so a change in place throws there: test/switch/world.ts.) The lists of own pushes are replaced, never
  // changed in place, too.
  const m: SwitchModel = { ...model, wake: { ...model.wake } };
  // (a signer's nonce that is not a number bounds nothing: every push is then written ahead)
  const nonce = now.nonce === undefined || finite(now.nonce) ? now.nonce : Number.POSITIVE_INFINITY;
  m.time ??= initialTime(now.mono, now.wall, m.timeFloor);
  const ready: Ready = { mustSync: false, effects: [], events: [], wakeAt: null };
  // A Date sample is judged first: every decision of this step is taken on the estimate it leaves.
  let sampleApplied = false;
  const witnessedBefore = m.time.anchorMono !== null;
  if (event.type === "clockSample") sampleApplied = takeDate(m, event, now, ready.events);
  if (event.type === "blockSample") sampleApplied = takeBlockTime(m, event, now, ready.events);
  verdictOf(m, event, now);
  const times = timesAt(m.time, now.mono, now.wall);
  if (!witnessedBefore && times.witnessed)
    ready.events.push({
      type: "clockVerified",
      by: m.time.verifiedBy ?? "?",
      exchangeMs: times.exchange,
      localMs: times.local,
    });
  else if (witnessedBefore && !times.witnessed)
    ready.events.push({ type: "clockUnverified", exchangeMs: times.exchange, localMs: times.local });
  const ctx = new Step(m, { mono: now.mono, wall: times.act, verified: m.time.sampled, nonce }, times, ready);
  if (!witnessedBefore && times.witnessed) repairDay(ctx);
  ctx.suspectWatch();
  ctx.roll();
  if (event.type === "clockSample" || event.type === "blockSample") {
    // An applied sample may have corrected the estimate: a deadline it shows passed fired. Unverified too: an
    // unverified sample only moves the time forward (exchange-time.ts `takeSample`), so the lapse it shows is
    // judged early, never late; waiting for a verified clock left a deadline that passed 00:00 on the
    // exchange's clock uncounted on its day.
    if (sampleApplied) checkLapse(ctx);
  } else ctx.handle(event);
  // Whatever changed the earliest possibly-armed deadline, the lapse wake-up follows it.
  if (lapseDeadline(ctx.m) !== lapseDeadline(model) || ctx.m.phase !== model.phase) ctx.armLapseTimer();
  ctx.gauges();
  if (ctx.persist) {
    ready.entry = ctx.m.entry;
    ready.entrySeq = handOver(ctx.m);
  }
  ready.wakeAt = wakeAtOf(ctx.m.wake);
  return { model: ctx.m, ready };
}

/** The step's working state: the model being changed and the Ready being built (private to this file). */

/** One step: what every phase shares, then the phase's own step. */
class Step extends Ctx {
  handle(ev: Event) {
    const m = this.m;
    switch (ev.type) {
      case "clockSample":
      case "blockSample":
        return; // taken before the step's decisions (stepChecked)
      case "persisted":
        return persisted(m, ev);
      case "record":
        return record(this, ev.evidence, ev.detail);
      case "agent":
        if (agent(this, ev.state, ev.detail)) this.kick("agent-ok");
        return;
      case "engine":
        if (engine(this, ev.up, ev.detail ?? null, ev.cause === "absent" ? "absent" : "seen"))
          this.kick(ev.up ? "engine-up" : "engine-down");
        return;
      case "ordersCancelled":
        if (ordersCancelled(this, ev)) this.kick("orders-cancelled");
        return;
      case "clockStep":
        m.clockStepped = true;
        this.emit({ type: "clockStepped", deltaMs: ev.deltaMs });
        checkLapse(this);
        return this.kick("clock-step");
      case "dayRollover":
        checkLapse(this);
        return this.kick("rollover");
      case "halt":
        return this.becomeStopped({ halted: true });
      case "exposure":
        return escalationExposure(this, ev);
      case "closeResult":
        return escalationClosed(this, ev);
      case "reset":
        return escalationReset(this, ev);
      case "kill":
        return escalationKill(this, ev);
      case "killCancelled":
        return this.emit({
          type: "killCancelled",
          by: ev.by,
          confirmed: ev.confirmed,
          cancelled: ev.cancelled,
          kept: ev.kept,
          ...(ev.detail ? { detail: ev.detail } : {}),
        });
      case "coordination":
        coordination(this, ev);
        // the lease won: a step-2 rule that held while another replica had it is acted on now
        return escalationCheck(this);
      case "drillStart":
        return drillStart(this, ev);
      case "drillPlaced":
        if (drillPlaced(this, ev)) this.kick("drill");
        return;
      case "drillVerified":
        drillVerified(this, ev);
        return this.kick("drill-done");
    }
    PHASE_STEP[m.phase](this, ev);
  }

  stepStarting(ev: Event) {
    if (ev.type === "start") return this.start();
    if (ev.type === "shutdown") return this.shutdown(ev.mode);
  }

  stepRunning(ev: Event) {
    switch (ev.type) {
      case "tick":
        checkLapse(this);
        cancelAgain(this);
        escalationCheck(this);
        return this.kick("interval");
      case "wake":
        return this.woken();
      case "shutdown":
        return this.shutdown(ev.mode);
      case "pushConfirmed": {
        const a = this.confirmed(ev);
        if (a === null) return;
        if (a.push.mode === "expedite" || !this.m.engineUp) this.becomeEngineDown();
        else this.becomeArmed();
        if (a.again) this.kick("after-inflight");
        return;
      }
      case "syncFailed":
      case "pushFailed": {
        const a = this.failed(ev);
        if (a === null) return;
        this.failing(a);
        if (a.again) this.kick("after-inflight");
        return;
      }
    }
  }

  stepStopping(ev: Event) {
    switch (ev.type) {
      case "tick":
        return checkLapse(this); // a deadline that passes while the removal waits has fired
      case "wake":
        return this.woken();
      case "removalConfirmed":
        return this.removalConfirmed();
      case "removalFailed":
        return this.removalFailed(ev);
      // the stop waits for the push in flight: answered, it goes on
      case "pushConfirmed":
        if (this.confirmed(ev) === null) return;
        this.armLapseTimer();
        return this.continueShutdown();
      case "syncFailed":
      case "pushFailed":
        if (this.failed(ev) === null) return;
        return this.continueShutdown();
    }
  }

  stepStopped(ev: Event) {
    // Already stopped (halted, or a stop done): nothing more is sent; what the exchange holds stays as it is.
    switch (ev.type) {
      case "shutdown":
        this.ready.done = {
          account: this.m.cfg.account,
          outcome: ev.mode === "keep" ? "kept" : "skipped",
          reason: "stopped",
        };
        return;
      // a halt still records the answer of the push it left out
      case "pushConfirmed":
        if (this.confirmed(ev) !== null) this.armLapseTimer();
        return;
      case "syncFailed":
      case "pushFailed":
        this.failed(ev);
        return;
    }
  }

  // ------------------------------------------------------------------------------------------- start

  start() {
    const m = this.m;
    this.becomeRunning();
    const e = m.entry;
    if (e.pendingUntil !== null) {
      this.emit({ type: "pendingAtStart", pendingUntil: e.pendingUntil, confirmedUntil: e.armedUntil });
    }
    if (e.assumed) {
      this.emit({ type: "ledgerAssumed", triggersToday: e.triggersToday, triggerLimit: e.limit });
    }
    escalationStart(this);
    checkLapse(this, "the deadline passed while the daemon was down");
    if (m.state === "starting" && m.entry.armedUntil !== null && m.entry.pendingUntil === null)
      this.becomeArmed();
    else if (m.state === "starting" && lapseDeadline(m) !== null) this.armLapseTimer();
    if (isExhausted(m.entry) && m.state !== "exhausted") {
      this.becomeExhausted();
      logExhausted(this, limitRefused(m.entry) ? "from the ledger" : "the exchange's orders prove it");
    } else if (!m.entry.assumed) limitSuspected(this);
    this.kick("start");
  }

  /** Whichever wake-ups are due at this step: each cleared, and what it is for done. */
  woken() {
    const m = this.m;
    const due = (t: number | null) => t !== null && t <= this.now.mono;
    const w = m.wake;
    const lapse = due(w.lapse);
    const retry = due(w.retry);
    const gate = due(w.gate);
    const record = due(w.record);
    if (lapse) w.lapse = null;
    if (retry) w.retry = null;
    if (gate) w.gate = null;
    if (record) {
      w.record = null;
      readRecord(this, "guesses remain");
    }
    if (due(w.drill)) {
      w.drill = null;
      checkLapse(this);
      drillDue(this);
    }
    if (due(w.escalate)) {
      w.escalate = null;
      escalationDue(this);
    }
    if (due(w.cancel)) cancelRetryDue(this);
    if (gate && m.phase === "stopping") return this.continueShutdown();
    if (!lapse && !retry && !gate) return;
    checkLapse(this);
    this.kick(lapse ? "lapsed" : retry ? "retry" : "gate");
  }

  // -------------------------------------------------------------------------------------------- push

  /** Decides whether to push now, and starts one: the intent persisted with mustSync, then the request. */
  kick(reason: string) {
    const m = this.m;
    if (m.phase !== "running") return;
    if (m.pipe.kind === "sending") {
      if (reason !== "interval") this.becomeSending(m.pipe.push, { again: true });
      return;
    }
    limitReset(this);
    // What may hold a push: the agent, the engine-down policy, a permanent refusal until its re-check, the
    // exchange's own daily-limit refusal (no count does), the unknown-outcome gate, a retry's back-off.
    if (m.agentReason !== null || engineHoldsPushes(m) || drillHoldsPushes(this) || recheckPending(this))
      return;
    if (limitHolds(this)) return this.becomeExhausted({ unlessRefused: true });
    const e = m.entry;
    if (this.now.mono < gateUntil(m)) {
      m.wake.gate = gateUntil(m);
      return;
    }
    if (reason === "interval" && this.now.mono < m.retryAtMono) return;
    const mode: Inflight["mode"] = drillArming(this) ? "drill" : pushMode(m);
    const lead = mode === "arm" ? m.cfg.deadlineMs : mode === "drill" ? DRILL_LEAD_MS : EXPEDITE_LEAD_MS;
    // Planned on the verified time, or while nothing is verified on the earliest candidate: the schedule is then
    // never more than deadline + one interval ahead of the exchange's time under any candidate (issue 40). The
    // exchange's 5 s minimum is kept on the latest candidate as far as that bound allows; beyond it the exchange's
    // answer says which candidate was right (a too-early or expired refusal rules the earliest out).
    const plan = Math.floor(this.times.plan);
    let cancelAt = plan + lead;
    if (!this.times.witnessed && this.times.latest > this.times.plan)
      cancelAt = Math.max(
        cancelAt,
        Math.min(
          Math.floor(this.times.latest) + EXPEDITE_LEAD_MS,
          plan + m.cfg.deadlineMs + m.cfg.intervalMs,
        ),
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
      askedMono: this.now.mono,
      synced: true,
      previousPending: e.pendingUntil,
      planMs: plan,
    };
    this.becomeSending(push);
    m.ownSent = [...m.ownSent, cancelAt].slice(-OWN_PUSHES_KEPT);
    m.entry = withIntent(e, cancelAt);
    // Write-ahead: the request leaves only once the intent is durable, unless the file already says as much.
    const ahead = writeAhead(this, m.entry);
    m.disk = ahead.disk;
    if (ahead.sync) this.syncFirst();
    this.effect({ kind: "push", id, cancelAt, expiresAfterMs: m.cfg.requestTimeoutMs });
  }

  /**
   * The push in flight confirmed, in any phase: recorded and said. Returns the push and whether another was asked
   * for meanwhile (the phase's step goes on from there), or null when the answer is not the push in flight's.
   */
  confirmed(ev: Extract<Event, { type: "pushConfirmed" }>): Answered | null {
    const m = this.m;
    const f = inflight(m);
    if (!f || f.id !== ev.id) return null;
    // The answer's Date may have corrected the clock: a deadline that passed before this push landed fired.
    checkLapse(this);
    const again = m.pipe.kind === "sending" && m.pipe.again;
    this.becomeIdle();
    // The exchange took a push computed on the time used: the streak of time refusals ends.
    m.time = timeAccepted(m.time!);
    const at = this.now.wall;
    m.entry = withConfirmedPush(m.entry, f.cancelAt, at);
    m.ownConfirmed = [...m.ownConfirmed, { at: Math.floor(at), cancelAt: f.cancelAt }].slice(
      -OWN_PUSHES_KEPT,
    );
    if (f.mode === "expedite") m.expedited = true;
    if (f.mode === "drill") drillArmed(this, f.cancelAt);
    m.lastPushAt = at;
    m.armedKnown = true;
    m.retryAtMono = 0;
    m.wake.gate = null;
    m.wake.retry = null;
    m.consecutiveFailures = 0;
    m.lastError = null;
    m.clockStepped = false;
    if (m.failingSinceMono !== null) {
      const outageMs = Math.round(this.now.mono - m.failingSinceMono);
      m.failingSinceMono = null;
      this.emit({ type: "recovered", outageMs });
    }
    exchangeAccepts(this);
    this.persist = true;
    // (the state that goes with it is the phase's: its step sets it; the event is said first, no become says any)
    this.emit({
      type: "pushConfirmed",
      deadline: f.cancelAt,
      latencyMs: ev.latencyMs,
      expedited: f.mode === "expedite",
    });
    return { push: f, again };
  }

  /**
   * The push in flight failed (or its write-ahead was not durable within its budget: `syncFailed`, the request
   * never left), in any phase: what the failure proves about the schedule and the time. Returns what the phase's
   * step goes on from, or null when the answer is not the push in flight's.
   */
  failed(answer: Extract<Event, { type: "pushFailed" | "syncFailed" }>): Failed | null {
    const m = this.m;
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
    const again = m.pipe.kind === "sending" && m.pipe.again;
    this.becomeIdle();
    this.timeRefusal(ev);
    if (ev.outcomeUnknown && !neverLeft) {
      // The old request may still land until its expiresAfter: the next one waits (docs/daemon.md). It left when
      // the driver says, no earlier than it was asked for and no later than the write-ahead's budget allows.
      const latestLeave = f.askedMono + (f.synced ? m.cfg.requestTimeoutMs : 0);
      const sent = Number.isFinite(ev.sentMono)
        ? Math.min(Math.max(ev.sentMono!, f.askedMono), latestLeave)
        : latestLeave;
      this.becomeGated(sent + m.cfg.requestTimeoutMs + EXPIRY_MARGIN_MS);
    } else if (m.entry.pendingUntil === f.cancelAt || neverLeft) {
      // An explicit refusal (or a request that never left) armed nothing; a deadline counted meanwhile is gone.
      const prev = f.previousPending;
      const counted = m.entry.lastCountedDeadline;
      const restored = prev !== null && (counted === null || prev > counted) ? prev : null;
      m.entry = {
        ...m.entry,
        pendingUntil: restored,
        pendingLatest: restored === null ? null : m.entry.pendingLatest,
      };
      this.persist = true;
    }
    checkLapse(this); // the answer's Date may have corrected the clock
    return { push: f, again, ev, neverLeft };
  }

  /** A failed push while running: counted, said, and retried (or held) as the failure's kind says. */
  failing({ ev, push: f, neverLeft }: Failed) {
    const m = this.m;
    m.consecutiveFailures++;
    m.failingSinceMono ??= this.now.mono;
    m.lastError = { kind: ev.kind, message: ev.message };
    if (f.mode === "expedite") m.expedited = true; // one expedite per engine-down episode (docs/daemon.md)
    if (f.mode === "drill") drillPushFailed(this, f.cancelAt, ev.outcomeUnknown && !neverLeft, ev.message);
    const base = {
      type: "pushFailed" as const,
      reason: ev.kind,
      message: ev.message,
      consecutiveFailures: m.consecutiveFailures,
    };

    if (ev.permanent) {
      const first = exchangeRefuses(this, ev.kind);
      this.emit({ ...base, refused: true });
      if (first)
        this.emit({
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
        Math.min(this.now.wall, this.times.day, endOfLedgerDay, known),
        ev.message,
        m.cfg.historySize,
      );
      this.persist = true;
      this.becomeExhausted();
      this.emit({ ...base, refused: true });
      logExhausted(this, "the exchange refused with its daily-limit error", ev.message);
      return;
    }

    if (limitRefused(m.entry)) this.becomeExhausted();
    else this.becomeRetrying();
    let next: number | null = null;
    if (ev.retryable) {
      const limited = ev.kind === "rate_limited";
      const b = limited ? RATE_LIMIT_BACKOFF_BASE_MS : BACKOFF_BASE_MS;
      const cap = limited ? m.cfg.intervalMs : Math.max(1_000, m.cfg.intervalMs / 2);
      const delay = Math.min(b * 2 ** Math.min(m.consecutiveFailures - 1, 20), cap);
      next = Math.max(this.now.mono + delay, gateUntil(m));
    }
    this.emit({
      ...base,
      refused: false,
      retryInMs: next === null ? null : Math.round(next - this.now.mono),
      armedUntil: reportedDeadline(m),
    });
    if (next !== null && m.engineUp) {
      m.retryAtMono = next;
      m.wake.retry = next;
    }
  }

  // ----------------------------------------------------------------------------------------- shutdown

  shutdown(mode: "remove" | "keep") {
    const m = this.m;
    drillEnd(this, { fired: false, status: null, statusTimestamp: null, detail: "the daemon is stopping" });
    m.shutdownMode = mode;
    this.becomeStopping();
    if (!inflight(m)) this.continueShutdown();
  }

  continueShutdown() {
    const m = this.m;
    if (m.phase !== "stopping" || m.pipe.kind === "sending" || m.pipe.kind === "removing") return;
    checkLapse(this);
    // Asked to remove, a coordinated replica keeps the schedule while another replica is alive (it pushes on), while
    // another's lease expired without its stopped mark (dead or cut off: etcd cannot tell), or while etcd cannot say
    // (coordination.ts): a kept schedule fails safe, a removal under a replica still pushing would not.
    const refusal = m.shutdownMode === "keep" ? null : removalRefusal(m);
    if (m.shutdownMode === "keep" || refusal !== null) {
      const armedUntil = reportedDeadline(m);
      this.becomeStopped();
      this.emit({ type: "kept", armedUntil, ...(refusal !== null ? { reason: refusal } : {}) });
      this.ready.done = {
        account: m.cfg.account,
        outcome: "kept",
        ...(refusal !== null ? { reason: "coordination", message: refusal } : {}),
      };
      return;
    }
    // An attempt with unknown outcome could still land: remove only after it can no longer.
    if (this.now.mono < gateUntil(m)) {
      m.wake.gate = gateUntil(m);
      return;
    }
    this.becomeRemoving();
    this.effect({ kind: "removal", expiresAfterMs: m.cfg.requestTimeoutMs });
  }

  removalConfirmed() {
    const m = this.m;
    if (m.pipe.kind !== "removing") return;
    checkLapse(this); // a deadline that passed before the removal landed fired
    const previous = m.entry.armedUntil;
    m.entry = withRemoval(m.entry, this.now.wall, m.cfg.historySize);
    this.becomeIdle();
    this.becomeStopped();
    this.persist = true;
    this.emit({ type: "removed", previousDeadline: previous, ...tokenField(m) });
    this.ready.done = { account: m.cfg.account, outcome: "removed" };
  }

  removalFailed(ev: Extract<Event, { type: "removalFailed" }>) {
    const m = this.m;
    if (m.pipe.kind !== "removing") return;
    checkLapse(this);
    this.becomeIdle();
    this.becomeStopped();
    const account = m.cfg.account;
    const skipped = { account, outcome: "skipped" as const, reason: ev.kind, message: ev.message };
    const v = ev.cumulativeVolume;
    if (ev.kind === "volume_gate" && typeof v === "number" && Number.isFinite(v) && v < VOLUME_GATE_USD) {
      // Below the exchange's volume gate no schedule can have been set: there is nothing to remove.
      m.entry = withRemoval(m.entry, this.now.wall, m.cfg.historySize);
      this.persist = true;
      this.emit({ type: "nothingArmed", reason: ev.kind, message: ev.message, belowVolumeGate: true });
      this.ready.done = skipped;
      return;
    }
    if (ev.permanent && m.notProtectedReason !== null && m.entry.armedUntil === null) {
      this.emit({ type: "removalSkipped", reason: ev.kind, message: ev.message });
      this.ready.done = skipped;
      return;
    }
    if (
      m.entry.armedUntil === null &&
      m.entry.pendingUntil === null &&
      m.entry.pendingLatest === null &&
      inflight(m) === null
    ) {
      // No push was ever accepted nor left without an answer: the exchange holds no schedule of ours to remove.
      this.emit({ type: "nothingArmed", reason: ev.kind, message: ev.message, belowVolumeGate: false });
      this.ready.done = skipped;
      return;
    }
    this.emit({
      type: "removalFailed",
      reason: ev.kind,
      message: ev.message,
      armedUntil: reportedDeadline(m),
    });
    this.ready.done = { account, outcome: "failed", reason: ev.kind, message: ev.message };
  }
}

/** A push in flight answered: the push, and whether another was asked for meanwhile. */
type Answered = { push: Inflight; again: boolean };
/** A push in flight failed: the failure (`syncFailed` as the failure it is), and whether it never left. */
type Failed = Answered & { ev: Extract<Event, { type: "pushFailed" }>; neverLeft: boolean };

/**
 * The phase chooses the step (etcd raft's `r.step`, set by `becomeX`): after what every phase shares
 * (`Step.handle`), each phase takes its own events: the push answers among them (a running switch goes on
 * pushing, a stop goes on stopping, a halted one records them).
 */
const PHASE_STEP: { readonly [P in Phase]: (s: Step, ev: Event) => void } = {
  new: (s, ev) => s.stepStarting(ev),
  running: (s, ev) => s.stepRunning(ev),
  stopping: (s, ev) => s.stepStopping(ev),
  stopped: (s, ev) => s.stepStopped(ev),
};

/** The fencing token field of a gated action's event (none without coordination). */
export function tokenField(m: SwitchModel): { token?: string } {
  const token = gateToken(m);
  return token === undefined ? {} : { token };
}

export const isArmedState = (s: SwitchState) => s === "armed" || s === "retrying";
