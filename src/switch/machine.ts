/**
 * The switch for one account as a pure state machine: `step(model, event, now) → { model, effects }`.
 * Nothing in this file reads a clock, touches the network or the disk, or logs: the driver (driver.ts) carries
 * the effects out and feeds what happened back as events (docs/daemon.md "The switch machine").
 *
 * Time: `now.mono` is the monotonic clock (every gate, retry and re-check is measured on it); `now.wall` is the
 * exchange's time as the driver knows it (monotonic + an offset corrected from the answers' `Date`), on which
 * every cancel time, deadline and UTC day is computed. A local wall-clock step moves neither.
 *
 * Safety rules, each impossible to break by construction here:
 * - Armed means confirmed: `armedUntil` is the cancel time of the last confirmed push, earlier or later than
 *   before. A write-ahead pending push never makes the switch armed; it only lowers the reported deadline
 *   (the exchange holds one of the two) and counts for the conservative trigger count.
 * - The request leaves only after its intent is durable (`intentRecorded`); a disk that cannot take it within
 *   the push's budget is a failed push. (The driver answers `intentRecorded` at once when the file as last
 *   written already covers the intent: ledger-model.ts `intentCovered`.)
 * - One push in flight at most; after an unknown outcome the next one waits until the old one can no longer
 *   land (its expiresAfter + EXPIRY_MARGIN_MS), so a late request never replaces a newer schedule.
 * - A trigger is counted when the earliest possibly-armed deadline passes without a newer confirmation; once
 *   per deadline; the UTC day only moves forward.
 * - After a wall-clock step the switch is not ready until a push is confirmed on the corrected clock.
 */
import { nextUtcMidnight, utcDay } from "../core/clock.js";
import type { SwitchState, SwitchStatus } from "../core/status.js";
import type { SwitchEvent } from "./events.js";
import {
  initialTime,
  isPlausibleTime,
  MIN_PLAUSIBLE_MS,
  type Sample,
  type TimeModel,
  type Times,
  takeSample,
  timeAccepted,
  timeRefused,
  timesAt,
} from "./exchange-time.js";
import type { LedgerEntry, TriggerRecord } from "./ledger.js";
import {
  atLimit,
  earliestDeadline,
  isExhausted,
  limitRefused,
  type ProofCounts,
  proofCounts,
  type RecordEvidence,
  rollEntry,
  TRIGGER_LIST_SIZE,
  type TriggerResult,
  withConfirmedPush,
  withHistory,
  withIntent,
  withLimitReached,
  withRecord,
  withRemoval,
  withTrigger,
} from "./ledger-model.js";

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
/** Guesses kept for a later UTC day than the ledger's (`LedgerEntry.later`: the ledger file holds at most 8). */
const LATER_KEPT = 8;
/** This run's own recent pushes kept in memory to judge the record (sent cancel times, confirmations). */
const OWN_PUSHES_KEPT = 64;

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
};

/**
 * `mono`: the monotonic clock; `wall`: the LOCAL wall clock as read (it may be stepped or wrong). The exchange's
 * time is the machine's own estimate (`SwitchModel.time`, exchange-time.ts), from the answers' Date samples.
 * (`verified` is no longer read: the estimate knows whether it is verified.)
 */
export type Now = { mono: number; wall: number; verified?: boolean | undefined };

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
  /** the write-ahead of push `id` (a Ready with mustSync) was not durable within its budget: it was not sent */
  | { type: "syncFailed"; id: number; reason: string }
  | { type: "pushConfirmed"; id: number; latencyMs: number }
  /** `sentMono`: when the request left (the machine bounds it by when it asked and the write-ahead's budget) */
  | ({ type: "pushFailed"; id: number; sentMono?: number | undefined } & Failure)
  | { type: "engine"; up: boolean; detail?: string | null | undefined }
  | {
      type: "ordersCancelled";
      confirmed: boolean;
      cancelled: number;
      kept: number;
      detail?: string | undefined;
    }
  | { type: "agent"; state: "ok" | "missing" | "expired"; detail?: string | undefined }
  /**
   * the exchange's record was read (docs/exchange-record.md): `evidence` null when it is unavailable. Applied in
   * both directions within what it covers and is fresh for; it never stops the pushes.
   */
  | { type: "record"; evidence: RecordEvidence | null; detail?: string | undefined }
  /** one answer's `Date` header (ms; NaN when it was not a valid HTTP date) and the request's round trip */
  | { type: "clockSample"; date: number; sentMono: number; receivedMono: number }
  | { type: "dayRollover" }
  | { type: "clockStep"; deltaMs: number }
  | { type: "shutdown"; mode: "remove" | "keep" }
  | { type: "removalConfirmed" }
  /**
   * `cumulativeVolume`: the account's traded volume (userRateLimit.cumVlm), read when the removal met the
   * volume gate; null when it could not be read
   */
  | ({ type: "removalFailed"; cumulativeVolume?: number | null | undefined } & Failure)
  | { type: "halt" };

export type ShutdownOutcome = {
  account: string;
  outcome: "removed" | "kept" | "failed" | "skipped";
  reason?: string;
  message?: string;
};

/** What goes out: a request to the exchange. */
export type Send =
  | { kind: "push"; id: number; cancelAt: number; expiresAfterMs: number }
  | { kind: "removal"; expiresAfterMs: number };

/**
 * One step's output (raft's Ready), carried out by the driver in this order: persist `entry` (and wait until it
 * is durable, within `syncBudgetMs`, when `mustSync`), send, cancel orders, set the one wake-up, publish the
 * events. `mustSync` is the write-ahead: the request may leave only once `entry` is on disk (or the file already
 * covers it: ledger-model.ts `intentCovered`); a write that runs out of budget is answered with `syncFailed`.
 */
export type Ready = {
  entry?: LedgerEntry | undefined;
  mustSync: boolean;
  syncBudgetMs?: number | undefined;
  send?: Send | undefined;
  cancelOrders?: { cancelStops: boolean } | undefined;
  /** read the exchange's record and answer with a `record` event */
  readRecord?: { reason: string } | undefined;
  /** re-derive the signer's nonces: the next nonce is above `floor` (which may be lower) */
  nonceFloor?: { floor: number; reason: string } | undefined;
  /** a trigger was counted: the daemon polls exposure */
  pollExposure?: boolean | undefined;
  events: SwitchEvent[];
  /** monotonic ms of the next wake-up (`wake` event), null for none */
  wakeAt: number | null;
  done?: ShutdownOutcome | undefined;
};

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
};

type Inflight = {
  id: number;
  cancelAt: number;
  mode: "arm" | "expedite";
  /** monotonic ms the push was asked for (its write-ahead started then) */
  askedMono: number;
  /** the push waits for its write-ahead (mustSync): it leaves at most `requestTimeoutMs` after `askedMono` */
  synced: boolean;
  /** pendingUntil before this push's intent */
  previousPending: number | null;
};

type Gauges = {
  armedUntil: number | null;
  triggersToday: number;
  triggersLeft: number;
  exhausted: boolean;
  proofs: ProofCounts;
};

export type SwitchModel = {
  readonly cfg: SwitchConfig;
  phase: "new" | "running" | "stopping" | "stopped";
  state: SwitchState;
  entry: LedgerEntry;
  lastPushAt: number | null;
  consecutiveFailures: number;
  lastError: { kind: string; message: string } | null;
  notProtectedReason: string | null;
  agentReason: string | null;
  nextPermanentCheckMono: number;
  gateUntilMono: number;
  retryAtMono: number;
  inflight: Inflight | null;
  nextId: number;
  kickAfterInflight: boolean;
  engineUp: boolean;
  expedited: boolean;
  /** engine-down policy cancel: null, waiting for the first answer, or the orders were cancelled (keep renewing) */
  ordersCancel: null | "waiting" | "confirmed";
  /** engine down, policy cancel: a further cancel pass is running (one each interval while the engine is down) */
  cancelPass: boolean;
  /** cancel passes started in this engine-down episode (the first included) */
  cancelPasses: number;
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
  removing: boolean;
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
};

export type StepResult = { model: SwitchModel; ready: Ready };

// ------------------------------------------------------------------------------------------- projections

/** The deadline the exchange holds at the latest: the confirmed one, lowered by a pending push. */
export function reportedDeadline(m: SwitchModel): number | null {
  return m.entry.armedUntil === null || !m.armedKnown ? null : earliestDeadline(m.entry);
}

/** The earliest deadline that may fire: where a trigger is counted. */
export function lapseDeadline(m: SwitchModel): number | null {
  return earliestDeadline(m.entry);
}

/** Where the switch stands: a pure projection (reading never changes anything). */
export function status(m: SwitchModel, now: Now): SwitchStatus {
  const t = timesOf(m, now);
  // (a projection never throws: a day that is not a time leaves the entry as it is)
  const entry = t.sampled && isPlausibleTime(t.day) ? rollEntry(m.entry, t.day).entry : m.entry;
  return {
    account: m.cfg.account,
    state: m.state,
    armedUntil: reportedDeadline(m),
    lastPushAt: m.lastPushAt,
    consecutiveFailures: m.consecutiveFailures,
    lastError: m.lastError,
    notProtectedReason: m.notProtectedReason,
    day: entry.day,
    triggersToday: entry.triggersToday,
    triggerLimit: entry.limit,
    exhausted: reportsExhausted(entry),
    clockStepped: m.clockStepped,
    limitRefused: limitRefused(entry),
    limitSuspected: atLimit(entry) && !reportsExhausted(entry),
    triggerProofs: proofCounts(entry),
    triggers: entry.triggers.map((t) => ({ deadline: t.deadline, proof: t.proof })),
    clockSuspect: t.suspect,
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
  const time = m.time ?? initialTime(now.mono, now.wall, m.timeFloor);
  return { ...timesAt(time, now.mono, now.wall), sampled: time.sampled };
}

// ---------------------------------------------------------------------------------------------- the step

export function initialModel(
  cfg: SwitchConfig,
  entry: LedgerEntry,
  timeFloor: number | null = null,
): SwitchModel {
  return {
    cfg,
    phase: "new",
    state: "starting",
    entry,
    lastPushAt: entry.lastPushAt,
    consecutiveFailures: 0,
    lastError: null,
    notProtectedReason: null,
    agentReason: null,
    nextPermanentCheckMono: 0,
    gateUntilMono: 0,
    retryAtMono: 0,
    inflight: null,
    nextId: 1,
    kickAfterInflight: false,
    engineUp: true,
    expedited: false,
    ordersCancel: null,
    cancelPass: false,
    cancelPasses: 0,
    ownSent: [],
    ownConfirmed: [],
    recordLags: [],
    recordReading: false,
    limitSuspectedDay: null,
    wasExhausted: false,
    failingSinceMono: null,
    clockStepped: false,
    shutdownMode: null,
    removing: false,
    // a deadline from an earlier run is reported again only once a push is confirmed on this run's clock
    armedKnown: false,
    time: null,
    timeFloor,
    wake: { lapse: null, retry: null, gate: null, record: null },
    published: null,
  };
}

/**
 * One input, the next model and what must be done. Same model + event + now → same result. Never throws: a
 * malformed event is refused and logged with the model unchanged, and so is any event whose step would throw
 * (the switch keeps pushing on the last good model).
 */
export function step(model: SwitchModel, event: Event, now: Now): StepResult {
  const bad = malformed(event, now);
  if (bad !== null) return refusedStep(model, event, bad);
  try {
    return stepChecked(model, event, now);
  } catch (error) {
    return refusedStep(
      model,
      event,
      `the step threw: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The earliest wake-up asked for. */
export function wakeAtOf(w: Wake): number | null {
  let at: number | null = null;
  for (const t of [w.lapse, w.retry, w.gate, w.record]) if (t !== null && (at === null || t < at)) at = t;
  return at;
}

function refusedStep(model: SwitchModel, event: unknown, reason: string): StepResult {
  const type =
    typeof (event as { type?: unknown })?.type === "string" ? (event as { type: string }).type : "?";
  return {
    model,
    ready: {
      mustSync: false,
      events: [{ type: "eventRefused", eventType: type.slice(0, 40), reason: reason.slice(0, 300) }],
      wakeAt: wakeAtOf(model.wake),
    },
  };
}

const finite = (...xs: unknown[]) => xs.every((x) => typeof x === "number" && Number.isFinite(x));

/** Why `event` (or `now`) cannot be taken, or null. Values the machine judges itself (a Date) are not checked. */
function malformed(event: Event, now: Now): string | null {
  if (now === null || typeof now !== "object" || !finite(now.mono))
    return "the monotonic time is not a number";
  if (event === null || typeof event !== "object") return "not an event";
  switch (event.type) {
    case "start":
    case "tick":
    case "wake":
    case "dayRollover":
    case "shutdown":
    case "removalConfirmed":
    case "removalFailed":
    case "halt":
    case "engine":
    case "agent":
    case "ordersCancelled":
    case "pushFailed":
      return null;
    case "syncFailed":
      return finite(event.id) ? null : "the push id is not a number";
    case "pushConfirmed":
      return finite(event.id, event.latencyMs) ? null : "the push id or latency is not a number";
    case "clockSample":
      return typeof event.date === "number" ? null : "the Date sample is not a number";
    case "clockStep":
      return finite(event.deltaMs) ? null : "the clock step is not a number";
    case "record": {
      const e = event.evidence;
      if (e === null) return null;
      return e !== undefined &&
        typeof e === "object" &&
        Number.isFinite(e.at) &&
        Array.isArray(e.schedules) &&
        Array.isArray(e.fires) &&
        (e.newestTx === null || Number.isFinite(e.newestTx))
        ? null
        : "the record is malformed";
    }
    default:
      return `unknown event type ${JSON.stringify((event as { type?: unknown }).type)?.slice(0, 40)}`;
  }
}

function stepChecked(model: SwitchModel, event: Event, now: Now): StepResult {
  // A shallow copy: the step replaces the entry, the error and the other nested values rather than changing
  // them, except the in-flight push and the wake-ups, which are copied too. (The property tests run every step
  // on a deep-frozen model, so a change in place throws there: test/switch/world.ts.) The lists of own pushes
  // are replaced, never changed in place, too.
  const m: SwitchModel = {
    ...model,
    inflight: model.inflight && { ...model.inflight },
    wake: { ...model.wake },
  };
  m.time ??= initialTime(now.mono, now.wall, m.timeFloor);
  const ready: Ready = { mustSync: false, events: [], wakeAt: null };
  // A Date sample is judged first: every decision of this step is taken on the estimate it leaves.
  let sampleApplied = false;
  if (event.type === "clockSample") sampleApplied = takeDate(m, event, now, ready.events);
  const times = timesAt(m.time, now.mono, now.wall);
  const ctx = new Ctx(m, { mono: now.mono, wall: times.act, verified: m.time.sampled }, times, ready);
  ctx.suspectWatch();
  ctx.roll();
  if (event.type === "clockSample") {
    // An applied sample may have corrected the estimate: a deadline it shows passed fired. Unverified too: an
    // unverified sample only moves the time forward (exchange-time.ts `takeSample`), so the lapse it shows is
    // judged early, never late; waiting for a verified clock left a deadline that passed 00:00 on the
    // exchange's clock uncounted on its day.
    if (sampleApplied) ctx.checkLapse();
  } else ctx.handle(event);
  // Whatever changed the earliest possibly-armed deadline, the lapse wake-up follows it.
  if (lapseDeadline(ctx.m) !== lapseDeadline(model) || ctx.m.phase !== model.phase) ctx.armLapseTimer();
  ctx.gauges();
  if (ctx.persist) ready.entry = ctx.m.entry;
  ready.wakeAt = wakeAtOf(ctx.m.wake);
  return { model: ctx.m, ready };
}

/** Takes one Date sample into `m.time` (exchange-time.ts). Returns whether it was applied. */
function takeDate(
  m: SwitchModel,
  ev: Extract<Event, { type: "clockSample" }>,
  now: Now,
  out: SwitchEvent[],
): boolean {
  const sample: Sample = { date: ev.date, sentMono: ev.sentMono, receivedMono: ev.receivedMono };
  const { time, verdict } = takeSample(m.time!, sample, now.wall);
  m.time = time;
  if (verdict.kind === "refused") {
    out.push({
      type: "dateRefused",
      reason: verdict.reason,
      date: Number.isFinite(ev.date) ? ev.date : null,
      detail: verdict.detail,
    });
    return false;
  }
  if (verdict.correctionMs !== 0 && m.time.sampled)
    out.push({
      type: "clockCorrected",
      correctionMs: Math.round(verdict.correctionMs),
      verified: verdict.verified,
    });
  return true;
}

/** The step's working state: the model being changed and the Ready being built (private to this file). */
class Ctx {
  /** the entry changed in a way the ledger must hold: the Ready carries the model's entry at the end */
  persist = false;

  constructor(
    readonly m: SwitchModel,
    /** `wall` here is the time the switch acts on (`times.act`), not the local clock */
    readonly now: Now,
    readonly times: Times,
    readonly ready: Ready,
  ) {}

  emit(e: SwitchEvent) {
    this.ready.events.push(e);
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

  /** A refusal that says the time used is wrong: after repeated ones, the other source (exchange-time.ts). */
  timeRefusal(ev: { kind: string; message: string; nonceDetail?: string | undefined }) {
    const nonceWindow =
      ev.kind === "nonce" && (ev.nonceDetail === "too_low" || ev.nonceDetail === "too_high");
    if (ev.kind !== "expired" && ev.kind !== "too_early" && !nonceWindow) return;
    if (nonceWindow) {
      // The exchange names its bound: "nonce too low N < MIN" (the window's floor or the smallest of the signer's
      // 100 highest), "nonce too high N > MAX" (T + 1 day). The next nonce is re-derived from it.
      const bound = /(?:<|>)\s*(\d{10,16})/.exec(ev.message);
      const b = bound ? Number(bound[1]) : Number.NaN;
      if (isPlausibleTime(b)) {
        const floor = ev.nonceDetail === "too_low" ? b : b - 86_400_000;
        const reason = `nonce ${ev.nonceDetail}`;
        this.ready.nonceFloor = { floor, reason };
        this.emit({ type: "nonceRederived", floor, reason });
      }
    }
    const { time, switched } = timeRefused(this.m.time!, this.now.mono, this.times.local);
    this.m.time = time;
    if (switched)
      this.emit({ type: "clockSourceSwitched", reason: ev.kind, message: ev.message, to: time.source });
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
    };
    const p = this.m.published;
    if (p?.armedUntil !== g.armedUntil) this.emit({ type: "gauge", name: "armedUntil", value: g.armedUntil });
    if (p?.triggersToday !== g.triggersToday)
      this.emit({ type: "gauge", name: "triggersToday", value: g.triggersToday });
    if (p?.triggersLeft !== g.triggersLeft)
      this.emit({ type: "gauge", name: "triggersLeft", value: g.triggersLeft });
    if (p?.exhausted !== g.exhausted) this.emit({ type: "gauge", name: "exhausted", value: g.exhausted });
    for (const [proof, n] of Object.entries(g.proofs) as [keyof ProofCounts, number][])
      if (p?.proofs[proof] !== n) this.emit({ type: "gauge", name: "proof", proof, value: n });
    this.m.published = g;
  }

  /** The not-protected gauge for one reason: 1 while the switch is not protected for it, 0 once it is again. */
  notProtectedGauge(reason: string, value: 0 | 1) {
    this.emit({ type: "notProtectedGauge", reason, value });
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

  /** Whichever wake-ups are due at this step: each cleared, and what it is for done. */
  woken() {
    const m = this.m;
    const due = (t: number | null) => t !== null && t <= this.now.mono;
    const w = m.wake;
    const lapse = due(w.lapse);
    const retry = due(w.retry);
    const gate = due(w.gate);
    const record = due(w.record);
    if (lapse) w.lapse = null;
    if (retry) w.retry = null;
    if (gate) w.gate = null;
    if (record) {
      w.record = null;
      this.readRecord("guesses remain");
    }
    if (gate && m.phase === "stopping") return this.continueShutdown();
    if (!lapse && !retry && !gate) return;
    this.checkLapse();
    this.kick(lapse ? "lapsed" : retry ? "retry" : "gate");
  }

  handle(ev: Event) {
    const m = this.m;
    switch (ev.type) {
      case "start":
        return this.start();
      case "tick":
        this.checkLapse();
        this.cancelAgain();
        return this.kick("interval");
      case "wake":
        return this.woken();
      case "dayRollover":
        this.checkLapse();
        return this.kick("rollover");
      case "syncFailed":
        return this.syncFailed(ev.id, ev.reason);
      case "pushConfirmed":
        return this.pushConfirmed(ev);
      case "pushFailed":
        return this.pushFailed(ev);
      case "engine":
        return this.engine(ev.up, ev.detail ?? null);
      case "ordersCancelled":
        return this.ordersCancelled(ev);
      case "agent":
        return this.agent(ev.state, ev.detail);
      case "record":
        return this.record(ev.evidence, ev.detail);
      case "clockSample":
        return; // taken before the step's decisions (stepChecked)
      case "clockStep":
        m.clockStepped = true;
        this.emit({ type: "clockStepped", deltaMs: ev.deltaMs });
        this.checkLapse();
        return this.kick("clock-step");
      case "shutdown":
        return this.shutdown(ev.mode);
      case "removalConfirmed":
        return this.removalConfirmed();
      case "removalFailed":
        return this.removalFailed(ev);
      case "halt":
        m.phase = "stopped";
        this.cancelTimers();
        m.wake.record = null;
        return;
    }
  }

  // ------------------------------------------------------------------------------------------- start

  start() {
    const m = this.m;
    if (m.phase !== "new") return;
    m.phase = "running";
    const e = m.entry;
    if (e.pendingUntil !== null) {
      this.emit({ type: "pendingAtStart", pendingUntil: e.pendingUntil, confirmedUntil: e.armedUntil });
    }
    if (e.assumed) {
      this.emit({ type: "ledgerAssumed", triggersToday: e.triggersToday, triggerLimit: e.limit });
    }
    this.checkLapse("the deadline passed while the daemon was down");
    if (m.state === "starting" && m.entry.armedUntil !== null && m.entry.pendingUntil === null) {
      m.state = "armed";
      this.armLapseTimer();
    } else if (m.state === "starting" && lapseDeadline(m) !== null) {
      this.armLapseTimer();
    }
    if (isExhausted(m.entry) && m.state !== "exhausted") {
      m.state = "exhausted";
      this.logExhausted(limitRefused(m.entry) ? "from the ledger" : "the exchange's orders prove it");
    } else if (!m.entry.assumed) this.limitSuspected();
    this.kick("start");
  }

  // ------------------------------------------------------------------------------------------- lapse

  armLapseTimer() {
    const at = lapseDeadline(this.m);
    if (at === null || (this.m.phase !== "running" && this.m.phase !== "stopping")) {
      this.m.wake.lapse = null;
      return;
    }
    this.m.wake.lapse = this.now.mono + (at - this.now.wall);
  }

  /** Counts a trigger when the earliest possibly-armed deadline has passed. */
  checkLapse(detail?: string) {
    const m = this.m;
    // also while stopping: a deadline that passes while the removal waits has fired
    if (m.phase !== "running" && m.phase !== "stopping") return;
    const deadline = lapseDeadline(m);
    if (deadline === null || this.now.wall < deadline) return;
    // While the two clocks disagree, a lapse is judged on the later of the two, but one on a UTC day that only the
    // local clock has reached waits until the exchange estimate passes it: counting it would roll the day.
    if (this.times.suspect && this.times.exchange < deadline && utcDay(deadline) > utcDay(this.times.day)) {
      // checked again when the estimate reaches it
      m.wake.lapse = this.now.mono + (deadline - this.times.exchange);
      return;
    }
    // The exchange holds one of the candidates (confirmed, pendingUntil..pendingLatest) and fires at most
    // one: the earliest is counted now. If a candidate lies on a later UTC day, the one that fires may count
    // on that day: a possible trigger stays pending from that day's 00:00 (counted then unless a push is
    // confirmed first), so no day is ever under-counted.
    const { armedUntil, pendingUntil, pendingLatest } = m.entry;
    const latest = Math.max(armedUntil ?? 0, pendingUntil ?? 0, pendingLatest ?? 0);
    // A guess: the other cancel times the exchange may hold instead (pushes without a recorded answer) go with
    // it, so that a record listing one of them accepted in time withdraws it (ledger-model.ts `withRecord`).
    const alt = [armedUntil, pendingUntil, pendingLatest, m.inflight?.cancelAt ?? null].filter(
      (d): d is number => d !== null && d > deadline,
    );
    // The UTC day rolls only when both clocks agree it changed (`times.day`, the earlier of two disagreeing
    // ones); a lapse judged on the later one may lie on a day the earlier has not reached (a Date ahead across
    // 00:00). Counting it there would roll the ledger to that day on one clock alone and put today's count, fires
    // included, in the history: it is counted for its own day instead (`later`), where the day starts with it.
    const forLaterDay = utcDay(deadline) > m.entry.day && utcDay(deadline) > utcDay(this.times.day);
    const r = forLaterDay
      ? withTriggerForLaterDay(m.entry, { deadline, at: this.now.wall, detail, alt }, m.cfg.historySize)
      : withTrigger(m.entry, { deadline, at: this.now.wall, detail, alt }, m.cfg.historySize);
    m.entry = r.entry;
    const exchangeNow = Math.min(this.now.wall, this.times.exchange);
    if (latest > exchangeNow && utcDay(latest) > utcDay(deadline))
      // (from the exchange estimate's now, not the later of the two clocks: pending from that day's 00:00)
      m.entry = withIntent(m.entry, Math.max(nextUtcMidnight(deadline), exchangeNow));
    else if (latest > deadline && utcDay(latest) > utcDay(deadline)) {
      // That later candidate has passed too (a clock corrected across 00:00, a restart on a clock behind): it
      // may be the one that fired, on its own day. Nothing stays pending for it, so it is counted now, as a guess
      // on that day: at once when the ledger is on it, else kept for it (`later`) while the ledger's day (the
      // earlier of two disagreeing clocks) has not reached it. Over by one, never under.
      const guess: TriggerRecord = { deadline: latest, proof: "guess", at: Math.floor(this.now.wall) };
      if (utcDay(latest) > m.entry.day) {
        const later = (m.entry.later ?? []).filter((t) => t.deadline !== latest);
        m.entry = { ...m.entry, later: [...later, guess].slice(-LATER_KEPT) };
      } else if (utcDay(latest) === m.entry.day && !m.entry.triggers.some((t) => t.deadline === latest)) {
        m.entry = {
          ...m.entry,
          triggersToday: m.entry.triggersToday + 1,
          triggers: [...m.entry.triggers, guess].slice(-TRIGGER_LIST_SIZE),
        };
      }
    }
    // A push in flight is still to be answered; its own cancel time is what it arms if it is confirmed.
    if (m.inflight) m.entry = withIntent(m.entry, m.inflight.cancelAt);
    this.persist = true;
    const e = m.entry;
    const left = Math.max(0, e.limit - e.triggersToday);
    if (r.counted) {
      this.emit({
        type: "triggerCounted",
        triggersToday: e.triggersToday,
        triggerLimit: e.limit,
        triggersLeft: left,
        deadline,
        day: e.day,
        ...(forLaterDay ? { forDay: utcDay(deadline) } : {}),
        ...(detail ? { detail } : {}),
      });
      // A guessed count is checked against the record (when one is configured; the driver says if not).
      this.readRecord("trigger");
      if (atLimit(e) && !e.assumed) {
        this.limitSuspected();
      } else if (left <= m.cfg.triggerWarnRemaining) {
        this.emit({
          type: "triggersLow",
          triggersToday: e.triggersToday,
          triggersLeft: left,
          triggerLimit: e.limit,
        });
      }
    } else {
      this.emit({ type: "triggerSkipped", deadline, ...(detail ? { detail } : {}) });
    }
    if (m.state !== "not_protected" && m.phase === "running")
      m.state = limitRefused(e) ? "exhausted" : m.engineUp ? "lapsed" : "engine_down";
    this.ready.pollExposure = true;
  }

  /**
   * The count reaches the limit without the exchange's own proof (guesses, a record's lapses): said once a day,
   * readiness fails (status `limitSuspected`), and the pushes go on: only the exchange's refusal stops them.
   */
  limitSuspected() {
    const m = this.m;
    const e = m.entry;
    if (isExhausted(e) || !atLimit(e) || m.limitSuspectedDay === e.day) return;
    m.limitSuspectedDay = e.day;
    this.emit({
      type: "limitSuspected",
      triggersToday: e.triggersToday,
      triggerLimit: e.limit,
      proofs: proofCounts(e),
    });
  }

  /** Asks the driver for the exchange's record (one read at a time). */
  readRecord(reason: string) {
    const m = this.m;
    if (m.recordReading || (m.phase !== "running" && m.phase !== "stopping")) return;
    m.recordReading = true;
    this.ready.readRecord = { reason };
  }

  /** The exchange's record: applied to the ledger in both directions where it is fresh (ledger-model.ts). */
  record(evidence: RecordEvidence | null, detail: string | undefined) {
    const m = this.m;
    m.recordReading = false;
    if (evidence === null) {
      if (detail !== undefined) this.emit({ type: "recordSkipped", detail });
      return;
    }
    // Measure the record's lag: the oldest of this run's recent confirmed pushes it does not list yet (bounded).
    const listed = new Set(
      evidence.schedules.filter((s) => s.error === null && s.deadline !== null).map((s) => s.deadline),
    );
    const oldestListed = evidence.schedules[0]?.txTime ?? Number.POSITIVE_INFINITY;
    const missing = m.ownConfirmed.filter(
      (c) =>
        c.at <= evidence.at &&
        c.at >= oldestListed &&
        c.at >= evidence.at - RECORD_MARGIN_MAX_MS &&
        !listed.has(c.cancelAt),
    );
    const lag = missing.length === 0 ? 0 : Math.max(0, evidence.at - Math.min(...missing.map((c) => c.at)));
    m.recordLags = [...m.recordLags, Math.min(lag, RECORD_MARGIN_MAX_MS)].slice(-8);
    const before = m.entry;
    const r = withRecord(before, evidence, {
      now: this.now.wall,
      marginMs: recordMargin(m),
      sent: m.ownSent,
      confirmed: m.ownConfirmed,
      pushLeadMs: m.cfg.deadlineMs + m.cfg.requestTimeoutMs,
    });
    if (r.entry !== before) {
      m.entry = r.entry;
      this.persist = true;
      this.emit({
        type: "reconciled",
        changes: r.changes,
        notes: r.notes,
        marginMs: recordMargin(m),
        proofs: proofCounts(r.entry),
      });
      const e = r.entry;
      if (isExhausted(e) && !m.wasExhausted && m.phase === "running") {
        m.state = "exhausted";
        this.logExhausted("the exchange's scheduledCancel orders prove the daily limit");
      } else if (m.state === "lapsed" && m.phase === "running" && m.entry.armedUntil !== null)
        m.state = "armed";
      this.limitSuspected();
    } else if (r.notes.length > 0) {
      this.emit({ type: "recordChecked", notes: r.notes });
    }
    // Guesses left today: read again later (a lagging record may list the replacing push by then).
    if (m.entry.triggers.some((t) => t.proof === "guess") && m.phase === "running")
      m.wake.record = this.now.mono + RECORD_REREAD_MS;
  }

  logExhausted(why: string, message?: string) {
    this.m.wasExhausted = true;
    const e = this.m.entry;
    this.emit({
      type: "limitReached",
      triggersToday: e.triggersToday,
      triggerLimit: e.limit,
      resumesAt: nextUtcMidnight(this.now.wall),
      why,
      ...(message ? { message } : {}),
    });
  }

  // -------------------------------------------------------------------------------------------- push

  /** Decides whether to push now, and starts one: the intent persisted with mustSync, then the request. */
  kick(reason: string) {
    const m = this.m;
    if (m.phase !== "running") return;
    if (m.inflight) {
      if (reason !== "interval") m.kickAfterInflight = true;
      return;
    }
    const e = m.entry;
    if (m.wasExhausted && !isExhausted(e)) {
      m.wasExhausted = false;
      this.emit({ type: "limitReset", day: e.day, triggersToday: e.triggersToday });
      if (m.state === "exhausted") m.state = e.armedUntil === null ? "lapsed" : "armed";
    }
    if (m.agentReason !== null) return;
    if (!m.engineUp) {
      if (m.cfg.onEngineDown === "lapse" || m.expedited) return;
      // cancel: no push while the canceller runs; once it confirmed, the schedule is renewed as before (the
      // backstop should the daemon die too) so it never fires on the kept stops nor spends a trigger.
      if (m.cfg.onEngineDown === "cancel" && m.ordersCancel === "waiting") return;
    }
    if (m.state === "not_protected" && this.now.mono < m.nextPermanentCheckMono) return;
    // The one count that stops the pushes: the exchange's own daily-limit refusal today. A guessed or
    // record-implied count at the limit fails readiness, the pushes go on (docs/daemon.md).
    // (on the day of the refusal by both clocks: when either says a new day has begun, a push is harmless and sent;
    // the exchange refuses it again if its day has not changed)
    if (limitRefused(e) && utcDay(e.limitRefusedAt!) >= utcDay(Math.max(this.times.day, this.now.wall))) {
      if (m.state !== "not_protected") m.state = "exhausted";
      return;
    }
    if (this.now.mono < m.gateUntilMono) {
      m.wake.gate = m.gateUntilMono;
      return;
    }
    if (reason === "interval" && this.now.mono < m.retryAtMono) return;
    const mode = m.engineUp || m.ordersCancel === "confirmed" ? "arm" : "expedite";
    const cancelAt = Math.floor(this.now.wall) + (mode === "arm" ? m.cfg.deadlineMs : EXPEDITE_LEAD_MS);
    const id = m.nextId++;
    m.inflight = {
      id,
      cancelAt,
      mode,
      askedMono: this.now.mono,
      synced: true,
      previousPending: e.pendingUntil,
    };
    m.ownSent = [...m.ownSent, cancelAt].slice(-OWN_PUSHES_KEPT);
    m.entry = withIntent(e, cancelAt);
    // Write-ahead: the request leaves only once the intent is durable (or the file already says as much).
    this.persist = true;
    this.ready.mustSync = true;
    this.ready.syncBudgetMs = m.cfg.requestTimeoutMs;
    this.ready.send = { kind: "push", id, cancelAt, expiresAfterMs: m.cfg.requestTimeoutMs };
  }

  /** The write-ahead of push `id` was not durable within its budget: the request never left. */
  syncFailed(id: number, reason: string) {
    const f = this.m.inflight;
    if (!f || f.id !== id) return;
    // The exchange's schedule stays as it is (and lapses as if the daemon were dead).
    this.pushFailed(
      {
        type: "pushFailed",
        id,
        kind: "ledger_slow",
        message: `the write-ahead record was not durable within ${this.m.cfg.requestTimeoutMs} ms (${reason}); the push was not sent`,
        permanent: false,
        retryable: true,
        outcomeUnknown: false,
      },
      true,
    );
  }

  afterInflight() {
    const m = this.m;
    if (m.phase === "stopping") return this.continueShutdown();
    if (m.kickAfterInflight) {
      m.kickAfterInflight = false;
      this.kick("after-inflight");
    }
  }

  pushConfirmed(ev: Extract<Event, { type: "pushConfirmed" }>) {
    const m = this.m;
    const f = m.inflight;
    if (!f || f.id !== ev.id) return;
    // The answer's Date may have corrected the clock: a deadline that passed before this push landed fired.
    this.checkLapse();
    m.inflight = null;
    // The exchange took a push computed on the time used: the streak of time refusals ends.
    m.time = timeAccepted(m.time!);
    const at = this.now.wall;
    m.entry = withConfirmedPush(m.entry, f.cancelAt, at);
    m.ownConfirmed = [...m.ownConfirmed, { at: Math.floor(at), cancelAt: f.cancelAt }].slice(
      -OWN_PUSHES_KEPT,
    );
    if (f.mode === "expedite") m.expedited = true;
    m.lastPushAt = at;
    m.armedKnown = true;
    m.gateUntilMono = 0;
    m.retryAtMono = 0;
    m.wake.gate = null;
    m.wake.retry = null;
    m.consecutiveFailures = 0;
    m.lastError = null;
    m.clockStepped = false;
    if (m.failingSinceMono !== null) {
      const outageMs = Math.round(this.now.mono - m.failingSinceMono);
      m.failingSinceMono = null;
      this.emit({ type: "recovered", outageMs });
    }
    if (m.notProtectedReason !== null) {
      this.notProtectedGauge(m.notProtectedReason, 0);
      this.emit({ type: "protected", previousReason: m.notProtectedReason, by: "exchange" });
      m.notProtectedReason = null;
    }
    if (m.phase === "running") m.state = f.mode === "expedite" || !m.engineUp ? "engine_down" : "armed";
    this.persist = true;
    this.armLapseTimer();
    this.emit({
      type: "pushConfirmed",
      deadline: f.cancelAt,
      latencyMs: ev.latencyMs,
      expedited: f.mode === "expedite",
    });
    this.afterInflight();
  }

  /** `neverLeft`: the request was not sent (its write-ahead failed). */
  pushFailed(ev: Extract<Event, { type: "pushFailed" }>, neverLeft = false) {
    const m = this.m;
    const f = m.inflight;
    if (!f || f.id !== ev.id) return;
    m.inflight = null;
    this.timeRefusal(ev);
    if (ev.outcomeUnknown && !neverLeft) {
      // The old request may still land until its expiresAfter: the next one waits (docs/daemon.md). It left when
      // the driver says, no earlier than it was asked for and no later than the write-ahead's budget allows.
      const latestLeave = f.askedMono + (f.synced ? m.cfg.requestTimeoutMs : 0);
      const sent = Number.isFinite(ev.sentMono)
        ? Math.min(Math.max(ev.sentMono!, f.askedMono), latestLeave)
        : latestLeave;
      m.gateUntilMono = Math.max(m.gateUntilMono, sent + m.cfg.requestTimeoutMs + EXPIRY_MARGIN_MS);
    } else if (m.entry.pendingUntil === f.cancelAt || neverLeft) {
      // An explicit refusal (or a request that never left) armed nothing; a deadline counted meanwhile is gone.
      const prev = f.previousPending;
      const counted = m.entry.lastCountedDeadline;
      const restored = prev !== null && (counted === null || prev > counted) ? prev : null;
      m.entry = {
        ...m.entry,
        pendingUntil: restored,
        pendingLatest: restored === null ? null : m.entry.pendingLatest,
      };
      this.persist = true;
    }
    this.checkLapse(); // the answer's Date may have corrected the clock
    if (m.phase !== "running") return this.afterInflight();
    m.consecutiveFailures++;
    m.failingSinceMono ??= this.now.mono;
    m.lastError = { kind: ev.kind, message: ev.message };
    if (f.mode === "expedite") m.expedited = true; // one expedite per engine-down episode (docs/daemon.md)
    const base = {
      type: "pushFailed" as const,
      reason: ev.kind,
      message: ev.message,
      consecutiveFailures: m.consecutiveFailures,
    };

    if (ev.permanent) {
      const first = m.notProtectedReason !== ev.kind;
      if (m.notProtectedReason !== null && first) this.notProtectedGauge(m.notProtectedReason, 0);
      m.notProtectedReason = ev.kind;
      m.state = "not_protected";
      m.nextPermanentCheckMono = this.now.mono + m.cfg.permanentRecheckMs;
      this.notProtectedGauge(ev.kind, 1);
      this.emit({ ...base, refused: true });
      if (first)
        this.emit({
          type: "notProtected",
          reason: ev.kind,
          message: ev.message,
          recheckInMs: m.cfg.permanentRecheckMs,
        });
      m.wake.retry = m.nextPermanentCheckMono;
      return this.afterInflight();
    }

    if (ev.kind === "daily_limit") {
      // Dated no later than the day clock (the earlier of two disagreeing clocks) nor the ledger's day, and, while
      // no answer has verified this run's clock, at the last verified time (the exchange's time is known to be
      // no earlier): a clock stepped past 00:00, or a restart on one, must not date the refusal on a day the
      // exchange has not reached, which would hold the pushes through the exchange's next day (the hold lasts
      // while both clocks are on the refusal's day; a push after it is harmless: refused again).
      const t = m.time!;
      const endOfLedgerDay = nextUtcMidnight(Date.parse(`${m.entry.day}T00:00:00Z`)) - 1;
      const known = t.anchorMono !== null ? endOfLedgerDay : Math.max(t.floor, MIN_PLAUSIBLE_MS);
      m.entry = withLimitReached(
        m.entry,
        Math.min(this.now.wall, this.times.day, endOfLedgerDay, known),
        ev.message,
        m.cfg.historySize,
      );
      this.persist = true;
      m.state = "exhausted";
      this.emit({ ...base, refused: true });
      this.logExhausted("the exchange refused with its daily-limit error", ev.message);
      return this.afterInflight();
    }

    if (limitRefused(m.entry)) m.state = "exhausted";
    else if (m.state !== "engine_down" && m.state !== "not_protected") m.state = "retrying";
    let next: number | null = null;
    if (ev.retryable) {
      const limited = ev.kind === "rate_limited";
      const b = limited ? RATE_LIMIT_BACKOFF_BASE_MS : BACKOFF_BASE_MS;
      const cap = limited ? m.cfg.intervalMs : Math.max(1_000, m.cfg.intervalMs / 2);
      const delay = Math.min(b * 2 ** Math.min(m.consecutiveFailures - 1, 20), cap);
      next = Math.max(this.now.mono + delay, m.gateUntilMono);
    }
    this.emit({
      ...base,
      refused: false,
      retryInMs: next === null ? null : Math.round(next - this.now.mono),
      armedUntil: reportedDeadline(m),
    });
    if (next !== null && m.engineUp) {
      m.retryAtMono = next;
      m.wake.retry = next;
    }
    this.afterInflight();
  }

  // ------------------------------------------------------------------------------------ engine, agent

  engine(up: boolean, detail: string | null) {
    const m = this.m;
    if (up === m.engineUp) return;
    m.engineUp = up;
    m.expedited = false;
    m.ordersCancel = null;
    m.cancelPass = false;
    m.cancelPasses = 0;
    const policy = m.cfg.onEngineDown;
    if (!up) {
      m.wake.retry = null;
      m.retryAtMono = 0;
      if (m.state !== "not_protected") m.state = "engine_down";
      this.emit({ type: "engineDown", action: policy, detail, armedUntil: reportedDeadline(m) });
      if (policy === "expedite") this.kick("engine-down");
      else if (policy === "cancel") {
        m.ordersCancel = "waiting";
        m.cancelPasses = 1;
        this.ready.cancelOrders = { cancelStops: m.cfg.cancelStops };
      }
      return;
    }
    if (m.state !== "not_protected") m.state = m.entry.armedUntil === null ? "lapsed" : "armed";
    this.emit({ type: "engineUp", detail });
    this.kick("engine-up");
  }

  ordersCancelled(ev: Extract<Event, { type: "ordersCancelled" }>) {
    const m = this.m;
    const pass = m.ordersCancel === "confirmed" && m.cancelPass;
    if (m.engineUp || (m.ordersCancel !== "waiting" && !pass)) return;
    m.cancelPass = false;
    const fields = {
      pass: m.cancelPasses,
      cancelled: ev.cancelled,
      kept: ev.kept,
      ...(ev.detail ? { detail: ev.detail } : {}),
    };
    if (ev.confirmed) {
      m.ordersCancel = "confirmed";
      this.emit({ type: "ordersCancelled", ...fields, repeat: pass });
      if (!pass) this.kick("orders-cancelled");
      return;
    }
    // Not confirmed: fall back to the expedite backstop (the exchange cancels at the 5 s minimum).
    m.ordersCancel = null;
    this.emit({ type: "cancelFailed", ...fields });
    this.kick("engine-down");
  }

  /**
   * Engine down with policy `cancel`, after a confirmed cancel: orders placed since (the engine is down, a human
   * or another process is not) are cancelled again, one pass each interval, while the engine stays down.
   */
  cancelAgain() {
    const m = this.m;
    if (m.phase !== "running" || m.engineUp || m.cfg.onEngineDown !== "cancel") return;
    if (m.ordersCancel !== "confirmed" || m.cancelPass || m.agentReason !== null) return;
    m.cancelPass = true;
    m.cancelPasses++;
    this.ready.cancelOrders = { cancelStops: m.cfg.cancelStops };
  }

  agent(state: "ok" | "missing" | "expired", detail: string | undefined) {
    const m = this.m;
    if (state === "ok") {
      if (m.agentReason === null) return;
      this.notProtectedGauge(m.agentReason, 0);
      this.emit({ type: "protected", previousReason: m.agentReason, by: "agent" });
      m.agentReason = null;
      m.notProtectedReason = null;
      m.state = m.entry.armedUntil === null ? "lapsed" : "armed";
      this.kick("agent-ok");
      return;
    }
    const reason = state === "missing" ? "agent_missing" : "agent_expired";
    if (m.agentReason === reason) return;
    if (m.notProtectedReason !== null && m.notProtectedReason !== reason)
      this.notProtectedGauge(m.notProtectedReason, 0);
    m.agentReason = reason;
    m.notProtectedReason = reason;
    m.state = "not_protected";
    this.notProtectedGauge(reason, 1);
    this.emit({ type: "agentInvalid", reason, state, ...(detail ? { message: detail } : {}) });
  }

  // ----------------------------------------------------------------------------------------- shutdown

  cancelTimers() {
    this.m.wake.lapse = null;
    this.m.wake.retry = null;
    this.m.wake.gate = null;
  }

  shutdown(mode: "remove" | "keep") {
    const m = this.m;
    if (m.phase === "stopped") {
      // Already stopped (halted): nothing more is sent; what stays at the exchange is as it was.
      this.ready.done = {
        account: m.cfg.account,
        outcome: mode === "keep" ? "kept" : "skipped",
        reason: "stopped",
      };
      return;
    }
    if (m.phase === "stopping") return;
    m.phase = "stopping";
    m.shutdownMode = mode;
    this.cancelTimers();
    if (!m.inflight) this.continueShutdown();
  }

  continueShutdown() {
    const m = this.m;
    if (m.phase !== "stopping" || m.inflight || m.removing) return;
    this.checkLapse();
    if (m.shutdownMode === "keep") {
      const armedUntil = reportedDeadline(m);
      m.state = "stopped";
      m.phase = "stopped";
      this.emit({ type: "kept", armedUntil });
      this.ready.done = { account: m.cfg.account, outcome: "kept" };
      return;
    }
    // An attempt with unknown outcome could still land: remove only after it can no longer.
    if (this.now.mono < m.gateUntilMono) {
      m.wake.gate = m.gateUntilMono;
      return;
    }
    m.removing = true;
    this.ready.send = { kind: "removal", expiresAfterMs: m.cfg.requestTimeoutMs };
  }

  removalConfirmed() {
    const m = this.m;
    if (!m.removing) return;
    this.checkLapse(); // a deadline that passed before the removal landed fired
    const previous = m.entry.armedUntil;
    m.entry = withRemoval(m.entry, this.now.wall, m.cfg.historySize);
    m.removing = false;
    m.state = "stopped";
    m.phase = "stopped";
    this.persist = true;
    this.emit({ type: "removed", previousDeadline: previous });
    this.ready.done = { account: m.cfg.account, outcome: "removed" };
  }

  removalFailed(ev: Extract<Event, { type: "removalFailed" }>) {
    const m = this.m;
    if (!m.removing) return;
    this.checkLapse();
    m.removing = false;
    m.state = "stopped";
    m.phase = "stopped";
    const account = m.cfg.account;
    const skipped = { account, outcome: "skipped" as const, reason: ev.kind, message: ev.message };
    const v = ev.cumulativeVolume;
    if (ev.kind === "volume_gate" && typeof v === "number" && Number.isFinite(v) && v < VOLUME_GATE_USD) {
      // Below the exchange's volume gate no schedule can have been set: there is nothing to remove.
      m.entry = withRemoval(m.entry, this.now.wall, m.cfg.historySize);
      this.persist = true;
      this.emit({ type: "nothingArmed", reason: ev.kind, message: ev.message, belowVolumeGate: true });
      this.ready.done = skipped;
      return;
    }
    if (ev.permanent && m.notProtectedReason !== null && m.entry.armedUntil === null) {
      this.emit({ type: "removalSkipped", reason: ev.kind, message: ev.message });
      this.ready.done = skipped;
      return;
    }
    if (
      m.entry.armedUntil === null &&
      m.entry.pendingUntil === null &&
      m.entry.pendingLatest === null &&
      m.inflight === null
    ) {
      // No push was ever accepted nor left without an answer: the exchange holds no schedule of ours to remove.
      this.emit({ type: "nothingArmed", reason: ev.kind, message: ev.message, belowVolumeGate: false });
      this.ready.done = skipped;
      return;
    }
    this.emit({
      type: "removalFailed",
      reason: ev.kind,
      message: ev.message,
      armedUntil: reportedDeadline(m),
    });
    this.ready.done = { account, outcome: "failed", reason: ev.kind, message: ev.message };
  }
}

/**
 * `withTrigger` for a deadline on a later UTC day than the ledger's, which the day clock (the earlier of two
 * disagreeing clocks) has not reached: the guess is kept in `later`, counted on its own day when the ledger rolls
 * there (ledger-model.ts `rollEntry`), and today's count stays as it is. Once per deadline, as `withTrigger`.
 */
function withTriggerForLaterDay(
  entry: LedgerEntry,
  { deadline, at, detail, alt }: { deadline: number; at: number; detail?: string | undefined; alt: number[] },
  size?: number,
): TriggerResult {
  const cleared = { ...entry, armedUntil: null, pendingUntil: null, pendingLatest: null };
  if (entry.lastCountedDeadline === deadline) return { entry: cleared, counted: false, reachedLimit: false };
  const others = [...new Set(alt.filter((d) => d !== deadline))].slice(-8);
  const guess: TriggerRecord = {
    deadline,
    proof: "guess",
    at: Math.floor(at),
    ...(others.length > 0 ? { alt: others } : {}),
  };
  const later = [...(entry.later ?? []).filter((t) => t.deadline !== deadline), guess].slice(-LATER_KEPT);
  const next = withHistory(
    { ...cleared, later, lastCountedDeadline: deadline },
    {
      at,
      type: "trigger",
      deadline,
      triggersToday: entry.triggersToday,
      detail: `${detail ? `${detail}; ` : ""}on ${utcDay(deadline)}, counted for that day (the earlier clock is still on ${entry.day})`,
    },
    size,
  );
  return { entry: next, counted: true, reachedLimit: atLimit(next) };
}

export const isArmedState = (s: SwitchState) => s === "armed" || s === "retrying";
