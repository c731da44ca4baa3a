/**
 * What every phase takes alike, handed here by each phase's own step (running.ts, stopping.ts) when an event is
 * not one of its own: the write-ahead's answers, the record, the agent, the engine, the engine-down policy's
 * cancels, the clock's step and the UTC day, a halt, the replicas' role, the operator's commands and the features'
 * answers (the escalation's, the drill's: features.ts). What they decide is applied (`Ctx.take`); a push it asks for
 * is the running phase's (`Ctx.kick`).
 */
import type { Ctx } from "./context.js";
import { coordination } from "./coordination.js";
import { engine, ordersCancelled } from "./engine-down.js";
import { drill, escalation } from "./features.js";
import type { Event } from "./model.js";
import { agent } from "./protection.js";
import { checkLapse, record } from "./triggers.js";
import { persisted } from "./write-ahead.js";

/** The drill's end when the engine goes down. */
const ENGINE_WENT_DOWN = { type: "end", detail: "the engine went down during the drill" } as const;

/** One event every phase takes alike (the phase's own step hands it here). */
export function stepShared(s: Ctx, ev: Event) {
  const m = s.m;
  switch (ev.type) {
    case "persisted":
      return s.take(persisted(m, ev));
    case "record":
      return s.take(record(m, s.now, s.times, ev.evidence, ev.detail));
    case "agent":
      return s.take(agent(m, ev.state, ev.detail));
    case "engine": {
      // what the engine-down policy, the escalation and the drill decide: the policy's applied last
      const cause = ev.cause === "absent" ? "absent" : "seen";
      const policy = engine(m, ev.up, ev.detail ?? null, cause);
      if (policy === null) return;
      s.apply(escalation(m, s.now, s.times, { type: "engine", up: ev.up, cause }));
      if (!ev.up) s.apply(drill(m, s.now, s.times, ENGINE_WENT_DOWN));
      return s.take(policy);
    }
    case "ordersCancelled":
      return s.take(ordersCancelled(m, s.now, ev));
    case "clockStep":
      m.clockStepped = true;
      s.emit({ type: "clockStepped", deltaMs: ev.deltaMs });
      s.apply(checkLapse(s.m, s.now, s.times));
      return s.kick("clock-step");
    case "dayRollover":
      s.apply(checkLapse(s.m, s.now, s.times));
      return s.kick("rollover");
    case "halt":
      return s.apply({ become: { to: "stopped", halted: true } });
    case "exposure":
    case "closeResult":
    case "reset":
    case "kill":
      return s.take(escalation(m, s.now, s.times, ev));
    case "killCancelled":
      return s.emit({
        type: "killCancelled",
        by: ev.by,
        confirmed: ev.confirmed,
        cancelled: ev.cancelled,
        kept: ev.kept,
        ...(ev.detail ? { detail: ev.detail } : {}),
      });
    case "coordination":
      s.take(coordination(m, ev));
      // the lease won: a step-2 rule that held while another replica had it is acted on now
      return s.take(escalation(m, s.now, s.times, { type: "check" }));
    case "drillStart":
      return s.take(drill(m, s.now, s.times, { ...ev, type: "start" }));
    case "drillPlaced":
      return s.take(drill(m, s.now, s.times, { ...ev, type: "placed" }));
    case "drillVerified":
      // the drill's end asks for a push at once (the pushes resume)
      return s.take(drill(m, s.now, s.times, { ...ev, type: "verified" }));
  }
}
