/**
 * Status shapes shared by the switch (switch/index.ts), the exposure poller (watchers/exposure.ts), the guard
 * (watchers/guard.ts), the chain watch (watchers/chain-watch.ts) and the health server (surface/health.ts).
 */

/** Where one account's switch stands. */
export type SwitchState =
  /** started, no push confirmed yet */
  | "starting"
  /** last push confirmed; armedUntil is in the future */
  | "armed"
  /** a push failed; retrying while the confirmed deadline leaves room */
  | "retrying"
  /** the confirmed deadline passed without a newer confirmed push (a trigger was, or will be, counted) */
  | "lapsed"
  /** the daily trigger limit is reached; cannot protect until 00:00 UTC */
  | "exhausted"
  /** refused permanently (volume gate, unknown signer, vault not registered, address budget); re-checked slowly */
  | "not_protected"
  /** the engine guard says the engine is down: expedited or lapsing on purpose */
  | "engine_down"
  /** graceful stop: the schedule was removed or kept per --on-shutdown */
  | "stopped";

/** The part of a switch's status the protection watch reads (src/surface/notify/protection.ts). */
export type ProtectionView = Pick<SwitchStatus, "account" | "state" | "armedUntil" | "consecutiveFailures">;

export type SwitchStatus = {
  /** lower-case 0x address of the account whose orders the schedule cancels */
  account: string;
  state: SwitchState;
  /** cancel time (ms) of the last confirmed push, or null when nothing is known to be armed */
  armedUntil: number | null;
  /** when (local clock, ms) the last push was confirmed */
  lastPushAt: number | null;
  consecutiveFailures: number;
  lastError: { kind: string; message: string } | null;
  /** set when state is not_protected: the error kind (volume_gate, unknown_signer, vault_not_registered, address_budget) */
  notProtectedReason: string | null;
  /** UTC day of the ledger entry, YYYY-MM-DD */
  day: string;
  triggersToday: number;
  triggerLimit: number;
  /** the PROVEN daily limit: the exchange's own daily-limit refusal, or its scheduledCancel orders (or the limit assumed after an unreadable ledger) */
  exhausted: boolean;
  /** a wall-clock step was seen and no push has been confirmed on the corrected clock since */
  clockStepped?: boolean;
  /** the exchange refused a push today with its daily-limit error: the only count that stops the pushes */
  limitRefused?: boolean;
  /** the count reaches the limit without the exchange's proof (guesses, a record's lapses): not ready, pushes go on */
  limitSuspected?: boolean;
  /** today's count by proof (docs/daemon.md "What the switch believes about triggers") */
  triggerProofs?: Record<"limit_error" | "orders" | "record" | "guess" | "unrecorded" | "assumed", number>;
  /** today's counted triggers with their proof, oldest first */
  triggers?: { deadline: number | null; proof: "limit_error" | "orders" | "record" | "guess" }[];
  /** the local clock and the exchange's time disagree beyond a small bound (clock.suspect): not ready */
  clockSuspect?: boolean;
  /** no two witnesses agree on the exchange's time yet (the local clock alone never verifies it): not ready */
  clockUnverified?: boolean;
  /** local clock minus the exchange's time (ms): the verified time, else the candidate furthest from the local clock */
  clockOffMs?: number;
  /** HALTED: the escalation closed (or is closing) the positions; only an operator's `reset` releases it */
  halted?: {
    since: number;
    reason: string;
    /**
     * where the closes stand: `closing` (a pass out), `retrying` (due again while the engine is down), `held` (the
     * engine is back: they resume when it is down again and a rule holds), `stopped at restart` (a pass was open
     * when the daemon stopped; same), `closed` (the last pass left the account flat), `none` (no pass yet)
     */
    closes?: "closing" | "retrying" | "held" | "stopped at restart" | "closed" | "none";
    /** why the closes are held, when they are */
    heldWhy?: string | null;
    /** the positions left at the last pass's last read ("BTC 0.25, ETH -3"), "" when none */
    remaining?: string;
    /** close passes since the latch */
    passes?: number;
  } | null;
  /** a drill is running (the switch's own pushes pause for it): its id, step and deadline */
  drill?: { id: string; phase: string; cancelAt: number | null } | null;
};

export type ExposureStatus = {
  enabled: boolean;
  intervalMs: number;
  /** local ms of the last successful poll */
  lastSuccessAt: number | null;
  lastAttemptAt: number | null;
  lastError: string | null;
  /** estimated local clock minus exchange clock (ms), when known */
  clockSkewMs: number | null;
};

export type GuardStatus = {
  configured: boolean;
  /**
   * true while the engine is considered alive (always true when no guard is configured); the connection guard: no
   * account `down` and none `waiting` (a waiting account's engine has not been seen since the daemon started).
   * Readiness fails on `down` ("reports the trading engine down") and on `waiting` (its own reason) alike.
   */
  up: boolean;
  /** "file" | "url" | "socket" | null */
  kind: "file" | "url" | "socket" | null;
  lastCheckAt: number | null;
  detail: string | null;
  /**
   * the connection guard only: each account's engine (`waiting` until an engine first names it after the daemon
   * started: pushes go on, no cancel, and readiness says so)
   */
  accounts?: Readonly<Record<string, "waiting" | "up" | "detached" | "down">>;
};

/** The exposure status of a daemon that polls nothing (`exposureInterval` 0). */
export const EXPOSURE_OFF: Readonly<ExposureStatus> = Object.freeze({
  enabled: false,
  intervalMs: 0,
  lastSuccessAt: null,
  lastAttemptAt: null,
  lastError: null,
  clockSkewMs: null,
});

/** The guard status when no guard is configured: the engine counts as alive. */
export const NO_GUARD: Readonly<GuardStatus> = Object.freeze({
  configured: false,
  up: true,
  kind: null,
  lastCheckAt: null,
  detail: null,
});

export type ChainWatchStatus = {
  enabled: boolean;
  supported: boolean | null;
  headBlock: number | null;
  headLagMs: number | null;
  lastError: string | null;
};

/** What /readyz answers: 200 with this body when ready, 503 with it when not. */
/** Where this replica stands among the replicas coordinated through etcd (src/replicas/election.ts). */
export type CoordinationStatus = {
  role: "leader" | "follower" | "lost";
  /** the fencing token while this replica holds the lease */
  token: string | null;
  reachable: boolean;
  actAlone: boolean;
  detail: string | null;
  /** the election's key prefix in etcd */
  election: string;
  ttlSeconds: number;
  /** the other live candidates, as each says of itself */
  candidates: { replica: string; intervalMs: number; deadlineMs: number }[];
  /** another candidate's interval or deadline differs from this replica's */
  settingsDiffer: boolean;
};

export type Readiness = {
  ready: boolean;
  /** one human-readable line per reason the daemon is not ready (empty when ready) */
  reasons: string[];
  accounts: SwitchStatus[];
  exposure: ExposureStatus;
  guard: GuardStatus;
  /** with --coordinate: this replica's place in the election */
  coordination?: CoordinationStatus | undefined;
};
