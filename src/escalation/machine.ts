/**
 * The escalation ladder, a machine of its own fed the switch's events (docs/operations.md, "When cancelling is not
 * enough"). Opt-in per account, on top of the engine-down policy `cancel`:
 * - step 1 is the cancel path (src/switch/engine-down.ts): the engine's orders are cancelled at once;
 * - step 2 closes the account's positions with reduce-only IOC orders, when the engine has stayed down for
 *   `afterDownMs`, or while it is down a rule over the exposure poll holds: the distance to liquidation below
 *   `liquidationPct`, the account value down `drawdownPct` from its level when the engine went down, or the total
 *   notional above `notionalCapUsd`.
 * Rules, and why:
 * - Only while the engine is down. A live engine manages its own risk; closing under it would fight it.
 * - An engine ABSENT (an account an engine held, and no engine named it within the connect grace after a restart:
 *   cause `absent`) is weaker evidence than a death seen: it may be slow to come back. Its absence alone starts no
 *   close: the exposure rules (liquidation, drawdown, notional) need a death seen, and the time rule counts the
 *   engine absent for `afterDownMs` from the grace's end (the operator's own bound on how long nobody may manage
 *   the positions; without it, absence never closes). docs/operations.md, "Cancel on disconnect".
 * - Once a close starts, the account is latched HALTED, on disk before the first close order leaves (a restart
 *   keeps it), and only an operator's `reset` releases it. HALTED never stops the pushes: the switch keeps the
 *   schedule armed, as the backstop should the daemon die too.
 * - A close pass that does not finish (the post-only window after a network upgrade, an exchange refusal, no
 *   answer) is said at once and tried again after `retryMs`; it is never turned into another kind of order.
 * - Passes go on while HALTED until one reports the account flat (or only dust below the $10 minimum).
 * - Closes leave only while the engine is down, checked before every order (`closeHold`): its return stops a pass
 *   at its next step and drops a due retry; the closes are held (said and paged) and resume only when it is down
 *   again and a rule holds. The operator's kill is the exception: its command is its evidence.
 * - Every pass is written ahead in the ledger (`halted.closing`), so a restart reports a pass left open ("closing
 *   stopped at restart") and resumes it only on this run's evidence (`escalationStart`).
 * - Closing is not safe twice: with two replicas only the lease holder closes, resets or kills (the view's `gate`),
 *   and a refusal is said once per reason (`heldOnce`).
 *
 * Pure: each rule decides on the escalation's model and the switch's view (core/feature.ts `SwitchView`) and
 * returns its next model, its commands and its wake-up; the switch carries the commands out.
 */
import type { EngineDownCause } from "../core/events.js";
import type {
  ClosePass,
  CloseResult,
  EscalationConfig,
  EscalationInput,
  EscalationMachine,
  FeatureCommand,
  FeatureNow,
  FeatureStep,
  HaltedLatch,
  SwitchView,
} from "../core/feature.js";
import type { SwitchEvent } from "../core/switch-events.js";
import {
  CLOSE_REPORTS_KEPT,
  type EscalationModel,
  escalationStatus,
  initialEscalation,
  STOPPED_AT_RESTART,
} from "./model.js";
import { escalationRule } from "./rule.js";

type Step = FeatureStep<EscalationModel>;
type Cfg = EscalationConfig | null;

const none = (model: EscalationModel): Step => ({ model, commands: [] });
const say = (event: SwitchEvent): FeatureCommand => ({ kind: "event", event });

/** Two steps one after the other (the second decided on the model the first leaves): the later wake-up wins. */
function andThen(first: Step, next: (m: EscalationModel) => Step): Step {
  const second = next(first.model);
  return {
    model: second.model,
    commands: [...first.commands, ...second.commands],
    wakeAt: second.wakeAt !== undefined ? second.wakeAt : first.wakeAt,
  };
}

/** Why a pass that answers after the engine's return is not tried again, though the engine is down again. */
export const ENGINE_CAME_BACK =
  "the engine came back while the pass was out: the death it acted on is over; the closes resume only when a rule holds for this death";

/** Why the kill's pass that left under a live engine is not tried again once the engine is gone. */
export const KILL_UNDER_LIVE_ENGINE =
  "the kill's pass left while the engine was up: its command is not tried again on the engine's death; `hl-deadman kill --close` again, or the closes resume when a rule holds";

/** Why the closes stop when the engine comes back (the executor's answer and `escalation.held` say it). */
export const ENGINE_BACK =
  "the engine is back: no close order leaves while it is up; the closes resume only when it is down again and a rule holds";

/**
 * Whether a close order may leave now: null when it may, else why not. Pure, on the model and the switch's view as
 * they are now: the close executor asks before EVERY order it sends (src/orders/close-executor.ts `mayProceed`,
 * through the switch's driver), so a pass in flight stops at its next step once the engine is back, the account
 * released or the daemon stopping. The operator's `kill --close` is its own evidence: the engine's presence does
 * not stop it.
 */
export function closeHold(esc: EscalationModel, view: SwitchView): string | null {
  if (!view.running) return "the daemon is stopping: the pass stays open in the ledger";
  if (view.halted === null) return "the account is no longer HALTED";
  if (esc.closing !== "waiting") return "no close pass is open";
  if (view.engineUp && !esc.killPass) return ENGINE_BACK;
  return view.gate;
}

/**
 * A gated action refused: said (`event`) once per reason (the escalation is checked on every tick): nothing when
 * this reason was said already.
 */
function heldOnce(esc: EscalationModel, refusal: string, event: SwitchEvent): Step {
  if (esc.heldSaid === refusal) return none(esc);
  return { model: { ...esc, heldSaid: refusal }, commands: [say(event)] };
}

/** The closes stop until the engine is down again and a rule holds: said (and paged) with why. */
function held(view: SwitchView, esc: EscalationModel, why: string): Step {
  return {
    model: { ...esc, closing: "held", heldWhy: why, killPass: false },
    wakeAt: null,
    commands: [
      say({
        type: "escalationHeld",
        rule: "halted",
        reason: why,
        gate: `HALTED (${view.halted?.reason ?? ""}); closes resume when the engine is down again and a rule holds, and only \`hl-deadman reset\` releases the account${esc.remaining ? `; positions left at the last read: ${esc.remaining}` : ""}`,
      }),
    ],
  };
}

/**
 * The engine's state changed: what the ladder decides (its engine-down clock, a retry held while the engine is
 * up, closes that resume on a new death); the switch applies it with the engine-down policy's.
 */
export function escalationEngine(
  cfg: Cfg,
  view: SwitchView,
  esc: EscalationModel,
  now: FeatureNow,
  up: boolean,
  cause: EngineDownCause = "seen",
): Step {
  const halted = view.halted !== null;
  if (up) {
    const upEsc: EscalationModel = {
      ...esc,
      downSinceMono: null,
      downCause: null,
      baseline: null,
      passDown: false,
    };
    // No retry fires while the engine is up; a pass out stops at its next order (closeHold) and is held when it
    // answers (escalationClosed). An operator's kill pass goes on: the command is its evidence.
    if (halted && esc.closing === "retry") return held(view, upEsc, ENGINE_BACK);
    return {
      model: upEsc,
      wakeAt: null,
      commands:
        halted && esc.closing === "waiting" && !esc.killPass
          ? [
              say({
                type: "escalationHeld",
                rule: "halted",
                reason: ENGINE_BACK,
                gate: "the pass out stops before its next order",
              }),
            ]
          : [],
    };
  }
  let downEsc: EscalationModel = {
    ...esc,
    downSinceMono: now.mono,
    downCause: cause,
    baseline: esc.exposure?.accountValue ?? null,
  };
  // A latched account whose closes were done may have been traded again while the engine was up: its closes
  // resume on this death as on the first, when a rule holds.
  if (halted && esc.closing === "done")
    downEsc = {
      ...downEsc,
      closing: "held",
      heldWhy: "the engine came back after the positions were closed",
    };
  const clock =
    cfg?.afterDownMs != null && (!halted || downEsc.closing === "held" || downEsc.closing === "idle")
      ? { wakeAt: now.mono + cfg.afterDownMs }
      : {};
  return { model: downEsc, commands: [], ...clock };
}

/**
 * At start: a latch whose pass was open when the daemon stopped (written ahead, escalationCheck) is neither
 * forgotten nor taken as evidence. It is said at once ("closing stopped at restart", with the positions the last
 * read left) and held: it resumes when the engine is down (as this run sees it) and a rule holds.
 */
export function escalationStart(cfg: Cfg, view: SwitchView, esc: EscalationModel): Step {
  const h = view.halted;
  if (h === null) return none(esc);
  const remaining = h.remaining ?? "";
  if (h.closing === "done") return none({ ...esc, closing: "done", passes: h.pass ?? 0, remaining });
  // (a ledger written before the pass state was kept says nothing of it: taken as open)
  const next: EscalationModel = {
    ...esc,
    closing: "held",
    passes: h.pass ?? 0,
    heldWhy: STOPPED_AT_RESTART,
    remaining,
  };
  // the guard may have said the engine is down before the start: the time rule counts from then
  const after = cfg?.afterDownMs;
  return {
    model: next,
    ...(next.downSinceMono !== null && after != null ? { wakeAt: next.downSinceMono + after } : {}),
    commands: [
      say({
        type: "closeStoppedAtRestart",
        pass: h.pass ?? 0,
        since: h.since,
        reason: h.reason,
        remaining,
      }),
    ],
  };
}

/** The exposure poll's figures for this account, kept for the rules (the step then checks them). */
export function escalationExposure(
  esc: EscalationModel,
  ev: Extract<EscalationInput, { type: "exposure" }>,
): EscalationModel {
  // The engine went down before any poll (a restart, an engine that never connected): the level "when the engine
  // went down" is unknown, and without one the drawdown rule could never hold for the whole outage. The first
  // figure after its death is the nearest known level.
  const baseline = esc.downSinceMono !== null && esc.baseline === null ? ev.accountValue : esc.baseline;
  return {
    ...esc,
    baseline,
    exposure: {
      accountValue: ev.accountValue,
      notionalUsd: ev.notionalUsd,
      minLiquidationPct: ev.minLiquidationPct,
    },
  };
}

/**
 * Whether step 2 starts now (a rule holds and the account is not latched yet), or a latched account's close is due
 * again. Checked on every tick, wake-up and exposure poll while running.
 */
export function escalationCheck(cfg: Cfg, view: SwitchView, esc: EscalationModel, now: FeatureNow): Step {
  if (!cfg || !view.running) return none(esc);
  const halted = view.halted !== null;
  // latched: only held closes resume (the engine down again, a rule holding), or a kill's latch without a pass
  // yet (`idle`) starts them; a pass out or due is not doubled, and a finished one waits for the next death
  if (halted && esc.closing !== "held" && esc.closing !== "idle") return none(esc);
  if (view.engineUp) return none(esc);
  const hit = escalationRule(cfg, esc, now.mono);
  if (!hit) return none(esc);
  if (halted) {
    const resumed = say({
      type: "escalationResumed",
      rule: hit.rule,
      reason: hit.reason,
      pass: esc.passes + 1,
      held: esc.heldWhy ?? "",
    });
    return andThen({ model: esc, commands: [resumed] }, (e) => closeNow(cfg, view, e, now));
  }
  // Closing is not safe twice: with two replicas only the lease holder closes (src/switch/coordination.ts). The
  // other one says so once and latches nothing; it closes if it wins the lease while the rule still holds.
  const gate = view.gate;
  if (gate !== null)
    return heldOnce(esc, gate, { type: "escalationHeld", rule: hit.rule, reason: hit.reason, gate });
  // The latch goes to disk before the first close order leaves: a restart finds the account HALTED.
  const latch: HaltedLatch = { since: Math.floor(now.wall), reason: hit.reason };
  const latched: Step = {
    model: { ...esc, passes: 0, remaining: "" },
    commands: [
      { kind: "halted", latch },
      say({ type: "escalated", rule: hit.rule, reason: hit.reason, ...tokenOf(view) }),
    ],
  };
  return andThen(latched, (e) => closeNow(cfg, { ...view, halted: latch }, e, now));
}

/** The escalation's wake-up is due: the time rule, or a latched account's close pass to try again. */
export function escalationDue(cfg: Cfg, view: SwitchView, esc: EscalationModel, now: FeatureNow): Step {
  if (view.halted === null || esc.closing === "held" || esc.closing === "idle")
    return escalationCheck(cfg, view, esc, now);
  if (esc.closing === "retry" && view.running && cfg && !view.engineUp) return closeNow(cfg, view, esc, now);
  return none(esc);
}

const tokenOf = (view: SwitchView): { token?: string } =>
  view.token === undefined ? {} : { token: view.token };

/** A close pass of the escalation's own, asked of the switch's driver when it opens. */
function closeNow(cfg: Cfg, view: SwitchView, esc: EscalationModel, now: FeatureNow): Step {
  const { step, pass } = closePass(cfg, view, esc, now);
  return pass === null
    ? step
    : {
        ...step,
        commands: [...step.commands, { kind: "effect", effect: { kind: "closePositions", ...pass } }],
      };
}

/** Opens the next close pass (written ahead with the latch), or holds it: the step, and the pass it opens. */
function closePass(
  cfg: Cfg,
  view: SwitchView,
  esc: EscalationModel,
  now: FeatureNow,
  kill = false,
): { step: Step; pass: ClosePass | null } {
  if (view.engineUp && !kill) return { step: held(view, esc, ENGINE_BACK), pass: null };
  // A latched account whose lease went to another replica: its pass waits (the holder closes on its own rules).
  const gate = view.gate;
  if (gate !== null) {
    const said = heldOnce(esc, gate, {
      type: "escalationHeld",
      rule: "halted",
      reason: view.halted?.reason ?? "",
      gate,
    });
    return {
      step: {
        model: { ...said.model, closing: "retry" },
        commands: said.commands,
        wakeAt: now.mono + (cfg?.retryMs ?? 30_000),
      },
      pass: null,
    };
  }
  const passes = esc.passes + 1;
  // The pass is written ahead, with the latch: a restart finds it open (escalationStart) and resumes or reports
  // it. No close order leaves before the write is durable (within the budget: the switch's driver).
  const halted = view.halted!;
  return {
    step: {
      model: {
        ...esc,
        closing: "waiting",
        passes,
        killPass: kill,
        heldWhy: null,
        heldSaid: null,
        passToken: view.token ?? null,
        passDown: !view.engineUp,
      },
      commands: [{ kind: "halted", latch: { ...halted, closing: "open", pass: passes }, write: "sync" }],
      wakeAt: null,
    },
    pass: { reason: halted.reason, pass: passes },
  };
}

/**
 * A close pass answered: the pass's end on disk, then done, held (the engine back, the daemon stopping, an account
 * not opted in) or tried again after `retryMs`.
 */
export function escalationClosed(
  cfg: Cfg,
  view: SwitchView,
  esc: EscalationModel,
  now: FeatureNow,
  ev: CloseResult,
): Step {
  if (esc.closing !== "waiting") return none(esc);
  const fields = { pass: esc.passes, orders: ev.orders, filledUsd: ev.filledUsd, flat: ev.flat };
  const reports = (ev.reports ?? []).slice(0, CLOSE_REPORTS_KEPT);
  const token = esc.passToken;
  const said: FeatureCommand[] =
    reports.length > 0
      ? [
          say({
            type: "closeOrders",
            pass: esc.passes,
            orders: reports,
            ...(token !== null ? { token } : {}),
          }),
        ]
      : [];
  const remaining = ev.flat ? "" : (ev.remaining ?? esc.remaining);
  const halted = view.halted;
  // the pass's end on disk: done, or open with what is left
  const latch: FeatureCommand[] =
    halted !== null
      ? [
          {
            kind: "halted",
            latch: { ...halted, closing: ev.flat ? "done" : "open", remaining: remaining.slice(0, 500) },
            write: "persist",
          },
        ]
      : [];
  const after: EscalationModel = { ...esc, remaining, killPass: false };
  const then = (s: Step): Step => ({ ...s, commands: [...latch, ...said, ...s.commands] });
  if (ev.flat)
    return then({
      model: { ...after, closing: "done" },
      commands: [say({ type: "closeDone", ...fields, dust: ev.dust })],
    });
  const incomplete = (retryInMs: number | null): FeatureCommand =>
    say({
      type: "closeIncomplete",
      ...fields,
      refusal: ev.refusal,
      detail: ev.detail ?? null,
      retryInMs,
    });
  const heldAfter = (why: string): Step => {
    const h = held(view, after, why);
    return then({ ...h, commands: [incomplete(null), ...h.commands] });
  };
  // The engine back (or the daemon stopping): no retry fires; held until the engine is down again and a rule holds.
  if (view.engineUp || !view.running) {
    if (view.running) return heldAfter(ev.refusal === "held" && ev.detail ? ev.detail : ENGINE_BACK);
    return then({
      model: { ...after, closing: "held", heldWhy: STOPPED_AT_RESTART },
      commands: [incomplete(null)],
    });
  }
  // A kill's pass on an account not opted in: no rule of the escalation goes on with it.
  if (!cfg)
    return heldAfter(
      "the account is not opted in to the escalation: no further pass runs on its own; `hl-deadman kill --close` again",
    );
  // The engine came back while the pass was out: the death it acted on is over, even if the engine is down again
  // now. Held: the closes resume only on a rule of the new death (escalationCheck).
  if (!esc.passDown) return heldAfter(esc.killPass ? KILL_UNDER_LIVE_ENGINE : ENGINE_CAME_BACK);
  return then({
    model: { ...after, closing: "retry" },
    wakeAt: now.mono + cfg.retryMs,
    commands: [incomplete(cfg.retryMs)],
  });
}

/** The operator's `reset`: releases the latch (on disk), and says who and what was released; or refuses, saying why. */
export function escalationReset(
  cfg: Cfg,
  view: SwitchView,
  esc: EscalationModel,
  now: FeatureNow,
  ev: { by: string },
): Step {
  const refused = (reason: string): Step => ({
    model: esc,
    commands: [say({ type: "resetRefused", by: ev.by, reason })],
  });
  const halted = view.halted;
  // A reset carried out by two replicas at once is not the operator's one decision: only the lease holder.
  if (view.gate !== null) return refused(view.gate);
  if (halted === null) return refused("the account is not HALTED");
  if (esc.closing === "waiting") return refused("a close pass is running; try again when it has answered");
  let next: EscalationModel = {
    ...esc,
    closing: "idle",
    passes: 0,
    killPass: false,
    heldWhy: null,
    remaining: "",
  };
  let wakeAt: number | null = null;
  // Still down: the time rule counts from the reset, not from the engine's death (else it would latch again at once).
  if (next.downSinceMono !== null) {
    next = { ...next, downSinceMono: now.mono };
    const after = cfg?.afterDownMs;
    if (after != null) wakeAt = now.mono + after;
  }
  return {
    model: next,
    wakeAt,
    commands: [
      { kind: "halted", latch: null, write: "persist" },
      say({ type: "haltReleased", by: ev.by, since: halted.since, reason: halted.reason, ...tokenOf(view) }),
    ],
  };
}

/**
 * The operator's kill switch (`hl-deadman kill`): the command is the evidence, so no rule need hold and the
 * engine's presence does not stop it. It latches the account HALTED (on disk before anything leaves), asks the
 * driver to cancel every resting order at once and, with `close`, runs one close pass of its own (reduce-only, as
 * the escalation's). Later passes, if it does not finish, follow the escalation's rules (only while the engine is
 * down and a rule holds). Only `reset` releases the latch.
 */
export function escalationKill(
  cfg: Cfg,
  view: SwitchView,
  esc: EscalationModel,
  now: FeatureNow,
  ev: { by: string; close: boolean },
): Step {
  const refuse = (reason: string): Step => ({
    model: esc,
    commands: [say({ type: "killRefused", by: ev.by, reason })],
  });
  if (!view.running) return refuse("the daemon is stopping");
  // Two replicas killing at once is not the operator's one decision: only the lease holder acts.
  if (view.gate !== null) return refuse(view.gate);
  const reason = `the operator's kill (${ev.by})`;
  const latched = view.halted !== null;
  const latch: HaltedLatch = { since: Math.floor(now.wall), reason: reason.slice(0, 500) };
  const first: Step = latched
    ? none(esc)
    : {
        model: { ...esc, passes: 0, remaining: "" },
        commands: [{ kind: "halted", latch, write: "sync" }],
      };
  const k: SwitchView = latched ? view : { ...view, halted: latch };
  return andThen(first, (e) => {
    // A close pass already out is the kill's close: it is not doubled.
    const close = ev.close && e.closing !== "waiting";
    const said = say({
      type: "killed",
      by: ev.by,
      close: ev.close,
      latched: !latched,
      ...(ev.close && !close ? { detail: "a close pass is already out: it is the kill's close" } : {}),
      ...tokenOf(k),
    });
    // the kill's close, if it opens, leaves after the kill's cancels
    const { step, pass } = close ? closePass(cfg, k, e, now, true) : { step: none(e), pass: null };
    return {
      ...step,
      commands: [
        said,
        ...step.commands,
        { kind: "effect", effect: { kind: "kill", by: ev.by, ...(pass !== null ? { close: pass } : {}) } },
      ],
    };
  });
}

/** One input: the rules above, on the escalation's model and the switch's view. */
export function escalationStep(
  model: EscalationModel,
  view: SwitchView,
  input: EscalationInput,
  now: FeatureNow,
  cfg: Cfg,
): Step {
  // A refusal said while the gate was shut is said again once it has opened and shut again.
  const esc = view.gate === null && model.heldSaid !== null ? { ...model, heldSaid: null } : model;
  switch (input.type) {
    case "start":
      return escalationStart(cfg, view, esc);
    case "engine":
      return escalationEngine(cfg, view, esc, now, input.up, input.cause);
    case "exposure":
      return escalationCheck(cfg, view, escalationExposure(esc, input), now);
    case "check":
      return escalationCheck(cfg, view, esc, now);
    case "due":
      return escalationDue(cfg, view, esc, now);
    case "closeResult":
      return escalationClosed(cfg, view, esc, now, input);
    case "reset":
      return escalationReset(cfg, view, esc, now, input);
    case "kill":
      return escalationKill(cfg, view, esc, now, input);
  }
}

/** The escalation as the switch is handed it (core/feature.ts `EscalationMachine`). */
export const escalation: EscalationMachine<EscalationModel> = {
  initial: initialEscalation,
  step: escalationStep,
  status: escalationStatus,
  closeHold,
};
