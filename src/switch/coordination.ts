/**
 * Two replicas of the same accounts, a sub-step of the switch machine (docs/operations.md, "High
 * availability"). The replicas run a lease-backed election in etcd (src/app/parts/coordination.ts); the machine
 * takes the outcome as an input (`coordination` events) and decides here what this replica may do with it.
 *
 * Rules, and why:
 * - Pushes and the engine-down cancels are NEVER gated. Two replicas with the same interval and deadline pushing
 *   both is harmless (each accepted push replaces the schedule), and a cancel is safe to repeat ("already
 *   canceled" changes nothing). Protection never waits for a lease.
 * - What is not safe twice is gated: the escalation's close (step 2), the drill, the reset of a HALTED latch,
 *   and the removal of the schedule on a graceful stop. They are taken only by the lease holder (`leader`), or
 *   without coordination (`none`), or with etcd unreachable when the operator configured `actAlone`.
 * - The removal on a graceful stop has its own rule: only when no other live candidate remains AND every other
 *   replica's membership is marked stopped (etcd said both after this replica resigned). A member marks itself
 *   stopped only when it resigns on a graceful stop, so the mark is the other replica's own word that it no
 *   longer pushes. An expired lease without the mark is no evidence: a dead replica and one cut off from etcd
 *   (still pushing, still needing the schedule) look the same from here, so the schedule is kept. Another
 *   replica alive keeps the schedule armed by its own pushes; etcd unreachable (without actAlone) keeps it too:
 *   the stop cannot tell. A kept schedule fails safe (it fires at its deadline unless a replica pushes); a
 *   removal under a replica that still pushes would leave it unprotected until its next push, or for good had
 *   it died in between.
 * - A lease does not fence the exchange, which cannot check a token (Kleppmann on Redlock; client-go's
 *   leader-election warning): the holder's fencing token (the election key's create revision) goes into the log
 *   line and the audit record of every gated action, so two actions under two tokens can be told apart, and
 *   what runs behind the gate is safe if it ever runs twice (reduce-only closes, one drill order, an idempotent
 *   reset).
 */
import type { Decision } from "./context.js";
import type { CoordinationModel, MemberMark } from "./coordination-model.js";
import type { Event, SwitchModel } from "./model.js";

export type { CoordinationModel, CoordinationRole, MemberMark } from "./coordination-model.js";

/** Why this replica may not take a gated action now, or null when it may. */
export function gateRefusal(m: SwitchModel): string | null {
  const c = m.coord;
  switch (c.role) {
    case "none":
    case "leader":
      return null;
    case "follower":
      return `another replica holds the coordination lease${c.detail ? ` (${c.detail})` : ""}: only the lease holder takes this action`;
    case "lost":
      return m.cfg.actAlone
        ? null
        : `etcd is unreachable${c.detail ? ` (${c.detail})` : ""}: no action that is unsafe twice is taken without the lease (actAlone is off)`;
  }
}

/**
 * The token a gated action is taken under: the lease's fencing token; for a stopping replica's removal, the
 * revision of the read that found no other candidate; `alone` when acting without etcd under actAlone; undefined
 * without coordination (the field is then left out of the log and the audit record).
 */
export function gateToken(m: SwitchModel): string | undefined {
  const c = m.coord;
  if (c.role === "none") return undefined;
  if (c.role === "leader") return c.token ?? "unknown";
  // a stopping replica's removal: the revision of the read that found no other candidate
  if (c.role === "follower") return c.token ?? undefined;
  return "alone";
}

/** Why a graceful stop must keep the schedule rather than remove it, or null when it may remove it. */
export function removalRefusal(m: SwitchModel): string | null {
  const c = m.coord;
  if (c.role === "none") return null;
  if (c.role === "lost")
    return m.cfg.actAlone
      ? null
      : `etcd is unreachable${c.detail ? ` (${c.detail})` : ""}: whether another replica is alive is unknown, so the schedule is kept (it fires at its deadline unless a replica pushes; actAlone is off)`;
  if (c.othersAlive !== false)
    return c.othersAlive === true
      ? `another replica is alive and keeps the schedule armed${c.detail ? ` (${c.detail})` : ""}`
      : "whether another replica is alive is unknown: the schedule is kept";
  if (c.members === null)
    return "the replicas' membership was not read: whether another replica stopped on purpose is unknown, so the schedule is kept";
  const unmarked = c.members.filter((x) => !x.stopped);
  if (unmarked.length > 0)
    return `${unmarked
      .slice(0, 4)
      .map((x) => `replica ${x.id} (${x.replica})`)
      .join(
        ", ",
      )}${unmarked.length > 4 ? ` and ${unmarked.length - 4} more` : ""} ${unmarked.length === 1 ? "is" : "are"} not marked stopped: ${unmarked.length === 1 ? "its lease" : "their leases"} expired without a graceful stop (dead, or cut off from etcd and still pushing), so the schedule is kept (it fires at its deadline unless a replica pushes; 'hl-deadman replicas forget ID' declares a replica gone for good)`;
  return null;
}

/** The other replicas' membership marks (coordination-model.ts): absent, null, or a bounded list of marks. */
export function membersWellFormed(members: unknown): boolean {
  if (members === undefined || members === null) return true;
  return (
    Array.isArray(members) &&
    members.length <= 64 &&
    members.every(
      (x: unknown) =>
        x !== null &&
        typeof x === "object" &&
        typeof (x as MemberMark).id === "string" &&
        (x as MemberMark).id.length <= 64 &&
        typeof (x as MemberMark).replica === "string" &&
        (x as MemberMark).replica.length <= 400 &&
        typeof (x as MemberMark).stopped === "boolean",
    )
  );
}

/** The election's outcome changed (or was read again): the replica's role as reported, decided (not applied). */
export function coordination(m: SwitchModel, ev: Extract<Event, { type: "coordination" }>): Decision {
  if (m.coord.role === "none") return {}; // not coordinated: nothing to follow
  const coord: CoordinationModel = {
    ...m.coord,
    role: ev.role,
    token: ev.token,
    othersAlive: ev.othersAlive,
    members: ev.members ?? null,
    detail: ev.detail ?? null,
  };
  // (the gate just opened, the lease won: a held escalation goes now, the step asks it: machine.ts)
  return { set: { coord } };
}
