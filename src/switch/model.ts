import type { EngineDownCause } from "../core/events.js";
import type { CloseReport, CloseResult, EscalationConfig, Features } from "../core/feature.js";
import type { CancelFailure } from "../core/orders-port.js";
import type { ProtectionView, SwitchState } from "../core/status.js";
import type { SwitchEvent } from "../core/switch-events.js";
import type { NonceSpan } from "../protocol/hyperliquid/nonce.js";
import { type CoordinationModel, initialCoordination, type MemberMark } from "./coordination-model.js";
import { initialTime, type TimeModel, type Times, timesAt } from "./exchange-time.js";
import type { LedgerEntry } from "./ledger.js";
import { atLimit, earliestDeadline, isExhausted, type ProofCounts } from "./ledger-model.js";
import type { Ready } from "./ready.js";
import type { RecordEvidence } from "./record-reconcile.js";

export * from "./ready.js";

/** The exchange's volume gate for scheduleCancel: $1M cumulative traded volume (docs/exchange-behaviour.md). */
export const VOLUME_GATE_USD = 1_000_000;
/** Expedite lead: the exchange's 5 s minimum (docs/exchange-behaviour.md) + 0.5 s for transit. */
export const EXPEDITE_LEAD_MS = 5_500;
/** Extra wait after an unknown-outcome attempt's expiresAfter before the next attempt (covers clock skew). */
export const EXPIRY_MARGIN_MS = 1_000;
/** First retry delay; doubles per consecutive failure. */
export const BACKOFF_BASE_MS = 500;
/** First retry delay after HTTP 429. */
export const RATE_LIMIT_BACKOFF_BASE_MS = 2_000;
/**
 * How much later than a deadline the record's newest entry must be before the record speaks for that deadline,
 * until a measurement says more: the explorer's lag is not documented (docs/exchange-record.md).
 */
export const RECORD_MARGIN_DEFAULT_MS = 10_000;
/** The measured margin is bounded: one slow read never makes every record useless for longer than this. */
export const RECORD_MARGIN_MAX_MS = 600_000;
/** While guessed triggers remain today, the record is read again this often (at most). */
export const RECORD_REREAD_MS = 60_000;
/** This run's own recent pushes kept in memory to judge the record (sent cancel times, confirmations). */
export const OWN_PUSHES_KEPT = 64;

export type EngineDownPolicy = "expedite" | "lapse" | "cancel";

export type SwitchConfig = {
  account: string;
  intervalMs: number;
  deadlineMs: number;
  requestTimeoutMs: number;
  permanentRecheckMs: number;
  triggerWarnRemaining: number;
  onEngineDown: EngineDownPolicy;
  cancelStops: boolean;
  historySize?: number | undefined;
  /** what a restart's nonce floor allows for (absent: every push is written ahead; write-ahead.ts) */
  nonceSpan?: NonceSpan | undefined;
  /** the escalation ladder's step 2 (src/escalation/), opted in for this account; absent: off */
  escalation?: EscalationConfig | null | undefined;
  /** the feature machines the app hands the switch (core/feature.ts; src/switch/features.ts carries them) */
  features: Features;
  /** replicas coordinated through etcd (coordination.ts): the gated actions follow the lease; absent: alone */
  coordinated?: boolean | undefined;
  /** coordinated, with etcd unreachable: take the gated actions alone (the operator's choice) */
  actAlone?: boolean | undefined;
};

/**
 * `mono`: the monotonic clock; `wall`: the LOCAL wall clock as read (it may be stepped or wrong). The exchange's
 * time is the machine's own estimate (`SwitchModel.time`, exchange-time.ts), from the answers' Date samples.
 * (`verified` is no longer read: the estimate knows whether it is verified.)
 */
export type Now = {
  mono: number;
  wall: number;
  verified?: boolean | undefined;
  /** the signer's last nonce handed out (a push is signed above it; write-ahead.ts), when known */
  nonce?: number | undefined;
};

export type Failure = {
  kind: string;
  message: string;
  permanent: boolean;
  retryable: boolean;
  /** the request may or may not have been applied (no answer, 5xx, unreadable answer) */
  outcomeUnknown: boolean;
  /** for kind `nonce`: duplicate, too_low or too_high (the exchange's text names its bound) */
  nonceDetail?: string | undefined;
};

/** What comes in: one input per step. */
export type Event =
  | { type: "start" }
  | { type: "tick" }
  /** the one wake-up the last Ready asked for (`wakeAt`) is due */
  | { type: "wake" }
  /**
   * the store's write of the entry a Ready handed over as `entrySeq` is durable; `updatedAt`: the file's, as
   * written (write-ahead.ts)
   */
  | { type: "persisted"; seq: number; updatedAt: number | null }
  /** the write-ahead of push `id` (a Ready with mustSync) was not durable within its budget: it was not sent */
  | { type: "syncFailed"; id: number; reason: string }
  | { type: "pushConfirmed"; id: number; latencyMs: number }
  /** `sentMono`: when the request left (the machine bounds it by when it asked and the write-ahead's budget) */
  | ({ type: "pushFailed"; id: number; sentMono?: number | undefined } & Failure)
  /**
   * the guard's view of the engine; a down's `cause`: `seen` (default: a close, a silence, a stale file) or `absent`
   * (no engine named an account an engine held within the connect grace after a restart: weaker evidence)
   */
  | { type: "engine"; up: boolean; detail?: string | null | undefined; cause?: EngineDownCause | undefined }
  | {
      type: "ordersCancelled";
      confirmed: boolean;
      cancelled: number;
      kept: number;
      detail?: string | undefined;
      /** not confirmed: the first request that failed (a read or an action, the error policy's kind) */
      failure?: CancelFailure | undefined;
      /** not confirmed: the IP weight the pass spent */
      weight?: number | undefined;
    }
  | { type: "agent"; state: "ok" | "missing" | "expired"; detail?: string | undefined }
  /**
   * the exchange's record was read (docs/exchange-record.md): `evidence` null when it is unavailable. Applied in
   * both directions within what it covers and is fresh for; it never stops the pushes.
   */
  | { type: "record"; evidence: RecordEvidence | null; detail?: string | undefined }
  /** one answer's `Date` header (ms; NaN when it was not a valid HTTP date) and the request's round trip */
  | { type: "clockSample"; date: number; sentMono: number; receivedMono: number }
  /** the HyperEVM's latest block timestamp (whole seconds) and the request's round trip: the second witness */
  | { type: "blockSample"; timestampSec: number; sentMono: number; receivedMono: number }
  | { type: "dayRollover" }
  | { type: "clockStep"; deltaMs: number }
  | { type: "shutdown"; mode: "remove" | "keep" }
  | { type: "removalConfirmed" }
  /**
   * `cumulativeVolume`: the account's traded volume (userRateLimit.cumVlm), read when the removal met the
   * volume gate; null when it could not be read
   */
  | ({ type: "removalFailed"; cumulativeVolume?: number | null | undefined } & Failure)
  | { type: "halt" }
  /** the exposure poll's figures for this account (the escalation's rules read them) */
  | { type: "exposure"; accountValue: number; notionalUsd: number; minLiquidationPct: number | null }
  /** a close pass (a `closePositions` effect, or a kill's close) answered: `flat` when nothing but dust is left */
  | ({ type: "closeResult" } & CloseResult)
  /** the operator's kill switch (`hl-deadman kill`, over the control channel): latch, cancel, optionally close */
  | { type: "kill"; by: string; close: boolean }
  /** the kill's cancels answered (the `kill` effect): the same shape the switch publishes */
  | Extract<SwitchEvent, { type: "killCancelled" }>
  /** the operator's `reset` (over the control channel): releases the HALTED latch */
  | { type: "reset"; by: string }
  /** the operator's `drill` (src/drill/) */
  | { type: "drillStart"; id: string; by: string }
  /** the replicas' election (coordination.ts): this replica's role, its fencing token, other live candidates */
  | {
      type: "coordination";
      role: "leader" | "follower" | "lost";
      token: string | null;
      othersAlive: boolean | null;
      /** the other replicas' membership marks as read at a stop (coordination-model.ts); absent: not read */
      members?: readonly MemberMark[] | null | undefined;
      detail?: string | null | undefined;
    }
  /** the drill's resting order: placed (`oid`, `coin`) or not (null, `detail`) */
  | { type: "drillPlaced"; id: string; oid: number | null; coin: string | null; detail?: string | undefined }
  /** the drill's order as read after its deadline (`status` scheduledCancel proves the fire) */
  | {
      type: "drillVerified";
      id: string;
      status: string | null;
      statusTimestamp: number | null;
      detail?: string | undefined;
    };

/** A cancel pass's failed request as the executor reports it (core/orders-port.ts). */
/** One close order as reported to the machine (api.ts `CloseOrderReport`). */
export type { CancelFailure, CloseReport };

/** Why the machine wants to be woken (the earliest is `wakeAt`). */
export type Wake = {
  /** the earliest possibly-armed deadline passes */
  lapse: number | null;
  /** the next retry (after a failure, or the slow re-check after a permanent refusal) */
  retry: number | null;
  /** an unknown outcome's request can no longer land: the next push (or the removal) may leave */
  gate: number | null;
  /** guesses remain: read the record again */
  record: number | null;
  /** engine down, policy cancel: a refused cancel pass is tried again (engine-down.ts) */
  cancel: number | null;
};

export type Inflight = {
  id: number;
  cancelAt: number;
  mode: "arm" | "expedite" | "drill";
  /** monotonic ms the push was asked for (its write-ahead started then) */
  askedMono: number;
  /** the push waits for its write-ahead (mustSync): it leaves at most `requestTimeoutMs` after `askedMono` */
  synced: boolean;
  /** pendingUntil before this push's intent */
  previousPending: number | null;
  /** the time the push was planned on (its expiresAfter is at least this + the request time-out) */
  planMs?: number | undefined;
};

/** Nothing is out. */
export type Idle = { kind: "idle" };
/** A push is out: its write-ahead, then its answer, are awaited (`again`: push once it is answered). */
export type Sending = { kind: "sending"; push: Inflight; again: boolean };
/** After an unknown outcome the old request may still land until `until`: nothing else leaves before. */
export type Gated = { kind: "gated"; until: number };
/** A stop's removal is out. */
export type Removing = { kind: "removing" };

/**
 * Where the switch stands: ONE tagged value, the phase (`name`, its tag: the phase's own step takes its events,
 * machine.ts `PHASE_STEP`) with what its request pipeline has out, one request at most. `new` has nothing out;
 * `running` pushes (idle, sending, gated); `stopping` waits for the push in flight and the gate, then removes;
 * `stopped` sends nothing more and keeps only a push a halt left out (its answer is still recorded). It changes
 * only through the `becomeX` of context.ts.
 */
export type Phase =
  | { name: "new"; pipe: Idle }
  | { name: "running"; pipe: Idle | Sending | Gated }
  | { name: "stopping"; pipe: Idle | Sending | Gated | Removing }
  | { name: "stopped"; pipe: Idle | Sending };

export type PhaseName = Phase["name"];

/** The push in flight, if any. */
export const inflight = (m: SwitchModel): Inflight | null =>
  m.phase.pipe.kind === "sending" ? m.phase.pipe.push : null;

/** Monotonic ms until which nothing may leave (0 when nothing gates). */
export const gateUntil = (m: SwitchModel): number => (m.phase.pipe.kind === "gated" ? m.phase.pipe.until : 0);

export type Gauges = {
  armedUntil: number | null;
  triggersToday: number;
  triggersLeft: number;
  exhausted: boolean;
  proofs: ProofCounts;
  halted: boolean;
};

/** Entries handed to the store and not yet known durable, kept at most (beyond: nothing is covered). */
export const UNSYNCED_KEPT = 16;

/** What the ledger file is known to hold for this account. */
export type Disk = {
  /** the entry as the last write known durable left it (null: nothing known yet this run) */
  entry: LedgerEntry | null;
  /** the file's `updatedAt` after that write: a restart's nonce floor is seeded from it */
  updatedAt: number | null;
  /** entries handed to the store since (`seq`: the Ready's `entrySeq`), oldest first */
  unsynced: { seq: number; entry: LedgerEntry }[];
  /** the number of the last entry handed to the store */
  seq: number;
  /** more entries were handed over than `UNSYNCED_KEPT`: nothing is covered until a later one is durable */
  overflow: boolean;
  /** pushes that left without a write-ahead of their own, this run (tests, docs/daemon.md) */
  covered: number;
};

export const initialDisk = (): Disk => ({
  entry: null,
  updatedAt: null,
  unsynced: [],
  seq: 0,
  overflow: false,
  covered: 0,
});

export type SwitchModel = {
  readonly cfg: SwitchConfig;
  /** the phase and its request pipeline (one tagged value) */
  phase: Phase;
  state: SwitchState;
  entry: LedgerEntry;
  lastPushAt: number | null;
  consecutiveFailures: number;
  lastError: { kind: string; message: string } | null;
  notProtectedReason: string | null;
  agentReason: string | null;
  nextPermanentCheckMono: number;
  /** an interval tick does not push before this (a retry's back-off; a wake-up or event does) */
  retryAtMono: number;
  nextId: number;
  engineUp: boolean;
  expedited: boolean;
  /** engine-down policy cancel: null, waiting for the first answer, or the orders were cancelled (keep renewing) */
  ordersCancel: null | "waiting" | "confirmed";
  /** engine down, policy cancel: a further cancel pass is running (one each interval while the engine is down) */
  cancelPass: boolean;
  /** cancel passes started in this engine-down episode (the first included) */
  cancelPasses: number;
  /** the pass running was refused and tried again this many times (engine-down.ts `cancelRetryAt`) */
  cancelRetries: number;
  /** this run's recent pushes' cancel times, answered or not (memory only: judging the record) */
  ownSent: number[];
  /** this run's recent confirmed pushes (memory only: judging the record, measuring its lag) */
  ownConfirmed: { at: number; cancelAt: number }[];
  /** the last measured lags of the record (ms): the freshness margin is their maximum */
  recordLags: number[];
  /** a record read is asked for and not answered yet */
  recordReading: boolean;
  /** `trigger.limit_suspected` was said for this UTC day */
  limitSuspectedDay: string | null;
  wasExhausted: boolean;
  /** monotonic ms of the first failure of the current run of failures */
  failingSinceMono: number | null;
  /** a wall-clock step was seen: not ready until a push is confirmed on the corrected clock */
  clockStepped: boolean;
  shutdownMode: "remove" | "keep" | null;
  /**
   * false after a start whose ledger holds a pending push: the exchange holds one of two deadlines and which
   * is unknown, so nothing is reported armed until a push is confirmed
   */
  armedKnown: boolean;
  /** the exchange's time as believed (exchange-time.ts); null until the first step sets it from `now` */
  time: TimeModel | null;
  /** the ledger's last verified time: the exchange's time is never before it */
  timeFloor: number | null;
  /** when the machine wants to be woken, and why */
  wake: Wake;
  /** the gauges as last published (a gauge event goes out only when one changed) */
  published: Gauges | null;
  /** what the ledger file is known to hold (write-ahead.ts) */
  disk: Disk;
  /** the features' models, each opaque to the switch, and their wake-ups (features.ts) */
  features: FeatureSlots;
  /** the replicas' election as last reported (coordination.ts) */
  coord: CoordinationModel;
};

export type StepResult = { model: SwitchModel; ready: Ready };

/** The switch's features (core/feature.ts `Features`). */
export type FeatureName = keyof Features;
/** A feature's model, opaque to the switch, and its wake-up (monotonic ms, null for none). */
export type FeatureSlot = { readonly model: unknown; readonly wakeAt: number | null };
export type FeatureSlots = { readonly [K in FeatureName]: FeatureSlot };

/** Each feature's initial model, no wake-up. */
export const initialFeatures = (f: Features): FeatureSlots => ({
  escalation: { model: f.escalation.initial(), wakeAt: null },
  drill: { model: f.drill.initial(), wakeAt: null },
});

// ------------------------------------------------------------------------------------------- projections

/** The deadline the exchange holds at the latest: the confirmed one, lowered by a pending push. */
export function reportedDeadline(m: SwitchModel): number | null {
  return m.entry.armedUntil === null || !m.armedKnown ? null : earliestDeadline(m.entry);
}

/** The earliest deadline that may fire: where a trigger is counted. */
export function lapseDeadline(m: SwitchModel): number | null {
  return earliestDeadline(m.entry);
}

/** What the protection watch needs, without the rest of `status` (no time, no day): cheap for a fleet. */
export function protectionOf(m: SwitchModel): ProtectionView {
  return {
    account: m.cfg.account,
    state: m.state,
    armedUntil: reportedDeadline(m),
    consecutiveFailures: m.consecutiveFailures,
  };
}

/**
 * `exhausted` as the contract means it: a PROVEN daily limit (ledger-model.ts `isExhausted`), or, as before, the
 * whole limit assumed after an unreadable ledger. Guessed and record-implied counts are shown beside it.
 */
export function reportsExhausted(e: SwitchModel["entry"]): boolean {
  return isExhausted(e) || (e.assumed && atLimit(e));
}

/** The freshness margin the record must clear (measured, bounded). */
export function recordMargin(m: SwitchModel): number {
  return Math.min(RECORD_MARGIN_MAX_MS, Math.max(RECORD_MARGIN_DEFAULT_MS, ...m.recordLags));
}

/** The times a decision at `now` is taken on (exchange-time.ts `timesAt`), with whether any answer was seen. */
export function timesOf(m: SwitchModel, now: Now): Times & { sampled: boolean } {
  // (the last answer kept, for the same time model, floor and clocks: a step, the status and the readiness read it
  // several times at one instant; a time model is replaced, never changed in place)
  const c = lastTimes;
  if (
    c !== null &&
    c.time === m.time &&
    c.floor === m.timeFloor &&
    c.mono === now.mono &&
    Object.is(c.wall, now.wall)
  )
    return c.times;
  const time = m.time ?? initialTime(now.mono, now.wall, m.timeFloor);
  const times = Object.freeze({ ...timesAt(time, now.mono, now.wall), sampled: time.sampled });
  lastTimes = { time: m.time, floor: m.timeFloor, mono: now.mono, wall: now.wall, times };
  return times;
}

let lastTimes: {
  time: TimeModel | null;
  floor: number | null;
  mono: number;
  wall: number;
  times: Readonly<Times & { sampled: boolean }>;
} | null = null;

// ---------------------------------------------------------------------------------------------- the step

export function initialModel(
  cfg: SwitchConfig,
  entry: LedgerEntry,
  timeFloor: number | null = null,
): SwitchModel {
  return {
    cfg,
    phase: { name: "new", pipe: { kind: "idle" } },
    state: "starting",
    entry,
    lastPushAt: entry.lastPushAt,
    consecutiveFailures: 0,
    lastError: null,
    notProtectedReason: null,
    agentReason: null,
    nextPermanentCheckMono: 0,
    retryAtMono: 0,
    nextId: 1,
    engineUp: true,
    expedited: false,
    ordersCancel: null,
    cancelPass: false,
    cancelPasses: 0,
    cancelRetries: 0,
    ownSent: [],
    ownConfirmed: [],
    recordLags: [],
    recordReading: false,
    limitSuspectedDay: null,
    wasExhausted: false,
    failingSinceMono: null,
    clockStepped: false,
    shutdownMode: null,
    // a deadline from an earlier run is reported again only once a push is confirmed on this run's clock
    armedKnown: false,
    time: null,
    timeFloor,
    wake: { lapse: null, retry: null, gate: null, record: null, cancel: null },
    published: null,
    disk: initialDisk(),
    features: initialFeatures(cfg.features),
    coord: initialCoordination(cfg.coordinated === true),
  };
}

/**
 * One input, the next model and what must be done. Same model + event + now → same result. Never throws: a
 * malformed event is refused and logged with the model unchanged, and so is any event whose step would throw
 * (the switch keeps pushing on the last good model).
 */
