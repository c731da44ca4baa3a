/**
 * The daemon's events on one bus: what one part of the daemon tells the others happened, as typed domain events.
 * Every event names the part it comes from (`module`, the same name its log lines carry). The switch publishes its
 * typed events (core/switch-events.ts) for one account; the guard, the budget monitor, the agent watch, the
 * chain watch, the exposure poll, the record's reconciliation and the engine-down cancel publish theirs (below), the
 * clock watch and the exposure poll the clock's; the exposure report (its `exposure` line) and the protection watch
 * publish events already named by their contract name. Everything that follows them subscribes: the log lines and
 * the metrics (each part's `...Log` and `...Metrics` subscribers word and count its events, src/surface/switch/ for
 * the switch, src/surface/watchers/ for the watchers: the producers word nothing), the notifier and the status
 * page. Nothing learns what happened by reading the log: the log is only written.
 */

import type { LedgerStoreEvent } from "./ledger-events.js";
import type { ReconcileOutcome, RecordFinding, UnavailableReason } from "./record.js";
import type { CoordinationEvent } from "./replica-events.js";
import type { SwitchEvent, SwitchPublished } from "./switch-events.js";

export type { LedgerStoreEvent } from "./ledger-events.js";

export type { SwitchPublished } from "./switch-events.js";

export type EventLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";

/**
 * An event named by its contract name (`trigger.counted`, docs/cli.md) with its level, a line for people,
 * the account it concerns and its figures: the exposure report and the protection watch publish these, and what a
 * switch's typed event is described as for notifications (src/surface/switch/ `describeSwitchEvent`, which the
 * notifier imports).
 */
export type DomainEvent = Readonly<Record<string, unknown>> & {
  readonly event: string;
  readonly level: EventLevel;
  readonly msg?: string | undefined;
  /** the part of the daemon it comes from (`switch`, `exposure`, `notify`) */
  readonly module?: string | undefined;
  /** lower-case 0x address of the account it concerns */
  readonly account?: string | undefined;
};

export type GuardKind = "file" | "url" | "socket";

/** One account's engine as the connection guard sees it (src/watchers/connection-guard.ts). */
export type EngineAccountState = "waiting" | "up" | "detached" | "down";

/**
 * Why an engine is down: `seen` its death (a connection closed or silent, a stale file, a failing URL), or `absent`
 * (an account an engine held before a restart that no engine named within `--guard-connect-grace`): absence is the
 * weaker evidence (the engine may be slow to come back), and the escalation's closes never start on it alone.
 */
export type EngineDownCause = "seen" | "absent";

/** The engine guard (src/watchers/guard.ts). */
export type GuardEvent = { readonly module: "guard" } & (
  | { readonly type: "guardConfigured"; readonly kind: GuardKind }
  | { readonly type: "guardChecked"; readonly kind: GuardKind; readonly ok: boolean; readonly detail: string }
  | { readonly type: "guardFutureMtime"; readonly file: string; readonly aheadMs: number }
  | {
      readonly type: "engineChanged";
      readonly kind: GuardKind;
      readonly up: boolean;
      readonly detail: string;
    }
  | {
      readonly type: "guardListening";
      readonly kind: "socket";
      readonly address: string;
      readonly accounts: readonly string[];
    }
  | {
      readonly type: "engineConnected";
      readonly connection: number;
      readonly accounts: readonly string[];
      readonly connections: number;
    }
  | {
      readonly type: "engineRefused";
      readonly connection: number;
      readonly reason: string;
      /**
       * a first line that was read and refused: the version and the accounts it tried (an engine that meant to
       * guard them is not guarding them; said at error)
       */
      readonly hello?: { readonly version: string; readonly accounts: readonly string[] } | undefined;
    }
  | {
      readonly type: "engineDetach";
      readonly connection: number;
      readonly accounts: readonly string[];
      readonly ms: number;
    }
  | { readonly type: "engineLineIgnored"; readonly connection: number; readonly reason: string }
  | {
      readonly type: "engineDisconnected";
      readonly connection: number;
      readonly accounts: readonly string[];
      /** `closed` by the engine, `silent` past the heartbeat gap, `stopped` with the daemon */
      readonly reason: "closed" | "silent" | "stopped";
      readonly detail: string;
    }
  | {
      readonly type: "engineAccount";
      readonly account: string;
      readonly state: EngineAccountState;
      readonly detail: string;
    }
);

/** One account's action budget as read (src/watchers/budget.ts); `daysLeft` unrounded, Infinity without pushes. */
export type BudgetFigures = {
  readonly account: string;
  readonly used: number;
  readonly cap: number;
  readonly left: number;
  readonly daysLeft: number;
  readonly actionsPerDay: number;
};

/** The address budget monitor (src/watchers/budget.ts). */
export type BudgetEvent = { readonly module: "budget" } & (
  | (BudgetFigures & { readonly type: "budgetRead"; readonly first: boolean })
  | (BudgetFigures & { readonly type: "budgetExhausted" })
  | (BudgetFigures & { readonly type: "budgetRecovered" })
  | (BudgetFigures & { readonly type: "budgetLow"; readonly warnDays: number })
  | (BudgetFigures & { readonly type: "budgetOk" })
  | { readonly type: "budgetCheckFailed"; readonly account: string; readonly message: string }
  | { readonly type: "budgetCheckRecovered" }
);

/** The agent watch (src/watchers/agent-watch.ts), for the master `account` and its API wallet `agent`. */
export type AgentEvent = { readonly module: "agent"; readonly account: string; readonly agent: string } & (
  | {
      readonly type: "agentState";
      readonly state: "ok" | "missing" | "expired";
      readonly detail: string;
      readonly validUntil: number | null;
      /** the state differs from the previous answer's (or is the first) */
      readonly changed: boolean;
    }
  | {
      readonly type: "agentExpiring";
      readonly name: string;
      readonly validUntil: number;
      readonly daysLeft: number;
      readonly warnDays: number;
    }
  | { readonly type: "agentCheckFailed"; readonly message: string }
  | { readonly type: "agentCheckRecovered" }
);

/** The chain watch (src/watchers/chain-watch.ts). */
export type ChainEvent = { readonly module: "chain" } & (
  | { readonly type: "chainUnsupported"; readonly rpc: string }
  | {
      readonly type: "chainStarted";
      readonly rpc: string;
      readonly apiLevel: number | null;
      readonly addresses: readonly string[];
    }
  | { readonly type: "chainHead"; readonly block: number }
  | { readonly type: "chainLag"; readonly lagMs: number }
  | {
      readonly type: "chainStalled";
      readonly headBlock: number | null;
      readonly lagMs: number;
      readonly thresholdMs: number;
    }
  | {
      readonly type: "chainResumed";
      readonly headBlock: number | null;
      readonly lagMs: number;
      readonly stalledForMs: number;
    }
  | {
      readonly type: "chainSkipped";
      readonly count: number;
      readonly from: number;
      readonly to: number;
      readonly reason: string;
    }
  | {
      readonly type: "chainTx";
      readonly block: number;
      readonly hash: string;
      readonly from: string;
      readonly to: string | null;
      readonly contractAddress?: string | undefined;
      readonly value: string;
      readonly ok: boolean;
      readonly gasUsed: string;
    }
  | { readonly type: "chainError"; readonly error: string; readonly notFound: boolean }
);

/**
 * The local clock against the exchange's: its skew, measured by the exposure poll from the states' `time` or, with
 * the poll off, by the clock watch (src/app/parts/clock-watch.ts) from the answers' `Date`; a wall-clock step; a failure of
 * the daemon's per-interval hook, which runs in the clock watch's slot. `origin` is the part that measured it (the
 * `module` of its log line, src/surface/watchers/clock.ts).
 */
export type ClockEvent = { readonly module: "clock"; readonly origin: "daemon" | "exposure" | "clock" } & (
  | {
      readonly type: "clockSkew";
      readonly skewMs: number;
      /** half-width of the interval the skew lies in (the exposure poll's estimate), null when not known */
      readonly uncertaintyMs: number | null;
      readonly limitMs: number;
      readonly source: "time" | "date";
      /** the skew crossed the limit, came back within it, or neither */
      readonly change: "crossed" | "cleared" | null;
    }
  | { readonly type: "clockStepped"; readonly deltaMs: number }
  | { readonly type: "intervalHookFailed"; readonly error: unknown }
  /** the HyperEVM block time, the exchange's second time witness (src/watchers/block-time.ts), once per outage */
  | { readonly type: "blockTimeUnavailable"; readonly error: string }
  | { readonly type: "blockTimeAvailable" }
);

/**
 * A watcher's repetition (the runtime's `every`): a wake-up late past its threshold (host suspended or event loop
 * blocked) or a tick that threw. `origin` is the watcher whose loop it is (the `module` of its log line),
 * `loop` the repetition's name (`guard`, `exposure`, `open orders`). The switch publishes its own push loop's.
 */
export type LoopEvent = {
  readonly module: "loop";
  readonly origin: "guard" | "exposure";
  readonly loop: string;
} & (
  | {
      readonly type: "loopStalled";
      readonly gapMs: number;
      readonly expectedAt: number;
      readonly intervalMs: number;
    }
  | { readonly type: "tickFailed"; readonly error: unknown }
);

/** One figure the exposure report changed on a poll of one account and dex (src/watchers/exposure-report.ts). */
export type ExposureChange =
  /** an account figure, as the exchange's decimal string */
  | {
      readonly figure: "accountValue" | "totalNtlPos" | "totalMarginUsed" | "withdrawable";
      readonly value: string;
    }
  /** the account's leverage; null: not defined (no equity) */
  | { readonly figure: "leverage"; readonly value: number | null }
  /** a position's size or notional, as the exchange's decimal string */
  | { readonly figure: "szi" | "positionValue"; readonly coin: string; readonly value: string }
  /** a position's distance to liquidation (percent of mark); null: it has no liquidation price */
  | { readonly figure: "liquidationDistancePct"; readonly coin: string; readonly value: number | null }
  /** a position that closed since the last poll */
  | { readonly figure: "closed"; readonly coin: string };

/** A threshold the exposure report watches (`--max-leverage`, `--max-notional-usd`, `--min-liquidation-distance`). */
export type ExposureAlertMetric = "leverage" | "totalNtlPos" | "liquidationDistancePct";

/**
 * The exposure poller and its report (src/watchers/exposure.ts, exposure-report.ts), besides the `exposure` line
 * itself (a `NamedEvent`, below): what changed since the last poll (only what changed: the report compares the
 * exchange's strings), each crossing of a threshold, each poll's end and failure.
 */
export type ExposurePollEvent = { readonly module: "exposurePoll" } & (
  | {
      readonly type: "exposureChanged";
      readonly account: string;
      /** "" is the first perp dex */
      readonly dex: string;
      readonly changes: readonly ExposureChange[];
    }
  | {
      readonly type: "exposureAlert";
      readonly account: string;
      readonly dex: string;
      readonly metric: ExposureAlertMetric;
      readonly coin?: string | undefined;
      /** the value that crossed (Infinity: leverage with open notional and no equity); null when not known */
      readonly value: number | null;
      readonly limit: number;
      /**
       * `raised` over the limit, `cleared` back within it, or a liquidation-distance alert that ended because its
       * position `closed` or has `noLiquidationPrice` any more
       */
      readonly change: "raised" | "cleared" | "closed" | "noLiquidationPrice";
    }
  | {
      readonly type: "exposurePolled";
      /** how long the poll of every dex took (the monotonic clock) */
      readonly durationMs: number;
      /** when every dex was read (ms), or null when one failed */
      readonly succeededAt: number | null;
    }
  | {
      readonly type: "exposurePollFailed";
      readonly reason: string;
      readonly dex: string;
      /** the error's kind (src/protocol/hyperliquid/errors.ts) or name */
      readonly kind: string;
      readonly message: string;
    }
  /** a read of an account's open orders failed (src/watchers/open-orders.ts): the status page keeps the last count */
  | { readonly type: "openOrdersFailed"; readonly account: string; readonly error: unknown }
  /** a poll that threw past its per-dex handling (a bug in the report's path) */
  | {
      readonly type: "exposurePollCrashed";
      readonly reason: string;
      readonly kind: string;
      readonly message: string;
    }
);

/**
 * Reading the exchange's record and reconciling the ledger with it (src/watchers/record-log.ts), for `account`.
 * The unavailability is published once per outage (and reason), its end once.
 */
export type ReconcileEvent = { readonly module: "reconcile"; readonly account: string } & (
  | { readonly type: "recordUnavailable"; readonly reason: UnavailableReason; readonly detail: string }
  | { readonly type: "recordAvailable" }
  | {
      readonly type: "ledgerReconciled";
      readonly finding: RecordFinding;
      readonly outcome: ReconcileOutcome;
    }
);

/**
 * One pass of the engine-down cancel on one dex, as src/protocol/hyperliquid/cancel.ts `CancelReport` tells it (the
 * parts its line and counters read).
 */
export type CancelPass = {
  readonly account: string;
  /** a builder-deployed dex's name; absent for the first perp dex */
  readonly dex?: string | undefined;
  readonly targeted: readonly { readonly coin: string; readonly oid: number }[];
  /** reduce-only TP/SL orders left in place */
  readonly kept: readonly {
    readonly coin: string;
    readonly oid: number;
    readonly orderType: string | undefined;
  }[];
  readonly statuses: readonly {
    readonly asset: number;
    readonly oid: number;
    readonly ok: boolean;
    readonly error?: string | undefined;
  }[];
  readonly stillOpen: readonly number[];
  readonly confirmed: boolean;
  readonly detail?: string | undefined;
  readonly weight?: number | undefined;
};

/** The engine-down cancel (src/watchers/record-log.ts `cancelReporter`). */
export type CancelEvent = {
  readonly module: "cancel";
  readonly type: "ordersCancelled";
  readonly pass: CancelPass;
  /** orders the exchange confirmed cancelled */
  readonly cancelled: number;
  /** kept stops not kept by an earlier pass (each is counted once, by its order id) */
  readonly newlyKept: number;
};

/** The exposure report's and the protection watch's events, named by their contract name. */
export type NamedEvent = DomainEvent & { readonly module: "exposure" | "notify" };

/** Every event on the daemon's bus; `module` tells whose it is. */
export type DaemonEvent =
  | SwitchPublished
  | GuardEvent
  | BudgetEvent
  | AgentEvent
  | ChainEvent
  | ClockEvent
  | LoopEvent
  | LedgerStoreEvent
  | ExposurePollEvent
  | ReconcileEvent
  | CancelEvent
  | CoordinationEvent
  | NamedEvent;

export type EventSubscriber = (event: DaemonEvent) => void;

export type EventBus = {
  /** Hands the event to every subscriber, in the order they subscribed; a subscriber that throws is skipped. */
  publish(event: DaemonEvent): void;
  /** Adds a subscriber; returns what removes it. */
  subscribe(subscriber: EventSubscriber): () => void;
};

/** A bus; `subscribers` are subscribed at once, in order (a part's own log and metrics, when it has no daemon). */
export function createEventBus(...subscribers: EventSubscriber[]): EventBus {
  const list: EventSubscriber[] = [...subscribers];
  return {
    publish(event) {
      for (const s of [...list]) {
        try {
          s(event);
        } catch {
          // one subscriber's failure never stops the others nor the part that published
        }
      }
    },
    subscribe(subscriber) {
      list.push(subscriber);
      return () => {
        const i = list.indexOf(subscriber);
        if (i >= 0) list.splice(i, 1);
      };
    },
  };
}

/**
 * Publishes one of the switch's typed events for `account` on the bus, and only that (the switch's driver is its
 * only caller): its log line and metrics are the bus's subscribers (src/surface/switch/).
 */
export function publishSwitchEvent(bus: EventBus, account: string, e: SwitchEvent): void {
  bus.publish({ ...e, module: "switch", account });
}
