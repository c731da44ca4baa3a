/**
 * The drill, a sub-step of the switch machine (docs/operations.md, "The drill"): the running daemon proves,
 * on demand, that the exchange really cancels the account's orders when the pushes stop.
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
 */
import { andThen, type Decision, merge } from "./context.js";
import { gateRefusal, gateToken } from "./coordination.js";
import type { Event, Now, SwitchModel } from "./model.js";
import { ownFire } from "./triggers.js";

export type { DrillModel } from "./drill-model.js";

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

/** Why a drill cannot start now, or null. */
export function drillRefusal(m: SwitchModel): string | null {
  if (m.phase.name !== "running") return "the switch is not running";
  // A drill spends one of the day's triggers: two replicas must not both run it (coordination.ts).
  const gate = gateRefusal(m);
  if (gate !== null) return gate;
  // The other replica's next push would replace the drill's 8 s schedule (last write wins) and fail the drill.
  if (m.coord.role !== "none" && m.coord.othersAlive === true)
    return "another replica is alive and pushing: its next push would replace the drill's schedule; stop it with --on-shutdown keep for the drill, then start it again";
  if (m.drill) return `drill ${m.drill.id} is running`;
  if (!m.engineUp) return "the engine is down: the switch is protecting the account for real";
  if (m.entry.halted !== undefined) return "the account is HALTED";
  if (m.state !== "armed") return `the switch is ${m.state}, not armed`;
  const left = m.entry.limit - m.entry.triggersToday;
  if (left < 2)
    return `only ${left} trigger(s) left today: a drill spends one and one must stay for a real death`;
  return null;
}

/** The operator's drill: refused with its reason, or started (its order placed first). */
export function drillStart(m: SwitchModel, now: Now, ev: Extract<Event, { type: "drillStart" }>): Decision {
  const refusal = drillRefusal(m);
  if (refusal !== null) return { events: [{ type: "drillRefused", id: ev.id, by: ev.by, reason: refusal }] };
  const left = m.entry.limit - m.entry.triggersToday;
  const token = gateToken(m);
  return {
    set: {
      drill: {
        id: ev.id,
        by: ev.by,
        phase: "placing",
        oid: null,
        coin: null,
        cancelAt: null,
        startedAt: Math.floor(now.wall),
      },
    },
    effects: [{ kind: "drillPlace", id: ev.id }],
    events: [
      {
        type: "drillStarted",
        id: ev.id,
        by: ev.by,
        triggersLeft: left,
        ...(token !== undefined ? { token } : {}),
      },
    ],
  };
}

/** The drill's order was placed (the drill's push now), or not (the drill ends). */
export function drillPlaced(m: SwitchModel, ev: Extract<Event, { type: "drillPlaced" }>): Decision {
  const d = m.drill;
  if (!d || d.id !== ev.id || d.phase !== "placing")
    // a drill ended meanwhile: its order, if any, must not stay on the book
    return ev.oid !== null && ev.coin !== null
      ? { effects: [{ kind: "drillCancel", oid: ev.oid, coin: ev.coin }] }
      : {};
  if (ev.oid === null || ev.coin === null)
    return drillEnded(m, {
      fired: false,
      status: null,
      statusTimestamp: null,
      detail: `the drill's order was not placed: ${ev.detail ?? "no reason given"}`,
    });
  return { set: { drill: { ...d, phase: "arming", oid: ev.oid, coin: ev.coin } }, push: "drill" };
}

/** The push mode's lead when the drill arms. */
export const drillArming = (m: SwitchModel) => m.drill?.phase === "arming";

/** The drill's push was confirmed: hold the pushes until it fires. */
export function drillArmed(m: SwitchModel, now: Now, cancelAt: number): Decision {
  const d = m.drill;
  if (!d) return {};
  return {
    set: { drill: { ...d, phase: "firing", cancelAt } },
    wake: { drill: now.mono + (cancelAt - now.wall) + DRILL_VERIFY_MARGIN_MS },
  };
}

/**
 * The drill's push failed. An explicit refusal armed nothing: the drill ends. An unknown outcome may have armed
 * the drill's deadline: the drill goes on to its verification (the order's status says what happened).
 */
export function drillPushFailed(
  m: SwitchModel,
  now: Now,
  cancelAt: number,
  outcomeUnknown: boolean,
  message: string,
): Decision {
  if (!m.drill) return {};
  if (outcomeUnknown) return drillArmed(m, now, cancelAt);
  return drillEnded(m, {
    fired: false,
    status: null,
    statusTimestamp: null,
    detail: `the drill's push was refused: ${message}`,
  });
}

/** The drill's wake-up: its deadline and margin have passed: read the order's status. */
export function drillDue(m: SwitchModel): Decision {
  const d = m.drill;
  if (d?.phase !== "firing" || d.oid === null || d.coin === null) return {};
  return {
    set: { drill: { ...d, phase: "verifying" } },
    effects: [{ kind: "drillVerify", id: d.id, oid: d.oid, coin: d.coin }],
  };
}

/**
 * The drill's order as read after its deadline: the drill ends, fired or not; a fire's trigger is proven by the
 * drill's own order (triggers.ts `ownFire`). Decided, not applied (context.ts `Decision`).
 */
export function drillVerified(
  m: SwitchModel,
  now: Now,
  ev: Extract<Event, { type: "drillVerified" }>,
): Decision {
  const d = m.drill;
  if (!d || d.id !== ev.id || d.phase !== "verifying") return {};
  const fired = ev.status === "scheduledCancel";
  const ended = drillEnded(m, {
    fired,
    status: ev.status,
    statusTimestamp: ev.statusTimestamp,
    detail: fired
      ? "the exchange cancelled the drill's order at the drill's deadline (status scheduledCancel)"
      : `the drill's order is ${ev.status ?? "unknown"}${ev.detail ? ` (${ev.detail})` : ""}, not scheduledCancel: the switch did NOT prove itself`,
  });
  // The trigger the drill spent is counted by the usual rule; the drill's own order, read back `scheduledCancel`,
  // proves it (not a guess), and the record is read as after any fire.
  return andThen(m, ended, (e) =>
    merge(fired && d.cancelAt !== null && d.oid !== null ? ownFire(e, now, d.cancelAt, d.oid) : {}, {
      effects: [{ kind: "readRecord", reason: "drill" }],
    }),
  );
}

/**
 * The drill ends now (done, failed, or aborted): its order is cancelled when it may still rest; pushes resume.
 * Decided (context.ts `Decision`), not applied: nothing when no drill runs.
 */
export function drillEnded(m: SwitchModel, o: Omit<DrillOutcome, "id" | "cancelAt">): Decision {
  const d = m.drill;
  if (!d) return {};
  return {
    set: { drill: null },
    wake: { drill: null },
    effects:
      !o.fired && d.oid !== null && d.coin !== null
        ? [{ kind: "drillCancel", oid: d.oid, coin: d.coin }]
        : [],
    events: [
      {
        type: "drillDone",
        id: d.id,
        by: d.by,
        fired: o.fired,
        status: o.status,
        statusTimestamp: o.statusTimestamp,
        cancelAt: d.cancelAt,
        detail: o.detail,
      },
    ],
  };
}

/** Pushes are held from the drill's confirmed push until its verification is done. */
export const drillHoldsPushes = (m: SwitchModel) =>
  m.drill !== null && (m.drill.phase === "firing" || m.drill.phase === "verifying");
