/**
 * The daemon: one switch per account, the trigger ledger and its 00:00 UTC roll-over, the engine guard, the agent
 * watch, the exposure poller, the action budget, the optional chain watch and the health/metrics server, as an
 * ordered list of components (`daemonComponents`, run by src/app/components.ts): each starts on what the ones
 * before it provide, they close in reverse, once, under the runtime's one abort signal, and a component that fails
 * to start closes again everything started before it; `startDaemon` then rejects with a `DaemonStartError` naming
 * it (docs/daemon.md, "Start order and exit").
 */

import { actionsPerDay, effectiveExplorerUrl, effectiveUrls } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { type Clock, systemClock } from "../core/clock.js";
import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";
import type { Logger } from "../core/logger.js";
import {
  createRuntime,
  ExchangeTime,
  type Runtime,
  systemTimers,
  type TimerHandle,
  type Timers,
} from "../core/runtime.js";
import { cronScheduler, type Scheduler } from "../core/scheduler.js";
import {
  type ChainWatchStatus,
  EXPOSURE_OFF,
  type ExposureStatus,
  type GuardStatus,
  NO_GUARD,
  type Readiness,
  type SwitchStatus,
} from "../core/status.js";
import { VERSION } from "../core/version.js";
import { createCancelExecutor } from "../protocol/hyperliquid/cancel.js";
import { ExchangeClient } from "../protocol/hyperliquid/exchange.js";
import { ExplorerClient } from "../protocol/hyperliquid/explorer.js";
import { InfoClient } from "../protocol/hyperliquid/info.js";
import { NonceSource, type NonceSpan, nonceFloor } from "../protocol/hyperliquid/nonce.js";
import type { LocalSigner } from "../protocol/hyperliquid/signing.js";
import {
  computeReadiness,
  createHealthServer,
  type HealthServer,
  parseListenAddress,
} from "../surface/health.js";
import { createMetrics, type Metrics } from "../surface/metrics.js";
import { createDaemonNotifications } from "../surface/notify/index.js";
import { createStatusModel, statusPageRoutes } from "../surface/status-page/index.js";
import {
  type CancelOpenOrders,
  createSwitch,
  type ScheduleCancelClient,
  type ShutdownOutcome,
  type Switch,
} from "../switch/index.js";
import { Ledger } from "../switch/ledger.js";
import type { RecordResult } from "../switch/record.js";
import { type AgentState, createAgentWatch } from "../watchers/agent-watch.js";
import { createBudgetMonitor } from "../watchers/budget.js";
import { createExposurePoller } from "../watchers/exposure.js";
import { createGuard } from "../watchers/guard.js";
import { cancelReportLogger, createReconcileLogger } from "../watchers/record-log.js";
import { readRecord } from "../watchers/record-read.js";
import { CrossingLatch } from "../watchers/skew.js";
import { type Component, ComponentStartFailure, Components } from "./components.js";

/** What the daemon needs from the chain watch (src/watchers/chain-watch.ts). */
export type DaemonChainWatch = {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
  status(): ChainWatchStatus;
};

export type StartDaemonParameters = {
  config: Config;
  wallet: LocalSigner;
  stateDir: string;
  logger: Logger;
  /** the runtime's clock and timers (default: the system's; tests pass a ManualClock and ManualTimers) */
  clock?: Clock;
  timers?: Timers;
  scheduler?: Scheduler;
  metrics?: Metrics;
  /** default: config.apiUrl, else the network's */
  apiUrl?: string;
  /** the exchange's record (default: config.explorerUrl, else the network's when the API is the official one) */
  explorerUrl?: string | undefined;
  /** engine-down policy `cancel`: cancels an account's open orders (default: the order-cancel module) */
  cancelOpenOrders?: CancelOpenOrders | undefined;
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
    | ((deps: { runtime: Runtime; logger: Logger; metrics: Metrics }) => DaemonChainWatch)
    | undefined;
};

export type DaemonCloseResult = { ok: boolean; results: ShutdownOutcome[] };

/** A component that could not start; everything started before it has been closed again (exit `exitCode`). */
export class DaemonStartError extends BaseError {
  override name = "DaemonStartError";
  readonly component: string;
  readonly exitCode: ExitCode;
  constructor(component: string, message: string, cause: unknown, exitCode: ExitCode = ExitCode.runtime) {
    // One line: the cause is named in the message, not repeated as "Details:".
    super(message, { cause, details: message });
    this.component = component;
    this.exitCode = exitCode;
  }
}

/** A start-up failure as a one-line DaemonStartError (the listen errors exit 69, docs/cli.md "Exit codes"). */
function startFailure(component: string, error: unknown, health: string): DaemonStartError {
  if (error instanceof DaemonStartError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (component === "health" && (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL"))
    return new DaemonStartError(
      component,
      `Cannot listen on ${health} for health and metrics (${code}); use --health HOST:PORT or off.`,
      error,
      ExitCode.unavailable,
    );
  const exitCode =
    error && typeof error === "object" && "exitCode" in error && typeof error.exitCode === "number"
      ? (error.exitCode as ExitCode)
      : ExitCode.runtime;
  const detail = error instanceof BaseError ? error.shortMessage : String((error as Error)?.message ?? error);
  return new DaemonStartError(component, `Could not start the ${component}: ${detail}`, error, exitCode);
}

export type Daemon = {
  readonly accounts: string[];
  readonly signer: string;
  readonly ledger: Ledger;
  readonly metrics: Metrics;
  readonly switches: Switch[];
  /** http://HOST:PORT of the health server, or null when `health` is off */
  readonly healthUrl: string | null;
  /** the components started, in start order (they close in the reverse) */
  readonly components: string[];
  status(): SwitchStatus[];
  readiness(): Readiness;
  guardStatus(): GuardStatus;
  /** Graceful stop (idempotent): `mode` defaults to config.onShutdown. */
  close(params?: { reason?: string; mode?: "remove" | "keep" }): Promise<DaemonCloseResult>;
  /** Resolves when no push is in flight and the ledger is written (tests). */
  settle(): Promise<void>;
  /** Runs the 00:00 UTC roll-over now (what the cron job does). */
  rollover(): void;
};

/** Accounts to protect and the vaultAddress each push carries (docs/daemon.md "Accounts"). */
export function planAccounts(
  config: Config,
  signer: string,
): { account: string; vaultAddress: string | undefined }[] {
  if (config.vault) return [{ account: config.vault, vaultAddress: config.vault }];
  const accounts = config.accounts.length > 0 ? [...new Set(config.accounts)] : [signer];
  // One account acts directly, without vaultAddress: the signer's own address when it is listed, else the first
  // account listed. A push without vaultAddress protects the signer's user, which is the signer itself or, when
  // the signer is an API (agent) wallet, the master it was approved for (docs/exchange-behaviour.md §7) -- the recommended set-up
  // is a dedicated agent key with `--account MASTER`. Every other account is a subaccount or vault of that user
  // and is sent as vaultAddress. The daemon logs this plan at start (`daemon.start`, `accounts.agent`).
  const direct = accounts.includes(signer) ? signer : accounts[0]!;
  return accounts.map((account) => ({ account, vaultAddress: account === direct ? undefined : account }));
}

/** The switch's client can also cancel orders (the ExchangeClient, so both share one nonce source). */
function hasCancel(client: object): client is Pick<ExchangeClient, "cancel"> {
  return typeof (client as { cancel?: unknown }).cancel === "function";
}

/** A value later components can read now and follow: the latest, and every change after it. */
type Feed<T> = { subscribe(listener: (value: T) => void): void };
function feed<T>(): Feed<T> & { publish(value: T): void } {
  const listeners: ((value: T) => void)[] = [];
  return {
    subscribe: (listener) => void listeners.push(listener),
    publish: (value) => {
      for (const l of listeners) l(value);
    },
  };
}

// ------------------------------------------------------------------------------------------------ context

/** What every component is given: the parameters, the runtime, and what needs no start (pure, or a value). */
type Base = {
  params: StartDaemonParameters;
  config: Config;
  /** the clock, the timers, `every` and the one abort signal of the whole daemon */
  runtime: Runtime;
  metrics: Metrics;
  /** the exchange's time: monotonic + an offset corrected from the answers' Date headers */
  time: ExchangeTime;
  signer: string;
  plan: { account: string; vaultAddress: string | undefined }[];
  accounts: string[];
  apiUrl: string;
  listen: ReturnType<typeof parseListenAddress>;
  /** how the switches stop: `remove` unless close() says otherwise (a failed start always removes) */
  stop: { mode: "remove" | "keep" };
};

/**
 * What readiness and liveness are computed from. The health server binds before the guard and the switches exist,
 * so they report here as they start; before the switches have started, the daemon is not ready.
 */
type Board = {
  accounts: (() => SwitchStatus[]) | null;
  exposure: () => ExposureStatus;
  guard: () => GuardStatus;
};

// ------------------------------------------------------------------------------------------------ components

/** Notifications and the status page follow the modules' log events through a tapped logger. */
function notificationsComponent(): Component<
  Base,
  {
    logger: Logger;
    log: Logger;
    notifications: ReturnType<typeof createDaemonNotifications>;
    statusModel: ReturnType<typeof createStatusModel>;
  }
> {
  let notifications: ReturnType<typeof createDaemonNotifications> | undefined;
  return {
    name: "notifications",
    start({ params, config, metrics, runtime }) {
      notifications = createDaemonNotifications({
        urls: config.notifyUrls,
        logger: params.logger,
        registry: metrics.registry,
        runtime,
      });
      const statusModel = createStatusModel({ now: () => runtime.clock.now() });
      notifications.listen(statusModel.onEvent);
      const logger = notifications.logger;
      return { notifications, statusModel, logger, log: logger.child({ module: "daemon" }) };
    },
    close: () => notifications?.close(),
  };
}

/**
 * The trigger ledger and the signer's nonces, one component: the ledger persists the nonces' high-water mark, and
 * the nonces start above the floor the ledger's last run left (src/protocol/hyperliquid/nonce.ts).
 */
function ledgerComponent(): Component<
  Base & { logger: Logger },
  { ledger: Ledger; nonces: NonceSource; nonceSpan: NonceSpan }
> {
  let ledger: Ledger | undefined;
  return {
    name: "ledger",
    async start({ params, config, time, logger }) {
      let nonces: NonceSource | undefined;
      // How far above the ledger's last write a restart starts its nonces.
      const nonceSpan: NonceSpan = { requestTimeoutMs: config.requestTimeout, deadlineMs: config.deadline };
      const opened = await Ledger.open({
        stateDir: params.stateDir,
        clock: time,
        // only verified time and nonces taken on it are persisted (they seed a restart's nonce floor)
        verifiedNow: () => time.verifiedNow(),
        nonceHint: () => nonces?.lastVerified ?? 0,
        logger: logger.child({ module: "ledger" }),
        triggerLimit: config.triggerLimit,
        beforeSync: params.beforeLedgerSync,
        nonceSpan,
      });
      ledger = opened;
      // The exchange's time is never before the ledger's last write (a clock stepped back while down).
      if (opened.loadedUpdatedAt !== null) time.notBefore(opened.loadedUpdatedAt);
      // Nonces never go below the previous run's, even after the wall clock was stepped back.
      nonces = new NonceSource(
        time,
        nonceFloor(opened.loadedUpdatedAt, opened.loadedLastNonce, nonceSpan),
        () => time.verified,
      );
      return { ledger: opened, nonces, nonceSpan };
    },
    close: () => ledger?.close(),
  };
}

/** The exchange client (the pushes, the cancels) and one info client for every read-only query. */
function clientsComponent(): Component<
  Base & { nonces: NonceSource },
  { client: ScheduleCancelClient & { close?(): void }; info: InfoClient }
> {
  let client: (ScheduleCancelClient & { close?(): void }) | undefined;
  let info: InfoClient | undefined;
  return {
    name: "clients",
    start({ params, config, time, nonces, apiUrl, runtime }) {
      client =
        params.client ??
        new ExchangeClient({
          apiUrl,
          signer: params.wallet,
          isMainnet: config.network === "mainnet",
          clock: time,
          nonces,
          expiresAfterMs: config.requestTimeout,
          timeoutMs: config.requestTimeout,
        });
      info = new InfoClient({
        apiUrl,
        clock: runtime.clock,
        timeoutMs: config.requestTimeout,
        chunkSize: config.exposureChunkSize,
        concurrency: config.exposureConcurrency,
      });
      return { client, info };
    },
    close() {
      info?.close();
      client?.close?.();
    },
  };
}

/**
 * The exchange's record (docs/exchange-record.md): read at start-up (before the first push, bounded by one request
 * time-out), after every guessed trigger and again while guesses remain; each switch applies it where it is fresh
 * (both directions) and it never stops the pushes. Unavailable: said once, nothing changes. With an API URL given
 * to the daemon (a simulator, a third-party host) the record is read only from an explicit --explorer-url: an
 * official explorer never describes another host's exchange. Also the order canceller (engine-down `cancel`).
 */
function recordComponent(): Component<
  Base & { logger: Logger; log: Logger; ledger: Ledger; info: InfoClient; client: ScheduleCancelClient },
  {
    readRecord: ((account: string) => Promise<RecordResult>) | undefined;
    startRecords: Map<string, RecordResult>;
    cancelOpenOrders: CancelOpenOrders | undefined;
  }
> {
  let explorer: ExplorerClient | null = null;
  const reconciling = new Set<Promise<unknown>>();
  return {
    name: "exchange record",
    async start({
      params,
      config,
      runtime,
      time,
      signer,
      accounts,
      logger,
      log,
      ledger,
      info,
      client,
      metrics,
    }) {
      const explorerUrl =
        params.explorerUrl ?? (params.apiUrl && !config.explorerUrl ? null : effectiveExplorerUrl(config));
      explorer = explorerUrl ? new ExplorerClient({ explorerUrl, timeoutMs: config.requestTimeout }) : null;
      const reconcileLog = createReconcileLogger(logger);
      const readAccountRecord = async (account: string): Promise<RecordResult> => {
        const controller = new AbortController();
        const onAbort = () => controller.abort();
        runtime.signal.addEventListener("abort", onAbort, { once: true });
        const limit = runtime.timers.after(config.requestTimeout, () => controller.abort());
        try {
          const result = await readRecord({
            explorer,
            info,
            account,
            signer,
            now: () => time.now(),
            signal: controller.signal,
          });
          reconcileLog.availability(account, result);
          return result;
        } finally {
          limit.cancel();
          runtime.signal.removeEventListener("abort", onAbort);
        }
      };
      // Start-up: read before the switches start; each switch applies its record once it has started. Only an
      // ASSUMED count (an unreadable ledger) is settled here, before the switch reads its entry: a record that
      // covers the whole UTC day replaces the assumption with its count (docs/exchange-record.md).
      const startRecords = new Map<string, RecordResult>();
      await Promise.all(
        accounts.map(async (account) => {
          try {
            const result = await readAccountRecord(account);
            startRecords.set(account, result);
            const view = ledger.get(account);
            if (!view.assumed || !result.available) return;
            const outcome = reconcileLog.assumed(
              account,
              {
                day: view.day,
                triggersToday: view.triggersToday,
                assumed: true,
                armedUntil: view.armedUntil,
                pendingUntil: view.pendingUntil,
              },
              result,
            );
            if (outcome.changes.some((c) => c.field === "assumed"))
              ledger.reconcile(
                account,
                {
                  ...outcome.ledger,
                  armedUntil: view.armedUntil,
                  triggersToday: Math.min(view.triggersToday, outcome.ledger.triggersToday),
                },
                [],
              );
          } catch (error) {
            log.warn({ event: "record.failed", account, err: error }, "reconciling with the record failed");
          }
        }),
      );
      const cancelOpenOrders =
        params.cancelOpenOrders ??
        (config.onEngineDown === "cancel" && hasCancel(client)
          ? createCancelExecutor({ info, exchange: client, onReport: cancelReportLogger(logger, metrics) })
          : undefined);
      // A switch's read never throws; the reads in flight are awaited on close.
      const read = explorer
        ? (user: string) => {
            const work = readAccountRecord(user).catch(
              (error): RecordResult => ({
                available: false,
                reason: "error",
                detail: error instanceof Error ? error.message : String(error),
              }),
            );
            reconciling.add(work);
            void work.finally(() => reconciling.delete(work));
            return work;
          }
        : undefined;
      return { readRecord: read, startRecords, cancelOpenOrders };
    },
    async close() {
      await Promise.allSettled([...reconciling]);
      explorer?.close();
    },
  };
}

/**
 * The chain watch and its EVM client, loaded only when addresses are watched. Built here (a module that cannot be
 * loaded fails the start before anything is armed); the pollers start and stop it.
 */
function chainWatchComponent(): Component<Base & { logger: Logger }, { chain: DaemonChainWatch | null }> {
  return {
    name: "chain watch",
    async start({ params, config, runtime, logger, metrics }) {
      if (config.watchAddresses.length === 0) return { chain: null };
      if (params.createChainWatch) return { chain: params.createChainWatch({ runtime, logger, metrics }) };
      if (!config.rpcUrl) return { chain: null };
      const [{ createChainWatch }, { EvmClient }] = await Promise.all([
        import("../watchers/chain-watch.js"),
        import("../protocol/evm/client.js"),
      ]);
      const chain = createChainWatch({
        client: new EvmClient({ rpcUrl: config.rpcUrl, timeoutMs: config.requestTimeout }),
        addresses: config.watchAddresses,
        runtime,
        logger,
        metrics,
        pollIntervalMs: config.chainPollInterval,
        stallThresholdMs: config.chainStallThreshold,
        maxLagBlocks: config.chainMaxLagBlocks,
        pageSize: config.chainPageSize,
      });
      return { chain };
    },
    // Nothing runs yet: the pollers own its start and its stop.
    close() {},
  };
}

/**
 * The health, readiness and metrics server, bound before the guard is asked and before any switch pushes: a taken
 * port arms nothing. Then `daemon.start` says what is about to be protected.
 */
function healthComponent(): Component<
  Base & { logger: Logger; log: Logger; ledger: Ledger; statusModel: ReturnType<typeof createStatusModel> },
  { board: Board; readiness: () => Readiness; health: HealthServer | null }
> {
  let health: HealthServer | null = null;
  return {
    name: "health",
    async start({
      config,
      runtime,
      time,
      metrics,
      listen,
      logger,
      log,
      statusModel,
      ledger,
      signer,
      plan,
      accounts,
    }) {
      const board: Board = { accounts: null, exposure: () => EXPOSURE_OFF, guard: () => NO_GUARD };
      const readiness = (): Readiness => {
        const statuses = board.accounts?.();
        if (!statuses)
          return {
            ready: false,
            reasons: ["starting: the switches have not started yet"],
            accounts: [],
            exposure: board.exposure(),
            guard: board.guard(),
          };
        return computeReadiness({
          // judged on the later of the local clock and the exchange estimate (exchange-time.ts `Times.ready`)
          now: time.readinessNow(),
          accounts: statuses,
          exposure: board.exposure(),
          guard: board.guard(),
          intervalMs: config.interval,
          deadlineMs: config.deadline,
        });
      };
      if (listen) {
        health = await createHealthServer({
          host: listen.host,
          port: listen.port,
          metrics,
          readiness,
          liveness: () =>
            runtime.signal.aborted
              ? { ok: false, detail: "shutting down" }
              : { ok: true, detail: `${plan.length} switch(es) running` },
          logger,
          routes: statusPageRoutes({
            readiness,
            model: statusModel,
            now: () => runtime.clock.now(),
            intervalMs: config.interval,
            deadlineMs: config.deadline,
            clockSkewWarnMs: config.clockSkewWarn,
            network: config.network,
          }),
        });
      }
      log.info(
        {
          event: "daemon.start",
          version: VERSION,
          signer,
          accounts: plan,
          network: config.network,
          intervalMs: config.interval,
          deadlineMs: config.deadline,
          requestTimeoutMs: config.requestTimeout,
          ledger: ledger.path,
          onShutdown: config.onShutdown,
          guard: config.guardFile ? "file" : config.guardUrl ? "url" : null,
        },
        `hl-deadman ${VERSION}: keeping the scheduled cancel armed for ${accounts.join(", ")}`,
      );
      for (const { account, vaultAddress } of plan) {
        if (vaultAddress === undefined && account !== signer) {
          log.info(
            { event: "accounts.agent", account, signer },
            `signer ${signer} acts as an API wallet for ${account} (no vaultAddress); for a subaccount or vault use --vault`,
          );
        }
      }
      return { board, readiness, health };
    },
    close: () => health?.close(),
  };
}

type Engine = { up: boolean; detail: string | null };

/** The engine guard: its first answer comes before the first push, so a dead engine is never re-armed. */
function guardComponent(): Component<
  Base & { logger: Logger; board: Board },
  { guard: ReturnType<typeof createGuard>; engine: Feed<Engine> & { now(): Engine } }
> {
  let guard: ReturnType<typeof createGuard> = null;
  return {
    name: "guard",
    async start({ config, runtime, logger, metrics, board }) {
      const engine = feed<Engine>();
      guard = createGuard({
        file: config.guardFile,
        maxAgeMs: config.guardMaxAge,
        url: config.guardUrl,
        intervalMs: config.guardInterval,
        runtime,
        logger,
        metrics,
        onChange: (up, detail) => engine.publish({ up, detail }),
      });
      const started = guard;
      if (started) {
        board.guard = () => started.status();
        try {
          await started.start();
        } catch (error) {
          started.stop();
          throw error;
        }
      }
      const now = (): Engine => {
        const s = started?.status();
        return s ? { up: s.up, detail: s.detail } : { up: true, detail: null };
      };
      return { guard, engine: { subscribe: engine.subscribe, now } };
    },
    close: () => guard?.stop(),
  };
}

/**
 * The agent watch, when the signer is an API wallet of the account it acts for directly (planAccounts): its state
 * comes before the first push (bounded by one request time-out), then every agentCheckInterval; a missing or
 * expired agent is NOT PROTECTED at once.
 */
function agentWatchComponent(): Component<
  Base & { logger: Logger; info: InfoClient },
  { agent: (Feed<AgentState> & { now(): AgentState | null }) | null }
> {
  let watch: ReturnType<typeof createAgentWatch> | null = null;
  return {
    name: "agent watch",
    async start({ config, runtime, time, signer, plan, logger, metrics, info }) {
      const master = plan.find((p) => p.vaultAddress === undefined)?.account;
      if (master === undefined || master === signer) return { agent: null };
      const states = feed<AgentState>();
      const created = createAgentWatch({
        info,
        account: master,
        signer,
        // validity is judged on the exchange's time
        runtime: runtime.withClock(time),
        logger,
        metrics,
        intervalMs: config.agentCheckInterval,
        warnDays: config.agentWarnDays,
        onAgentState: (a) => states.publish(a),
      });
      watch = created;
      let bound: TimerHandle | undefined;
      await Promise.race([
        created.checkNow(),
        new Promise<void>((resolve) => {
          bound = runtime.timers.after(config.requestTimeout, resolve);
        }),
      ]);
      bound?.cancel();
      created.start();
      return { agent: { subscribe: states.subscribe, now: () => created.state() } };
    },
    close: () => watch?.stop(),
  };
}

/**
 * The daemon's own once-per-interval work, on its own repetition whose slots are the push loops' (`slotOrigin`,
 * which it sets for the switches and the exposure poll): it wakes in the same wake-up as a push, not in one of its
 * own (CPU per hour, BENCHMARKS.md). Per slot: `onInterval` (the service's lock refresh); with the exposure poll
 * off, the skew of the local clock from the answers' Date (the poll watches it otherwise); a wall-clock step
 * (wall and monotonic disagree), which is logged, counted and handed to the switches (readiness then waits for a
 * confirmed push). Deadlines are on the exchange's time, which a step does not move: this only reports.
 */
function clockWatchComponent(): Component<
  Base & { log: Logger },
  { slotOrigin: number; clockSteps: Feed<number> }
> {
  let loop: { stop(): void } | undefined;
  return {
    name: "clock watch",
    start({ params, config, runtime, time, metrics, log }) {
      const steps = feed<number>();
      const skewLatch = new CrossingLatch(config.clockSkewWarn);
      const watchSkew = config.exposureInterval <= 0;
      const slotOrigin = time.monotonic();
      const work = () => {
        if (params.onInterval) {
          try {
            params.onInterval();
          } catch (error) {
            log.warn({ event: "daemon.interval_failed", err: error }, "the per-interval hook threw");
          }
        }
        if (watchSkew && time.verified) {
          const skewMs = time.skewMs;
          metrics.clockSkew.set(skewMs / 1000);
          const change = skewLatch.update(Math.abs(skewMs));
          if (change === "crossed")
            log.warn(
              {
                event: "clock.skew",
                skewMs: Math.round(skewMs),
                limitMs: config.clockSkewWarn,
                source: "date",
              },
              `the local clock is ${Math.round(skewMs)} ms off the exchange's (from the answers' Date); deadlines and ` +
                "nonces use the exchange's time, but fix the host's time sync (chrony/NTP)",
            );
          else if (change === "cleared")
            log.info(
              { event: "clock.skew.cleared", skewMs: Math.round(skewMs) },
              "the local clock is back in line",
            );
        }
        const stepped = time.checkStep();
        if (!stepped) return;
        metrics.clockSteps.inc();
        log.warn(
          { event: "clock.step", deltaMs: stepped.deltaMs },
          `the wall clock was stepped by ${stepped.deltaMs} ms; timers run on the monotonic clock, deadlines on the exchange's`,
        );
        steps.publish(stepped.deltaMs);
      };
      // Made before the switches' loops, on the same slots: in a wake-up it runs before that slot's push.
      loop = runtime.withClock(time).every(config.interval, work, {
        name: "clock",
        immediate: false,
        startAt: slotOrigin,
        logger: log,
        onStall: () => metrics.eventLoopStalls.inc(),
      });
      return { slotOrigin, clockSteps: { subscribe: steps.subscribe } };
    },
    close: () => loop?.stop(),
  };
}

/**
 * The switches, one per account: they follow the guard, the agent watch and the clock watch from here on, apply
 * the start-up record once started, and push at once and then on the slots. Closing them is the graceful stop:
 * stop pushing, then remove or keep the schedule (`stop.mode`).
 */
function switchesComponent(): Component<
  Base & {
    logger: Logger;
    ledger: Ledger;
    nonces: NonceSource;
    client: ScheduleCancelClient;
    info: InfoClient;
    readRecord: ((account: string) => Promise<RecordResult>) | undefined;
    startRecords: Map<string, RecordResult>;
    cancelOpenOrders: CancelOpenOrders | undefined;
    board: Board;
    engine: Feed<Engine> & { now(): Engine };
    agent: (Feed<AgentState> & { now(): AgentState | null }) | null;
    slotOrigin: number;
    clockSteps: Feed<number>;
  },
  { switches: Switch[]; outcomes: ShutdownOutcome[]; triggers: Feed<string> }
> {
  let switches: Switch[] = [];
  const outcomes: ShutdownOutcome[] = [];
  let mode: () => "remove" | "keep" = () => "remove";
  return {
    name: "switches",
    start(ctx) {
      const { config, runtime, time, plan, ledger, nonces, client, info, metrics, logger, stop } = ctx;
      mode = () => stop.mode;
      const triggers = feed<string>();
      switches = plan.map(({ account, vaultAddress }) =>
        createSwitch({
          account,
          vaultAddress,
          client,
          ledger,
          clock: runtime.clock,
          time,
          timeFloor: ledger.loadedUpdatedAt,
          nonces,
          timers: runtime.timers,
          signal: runtime.signal,
          logger,
          metrics,
          intervalMs: config.interval,
          deadlineMs: config.deadline,
          requestTimeoutMs: config.requestTimeout,
          permanentRecheckMs: config.permanentRecheckInterval,
          triggerWarnRemaining: config.triggerWarnRemaining,
          onEngineDown: config.onEngineDown,
          cancelStops: config.cancelStops,
          cancelOpenOrders: ctx.cancelOpenOrders,
          cumulativeVolume: async (user: string) => Number((await info.userRateLimit({ user })).cumVlm),
          onTrigger: (a) => triggers.publish(a),
          readRecord: ctx.readRecord,
        }),
      );
      const engine = ctx.engine.now();
      if (!engine.up) for (const s of switches) s.setEngineUp(false, engine.detail);
      ctx.engine.subscribe(({ up, detail }) => {
        for (const s of switches) s.setEngineUp(up, detail);
      });
      const agent = ctx.agent?.now();
      if (agent) for (const s of switches) s.setAgent(agent.state, agent.detail);
      ctx.agent?.subscribe((a) => {
        for (const s of switches) s.setAgent(a.state, a.detail);
      });
      ctx.clockSteps.subscribe((deltaMs) => {
        for (const s of switches) s.clockStepped(deltaMs);
      });
      const started = switches;
      ctx.board.accounts = () => started.map((s) => s.status());
      for (const s of switches) {
        s.start(ctx.slotOrigin);
        const record = ctx.startRecords.get(s.account);
        if (record) s.recordRead(record);
      }
      return { switches, outcomes, triggers: { subscribe: triggers.subscribe } };
    },
    async close() {
      const results = await Promise.all(switches.map((s) => s.shutdown({ mode: mode() })));
      outcomes.push(...results);
    },
  };
}

/**
 * The pollers: exposure (a trigger polls at once), the action budget, the chain watch, the 00:00 UTC roll-over job
 * and the protection watch of the notifications. Their handles are taken here, but their first requests go out
 * once the first pushes have settled (confirmed, refused or failed), at most one request time-out after the
 * switches started: the first push shares neither the event loop, the exchange nor the ledger's write with them.
 * node-cron is loaded and its first date computed only then too (that builds an Intl.DateTimeFormat, and loading
 * ICU's data costs ~5-10 ms of CPU the first push need not wait for); the job only prompts the switches.
 */
function pollersComponent(): Component<
  Base & {
    logger: Logger;
    log: Logger;
    ledger: Ledger;
    info: InfoClient;
    notifications: ReturnType<typeof createDaemonNotifications>;
    board: Board;
    chain: DaemonChainWatch | null;
    slotOrigin: number;
    switches: Switch[];
    triggers: Feed<string>;
  },
  { rollover: () => void }
> {
  const parts: { name: string; close(): unknown }[] = [];
  let log: Logger | undefined;
  return {
    name: "pollers",
    start(ctx) {
      const { params, config, runtime, accounts, info, logger, metrics, switches, ledger, slotOrigin } = ctx;
      log = ctx.log;
      // The exposure poller: the accounts plus extra users.
      const exposure =
        config.exposureInterval > 0
          ? createExposurePoller({
              info,
              users: [...accounts, ...config.exposureUsers],
              dexes: config.dexes,
              runtime,
              logger,
              metrics,
              intervalMs: config.exposureInterval,
              thresholds: config.thresholds,
              clockSkewWarnMs: config.clockSkewWarn,
            })
          : null;
      if (exposure) {
        ctx.board.exposure = () => exposure.status();
        ctx.triggers.subscribe(() => void exposure.pollNow("trigger"));
      }
      // The address's lifetime action budget, which every push spends (docs/exchange-behaviour.md §10).
      const budget = createBudgetMonitor({
        info,
        accounts,
        runtime,
        logger,
        metrics,
        intervalMs: config.budgetInterval,
        actionsPerDay: actionsPerDay(config.interval),
        warnDays: config.budgetWarnDays,
      });
      const chain = ctx.chain;
      let begun = false;
      let bound: TimerHandle | undefined;
      let firstPushesSettled: () => void = () => {};
      const afterFirstPushes = new Promise<void>((resolve) => {
        firstPushesSettled = resolve;
      });
      const begin = () => {
        bound?.cancel();
        if (begun || runtime.signal.aborted) return;
        begun = true;
        firstPushesSettled();
        exposure?.start(slotOrigin);
        budget.start();
        void chain?.start();
      };
      parts.push({
        name: "exposure poller",
        close: () => {
          bound?.cancel();
          return exposure?.stop();
        },
      });
      parts.push({ name: "budget monitor", close: () => budget.stop() });
      parts.push({ name: "chain watch", close: () => chain?.stop() });
      const rollover = () => {
        ledger.rollover();
        for (const s of switches) s.onDayRollover();
      };
      const scheduler = params.scheduler ?? cronScheduler;
      const job = scheduler.schedule("0 0 * * *", rollover, {
        timezone: "UTC",
        name: "ledger-rollover",
        after: afterFirstPushes,
      });
      parts.push({ name: "ledger roll-over", close: () => job.stop() });
      bound = runtime.timers.after(config.requestTimeout, begin);
      void Promise.all(switches.map((s) => s.settle())).then(begin, begin);
      ctx.notifications.watch({
        status: () => switches.map((s) => s.status()),
        intervalMs: config.interval,
        deadlineMs: config.deadline,
      });
      return { rollover };
    },
    // Each poller closes on its own, in reverse; one that fails to close does not keep the others running.
    async close() {
      while (parts.length > 0) {
        const part = parts.pop()!;
        try {
          await part.close();
        } catch (error) {
          log?.error(
            { event: "daemon.close.failed", component: part.name, err: error },
            `closing the ${part.name} failed`,
          );
        }
      }
    },
  };
}

/** The daemon's components, in start order (they close in the reverse): docs/daemon.md, "Start order and exit". */
export function daemonComponents() {
  return [
    notificationsComponent(),
    ledgerComponent(),
    clientsComponent(),
    recordComponent(),
    chainWatchComponent(),
    healthComponent(),
    guardComponent(),
    agentWatchComponent(),
    clockWatchComponent(),
    switchesComponent(),
    pollersComponent(),
  ] as const;
}

/** The component names, in start order. */
export const DAEMON_COMPONENTS: readonly string[] = daemonComponents().map((c) => c.name);

export async function startDaemon(
  params: StartDaemonParameters,
  list: ReturnType<typeof daemonComponents> = daemonComponents(),
): Promise<Daemon> {
  const { config, wallet } = params;
  // Validated first (pure): a bad listen address fails here, before anything is opened, bound or armed.
  const listen = parseListenAddress(config.health);
  const clock = params.clock ?? systemClock;
  const metrics = params.metrics ?? createMetrics();
  // Real timers report how late they fire: the event-loop delay gauges (src/surface/metrics.ts).
  const runtime = createRuntime({
    clock,
    timers: params.timers ?? systemTimers(clock, { onLate: metrics.recordTimerLateness }),
  });
  // The exchange's time: monotonic + an offset corrected from answers' Date headers; a wall step moves nothing.
  const time = new ExchangeTime(clock);
  // protection_left_seconds is computed at each scrape, on the time readiness is judged on (the later of the local
  // clock and the exchange estimate): the alert on it never sees more protection than /readyz does
  metrics.setProtectionClock(() => time.readinessNow());
  metrics.build.set({ version: VERSION, node: process.version }, 1);
  const signer = wallet.address.toLowerCase();
  const plan = planAccounts(config, signer);
  const stop: Base["stop"] = { mode: "remove" };
  let log: Logger | undefined;
  const components = new Components({
    abort: (reason) => runtime.abort(reason),
    onCloseError: (component, error) =>
      log?.error({ event: "daemon.close.failed", component, err: error }, `closing the ${component} failed`),
  });
  const base: Base = {
    params,
    config,
    runtime,
    metrics,
    time,
    signer,
    plan,
    accounts: plan.map((p) => p.account),
    apiUrl: params.apiUrl ?? effectiveUrls(config).apiUrl,
    listen,
    stop,
  };
  let ctx: Awaited<ReturnType<typeof components.start<typeof list, Base>>>;
  try {
    ctx = await components.start(list, base);
  } catch (error) {
    if (error instanceof ComponentStartFailure)
      throw startFailure(error.component, error.cause, config.health);
    throw error;
  }
  log = ctx.log;
  const { ledger, switches, guard } = ctx;
  const status = () => switches.map((s) => s.status());

  let closed: Promise<DaemonCloseResult> | null = null;
  const close = ({
    reason = "close",
    mode = config.onShutdown,
  }: {
    reason?: string;
    mode?: "remove" | "keep";
  } = {}) => {
    closed ??= (async () => {
      stop.mode = mode;
      ctx.log.info({ event: "daemon.stopping", reason, onShutdown: mode }, "stopping");
      await components.close(reason);
      const results = ctx.outcomes;
      return { ok: results.every((r) => r.outcome !== "failed"), results };
    })();
    return closed;
  };

  return {
    accounts: base.accounts,
    signer,
    ledger,
    metrics,
    switches,
    healthUrl: ctx.health?.url ?? null,
    components: components.started,
    status,
    readiness: ctx.readiness,
    guardStatus: () => guard?.status() ?? NO_GUARD,
    close,
    async settle() {
      for (let i = 0; i < 5; i++) {
        await guard?.idle();
        await Promise.all(switches.map((s) => s.settle()));
        await ledger.flush();
      }
    },
    rollover: ctx.rollover,
  };
}
