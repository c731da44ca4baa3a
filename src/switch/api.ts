/**
 * What the switch's driver (driver.ts) takes and gives: its parameters and the handle the daemon holds.
 */
import type { EngineDownCause, EventBus } from "../core/events.js";
import type { EscalationConfig, Features } from "../core/feature.js";
import type { CancelOpenOrders, CloseOutcome, ClosePositions, DrillIo } from "../core/orders-port.js";
import type { ExchangeTime, Runtime } from "../core/runtime.js";
import type { ProtectionView, SwitchStatus } from "../core/status.js";
import type { ScheduleCancelParameters, ScheduleCancelResult } from "../protocol/hyperliquid/exchange.js";
import type { NonceSpan } from "../protocol/hyperliquid/nonce.js";
import type { MemberMark } from "./coordination-model.js";
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

/** The account a switch keeps armed, and the vault or subaccount its requests act for (`vaultAddress`). */
export type SwitchAccount = { address: string; vaultAddress?: string | undefined };

/** The machine's settings for the account (`switchConfig`): its cadence and its policies. */
export type SwitchPolicy = {
  intervalMs: number;
  deadlineMs: number;
  requestTimeoutMs: number;
  permanentRecheckMs: number;
  triggerWarnRemaining: number;
  onEngineDown?: EngineDownPolicy | undefined;
  cancelStops?: boolean | undefined;
  /** the escalation ladder's configuration for this account (src/escalation/); absent: off */
  escalation?: EscalationConfig | null | undefined;
  /**
   * replicas coordinated through etcd (coordination.ts): the gated actions wait for the `coordination` input's
   * lease; `actAlone`: with etcd unreachable, take them alone
   */
  coordination?: { actAlone: boolean } | null | undefined;
  /** what a restart's nonce floor allows for (io.ts): without it every push is written ahead */
  nonceSpan?: NonceSpan | undefined;
};

/** The requests the switch's effects carry out (effects.ts): each optional one absent is answered as unavailable. */
export type SwitchIo = {
  client: ScheduleCancelClient;
  ledger: SwitchLedger;
  /**
   * the signer's nonces: re-derived from the exchange's answer after `nonce too low` / `too high`; `last`, the
   * last one handed out, bounds the nonce a push is signed with (the write-ahead rule: write-ahead.ts)
   */
  nonces?: { rebase(floor: number): void; accepted(nonce: number): void; readonly last?: number } | undefined;
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
  /** the account's cumulative traded volume (userRateLimit.cumVlm), asked when a removal meets the volume gate */
  cumulativeVolume?: ((account: string) => Promise<number>) | undefined;
  /** called after a trigger is counted (the machine's `pollExposure`: the daemon polls exposure) */
  onTrigger?: ((account: string) => void) | undefined;
};

/**
 * The time the switch runs on: the daemon's runtime (src/core/runtime.ts: its clock, the local wall clock, timers,
 * stop signal and `every`, the push loop), the exchange's time it shares, and the floor that time never goes below.
 */
export type SwitchRuntime = Runtime & {
  /** the exchange's time (default: one of its own over the runtime's clock); share the daemon's */
  time?: ExchangeTime | undefined;
  /** the ledger's last verified time (its updatedAt at open): the exchange's time is never before it */
  timeFloor?: number | null | undefined;
};

export type CreateSwitchParameters = {
  account: SwitchAccount;
  policy: SwitchPolicy;
  /** the feature machines (src/escalation/, src/drill/): the switch feeds them its events and carries their commands */
  features: Features;
  io: SwitchIo;
  runtime: SwitchRuntime;
  /**
   * the daemon's event bus (src/core/events.ts): the switch publishes its typed events there, and only that; its
   * log lines and metrics are the bus's subscribers (src/surface/switch/ `switchLog`, `switchMetrics`)
   */
  bus: EventBus;
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

/** The exposure poll's figures for the account (the escalation's rules). */
export type ExposureFigures = { accountValue: number; notionalUsd: number; minLiquidationPct: number | null };

/** The replicas' election (coordination.ts): this replica's role, fencing token and other live candidates. */
export type CoordinationState = {
  role: "leader" | "follower" | "lost";
  token: string | null;
  othersAlive: boolean | null;
  members?: readonly MemberMark[] | null;
  detail?: string | null;
};

/** What the daemon tells a switch, one input at a time (`dispatch`). */
export type SwitchInput =
  /** starts pushing at once, then once per interval on slots `slotOrigin + k × interval` (default origin: now) */
  | { type: "start"; slotOrigin?: number | undefined }
  /** stops pushing; its answer resolves once an in-flight push is done. The schedule is left as it is */
  | { type: "stop" }
  /** the trading engine's state; `cause` of a down: `seen` (default) or `absent` (no engine named it in the grace) */
  | { type: "engine"; up: boolean; detail?: string | null | undefined; cause?: EngineDownCause | undefined }
  | ({ type: "exposure" } & ExposureFigures)
  /** the operator's `reset`: releases the HALTED latch; the answer is the switch's event (released or refused) */
  | { type: "reset"; by: string }
  /**
   * the operator's kill switch: latch HALTED, cancel every resting order, with `close` close the positions
   * reduce-only; the answer resolves once the cancels (and the close) answered, or at once when refused
   */
  | { type: "kill"; by: string; close: boolean }
  /** the operator's drill: started (its end is the switch's `drillDone` event) or refused now with the reason */
  | { type: "drill"; id: string; by: string }
  | ({ type: "coordination" } & CoordinationState)
  /** the agent wallet's validity (missing/expired: NOT PROTECTED, no pushes) */
  | { type: "agent"; state: "ok" | "missing" | "expired"; detail?: string | undefined }
  /** the exchange's record was read (docs/exchange-record.md): applied where it is fresh, never stops pushes */
  | { type: "record"; result: RecordResult }
  /** the wall clock was stepped by `deltaMs` */
  | { type: "clockStep"; deltaMs: number }
  /** the HyperEVM's latest block timestamp (seconds), read over `sentMono..receivedMono`: the second time witness */
  | { type: "blockSample"; timestampSec: number; sentMono: number; receivedMono: number }
  /** 00:00 UTC: roll the day over, re-arm if exhausted */
  | { type: "dayRollover" };

/** The answers of the inputs that have one; every other input answers nothing. */
export type SwitchAnswers = {
  stop: Promise<void>;
  reset: { released: boolean; reason: string };
  kill: Promise<KillOutcome>;
  drill: { started: true } | { started: false; reason: string };
};

export type AnswerTo<I extends SwitchInput> = I["type"] extends keyof SwitchAnswers
  ? SwitchAnswers[I["type"]]
  : undefined;

export type Switch = {
  readonly account: string;
  /** One input stepped through the machine and its Ready carried out; the operator's commands answer. */
  dispatch<I extends SwitchInput>(input: I): AnswerTo<I>;
  /** A pure projection of the machine: reading never changes or writes anything. */
  status(): SwitchStatus;
  /** The part of `status` the protection watch reads, cheaply (a fleet's watch reads it often). */
  protection(): ProtectionView;
  /** Graceful stop: stop pushing, then remove the schedule (`remove`) or leave it armed (`keep`). */
  shutdown(params: { mode: "remove" | "keep" }): Promise<ShutdownOutcome>;
  /** Resolves when nothing is in flight (the daemon's pollers wait for the first pushes; tests). */
  settle(): Promise<void>;
  /** For tests only: the machine's model as it is now. */
  readonly testSeams: { readonly model: SwitchModel };
};

/** What the effects (effects.ts) read of the parameters: the requests, the account and the requests' time-out. */
export type EffectsParameters = SwitchIo & {
  account: string;
  vaultAddress?: string | undefined;
  requestTimeoutMs: number;
};

/** The machine's configuration from the driver's parameters (the defaults of the optional ones). */
export function switchConfig(p: CreateSwitchParameters): SwitchConfig {
  const { policy } = p;
  return {
    account: p.account.address,
    intervalMs: policy.intervalMs,
    deadlineMs: policy.deadlineMs,
    requestTimeoutMs: policy.requestTimeoutMs,
    permanentRecheckMs: policy.permanentRecheckMs,
    triggerWarnRemaining: policy.triggerWarnRemaining,
    onEngineDown: policy.onEngineDown ?? "expedite",
    cancelStops: policy.cancelStops ?? false,
    historySize: p.io.ledger.historySize,
    nonceSpan: policy.nonceSpan,
    escalation: policy.escalation ?? null,
    features: p.features,
    coordinated: policy.coordination != null,
    actAlone: policy.coordination?.actAlone === true,
  };
}
