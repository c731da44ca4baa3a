/** The replicas' election as the switch's model holds it (coordination.ts has the rules). */

/**
 * Another replica's membership as read at a stop (src/app/parts/coordination.ts): its key outlives its lease, and
 * says `stopped` only after that replica resigned on a graceful stop (until it stands again).
 */
export type MemberMark = { id: string; replica: string; stopped: boolean };

/** Where this replica stands in the election: `none` without coordination. */
export type CoordinationRole = "none" | "leader" | "follower" | "lost";

export type CoordinationModel = {
  role: CoordinationRole;
  /**
   * the fencing token: the election key's create revision while this replica holds the lease; at a stop, the
   * revision of the read that found no other candidate
   */
  token: string | null;
  /** another live candidate is present (null: unknown, etcd not read) */
  othersAlive: boolean | null;
  /**
   * the other replicas' membership marks, read after this replica resigned at a stop; null: not read (while
   * running, or the read failed)
   */
  members: readonly MemberMark[] | null;
  /** why, for people (etcd's error, the other replica) */
  detail: string | null;
};

export const initialCoordination = (coordinated: boolean): CoordinationModel => ({
  role: coordinated ? "lost" : "none",
  token: null,
  othersAlive: null,
  members: null,
  detail: coordinated ? "etcd not reached yet" : null,
});
