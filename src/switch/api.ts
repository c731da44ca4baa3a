/**
 * What the switch's driver (driver.ts) takes and gives: its parameters and the handle the daemon holds.
 */
import type { EngineDownCause, EventBus } from "../core/events.js";
import type { Logger } from "../core/logger.js";
import type { CancelOpenOrders, CloseOutcome, ClosePositions, DrillIo } from "../core/orders-port.js";
import type { ExchangeTime, Runtime } from "../core/runtime.js";
import type { ProtectionView, SwitchStatus } from "../core/status.js";
import type { ScheduleCancelParameters, ScheduleCancelResult } from "../protocol/hyperliquid/exchange.js";
import type { NonceSpan } from "../protocol/hyperliquid/nonce.js";
import type { Metrics } from "../surface/metrics.js";
import type { MemberMark } from "./coordination-model.js";
import type { EscalationConfig } from "./escalation.js";
import type { Ledger } from "./ledger.js";
import type {
  EngineDownPolicy,
  Event,
  Now,
  ShutdownOutcome,
  StepResult,
  SwitchConfig,
  SwitchModel,
} from "./model.js";
import type { RecordResult } from "./record.js";

/** What the switch needs from ExchangeClient. */
export type ScheduleCancelClient = {
  scheduleCancel(params: ScheduleCancelParameters): Promise<ScheduleCancelResult>;
};

// The ports the switch asks its executors through (src/orders/ carries them out): their types live in core/.
export type {
  CancelOpenOrders,
  CloseOrderReport,
  CloseOutcome,
  ClosePositions,
  DrillIo,
} from "../core/orders-port.js";

/** What the operator's kill answers (`hl-deadman kill`): what was cancelled, and closed when asked. */
export type KillOutcome =
  | { done: false; reason: string }
  | {
      done: true;
      latched: boolean;
      cancel: { confirmed: boolean; cancelled: number; kept: number; detail?: string | undefined };
      close: CloseOutcome | null;
      /** monotonic ms from the command reaching the switch to the cancels' last answer (the confirming read) */
      cancelMs: number;
    };

/**
 * What the switch needs from the ledger store (Ledger): its entry at start, `put`, `durable` and the file's
 * `writtenUpdatedAt`. The store only writes: whether a push needs its write-ahead is the machine's rule
 * (write-ahead.ts). A port, so the property tests drive the real driver over an in-memory store.
 */
export type SwitchLedger = Pick<Ledger, "historySize" | "initial" | "put" | "durable" | "writtenUpdatedAt">;

export type CreateSwitchParameters = {
  account: string;
  vaultAddress?: string | undefined;
  client: ScheduleCancelClient;
  ledger: SwitchLedger;
  /**
   * the daemon's runtime (src/core/runtime.ts): its clock (the local wall clock), timers, stop signal (the push
   * loop stops when it is aborted) and `every` (the push loop)
   */
  runtime: Runtime;
  /** the exchange's time (default: one of its own over the runtime's clock); share the daemon's */
  time?: ExchangeTime | undefined;
  logger: Logger;
  metrics: Metrics;
  /** the daemon's event bus (src/core/events.ts): the switch publishes its typed events there; its log line and metrics are subscribers (log.ts switchLog, switchMetrics) */
  bus?: EventBus | undefined;
  intervalMs: number;
  deadlineMs: number;
  requestTimeoutMs: number;
  permanentRecheckMs: number;
  triggerWarnRemaining: number;
  onEngineDown?: EngineDownPolicy | undefined;
  cancelStops?: boolean | undefined;
  /** called after a trigger is counted (the daemon polls exposure) */
  onTrigger?: ((account: string) => void) | undefined;
  /** reads the exchange's record for the account (src/watchers/record-read.ts; it never throws) */
  readRecord?: ((account: string) => Promise<RecordResult>) | undefined;
  /** engine-down policy `cancel`: cancels the account's open orders */
  cancelOpenOrders?: CancelOpenOrders | undefined;
  /** escalation step 2 (opted in with `escalation`): cancel, then close the positions reduce-only */
  closePositions?: ClosePositions | undefined;
  /**
   * the operator's kill: cancels every resting order of the account, stops included, whatever the engine-down
   * policy (default: `cancelOpenOrders`)
   */
  killOrders?: CancelOpenOrders | undefined;
  /** the drill's requests (drill-io.ts); absent: a drill is refused */
  drillIo?: DrillIo | undefined;
  /** the escalation ladder's configuration for this account (escalation.ts); absent: off */
  escalation?: EscalationConfig | null | undefined;
  /**
   * replicas coordinated through etcd (coordination.ts): the gated actions wait for `coordinate`'s lease;
   * `actAlone`: with etcd unreachable, take them alone
   */
  coordination?: { actAlone: boolean } | null | undefined;
  /** the account's cumulative traded volume (userRateLimit.cumVlm), asked when a removal meets the volume gate */
  cumulativeVolume?: ((account: string) => Promise<number>) | undefined;
  /** the ledger's last verified time (its updatedAt at open): the exchange's time is never before it */
  timeFloor?: number | null | undefined;
  /**
   * the signer's nonces: re-derived from the exchange's answer after `nonce too low` / `too high`; `last`, the
   * last one handed out, bounds the nonce a push is signed with (the write-ahead rule: write-ahead.ts)
   */
  nonces?: { rebase(floor: number): void; accepted(nonce: number): void; readonly last?: number } | undefined;
  /** what a restart's nonce floor allows for (io.ts): without it every push is written ahead */
  nonceSpan?: NonceSpan | undefined;
  /** runs on each push-loop wake-up, before the tick (the daemon's once-per-interval work rides on it) */
  onTick?: (() => void) | undefined;
  /** Seams for tests only; the daemon passes none. */
  testSeams?: SwitchTestSeams | undefined;
};

export type SwitchTestSeams = {
  /**
   * The machine's step (default: machine.ts `step`). The property tests wrap the real step to check the
   * invariants after each step and to plant bugs, while the real driver carries out its output.
   */
  machineStep?: ((model: SwitchModel, event: Event, now: Now) => StepResult) | undefined;
};

export type Switch = {
  readonly account: string;
  /** Starts pushing at once, then once per interval on slots `slotOrigin + k × interval` (default origin: now). */
  start(slotOrigin?: number): void;
  /** Stops pushing and waits for an in-flight push. The schedule is left as it is. */
  stop(): Promise<void>;
  /** Graceful stop: stop pushing, then remove the schedule (`remove`) or leave it armed (`keep`). */
  shutdown(params: { mode: "remove" | "keep" }): Promise<ShutdownOutcome>;
  /** `cause` of a down: `seen` (default) or `absent` (no engine named it within the connect grace after a restart) */
  setEngineUp(up: boolean, detail?: string | null, cause?: EngineDownCause): void;
  /** The exposure poll's figures for this account (the escalation's rules). */
  exposure(figures: { accountValue: number; notionalUsd: number; minLiquidationPct: number | null }): void;
  /** The operator's `reset`: releases the HALTED latch; the answer is the switch's event (released or refused). */
  reset(by: string): { released: boolean; reason: string };
  /**
   * The operator's kill switch: latch HALTED, cancel every resting order, with `close` close the positions
   * reduce-only; resolves once the cancels (and the close) answered, or at once when refused.
   */
  kill(by: string, close: boolean): Promise<KillOutcome>;
  /** The operator's drill: started (its end is the switch's `drillDone` event) or refused now with the reason. */
  drill(id: string, by: string): { started: true } | { started: false; reason: string };
  /** The replicas' election (coordination.ts): this replica's role, fencing token and other live candidates. */
  coordinate(state: {
    role: "leader" | "follower" | "lost";
    token: string | null;
    othersAlive: boolean | null;
    members?: readonly MemberMark[] | null;
    detail?: string | null;
  }): void;
  /** The agent wallet's validity (missing/expired: NOT PROTECTED, no pushes). */
  setAgent(state: "ok" | "missing" | "expired", detail?: string): void;
  /** The exchange's record was read (docs/exchange-record.md): applied where it is fresh, never stops pushes. */
  recordRead(result: RecordResult): void;
  /** The wall clock was stepped by `deltaMs`. */
  clockStepped(deltaMs: number): void;
  /** The HyperEVM's latest block timestamp (seconds), read over `sentMono..receivedMono`: the second time witness. */
  blockTime(sample: { timestampSec: number; sentMono: number; receivedMono: number }): void;
  /** 00:00 UTC: roll the day over, re-arm if exhausted. */
  onDayRollover(): void;
  /** A pure projection of the machine: reading never changes or writes anything. */
  status(): SwitchStatus;
  /** The part of `status` the protection watch reads, cheaply (a fleet's watch reads it often). */
  protection(): ProtectionView;
  /** The machine's model (tests). */
  readonly model: SwitchModel;
  /** Resolves when nothing is in flight (tests). */
  settle(): Promise<void>;
  /** Runs one tick now (tests, and the daemon after events). */
  kick(reason?: string): void;
};

/** The machine's configuration from the driver's parameters (the defaults of the optional ones). */
export function switchConfig(p: CreateSwitchParameters): SwitchConfig {
  return {
    account: p.account,
    intervalMs: p.intervalMs,
    deadlineMs: p.deadlineMs,
    requestTimeoutMs: p.requestTimeoutMs,
    permanentRecheckMs: p.permanentRecheckMs,
    triggerWarnRemaining: p.triggerWarnRemaining,
    onEngineDown: p.onEngineDown ?? "expedite",
    cancelStops: p.cancelStops ?? false,
    historySize: p.ledger.historySize,
    nonceSpan: p.nonceSpan,
    escalation: p.escalation ?? null,
    coordinated: p.coordination != null,
    actAlone: p.coordination?.actAlone === true,
  };
}
