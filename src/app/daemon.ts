/**
 * The daemon: one switch per account, the trigger ledger and its 00:00 UTC roll-over, the engine guard, the
 * exposure poller, the optional chain watch, and the health/metrics server. `startDaemon` validates first, then
 * starts the components in order, each leaving a handle: ledger, health server (bound before anything is armed),
 * guard, switches, pollers. When one fails, the ones already started are closed in reverse and `startDaemon`
 * rejects with a `DaemonStartError` naming it; `close()` undoes the same handles in reverse, once
 * (docs/daemon.md, "Start order and exit").
 */

import { actionsPerDay, effectiveExplorerUrl, effectiveUrls } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { type Clock, systemClock } from "../core/clock.js";
import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";
import type { Logger } from "../core/logger.js";
import { createRootSignal, ExchangeTime, systemTimers, type Timers } from "../core/runtime.js";
import { cronScheduler, type ScheduledJob, type Scheduler } from "../core/scheduler.js";
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
import { type AgentWatch, createAgentWatch } from "../watchers/agent-watch.js";
import { createBudgetMonitor } from "../watchers/budget.js";
import { createExposurePoller, type ExposurePoller } from "../watchers/exposure.js";
import { createGuard, type Guard } from "../watchers/guard.js";
import { cancelReportLogger, createReconcileLogger } from "../watchers/record-log.js";
import { readRecord } from "../watchers/record-read.js";
import { CrossingLatch } from "../watchers/skew.js";

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
   * runs once per push interval, on the push loop's wake-up (the run command refreshes its state-directory lock
   * there, src/app/lock.ts `touch`, instead of waking the process on a timer of its own)
   */
  onInterval?: (() => void) | undefined;
  /** builds the chain watch when watchAddresses are configured (default: C's chain watch on config.rpcUrl) */
  createChainWatch?:
    | ((deps: { clock: Clock; logger: Logger; metrics: Metrics }) => DaemonChainWatch)
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

/** What a started component leaves behind: how to undo it. */
type Started = { component: string; close(): unknown };

/** Closes started components in reverse start order; a failing close does not stop the others. */
async function unwind(started: Started[], onError: (component: string, error: unknown) => void) {
  while (started.length > 0) {
    const handle = started.pop()!;
    try {
      await handle.close();
    } catch (error) {
      onError(handle.component, error);
    }
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

/** What a start in progress has done so far: the handles to undo, the component starting now. */
type StartRun = {
  started: Started[];
  component: string;
  listen: ReturnType<typeof parseListenAddress>;
  abort?: () => void;
};

/** The switch's client can also cancel orders (the ExchangeClient, so both share one nonce source). */
function hasCancel(client: object): client is Pick<ExchangeClient, "cancel"> {
  return typeof (client as { cancel?: unknown }).cancel === "function";
}

export async function startDaemon(params: StartDaemonParameters): Promise<Daemon> {
  // 1. Validate (pure): a bad listen address fails here, before anything is opened, bound or armed.
  const run: StartRun = {
    started: [],
    component: "notifications",
    listen: parseListenAddress(params.config.health),
  };
  // 2. Start in order; each step leaves a handle. A failing step (thrown or rejected) closes the earlier ones in
  // reverse, and the caller gets one DaemonStartError naming the step, its exit code on it.
  try {
    return await startInOrder(params, run);
  } catch (error) {
    run.abort?.();
    await unwind(run.started, () => {});
    throw startFailure(run.component, error, params.config.health);
  }
}

async function startInOrder(params: StartDaemonParameters, run: StartRun): Promise<Daemon> {
  const { config, wallet, stateDir } = params;
  const { started, listen } = run;
  const clock = params.clock ?? systemClock;
  const metrics = params.metrics ?? createMetrics();
  // Real timers report how late they fire: the event-loop delay gauges (src/surface/metrics.ts).
  const timers = params.timers ?? systemTimers(clock, { onLate: metrics.recordTimerLateness });
  // The exchange's time: monotonic + an offset corrected from answers' Date headers; a wall step moves nothing.
  const time = new ExchangeTime(clock);
  // protection_left_seconds is computed at each scrape, on the time readiness is judged on (the later of the local
  // clock and the exchange estimate): the alert on it never sees more protection than /readyz does
  metrics.setProtectionClock(() => time.readinessNow());
  // One root signal: close() aborts it and every repetition listening to it stops.
  const root = createRootSignal();
  run.abort = () => root.abort("start failed");
  const scheduler = params.scheduler ?? cronScheduler;
  // Notifications and the status page follow the modules' log events through a tapped logger (src/surface/notify/).
  const notifications = createDaemonNotifications({
    urls: config.notifyUrls,
    logger: params.logger,
    registry: metrics.registry,
    clock,
    timers,
  });
  const logger = notifications.logger;
  const statusModel = createStatusModel({ now: () => clock.now() });
  notifications.listen(statusModel.onEvent);
  const log = logger.child({ module: "daemon" });
  const signer = wallet.address.toLowerCase();
  const apiUrl = params.apiUrl ?? effectiveUrls(config).apiUrl;
  metrics.build.set({ version: VERSION, node: process.version }, 1);

  started.push({ component: "notifications", close: () => notifications.close() });
  run.component = "ledger";
  let closeMode: "remove" | "keep" = "remove";
  let results: ShutdownOutcome[] = [];
  let nonces: NonceSource | undefined;
  // How far above the ledger's last write a restart starts its nonces (src/protocol/hyperliquid/nonce.ts).
  const nonceSpan: NonceSpan = { requestTimeoutMs: config.requestTimeout, deadlineMs: config.deadline };
  const ledger = await Ledger.open({
    stateDir,
    clock: time,
    // only verified time and nonces taken on it are persisted (they seed a restart's nonce floor)
    verifiedNow: () => time.verifiedNow(),
    nonceHint: () => nonces?.lastVerified ?? 0,
    logger: logger.child({ module: "ledger" }),
    triggerLimit: config.triggerLimit,
    beforeSync: params.beforeLedgerSync,
    nonceSpan,
  });
  started.push({ component: "ledger", close: () => ledger.close() });
  run.component = "clients";

  // The exchange's time is never before the ledger's last write (a clock stepped back while down).
  if (ledger.loadedUpdatedAt !== null) time.notBefore(ledger.loadedUpdatedAt);
  // Nonces never go below the previous run's, even after the wall clock was stepped back.
  nonces = new NonceSource(
    time,
    nonceFloor(ledger.loadedUpdatedAt, ledger.loadedLastNonce, nonceSpan),
    () => time.verified,
  );
  const client =
    params.client ??
    new ExchangeClient({
      apiUrl,
      signer: wallet,
      isMainnet: config.network === "mainnet",
      clock: time,
      nonces,
      expiresAfterMs: config.requestTimeout,
      timeoutMs: config.requestTimeout,
    });
  started.push({ component: "exchange client", close: () => client.close?.() });

  const plan = planAccounts(config, signer);
  const accounts = plan.map((p) => p.account);

  // One info client for the exposure poller and the budget monitor (read-only queries, safe to retry).
  const info = new InfoClient({
    apiUrl,
    clock,
    timeoutMs: config.requestTimeout,
    chunkSize: config.exposureChunkSize,
    concurrency: config.exposureConcurrency,
  });
  started.push({ component: "info client", close: () => info.close() });

  // Exposure poller (E): accounts plus extra users; a trigger polls at once.
  let exposure: ExposurePoller | null = null;
  if (config.exposureInterval > 0) {
    exposure = createExposurePoller({
      info,
      users: [...accounts, ...config.exposureUsers],
      dexes: config.dexes,
      clock,
      logger,
      metrics,
      intervalMs: config.exposureInterval,
      thresholds: config.thresholds,
      clockSkewWarnMs: config.clockSkewWarn,
      timers,
    });
  }

  // The address's lifetime action budget, which every push spends (docs/exchange-behaviour.md §10).
  const budget = createBudgetMonitor({
    info,
    accounts,
    clock,
    timers,
    logger,
    metrics,
    intervalMs: config.budgetInterval,
    actionsPerDay: actionsPerDay(config.interval),
    warnDays: config.budgetWarnDays,
  });

  // --- The exchange's record, the agent watch and the order canceller (docs/exchange-record.md) -------------
  // The record: read at start-up (before the first push, bounded by one request time-out), after every guessed
  // trigger and again while guesses remain; each switch's machine applies it where it is fresh (both
  // directions) and it never stops the pushes. Unavailable: said once, nothing changes.
  // With an API URL given to the daemon (a simulator, a third-party host) the record is read only from an
  // explicit --explorer-url: an official explorer never describes another host's exchange.
  const explorerUrl =
    params.explorerUrl ?? (params.apiUrl && !config.explorerUrl ? null : effectiveExplorerUrl(config));
  const explorer = explorerUrl ? new ExplorerClient({ explorerUrl, timeoutMs: config.requestTimeout }) : null;
  const reconcileLog = createReconcileLogger(logger);
  const readAccountRecord = async (account: string): Promise<RecordResult> => {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    root.signal.addEventListener("abort", onAbort, { once: true });
    const limit = timers.after(config.requestTimeout, () => controller.abort());
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
      root.signal.removeEventListener("abort", onAbort);
    }
  };
  const reconciling = new Set<Promise<unknown>>();
  run.component = "exchange record";
  started.push({
    component: "exchange record",
    close: async () => {
      await Promise.allSettled([...reconciling]);
      explorer?.close();
    },
  });
  const cancelOpenOrders =
    params.cancelOpenOrders ??
    (config.onEngineDown === "cancel" && hasCancel(client)
      ? createCancelExecutor({ info, exchange: client, onReport: cancelReportLogger(logger, metrics) })
      : undefined);
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
  // The agent watch: the signer is an API wallet of the account it acts for directly (planAccounts).
  const master = plan.find((p) => p.vaultAddress === undefined)?.account;
  let agentWatch: AgentWatch | null = null;
  // --------------------------------------------------------------------------------------------------------

  // Once per push interval, on the first switch's push-loop wake-up (set below): the clock watch and onInterval.
  let intervalWork: () => void = () => {};
  const switches = plan.map(({ account, vaultAddress }, i) =>
    createSwitch({
      account,
      vaultAddress,
      onTick: i === 0 ? () => intervalWork() : undefined,
      client,
      ledger,
      clock,
      time,
      timeFloor: ledger.loadedUpdatedAt,
      nonces,
      timers,
      logger,
      metrics,
      intervalMs: config.interval,
      deadlineMs: config.deadline,
      requestTimeoutMs: config.requestTimeout,
      permanentRecheckMs: config.permanentRecheckInterval,
      triggerWarnRemaining: config.triggerWarnRemaining,
      onEngineDown: config.onEngineDown,
      cancelStops: config.cancelStops,
      cancelOpenOrders,
      signal: root.signal,
      cumulativeVolume: async (user: string) => Number((await info.userRateLimit({ user })).cumVlm),
      onTrigger: () => {
        void exposure?.pollNow("trigger");
      },
      readRecord: explorer
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
        : undefined,
    }),
  );

  // --- Record and agent watch, continued: the switches exist now -------------------------------------------
  if (master !== undefined && master !== signer) {
    agentWatch = createAgentWatch({
      info,
      account: master,
      signer,
      clock: time,
      timers,
      logger,
      metrics,
      intervalMs: config.agentCheckInterval,
      warnDays: config.agentWarnDays,
      onAgentState: (a) => {
        for (const s of switches) s.setAgent(a.state, a.detail);
      },
    });
  }
  // --------------------------------------------------------------------------------------------------------

  const guard: Guard | null = createGuard({
    file: config.guardFile,
    maxAgeMs: config.guardMaxAge,
    url: config.guardUrl,
    intervalMs: config.guardInterval,
    clock,
    timers,
    logger,
    metrics,
    onChange: (up, detail) => {
      for (const s of switches) s.setEngineUp(up, detail);
    },
  });

  // The chain watch and its EVM client are loaded only when addresses are watched.
  let chain: DaemonChainWatch | null = null;
  run.component = "chain watch";
  if (config.watchAddresses.length > 0) {
    if (params.createChainWatch) {
      chain = params.createChainWatch({ clock, logger, metrics });
    } else if (config.rpcUrl) {
      const [{ createChainWatch }, { EvmClient }] = await Promise.all([
        import("../watchers/chain-watch.js"),
        import("../protocol/evm/client.js"),
      ]);
      chain = createChainWatch({
        client: new EvmClient({ rpcUrl: config.rpcUrl, timeoutMs: config.requestTimeout }),
        addresses: config.watchAddresses,
        clock,
        logger,
        metrics,
        pollIntervalMs: config.chainPollInterval,
        timers,
        stallThresholdMs: config.chainStallThreshold,
        maxLagBlocks: config.chainMaxLagBlocks,
        pageSize: config.chainPageSize,
      });
    }
  }

  const exposureStatus = (): ExposureStatus => exposure?.status() ?? EXPOSURE_OFF;
  const guardStatus = (): GuardStatus => guard?.status() ?? NO_GUARD;
  const status = () => switches.map((s) => s.status());
  const readiness = () =>
    computeReadiness({
      // judged on the later of the local clock and the exchange estimate (exchange-time.ts `Times.ready`)
      now: time.readinessNow(),
      accounts: status(),
      exposure: exposureStatus(),
      guard: guardStatus(),
      intervalMs: config.interval,
      deadlineMs: config.deadline,
    });
  // The health server binds before the guard and the switches start: a taken port arms nothing.
  run.component = "health";
  let closing = false;
  let health: HealthServer | null = null;
  if (listen) {
    health = await createHealthServer({
      host: listen.host,
      port: listen.port,
      metrics,
      readiness,
      liveness: () =>
        closing
          ? { ok: false, detail: "shutting down" }
          : { ok: true, detail: `${switches.length} switch(es) running` },
      logger,
      routes: statusPageRoutes({
        readiness,
        model: statusModel,
        now: () => clock.now(),
        intervalMs: config.interval,
        deadlineMs: config.deadline,
        clockSkewWarnMs: config.clockSkewWarn,
        network: config.network,
      }),
    });
    const server = health;
    started.push({ component: "health", close: () => server.close() });
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
      guard: guard ? (config.guardFile ? "file" : "url") : null,
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

  // The guard's first answer comes before the first push, so a dead engine is never re-armed.
  run.component = "guard";
  if (guard) {
    started.push({ component: "guard", close: () => guard.stop() });
    const up = await guard.start();
    if (!up) for (const s of switches) s.setEngineUp(false, guard.status().detail);
  }
  run.component = "agent watch";
  // The agent's state comes before the first push too (bounded by one request time-out), then every
  // agentCheckInterval; a missing or expired agent is NOT PROTECTED at once.
  if (agentWatch) {
    let bound: { cancel(): void } | undefined;
    await Promise.race([
      agentWatch.checkNow(),
      new Promise<void>((resolve) => {
        bound = timers.after(config.requestTimeout, resolve);
      }),
    ]);
    bound?.cancel();
    agentWatch.start();
    const watch = agentWatch;
    started.push({ component: "agent watch", close: () => watch.stop() });
  }
  run.component = "switches";
  started.push({
    component: "switches",
    close: async () => {
      results = await Promise.all(switches.map((s) => s.shutdown({ mode: closeMode })));
    },
  });
  // One origin for the push loops' slots and the exposure poll's: a poll falls on a push's wake-up (a timer of its
  // own was one more wake-up, and the push had just brought the HTTP client's code into the caches; issue 15).
  const slotOrigin = time.monotonic();
  for (const s of switches) {
    s.start(slotOrigin);
    const record = startRecords.get(s.account);
    if (record) s.recordRead(record);
  }
  run.component = "pollers";
  // A wall-clock step (wall and monotonic disagree): logged, counted, and readiness waits for a confirmed push.
  // With the exposure poll off, the heartbeat's own answers (their Date) are what watch the clock's skew.
  // Checked once per push interval: deadlines are on the exchange's time, which a step does not move, so this
  // only reports. It runs on the first switch's push-loop wake-up, before its tick, and so does `onInterval`: a
  // timer of their own would wake the process once more per interval (a 5 s watch was 10 wake-ups in the CPU
  // window; issue 15, CPU per hour).
  const skewLatch = new CrossingLatch(config.clockSkewWarn);
  const onInterval = params.onInterval;
  // Nothing to close: a failed start and close() both abort the root signal before they unwind.
  intervalWork = () => {
    if (root.signal.aborted) return;
    if (onInterval) {
      try {
        onInterval();
      } catch (error) {
        log.warn({ event: "daemon.interval_failed", err: error }, "the per-interval hook threw");
      }
    }
    if (!exposure && time.verified) {
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
    for (const s of switches) s.clockStepped(stepped.deltaMs);
  };
  // The pollers (exposure, the action budget, the chain watch) start once the first pushes have settled
  // (confirmed, refused or failed), at most one request time-out after the switches started: the first push
  // does not share the event loop, the exchange or the ledger's write with their first requests
  // (docs/daemon.md, "Start order and exit"). Their handles are in place now, in the same order as before.
  let pollersStarted = false;
  let pollersBound: { cancel(): void } | undefined;
  let pollersReady: () => void = () => {};
  const afterFirstPushes = new Promise<void>((resolve) => {
    pollersReady = resolve;
  });
  const startPollers = () => {
    pollersBound?.cancel();
    if (pollersStarted || closing || root.signal.aborted) return;
    pollersStarted = true;
    pollersReady();
    exposure?.start(slotOrigin);
    budget.start();
    void chain?.start();
  };
  started.push({
    component: "exposure poller",
    close: () => {
      pollersBound?.cancel();
      return exposure?.stop();
    },
  });
  started.push({ component: "budget monitor", close: () => budget.stop() });
  started.push({ component: "chain watch", close: () => chain?.stop() });

  // Scheduled here, in the start order, but node-cron is loaded and its first date computed only once the first
  // pushes settled: that computation builds an Intl.DateTimeFormat, and loading ICU's data for it costs ~5-10 ms
  // of CPU the first push need not wait for. The job only prompts the switches (every event rolls the day).
  const rolloverJob: ScheduledJob = scheduler.schedule("0 0 * * *", () => rollover(), {
    timezone: "UTC",
    name: "ledger-rollover",
    after: afterFirstPushes,
  });
  started.push({ component: "ledger roll-over", close: () => rolloverJob.stop() });
  pollersBound = timers.after(config.requestTimeout, startPollers);
  void Promise.all(switches.map((s) => s.settle())).then(startPollers, startPollers);
  function rollover() {
    ledger.rollover();
    for (const s of switches) s.onDayRollover();
  }

  notifications.watch({ status, intervalMs: config.interval, deadlineMs: config.deadline });

  let closed: Promise<DaemonCloseResult> | null = null;
  const close = ({
    reason = "close",
    mode = config.onShutdown,
  }: {
    reason?: string;
    mode?: "remove" | "keep";
  } = {}) => {
    closed ??= (async () => {
      closing = true;
      closeMode = mode;
      log.info({ event: "daemon.stopping", reason, onShutdown: mode }, "stopping");
      root.abort("close");
      await unwind(started, (what, error) =>
        log.error(
          { event: "daemon.close.failed", component: what, err: error },
          `closing the ${what} failed`,
        ),
      );
      const ok = results.every((r) => r.outcome !== "failed");
      return { ok, results };
    })();
    return closed;
  };

  return {
    accounts,
    signer,
    ledger,
    metrics,
    switches,
    healthUrl: health?.url ?? null,
    status,
    readiness,
    guardStatus,
    close,
    async settle() {
      for (let i = 0; i < 5; i++) {
        await guard?.idle();
        await Promise.all(switches.map((s) => s.settle()));
        await ledger.flush();
      }
    },
    rollover,
  };
}
