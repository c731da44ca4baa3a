/**
 * The drill, a machine of its own fed the switch's events (docs/operations.md, "The drill"): the running daemon
 * proves, on demand, that the exchange really cancels the account's orders when the pushes stop.
 *
 * Steps: (1) `drillStart` is accepted only while the account is armed, the engine up, not HALTED, and at least two
 * of the day's triggers are left (the drill spends one; one stays for a real death); (2) the driver places one
 * small resting order far from the market (`drillPlace`); (3) the next push is the drill's, a cancel time
 * `DRILL_LEAD_MS` ahead; (4) no push until that time has passed (the trigger is counted by the usual rule when
 * the deadline passes) and a short margin more; (5) the driver reads the order's status (`drillVerify`): the
 * exchange's `scheduledCancel` proves the fire; (6) the pushes resume at once, and the record is read (the
 * trigger's proof becomes the exchange's orders). Anything that goes wrong before the drill's push is confirmed
 * (an order not placed, a push refused, the engine down, a stop) ends the drill and cancels its order; the
 * ordinary switch goes on as if nothing had happened.
 *
 * Pure: each rule decides on the drill's model and the switch's view (core/feature.ts `SwitchView`) and returns its
 * next model, its commands and its wake-up; the switch carries the commands out.
 */
import type {
  DrillInput,
  DrillMachine,
  FeatureCommand,
  FeatureNow,
  FeatureStatus,
  FeatureStep,
  SwitchView,
} from "../core/feature.js";
import type { DrillModel, DrillState } from "./model.js";

type Step = FeatureStep<DrillState>;

/** The drill's push: the exchange's minimum lead (5 s) plus a margin for the request's own time. */
export const DRILL_LEAD_MS = 8_000;
/** After the drill's deadline, the exchange's orders are read this much later (its fire and its record). */
export const DRILL_VERIFY_MARGIN_MS = 3_000;

export type DrillOutcome = {
  id: string;
  fired: boolean;
  /** the order's status as read (scheduledCancel proves the fire) */
  status: string | null;
  statusTimestamp: number | null;
  cancelAt: number | null;
  detail: string;
};

const none = (model: DrillState): Step => ({ model, commands: [] });

/** Why a drill cannot start now, or null. */
export function drillRefusal(d: DrillState, view: SwitchView): string | null {
  if (!view.running) return "the switch is not running";
  // A drill spends one of the day's triggers: two replicas must not both run it (src/switch/coordination.ts).
  if (view.gate !== null) return view.gate;
  // The other replica's next push would replace the drill's 8 s schedule (last write wins) and fail the drill.
  if (view.coordinated && view.othersAlive === true)
    return "another replica is alive and pushing: its next push would replace the drill's schedule; stop it with --on-shutdown keep for the drill, then start it again";
  if (d) return `drill ${d.id} is running`;
  if (!view.engineUp) return "the engine is down: the switch is protecting the account for real";
  if (view.halted !== null) return "the account is HALTED";
  if (view.state !== "armed") return `the switch is ${view.state}, not armed`;
  const left = view.triggersLeft;
  if (left < 2)
    return `only ${left} trigger(s) left today: a drill spends one and one must stay for a real death`;
  return null;
}

/** The operator's drill: refused with its reason, or started (its order placed first). */
export function drillStart(
  d: DrillState,
  view: SwitchView,
  now: FeatureNow,
  ev: { id: string; by: string },
): Step {
  const refusal = drillRefusal(d, view);
  if (refusal !== null)
    return {
      model: d,
      commands: [{ kind: "event", event: { type: "drillRefused", id: ev.id, by: ev.by, reason: refusal } }],
    };
  const token = view.token;
  return {
    model: {
      id: ev.id,
      by: ev.by,
      phase: "placing",
      oid: null,
      coin: null,
      cancelAt: null,
      startedAt: Math.floor(now.wall),
    },
    commands: [
      { kind: "effect", effect: { kind: "drillPlace", id: ev.id } },
      {
        kind: "event",
        event: {
          type: "drillStarted",
          id: ev.id,
          by: ev.by,
          triggersLeft: view.triggersLeft,
          ...(token !== undefined ? { token } : {}),
        },
      },
    ],
  };
}

/** The drill's order was placed (the drill's push now), or not (the drill ends). */
export function drillPlaced(d: DrillState, ev: Extract<DrillInput, { type: "placed" }>): Step {
  if (!d || d.id !== ev.id || d.phase !== "placing")
    // a drill ended meanwhile: its order, if any, must not stay on the book
    return ev.oid !== null && ev.coin !== null
      ? {
          model: d,
          commands: [{ kind: "effect", effect: { kind: "drillCancel", oid: ev.oid, coin: ev.coin } }],
        }
      : none(d);
  if (ev.oid === null || ev.coin === null)
    return drillEnded(d, {
      fired: false,
      status: null,
      statusTimestamp: null,
      detail: `the drill's order was not placed: ${ev.detail ?? "no reason given"}`,
    });
  return {
    model: { ...d, phase: "arming", oid: ev.oid, coin: ev.coin },
    commands: [{ kind: "push", reason: "drill" }],
  };
}

/** The drill's push was confirmed: hold the pushes until it fires. */
export function drillArmed(d: DrillState, now: FeatureNow, cancelAt: number): Step {
  if (!d) return none(d);
  return {
    model: { ...d, phase: "firing", cancelAt },
    commands: [],
    wakeAt: now.mono + (cancelAt - now.wall) + DRILL_VERIFY_MARGIN_MS,
  };
}

/**
 * The drill's push failed. An explicit refusal armed nothing: the drill ends. An unknown outcome may have armed
 * the drill's deadline: the drill goes on to its verification (the order's status says what happened).
 */
export function drillPushFailed(
  d: DrillState,
  now: FeatureNow,
  ev: Extract<DrillInput, { type: "pushFailed" }>,
): Step {
  if (!d) return none(d);
  if (ev.outcomeUnknown) return drillArmed(d, now, ev.cancelAt);
  return drillEnded(d, {
    fired: false,
    status: null,
    statusTimestamp: null,
    detail: `the drill's push was refused: ${ev.message}`,
  });
}

/**
 * The drill's wake-up: its deadline and margin have passed: the trigger it spent is counted by the usual rule,
 * then the order's status is read.
 */
export function drillDue(d: DrillState): Step {
  const lapse: FeatureCommand = { kind: "checkLapse" };
  if (d?.phase !== "firing" || d.oid === null || d.coin === null) return { model: d, commands: [lapse] };
  return {
    model: { ...d, phase: "verifying" },
    commands: [
      lapse,
      { kind: "effect", effect: { kind: "drillVerify", id: d.id, oid: d.oid, coin: d.coin } },
    ],
  };
}

/**
 * The drill's order as read after its deadline: the drill ends, fired or not; a fire's trigger is proven by the
 * drill's own order (the switch's `ownFire`); the pushes resume at once.
 */
export function drillVerified(d: DrillState, ev: Extract<DrillInput, { type: "verified" }>): Step {
  const resume: FeatureCommand = { kind: "push", reason: "drill-done" };
  if (!d || d.id !== ev.id || d.phase !== "verifying") return { model: d, commands: [resume] };
  const fired = ev.status === "scheduledCancel";
  const ended = drillEnded(d, {
    fired,
    status: ev.status,
    statusTimestamp: ev.statusTimestamp,
    detail: fired
      ? "the exchange cancelled the drill's order at the drill's deadline (status scheduledCancel)"
      : `the drill's order is ${ev.status ?? "unknown"}${ev.detail ? ` (${ev.detail})` : ""}, not scheduledCancel: the switch did NOT prove itself`,
  });
  // The trigger the drill spent is counted by the usual rule; the drill's own order, read back `scheduledCancel`,
  // proves it (not a guess), and the record is read as after any fire.
  const proof: FeatureCommand[] =
    fired && d.cancelAt !== null && d.oid !== null
      ? [{ kind: "ownFire", cancelAt: d.cancelAt, oid: d.oid }]
      : [];
  return {
    ...ended,
    commands: [
      ...ended.commands,
      ...proof,
      { kind: "effect", effect: { kind: "readRecord", reason: "drill" } },
      resume,
    ],
  };
}

/**
 * The drill ends now (done, failed, or aborted): its order is cancelled when it may still rest; pushes resume.
 * Nothing when no drill runs.
 */
export function drillEnded(d: DrillState, o: Omit<DrillOutcome, "id" | "cancelAt">): Step {
  if (!d) return none(d);
  return {
    model: null,
    wakeAt: null,
    commands: [
      ...(!o.fired && d.oid !== null && d.coin !== null
        ? [{ kind: "effect", effect: { kind: "drillCancel", oid: d.oid, coin: d.coin } } as const]
        : []),
      {
        kind: "event",
        event: {
          type: "drillDone",
          id: d.id,
          by: d.by,
          fired: o.fired,
          status: o.status,
          statusTimestamp: o.statusTimestamp,
          cancelAt: d.cancelAt,
          detail: o.detail,
        },
      },
    ],
  };
}

/** One input: the rules above, on the drill's model and the switch's view. */
export function drillStep(d: DrillState, view: SwitchView, input: DrillInput, now: FeatureNow): Step {
  switch (input.type) {
    case "start":
      return drillStart(d, view, now, input);
    case "placed":
      return drillPlaced(d, input);
    case "pushConfirmed":
      return drillArmed(d, now, input.cancelAt);
    case "pushFailed":
      return drillPushFailed(d, now, input);
    case "due":
      return drillDue(d);
    case "verified":
      return drillVerified(d, input);
    case "end":
      return drillEnded(d, { fired: false, status: null, statusTimestamp: null, detail: input.detail });
  }
}

/** The push mode's lead when the drill arms: the switch's next push is the drill's. */
export const drillPushLead = (d: DrillState): number | null => (d?.phase === "arming" ? DRILL_LEAD_MS : null);

/** Pushes are held from the drill's confirmed push until its verification is done. */
export const drillHoldsPushes = (d: DrillState): boolean =>
  d !== null && (d.phase === "firing" || d.phase === "verifying");

/** The drill as the status says it. */
export const drillStatus = (d: DrillState): FeatureStatus => ({
  drill: d ? { id: d.id, phase: d.phase, cancelAt: d.cancelAt } : null,
});

/** The drill as the switch is handed it (core/feature.ts `DrillMachine`). */
export const drill: DrillMachine<DrillState> = {
  initial: (): DrillState => null,
  step: drillStep,
  status: drillStatus,
  pushLeadMs: drillPushLead,
  holdsPushes: drillHoldsPushes,
};

export type { DrillModel };
