/**
 * What the daemon's components share: the parameters, the base context every component starts on (the runtime
 * among it), and the small feeds through which a later component follows an earlier one (src/app/daemon.ts).
 */
import type { Config } from "../config/schema.js";
import type { Clock } from "../core/clock.js";
import type { EngineDownCause, EventBus } from "../core/events.js";
import { type Feed, feed } from "../core/feed.js";
import type { Logger } from "../core/logger.js";
import type { ExchangeTime, Runtime, Timers } from "../core/runtime.js";
import type { Scheduler } from "../core/scheduler.js";
import type {
  ChainWatchStatus,
  CoordinationStatus,
  ExposureStatus,
  GuardStatus,
  SwitchStatus,
} from "../core/status.js";
import type { LocalSigner } from "../protocol/hyperliquid/signing.js";
import type { parseListenAddress } from "../surface/health.js";
import type { Metrics } from "../surface/metrics.js";
import type { CancelOpenOrders, ClosePositions, ScheduleCancelClient } from "../switch/index.js";
import type { AgentState } from "../watchers/agent-watch.js";

export type DaemonChainWatch = {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
  status(): ChainWatchStatus;
};

export type StartDaemonParameters = {
  config: Config;
  /** the signer (with `signers`: the first of them) */
  wallet: LocalSigner;
  /**
   * Several signers (config `signers`, docs/operations.md "Many accounts, several signers"): each arms its `account`
   * without vaultAddress and each of its `vaults` with it. Absent: `wallet` arms config.accounts / config.vault.
   */
  signers?: { name: string; wallet: LocalSigner; account: string | undefined; vaults: readonly string[] }[];
  stateDir: string;
  logger: Logger;
  /** the runtime's clock and timers (default: the system's; tests pass a ManualClock and ManualTimers) */
  clock?: Clock;
  timers?: Timers;
  scheduler?: Scheduler;
  metrics?: Metrics;
  /** default: config.apiUrl, else the network's */
  apiUrl?: string;
  /**
   * what the logs and the status page call the network: `simulator` against hl-deadman's simulator (a label only:
   * the signatures stay the configured network's); default: config.network
   */
  networkLabel?: string | undefined;
  /** the exchange's record (default: config.explorerUrl, else the network's when the API is the official one) */
  explorerUrl?: string | undefined;
  /** engine-down policy `cancel`: cancels an account's open orders (default: the order-cancel module) */
  cancelOpenOrders?: CancelOpenOrders | undefined;
  /** escalation step 2: closes an account's positions reduce-only (default: the close executor) */
  closePositions?: ClosePositions | undefined;
  /** test seam: runs before each ledger fsync (a slow disk) */
  beforeLedgerSync?: (() => Promise<void>) | undefined;
  /** replaces the ExchangeClient (tests) */
  client?: ScheduleCancelClient & { close?(): void };
  /**
   * runs once per push interval, in the clock watch's wake-up on the push slots (the service refreshes its
   * state-directory lock there, src/app/lock.ts `touch`, instead of waking the process on a timer of its own)
   */
  onInterval?: (() => void) | undefined;
  /** builds the chain watch when watchAddresses are configured (default: the chain watch on config.rpcUrl) */
  createChainWatch?:
    | ((deps: { runtime: Runtime; logger: Logger; metrics: Metrics; bus: EventBus }) => DaemonChainWatch)
    | undefined;
};

/** The agent watches: each agent key's state, for the accounts it signs for. */
export type AgentFeeds = {
  accounts: readonly string[];
  feed: Feed<AgentState> & { now(): AgentState | null };
}[];

/** A value later components follow (src/core/feed.ts). */
export { type Feed, feed } from "../core/feed.js";

export type Base = {
  params: StartDaemonParameters;
  config: Config;
  /** the clock, the timers, `every` and the one abort signal of the whole daemon */
  runtime: Runtime;
  metrics: Metrics;
  /** the exchange's time: monotonic + an offset corrected from the answers' Date headers */
  time: ExchangeTime;
  /** the first signer's address (lower-case); each account's own is `plan[i].signer` */
  signer: string;
  /** every signer's wallet, by lower-case address */
  wallets: ReadonlyMap<string, LocalSigner>;
  plan: { account: string; vaultAddress: string | undefined; signer: string }[];
  accounts: string[];
  apiUrl: string;
  /** the network as logs and the page name it (StartDaemonParameters.networkLabel) */
  networkLabel: string;
  listen: ReturnType<typeof parseListenAddress>;
  /** how the switches stop: `remove` unless close() says otherwise (a failed start always removes) */
  stop: { mode: "remove" | "keep" };
};

/** A feed its holder publishes on (`feed()`). */
export type Published<T> = Feed<T> & { publish(value: T): void };

/**
 * What readiness and liveness are computed from, as feeds: the health server binds before the guard and the
 * switches exist, so it subscribes to these at once, and each part publishes how to read its status as it starts
 * (the guard, the switches, the exposure poller, the election through the switches). Before the switches have
 * published, the daemon is not ready; a part that never publishes (no guard, no exposure poll, no coordination)
 * leaves its default.
 */
export type Board = {
  /** the switches' statuses (src/app/parts/switches.ts) */
  accounts: Published<() => SwitchStatus[]>;
  /** the exposure poller's (src/app/parts/pollers.ts); default: off */
  exposure: Published<() => ExposureStatus>;
  /** the engine guard's (src/app/parts/guard.ts); default: no guard */
  guard: Published<() => GuardStatus>;
  /** with --coordinate: this replica's place in the election (src/replicas/election.ts); default: none */
  coordination: Published<() => CoordinationStatus>;
};

/** A board with nothing published yet. */
export function createBoard(): Board {
  return { accounts: feed(), exposure: feed(), guard: feed(), coordination: feed() };
}

/**
 * The engine's state as a guard reports it: for `accounts` only (the connection guard drives the accounts its engine
 * named), or for every account when absent (the file and URL guards).
 */
export type Engine = {
  up: boolean;
  detail: string | null;
  /** down: its death seen, or an engine absent past the connect grace (the escalation never closes on that alone) */
  cause?: EngineDownCause | undefined;
  accounts?: readonly string[] | undefined;
};

/** The engine guard: its first answer comes before the first push, so a dead engine is never re-armed. */
