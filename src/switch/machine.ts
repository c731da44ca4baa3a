/**
 * The switch for one account as a pure state machine in the shape of etcd's raft: `step(model, event, now) →
 * { model, ready }`. The input is checked first (input-check.ts) and the clock samples taken (time-step.ts); then
 * the phase chooses the step (`PHASE_STEP`): the new and running phases' (running.ts: the start, the pushes and
 * their answers), the stop's and the stopped phase's (stopping.ts); each hands what every phase takes alike (the
 * record, the agent, the engine, the operator's commands, the features' answers, ...) to shared.ts; the push
 * answers every phase records are answers.ts's. The state, the phase and its pipeline (one tagged value, model.ts
 * `Phase`) change only through a decision's `become` (context.ts `BecomeStep`, one vocabulary). Protection status
 * (protection.ts), the engine-down policy (engine-down.ts) and the replicas' role (coordination.ts) return what they
 * decide (context.ts `Decision`), which the step applies, as do trigger accounting (triggers.ts) and the
 * write-ahead's answers (write-ahead.ts); the features (the escalation, the drill: machines of their own rooms the
 * app hands in) are fed their events and their commands carried out as decisions (features.ts). The output is one
 * `Ready` (model.ts) the driver carries out in a fixed order. Nothing here reads a clock,
 * touches the network or the disk, or words a log line (docs/daemon.md "The switch machine").
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
import type { SwitchState } from "../core/status.js";
import { Ctx } from "./context.js";
import { initialTime, timesAt } from "./exchange-time.js";
import { finite, malformed } from "./input-check.js";
import {
  type Event,
  lapseDeadline,
  type Now,
  type PhaseName,
  type Ready,
  type StepResult,
  type SwitchModel,
  type Wake,
} from "./model.js";
import { kick, stepRunning, stepStarting } from "./running.js";
import { stepStopped, stepStopping } from "./stopping.js";
import { repairDay, takeBlockTime, takeDate, verdictOf } from "./time-step.js";
import { checkLapse } from "./triggers.js";
import { handOver } from "./write-ahead.js";

export * from "./model.js";
export { status } from "./status.js";

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

/** The earliest wake-up asked for, the switch's and its features'. */
export function wakeAtOf(m: SwitchModel): number | null {
  const w: Wake = m.wake;
  const f = m.features;
  let at: number | null = null;
  for (const t of [w.lapse, w.retry, w.gate, w.record, f.drill.wakeAt, f.escalation.wakeAt, w.cancel])
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
      wakeAt: wakeAtOf(model),
    },
  };
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
    if (sampleApplied) ctx.apply(checkLapse(ctx.m, ctx.now, ctx.times));
  } else ctx.handle(event);
  // Whatever changed the earliest possibly-armed deadline, the lapse wake-up follows it.
  if (lapseDeadline(ctx.m) !== lapseDeadline(model) || ctx.m.phase.name !== model.phase.name)
    ctx.armLapseTimer();
  ctx.gauges();
  if (ctx.persist) {
    ready.entry = ctx.m.entry;
    ready.entrySeq = handOver(ctx.m);
  }
  ready.wakeAt = wakeAtOf(ctx.m);
  return { model: ctx.m, ready };
}

/** One step: the phase chooses it (`PHASE_STEP`); a push a decision asks for is the running phase's (`kick`). */
class Step extends Ctx {
  handle(ev: Event) {
    PHASE_STEP[this.m.phase.name](this, ev);
  }

  override kick(reason: string) {
    kick(this, reason);
  }
}

/**
 * The phase chooses the step (etcd raft's `r.step`, set by `becomeX`): each phase takes its own events, the push
 * answers among them (a running switch goes on pushing, a stop goes on stopping, a halted one records them), and
 * hands what every phase takes alike to shared.ts (`stepShared`): running.ts, stopping.ts.
 */
const PHASE_STEP: { readonly [P in PhaseName]: (s: Ctx, ev: Event) => void } = {
  new: stepStarting,
  running: stepRunning,
  stopping: stepStopping,
  stopped: stepStopped,
};

export const isArmedState = (s: SwitchState) => s === "armed" || s === "retrying";
