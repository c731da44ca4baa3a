/**
 * The replicas' election's events (src/replicas/election.ts), published on the daemon's bus under the module
 * `coordination`: the election words and counts nothing; its log lines (`coordination.*`, docs/daemon.md) and its
 * metrics (`hl_deadman_coordination_*`) are the subscribers of src/surface/replicas.ts.
 */

/** What another candidate says of itself, as read from its election key (src/replicas/candidacy.ts `Candidate`). */
export type CandidateFigures = {
  readonly replica: string;
  readonly intervalMs: number;
  readonly deadlineMs: number;
  readonly member?: string | undefined;
  readonly key: string;
  readonly createRevision: string;
};

/** What the election tells, as it publishes it on the bus: `{ module: "coordination", ...this }`. */
export type CoordinationFact =
  | {
      readonly type: "coordinationStarted";
      readonly endpoints: readonly string[];
      readonly election: string;
      readonly ttlSeconds: number;
      readonly actAlone: boolean;
      readonly member: string;
    }
  /**
   * Every evaluation of this replica's standing, changed or not (the metrics are set on each); `changed` when the
   * role, the token or `othersAlive` differ from the last (or it is the first, or a stop's): the line is said then.
   */
  | {
      readonly type: "coordinationEvaluated";
      readonly role: "leader" | "follower" | "lost";
      readonly token: string | null;
      readonly othersAlive: boolean | null;
      readonly detail: string | null;
      /** other candidates seen by the last read */
      readonly candidates: number;
      readonly changed: boolean;
      readonly election: string;
      readonly actAlone: boolean;
    }
  /**
   * The membership id could not be kept in the state directory (`unwritable`: an id of the host and the directory
   * is used) or its file was `replaced` by a new id; `error` says why.
   */
  | {
      readonly type: "memberIdUnkept";
      readonly cause: "unwritable" | "replaced";
      readonly member: string;
      readonly error: string;
    }
  /** this replica's membership key now says `state` (said when it changes) */
  | {
      readonly type: "memberMarked";
      readonly member: string;
      readonly state: "running" | "stopped";
      readonly key: string;
    }
  /** the `stopped` mark could not be written at a close */
  | { readonly type: "memberMarkFailed"; readonly member: string; readonly error: string }
  /** the campaign failed (it campaigns again); `repeated`: the same error as the last failure's */
  | { readonly type: "campaignFailed"; readonly error: string; readonly repeated: boolean }
  /** this replica's lease expired on etcd (a long partition): a new candidacy */
  | { readonly type: "leaseExpired" }
  /**
   * The other candidates' settings differ from this replica's (said when the set that differs changes):
   * `differing` every one, `shown` the first few (the line's `others` field).
   */
  | {
      readonly type: "settingsDiffer";
      readonly mine: { readonly intervalMs: number; readonly deadlineMs: number };
      readonly differing: readonly CandidateFigures[];
      readonly shown: readonly CandidateFigures[];
    };

export type CoordinationEvent = { readonly module: "coordination" } & CoordinationFact;
