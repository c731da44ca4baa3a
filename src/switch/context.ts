/**
 * A step's working state, shared by the machine (machine.ts), its phase steps (running.ts, stopping.ts) and its
 * sub-steps (triggers.ts, engine-down.ts, features.ts, ...): the model being changed, the time it is taken at, and
 * the Ready being built. What every concern shares lives here: publishing an event, the gauges, the UTC day, the
 * clocks' agreement, the refusals that say the time is wrong, the lapse wake-up, the one `become` vocabulary (asked
 * as a decision's `become`), and applying what a sub-step decided and returned (`Decision`: protection.ts,
 * engine-down.ts, coordination.ts, features.ts (the escalation's and the drill's commands), triggers.ts,
 * write-ahead.ts, answers.ts' confirmation and wake-ups).
 */
import type { SwitchState } from "../core/status.js";
import type { SwitchEvent } from "../core/switch-events.js";
import {
  BOUND_SLACK_MS,
  isPlausibleTime,
  type Times,
  timeRefused,
  timesAt,
  timeVerdict,
} from "./exchange-time.js";
import { limitRefused, type ProofCounts, proofCounts, rollEntry } from "./ledger-model.js";
import {
  EFFECT_ORDER,
  type Effect,
  type Gauges,
  type Inflight,
  lapseDeadline,
  type Now,
  type Ready,
  reportedDeadline,
  reportsExhausted,
  type SwitchModel,
  type Wake,
} from "./model.js";

/**
 * What a sub-step decided, returned rather than done (engine-down.ts, protection.ts, coordination.ts, features.ts,
 * triggers.ts, write-ahead.ts, answers.ts): the step applies it (`Ctx.apply`) in one fixed order: the model's fields, the wake-ups,
 * the state (through the `becomeX` below), the effects, the events. `push`: the reason to push now (running.ts
 * `kick`); absent, nothing asks for one.
 */
export type Decision = {
  set?: Partial<Omit<SwitchModel, "cfg" | "phase" | "state" | "wake">>;
  /** the entry it sets must reach the ledger (the step's `persist`) */
  persist?: boolean;
  /** the entry it sets must be durable before the step's request or act leaves (the step's `syncFirst`) */
  sync?: boolean;
  wake?: Partial<Wake>;
  /** the reported state, through its `becomeX` (several: one after the other, as chained decisions took them) */
  become?: BecomeStep | readonly BecomeStep[];
  effects?: readonly Effect[];
  events?: readonly SwitchEvent[];
  push?: string;
};

/**
 * Two decisions taken one after the other (the second decided on the model as the first leaves it: `andThen`):
 * the later one's fields and wake-ups win, the effects and events follow in order, the later push reason wins.
 */
export function merge(a: Decision, b: Decision): Decision {
  const d: Decision = { ...a, ...b };
  if (a.set || b.set) d.set = { ...a.set, ...b.set };
  if (a.wake || b.wake) d.wake = { ...a.wake, ...b.wake };
  if (a.persist || b.persist) d.persist = true;
  if (a.sync || b.sync) d.sync = true;
  if (a.become && b.become) d.become = [...steps(a.become), ...steps(b.become)];
  if (a.effects || b.effects) d.effects = [...(a.effects ?? []), ...(b.effects ?? [])];
  if (a.events || b.events) d.events = [...(a.events ?? []), ...(b.events ?? [])];
  if (a.push !== undefined || b.push !== undefined) d.push = b.push ?? a.push;
  return d;
}

/** The model as a decision leaves its fields and wake-ups (the state a `become` decides is not in it). */
export function decided(m: SwitchModel, d: Decision): SwitchModel {
  if (!d.set && !d.wake) return m;
  return { ...m, ...d.set, wake: { ...m.wake, ...d.wake } };
}

/** A decision, then what is decided on the model it leaves (`next`), as one decision. */
export function andThen(m: SwitchModel, first: Decision, next: (m: SwitchModel) => Decision): Decision {
  return merge(first, next(decided(m, first)));
}

/**
 * One `becomeX`, the one vocabulary of the state and the phase (a step asks it with `Ctx.become`, a sub-step returns
 * it in its `Decision`): the reported states (`unlessRefused`: NOT PROTECTED is kept), then the phase and its
 * request pipeline.
 */
export type BecomeStep =
  | { to: "holding" | "engineDown" | "exhausted"; unlessRefused?: boolean }
  | { to: "armed" | "lapsed" | "retrying" | "notProtected" }
  | { to: "running" | "stopping" | "idle" | "removing" }
  | { to: "stopped"; halted?: boolean }
  | { to: "sending"; push: Inflight; again?: boolean }
  | { to: "gated"; until: number };

const steps = (b: BecomeStep | readonly BecomeStep[]): readonly BecomeStep[] => ("to" in b ? [b] : b);

/** The states and phases a step may become, each through its `becomeX`. */
export type Become = BecomeStep["to"];

/** The not-protected gauge for one reason (an event): 1 while the switch is not protected for it, 0 once it is. */
export const notProtectedGauge = (reason: string, value: 0 | 1): SwitchEvent => ({
  type: "notProtectedGauge",
  reason,
  value,
});

const IDLE = { kind: "idle" } as const;

/**
 * A refusal that says the time used is wrong: after repeated ones, the other source (exchange-time.ts). Decided
 * (the estimate, the nonce floor, said), with the step's times taken again on what is left (`times`: the step
 * goes on with them).
 */
export function timeRefusal(
  m: SwitchModel,
  now: Now,
  times: Times,
  ev: { kind: string; message: string; nonceDetail?: string | undefined },
): { decision: Decision; times: Times } {
  const nonceWindow = ev.kind === "nonce" && (ev.nonceDetail === "too_low" || ev.nonceDetail === "too_high");
  if (ev.kind !== "expired" && ev.kind !== "too_early" && !nonceWindow) return { decision: {}, times };
  let t = m.time!;
  const effects: Effect[] = [];
  const events: SwitchEvent[] = [];
  if (nonceWindow) {
    // The exchange names its bound: "nonce too low N < MIN" (the window's floor or the smallest of the signer's
    // 100 highest), "nonce too high N > MAX" (T + 1 day). The next nonce is re-derived from it.
    const bound = /(?:<|>)\s*(\d{10,16})/.exec(ev.message);
    const b = bound ? Number(bound[1]) : Number.NaN;
    if (isPlausibleTime(b)) {
      const floor = ev.nonceDetail === "too_low" ? b : b - 86_400_000;
      // "too high" names T + 1 day, T the exchange's time when it judged the request (between the request's
      // sending and this answer): a verdict bounding its time on both sides (exchange-time.ts `timeVerdict`),
      // from below here, from above with the push in flight before the step (time-step.ts `verdictOf`).
      if (ev.nonceDetail === "too_high")
        t = timeVerdict(t, { kind: "later", than: floor - BOUND_SLACK_MS, answeredMono: now.mono });
      const reason = `nonce ${ev.nonceDetail}`;
      effects.push({ kind: "nonceFloor", floor, reason });
      events.push({ type: "nonceRederived", floor, reason });
    }
  }
  const { time, switched } = timeRefused(t, now.mono, times.local);
  if (switched)
    events.push({ type: "clockSourceSwitched", reason: ev.kind, message: ev.message, to: time.source });
  return {
    decision: { set: { time }, effects, events },
    // The verdict may have ruled candidates out: a push planned later in this step (a retry at once) is planned on
    // what is left, not on the earliest candidate the step began with (a local clock stepped back, ruled out by a
    // "nonce too high" answer, still planned the next push 10 min short: invariant II, seed 20261128 part 2).
    times: timesAt(time, now.mono, times.local),
  };
}

export class Ctx {
  /** the entry changed in a way the ledger must hold: the Ready carries the model's entry at the end */
  persist = false;

  constructor(
    readonly m: SwitchModel,
    /** `wall` here is the time the switch acts on (`times.act`), not the local clock */
    readonly now: Now,
    /** the step's times; taken again when a verdict in the step moves them (`timeRefusal`, applied by answers.ts) */
    public times: Times,
    readonly ready: Ready,
  ) {}

  emit(e: SwitchEvent) {
    this.ready.events.push(e);
  }

  /**
   * The model's entry goes to the store with this step, and must be durable before the step's request or act leaves
   * (the write-ahead, within the request's budget: write-ahead.ts, the escalation's latch).
   */
  syncFirst() {
    this.persist = true;
    this.ready.mustSync = true;
    this.ready.syncBudgetMs = this.m.cfg.requestTimeoutMs;
  }

  /**
   * Asks the driver for an effect. The list stays in the order the driver carries it out (`EFFECT_ORDER`); one
   * effect per slot and step: asked again, the step's later decision replaces the earlier.
   */
  effect(e: Effect) {
    const rank = EFFECT_ORDER[e.kind];
    const list = this.ready.effects.filter((x) => EFFECT_ORDER[x.kind] !== rank);
    const at = list.findIndex((x) => EFFECT_ORDER[x.kind] > rank);
    list.splice(at < 0 ? list.length : at, 0, e);
    this.ready.effects = list;
  }

  /** `clock.suspect` when the local clock and the exchange estimate start to disagree, `clock.agreed` when not. */
  suspectWatch() {
    const t = this.m.time!;
    const s = this.times.suspect;
    if (s === t.suspect) return;
    this.m.time = { ...t, suspect: s };
    const fields = {
      localMs: this.times.local,
      exchangeMs: this.times.exchange,
      disagreementMs: this.times.disagreementMs,
    };
    if (s) this.emit({ type: "clockSuspect", ...fields, actOnMs: this.times.act, dayOnMs: this.times.day });
    else this.emit({ type: "clockAgreed", ...fields });
  }

  /** The account's gauges, each published when its value changed. */
  gauges() {
    const e = this.m.entry;
    const g: Gauges = {
      armedUntil: reportedDeadline(this.m),
      triggersToday: e.triggersToday,
      triggersLeft: Math.max(0, e.limit - e.triggersToday),
      exhausted: reportsExhausted(e),
      proofs: proofCounts(e),
      halted: e.halted !== undefined,
    };
    const p = this.m.published;
    if (p?.armedUntil !== g.armedUntil) this.emit({ type: "gauge", name: "armedUntil", value: g.armedUntil });
    if (p?.triggersToday !== g.triggersToday)
      this.emit({ type: "gauge", name: "triggersToday", value: g.triggersToday });
    if (p?.triggersLeft !== g.triggersLeft)
      this.emit({ type: "gauge", name: "triggersLeft", value: g.triggersLeft });
    if (p?.exhausted !== g.exhausted) this.emit({ type: "gauge", name: "exhausted", value: g.exhausted });
    if (p?.halted !== g.halted) this.emit({ type: "gauge", name: "halted", value: g.halted });
    // (each proof in the counts' order, as Object.entries lists them, without a list a step)
    for (const key in g.proofs) {
      const proof = key as keyof ProofCounts;
      if (p?.proofs[proof] !== g.proofs[proof])
        this.emit({ type: "gauge", name: "proof", proof, value: g.proofs[proof] });
    }
    this.m.published = g;
  }

  /**
   * Applies what a sub-step decided (`Decision`), in its fixed order. Returns the reason to push now, if any: the
   * step pushes (only the running phase does: running.ts `kick`).
   */
  apply(d: Decision): string | undefined {
    const m = this.m;
    if (d.set) Object.assign(m, d.set);
    if (d.persist) this.persist = true;
    if (d.sync) this.syncFirst();
    if (d.wake) Object.assign(m.wake, d.wake);
    for (const b of d.become ? steps(d.become) : []) this.#become(b);
    for (const e of d.effects ?? []) this.effect(e);
    for (const e of d.events ?? []) this.emit(e);
    return d.push;
  }

  /** The UTC day of the exchange's time, forward only. */
  roll() {
    // A day is never rolled on an unverified clock: a restart on a wall clock stepped forward near midnight
    // would reset today's count early (the exchange still counts the old day).
    // When the two clocks disagree the day rolls only when both agree it changed (the earlier of the two).
    if (!this.m.time!.sampled) return;
    const { entry, rolled } = rollEntry(this.m.entry, this.times.day, this.m.cfg.historySize);
    if (!rolled) return;
    this.m.entry = entry;
    this.emit({ type: "dayRolled", from: rolled.from, to: rolled.to, previousTriggers: rolled.was });
    this.persist = true;
  }

  /** The lapse wake-up follows the earliest possibly-armed deadline (none when not running nor stopping). */
  armLapseTimer() {
    const at = lapseDeadline(this.m);
    if (at === null || (this.m.phase.name !== "running" && this.m.phase.name !== "stopping")) {
      this.m.wake.lapse = null;
      return;
    }
    this.m.wake.lapse = this.now.mono + (at - this.now.wall);
  }

  /**
   * Applies what a sub-step decided and pushes when it asks to (`kick`: the running phase's, machine.ts).
   */
  take(d: Decision) {
    const push = this.apply(d);
    if (push !== undefined) this.kick(push);
  }

  /** Decides whether to push now (running.ts `kick`, set by the machine's step); a context alone pushes nothing. */
  kick(_reason: string): void {}

  // ------------------------------------------------------------------------------------------- become

  /**
   * The one way the state and the phase change, asked as a decision's `become` (`apply`): each `BecomeStep`
   * through its `becomeX` below.
   */
  #become(b: BecomeStep) {
    switch (b.to) {
      case "holding":
        return this.#becomeHolding(b);
      case "engineDown":
        return this.#becomeEngineDown(b);
      case "exhausted":
        return this.#becomeExhausted(b);
      case "armed":
        return this.#becomeArmed();
      case "lapsed":
        return this.#becomeLapsed();
      case "retrying":
        return this.#becomeRetrying();
      case "notProtected":
        return this.#becomeNotProtected();
      case "running":
        return this.#becomeRunning();
      case "stopping":
        return this.#becomeStopping();
      case "stopped":
        return this.#becomeStopped(b);
      case "sending":
        return this.#becomeSending(b.push, b);
      case "idle":
        return this.#becomeIdle();
      case "gated":
        return this.#becomeGated(b.until);
      case "removing":
        return this.#becomeRemoving();
    }
  }

  // The reported state (docs/daemon.md "States") changes only here, each `becomeX` with what goes with it. NOT
  // PROTECTED outranks the states of the push pipeline: only a protection change (protection.ts) or a confirmed
  // push leaves it, so the pipeline's `becomeX` keep it (`unlessRefused`).

  #state(state: SwitchState) {
    this.m.state = state;
  }

  /** Whether the switch is not protected now (the exchange's permanent refusal, or the agent). */
  get refused() {
    return this.m.state === "not_protected";
  }

  /** A confirmed deadline is held: armed, and the lapse wake-up follows it. */
  #becomeArmed() {
    this.#state("armed");
    this.armLapseTimer();
  }

  /** Armed while the exchange holds a confirmed deadline, lapsed when it holds none. */
  #becomeHolding({ unlessRefused = false } = {}) {
    if (unlessRefused && this.refused) return;
    this.#state(this.m.entry.armedUntil === null ? "lapsed" : "armed");
  }

  /** A deadline passed without a newer confirmation: lapsed (exhausted on the exchange's refusal; engine down). */
  #becomeLapsed() {
    if (this.refused) return;
    this.#state(limitRefused(this.m.entry) ? "exhausted" : this.m.engineUp ? "lapsed" : "engine_down");
  }

  /** The daily limit holds the pushes (the exchange's own refusal, or proven). */
  #becomeExhausted({ unlessRefused = false } = {}) {
    if (unlessRefused && this.refused) return;
    this.#state("exhausted");
  }

  /** The engine is down (its policy is engine-down.ts's); after a confirmed push, the lapse follows it. */
  #becomeEngineDown({ unlessRefused = false } = {}) {
    if (unlessRefused && this.refused) return;
    this.#state("engine_down");
    this.armLapseTimer();
  }

  /** A push failed and will be retried (engine down and not protected keep their state). */
  #becomeRetrying() {
    if (this.refused || this.m.state === "engine_down") return;
    this.#state("retrying");
  }

  /** NOT PROTECTED: the exchange refuses the switch for the account, or the agent is missing or expired. */
  #becomeNotProtected() {
    this.#state("not_protected");
  }

  /** Stopped by a stop: nothing more is pushed. */
  #becomeStoppedState() {
    this.#state("stopped");
  }

  // The phase and its request pipeline (model.ts `Phase`, one tagged value) change only here; the phase's step
  // follows (machine.ts `PHASE_STEP`, as etcd raft's `r.step` set by its `becomeX`).

  /** Running: the pushes start (nothing is out yet). */
  #becomeRunning() {
    this.m.phase = { name: "running", pipe: IDLE };
  }

  /**
   * Stopping: what is out stays out (the stop waits for it); no lapse, retry or gate wake-up of the running phase
   * (the lapse is re-armed for the stop).
   */
  #becomeStopping() {
    const { pipe } = this.m.phase;
    this.m.phase = { name: "stopping", pipe };
    this.cancelTimers();
  }

  /**
   * Stopped: nothing more leaves (a gate or a removal holds nothing back any more), nothing more to wake for;
   * `state` stopped unless halted (a halt leaves the state as it was, and a push it leaves out is still answered
   * and recorded).
   */
  #becomeStopped({ halted = false } = {}) {
    const { pipe } = this.m.phase;
    this.m.phase = { name: "stopped", pipe: pipe.kind === "sending" ? pipe : IDLE };
    if (!halted) this.#becomeStoppedState();
    this.cancelTimers();
    this.m.wake.record = null;
  }

  /**
   * A push is out: its write-ahead, then its answer, are awaited (`again`: another is asked for meanwhile). Only
   * the running phase pushes (running.ts `kick`).
   */
  #becomeSending(push: Inflight, { again = false } = {}) {
    if (this.m.phase.name !== "running") throw new Error(`a push asked for while ${this.m.phase.name}`);
    this.m.phase = { name: "running", pipe: { kind: "sending", push, again } };
  }

  /** Nothing is out: the push in flight (or the removal) is answered. */
  #becomeIdle() {
    const p = this.m.phase;
    if (p.pipe.kind !== "idle") this.m.phase = { name: p.name, pipe: IDLE };
  }

  /**
   * An unknown outcome: the old request may still land until `until`, nothing else leaves before (while running or
   * stopping; a stopped switch sends nothing more, so nothing is gated).
   */
  #becomeGated(until: number) {
    const p = this.m.phase;
    if (p.name === "running" || p.name === "stopping")
      this.m.phase = { name: p.name, pipe: { kind: "gated", until } };
    else this.#becomeIdle();
  }

  /** A stop's removal is out (only a stop removes: stopping.ts). */
  #becomeRemoving() {
    if (this.m.phase.name !== "stopping") throw new Error(`a removal asked for while ${this.m.phase.name}`);
    this.m.phase = { name: "stopping", pipe: { kind: "removing" } };
  }

  /** No wake-up for a lapse, a retry or the gate (a stop, a halt). */
  cancelTimers() {
    this.m.wake.lapse = null;
    this.m.wake.retry = null;
    this.m.wake.gate = null;
    this.m.wake.cancel = null;
    // nor for the features (the escalation's time rule and retries, the drill's verification)
    const f = this.m.features;
    if (f.escalation.wakeAt !== null || f.drill.wakeAt !== null)
      this.m.features = {
        escalation: { ...f.escalation, wakeAt: null },
        drill: { ...f.drill, wakeAt: null },
      };
  }
}
