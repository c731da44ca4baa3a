/** The daemon's components that open its state and its connections (src/app/daemon.ts, `daemonComponents`). */

import { hostname } from "node:os";
import { join } from "node:path";
import { effectiveExplorerUrl } from "../../config/load.js";
import { createEventBus, type EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { DrillIo } from "../../core/orders-port.js";
import { VERSION } from "../../core/version.js";
import type { DeathGate } from "../../fleet-death/gate.js";
import { createCloseExecutor } from "../../orders/close-executor.js";
import { createDrillIo } from "../../orders/drill-io.js";
import { announcedOpenOrders } from "../../protocol/hyperliquid/announced.js";
import {
  type CancelExecutor,
  createCancelExecutor,
  createMetaCache,
  type MetaCache,
} from "../../protocol/hyperliquid/cancel.js";
import { ExchangeClient } from "../../protocol/hyperliquid/exchange.js";
import { ExplorerClient } from "../../protocol/hyperliquid/explorer.js";
import { InfoClient } from "../../protocol/hyperliquid/info.js";
import { NonceSource, type NonceSpan, nonceFloor } from "../../protocol/hyperliquid/nonce.js";
import { loadWsClient, OpenOrderFeed, wsUrlOf } from "../../protocol/hyperliquid/order-feed.js";
import { auditSubscriber } from "../../surface/audit/events.js";
import { AUDIT_DIR, AuditTrail } from "../../surface/audit/trail.js";
import { createDaemonNotifications } from "../../surface/notify/index.js";
import { createStatusModel } from "../../surface/status-page/index.js";
import { switchSubscribers } from "../../surface/switch/index.js";
import { watcherSubscribers } from "../../surface/watchers/index.js";
import type { CancelOpenOrders, ClosePositions, ScheduleCancelClient } from "../../switch/index.js";
import { Ledger } from "../../switch/ledger.js";
import { type RecordResult, readFinding, reconcileLedger } from "../../switch/record.js";
import { reconcileAtStart } from "../../switch/record-reconcile.js";
import { type AnnouncedOrders, createAnnouncedOrders } from "../../watchers/announced-orders.js";
import { cancelReporter, createReconcileReporter } from "../../watchers/record-log.js";
import { readRecord } from "../../watchers/record-read.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";
import { buildDeathGate } from "./death-gate.js";

export function notificationsComponent(): Component<
  Base,
  {
    logger: Logger;
    log: Logger;
    bus: EventBus;
    notifications: ReturnType<typeof createDaemonNotifications>;
    statusModel: ReturnType<typeof createStatusModel>;
  }
> {
  let notifications: ReturnType<typeof createDaemonNotifications> | undefined;
  return {
    name: "notifications",
    start({ params, config, metrics, runtime }) {
      // The daemon's events: the switches, the watchers and the exposure report publish typed events; their log
      // lines and metrics (the switch's, src/surface/switch/; the watchers', src/surface/watchers/), the notifier and
      // the status page subscribe (src/core/events.ts), in this order, once. The log is only written, never read back.
      const logger = params.logger;
      const bus = createEventBus(
        ...switchSubscribers(logger, metrics),
        ...watcherSubscribers(logger, metrics),
      );
      notifications = createDaemonNotifications({
        urls: config.notifyUrls,
        logger,
        registry: metrics.registry,
        runtime,
        bus,
      });
      const statusModel = createStatusModel({ now: () => runtime.clock.now() });
      bus.subscribe(statusModel.onEvent);
      return { notifications, statusModel, bus, logger, log: logger.child({ module: "daemon" }) };
    },
    close: () => notifications?.close(),
  };
}

/**
 * The audit trail (src/surface/audit/): every change of protection and every action on orders, hash-chained in
 * `<stateDir>/audit/`. It starts right after the bus so that it sees every event of the start, and closes late, after
 * the switches' last words (removed or kept). A disk that refuses the trail is reported; it never stops the switch.
 */
export function auditComponent(): Component<Base & { bus: EventBus; logger: Logger }, { audit: AuditTrail }> {
  let audit: AuditTrail | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
    name: "audit",
    async start({ params, runtime, bus, logger, accounts, config }) {
      const log = logger.child({ module: "audit" });
      let failures = 0;
      const options = {
        dir: join(params.stateDir, AUDIT_DIR),
        source: `/hl-deadman/${hostname()}`,
        now: () => runtime.clock.now(),
        onError: (error: Error) => {
          failures++;
          log.warn(
            { event: "audit.write_failed", failures, error: error.message },
            `the audit trail could not be written (${error.message}); its records wait and are written with the next one. The switch is not affected.`,
          );
        },
      };
      try {
        audit = await AuditTrail.open(options);
      } catch (error) {
        // Never a reason not to protect: the daemon runs on without a trail, and says so loudly.
        const reason = error instanceof Error ? error.message : String(error);
        audit = AuditTrail.unavailable(options, reason);
        log.error(
          { event: "audit.unavailable", error: reason },
          `the audit trail cannot be opened (${reason}); the daemon runs WITHOUT an audit trail until it is fixed and restarted`,
        );
      }
      audit.append({ type: "daemon.started", data: { version: VERSION, accounts, network: config.network } });
      unsubscribe = bus.subscribe(auditSubscriber((entry) => audit?.append(entry)));
      return { audit };
    },
    async close() {
      unsubscribe?.();
      audit?.append({ type: "daemon.stopped", data: {} });
      await audit?.close();
    },
  };
}

/**
 * The trigger ledger and the signer's nonces, one component: the ledger persists the nonces' high-water mark, and
 * the nonces start above the floor the ledger's last run left (src/protocol/hyperliquid/nonce.ts).
 */
export function ledgerComponent(): Component<
  Base & { bus: EventBus },
  {
    ledger: Ledger;
    nonces: NonceSource;
    signerNonces: ReadonlyMap<string, NonceSource>;
    nonceSpan: NonceSpan;
  }
> {
  let ledger: Ledger | undefined;
  return {
    name: "ledger",
    async start({ params, config, time, bus, signer, wallets }) {
      // One nonce sequence per signer (the exchange keeps the 100 highest per signer). The ledger keeps one
      // high-water mark, the highest of them: every signer's floor starts above it, which is safe (nonces are
      // times: a floor above a signer's own last nonce only moves its next nonce a little later).
      const signerNonces = new Map<string, NonceSource>();
      // How far above the ledger's last write a restart starts its nonces.
      const nonceSpan: NonceSpan = { requestTimeoutMs: config.requestTimeout, deadlineMs: config.deadline };
      const opened = await Ledger.open({
        stateDir: params.stateDir,
        clock: time,
        // only verified time and nonces taken on it are persisted (they seed a restart's nonce floor)
        verifiedNow: () => time.verifiedNow(),
        nonceHint: () => Math.max(0, ...[...signerNonces.values()].map((n) => n.lastVerified)),
        bus,
        triggerLimit: config.triggerLimit,
        beforeSync: params.beforeLedgerSync,
        // an updatedAt a wrong clock wrote ahead is set back once verified, the nonce floor kept (ledger.ts)
        nonceSpan,
      });
      ledger = opened;
      // The exchange's time is never before the ledger's last write (a clock stepped back while down).
      if (opened.loadedUpdatedAt !== null) time.notBefore(opened.loadedUpdatedAt);
      // Nonces never go below the previous run's, even after the wall clock was stepped back.
      const floor = nonceFloor(opened.loadedUpdatedAt, opened.loadedLastNonce, nonceSpan);
      for (const address of wallets.keys())
        signerNonces.set(address, new NonceSource(time, floor, () => time.verified));
      return { ledger: opened, nonces: signerNonces.get(signer)!, signerNonces, nonceSpan };
    },
    close: () => ledger?.close(),
  };
}

/** The exchange client (the pushes, the cancels) and one info client for every read-only query. */

export function clientsComponent(): Component<
  Base & { signerNonces: ReadonlyMap<string, NonceSource> },
  {
    client: ScheduleCancelClient & { close?(): void };
    /** each signer's exchange client, by lower-case address (`client` is the first signer's) */
    signerClients: ReadonlyMap<string, ScheduleCancelClient & { close?(): void }>;
    info: InfoClient;
  }
> {
  const clients = new Map<string, ScheduleCancelClient & { close?(): void }>();
  let info: InfoClient | undefined;
  return {
    name: "clients",
    start({ params, config, time, signerNonces, apiUrl, runtime, signer, wallets }) {
      for (const [address, wallet] of wallets)
        clients.set(
          address,
          params.client ??
            new ExchangeClient({
              apiUrl,
              signer: wallet,
              isMainnet: config.network === "mainnet",
              clock: time,
              nonces: signerNonces.get(address)!,
              expiresAfterMs: config.requestTimeout,
              timeoutMs: config.requestTimeout,
            }),
        );
      const client = clients.get(signer)!;
      info = new InfoClient({
        apiUrl,
        clock: runtime.clock,
        timeoutMs: config.requestTimeout,
        chunkSize: config.exposureChunkSize,
        concurrency: config.exposureConcurrency,
      });
      return { client, signerClients: clients, info };
    },
    close() {
      info?.close();
      for (const c of new Set(clients.values())) c.close?.();
    },
  };
}

/** The perp dexes the cancels, closes and fire checks cover: the first perp dex ("") and every listed one. */
export function dexesToActOn(dexes: readonly string[]): string[] {
  return [...new Set(["", ...dexes])];
}

export function hasOrder(client: object): client is Pick<ExchangeClient, "order"> & ScheduleCancelClient {
  return typeof (client as { order?: unknown }).order === "function";
}

export function hasCancel(client: object): client is Pick<ExchangeClient, "cancel"> & ScheduleCancelClient {
  return typeof (client as { cancel?: unknown }).cancel === "function";
}

/**
 * The exchange's record (docs/exchange-record.md): read at start-up (before the first push, bounded by one request
 * time-out), after every guessed trigger and again while guesses remain; each switch applies it where it is fresh
 * (both directions) and it never stops the pushes. Unavailable: said once, nothing changes. With an API URL given
 * to the daemon (a simulator, a third-party host) the record is read only from an explicit --explorer-url: an
 * official explorer never describes another host's exchange. Also the order canceller (engine-down `cancel`).
 */
export function recordComponent(): Component<
  Base & {
    log: Logger;
    bus: EventBus;
    ledger: Ledger;
    info: InfoClient;
    client: ScheduleCancelClient;
    signerClients: ReadonlyMap<string, ScheduleCancelClient>;
  },
  {
    readRecord: ((account: string) => Promise<RecordResult>) | undefined;
    startRecords: Map<string, RecordResult>;
    cancelOpenOrders: CancelOpenOrders | undefined;
    /** the operator's kill: every resting order, whatever the engine-down policy */
    killOrders: CancelOpenOrders | undefined;
    closePositions: ClosePositions | undefined;
    drillIo: DrillIo | undefined;
    /** the daemon's own cancel after a fire, on the listed dexes it missed (fire-check.ts); keeps no feed */
    fireCancel: CancelOpenOrders | undefined;
    /** the dexes the cancels, closes and fire checks cover */
    actOnDexes: string[];
    /** what the engines announce of their orders (the connection guard writes it, the cancel pass reads it) */
    announcedOrders: AnnouncedOrders;
    /** the engine-down passes of a simultaneous death, in risk order within the IP's weight (src/fleet-death/) */
    deathGate: DeathGate | undefined;
  }
> {
  let explorer: ExplorerClient | null = null;
  let feed: OpenOrderFeed | null = null;
  let deathGate: DeathGate | undefined;
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
      plan,
      apiUrl,
      log,
      ledger,
      info,
      client,
      signerClients,
      bus,
    }) {
      // Each account's requests are signed by its own signer (plan); its record is read for that signer too.
      const signers = new Map(plan.map((p) => [p.account, p.signer]));
      const signerOf = (account: string) => signers.get(account) ?? signer;
      const explorerUrl =
        params.explorerUrl ?? (params.apiUrl && !config.explorerUrl ? null : effectiveExplorerUrl(config));
      explorer = explorerUrl ? new ExplorerClient({ explorerUrl, timeoutMs: config.requestTimeout }) : null;
      const reconcileLog = createReconcileReporter({ bus, reconcile: reconcileLedger });
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
            signer: signerOf(account),
            now: () => time.now(),
            signal: controller.signal,
            readFinding,
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
            // what to say and what to apply: decided by a pure rule (src/switch/record-reconcile.ts)
            const start = reconcileAtStart(ledger.get(account), result);
            if (start.say) reconcileLog.assumed(account, start.say, result);
            if (start.apply) ledger.reconcile(account, start.apply, []);
          } catch (error) {
            log.warn({ event: "record.failed", account, err: error }, "reconciling with the record failed");
          }
        }),
      );
      // Under `cancel`, `meta` (the asset indices) is read once now and kept for every signer's executor: a pass
      // reads it again only for a coin it does not know. Read in the background: a slow exchange must not hold back
      // the first push (until it is read, a pass reads it at death). Awaited on close.
      let metaCache: MetaCache | undefined;
      if (!params.cancelOpenOrders && config.onEngineDown === "cancel") {
        metaCache = createMetaCache(info);
        const priming = metaCache.prime();
        reconciling.add(priming);
        void priming.finally(() => reconciling.delete(priming));
      }
      // With the connection guard, the orders of the first `orderFeedAccounts` accounts (at most 10, the exchange's
      // limit per IP) are kept fresh over the WebSocket, so that a cancel on engine death names them at once,
      // without a read first; the other accounts read their orders at death (docs/operations.md).
      if (
        !params.cancelOpenOrders &&
        config.onEngineDown === "cancel" &&
        config.guardSocket &&
        config.orderFeedAccounts > 0 &&
        hasCancel(client)
      ) {
        const users = [...new Set(plan.map((p) => (p.vaultAddress ?? p.account).toLowerCase()))];
        const followed = users.slice(0, config.orderFeedAccounts);
        if (users.length > followed.length)
          log.info(
            {
              event: "order_feed.limit",
              followed: followed.length,
              readAtDeath: users.slice(followed.length),
            },
            `open orders kept fresh for ${followed.length} account(s); the other ${users.length - followed.length} read theirs at engine death`,
          );
        const url = wsUrlOf(apiUrl);
        feed = new OpenOrderFeed({
          url,
          users: followed,
          timers: runtime.timers,
          connect: await loadWsClient(),
          onEvent: (e) => {
            if (e.type === "connected")
              log.info({ event: "order_feed.connected", url }, "order feed connected");
            else if (e.type === "disconnected")
              log.warn(
                { event: "order_feed.disconnected", url, retryInMs: e.retryInMs, detail: e.detail },
                "order feed disconnected: cancels read the open orders first until it is back",
              );
            else if (e.type === "snapshot" && e.first)
              log.info(
                { event: "order_feed.fresh", account: e.user, orders: e.orders },
                "open orders known: a cancel on engine death names them at once",
              );
            else if (e.type === "refused" || e.type === "invalid")
              log.warn({ event: `order_feed.${e.type}`, detail: e.detail }, `order feed: ${e.detail}`);
          },
        });
        feed.start();
      }
      const knownFeed = feed;
      // The orders a pass knows without a read (docs/operations.md, "Cancel on disconnect"): the order feed's fresh
      // list where it follows the account, else what the account's engine last announced over the guard (turned
      // into coins through the cached `meta`), else none (the pass reads first). The pass always reads to confirm.
      const announcedOrders = createAnnouncedOrders(
        plan.map((p) => (p.vaultAddress ?? p.account).toLowerCase()),
      );
      const knownOrders = (user: string) => {
        const fresh = knownFeed?.fresh(user) ?? null;
        if (fresh !== null) return fresh;
        const a = announcedOrders.get(user);
        return a ? announcedOpenOrders(a.orders, metaCache?.get() ?? null, a.at) : null;
      };
      // Built per signer, reached per account: an account's cancels, closes and drill orders go out under its
      // own signer's key and nonces.
      const perSigner = <T>(build: (c: ScheduleCancelClient) => T | undefined) => {
        const built = new Map<string, T>();
        for (const [address, c] of signerClients) {
          const made = build(c);
          if (made === undefined) return undefined;
          built.set(address, made);
        }
        return (account: string) => built.get(signerOf(account))!;
      };
      const onReport = cancelReporter(bus);
      // The cancels and closes act on the first perp dex and on every dex of `--dex` (the exposure poll's list).
      const actOnDexes = dexesToActOn(config.dexes);
      // Under `cancel`, each listed builder dex's asset ids (`perpDexs`, its `meta`) are read now, in the background
      // as the first dex's `meta` is: a pass at death then goes from its read to its cancel on every dex.
      const primed = (executor: CancelExecutor): CancelExecutor => {
        const priming = executor.prime();
        reconciling.add(priming);
        void priming.finally(() => reconciling.delete(priming));
        return executor;
      };
      // A simultaneous death's passes share the IP's weight in risk order (src/fleet-death/); the closes, the kill
      // and the checks after a fire go to their cancellers directly.
      let raw: CancelOpenOrders | undefined;
      const gate =
        !params.cancelOpenOrders && config.onEngineDown === "cancel"
          ? buildDeathGate({
              config,
              runtime,
              now: () => time.now(),
              plan,
              dexes: actOnDexes,
              knows: (user) => knownOrders(user) !== null && (metaCache?.get() ?? null) !== null,
              canceller: () => raw!,
              logger: params.logger,
            })
          : undefined;
      deathGate = gate;
      const cancellers =
        config.onEngineDown === "cancel"
          ? perSigner((c) =>
              hasCancel(c)
                ? primed(
                    createCancelExecutor({
                      info,
                      // every dex the exposure poll reads: a dex read but not cancelled is a dex left trading
                      dexes: actOnDexes,
                      exchange: c,
                      onReport,
                      metaCache,
                      knownOrders,
                      beforeConfirm: gate?.beforeConfirm,
                    }),
                  )
                : undefined,
            )
          : undefined;
      raw = cancellers ? (p) => cancellers(p.account)(p) : undefined;
      const cancelOpenOrders: CancelOpenOrders | undefined =
        params.cancelOpenOrders ?? (raw && gate ? gate.cancel : raw);
      // The operator's kill (`hl-deadman kill`) cancels every resting order whatever the engine-down policy: its
      // own canceller (the same fast cancels, then the confirming read).
      const killers = perSigner((c) =>
        hasCancel(c)
          ? createCancelExecutor({
              info,
              dexes: actOnDexes,
              exchange: c,
              onReport,
              ...(metaCache ? { knownOrders, metaCache } : {}),
            })
          : undefined,
      );
      const killOrders: CancelOpenOrders | undefined =
        params.cancelOpenOrders ?? (killers ? (p) => killers(p.account)(p) : undefined);
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
      // Escalation step 2 (opted-in accounts only): cancel, then close reduce-only in slices.
      // (built for every account: `kill --close` closes any account; the escalation's rules only opted-in ones)
      const closers = perSigner((c) =>
        hasOrder(c)
          ? createCloseExecutor({
              info,
              dexes: actOnDexes,
              exchange: c,
              cancelOpenOrders: params.cancelOpenOrders ?? raw ?? killOrders,
              slippagePct: config.closeSlippagePct,
              maxSliceUsd: config.closeSliceUsd,
            })
          : undefined,
      );
      const closePositions: ClosePositions | undefined =
        params.closePositions ?? (closers ? (p) => closers(p.account)(p) : undefined);
      // The drill's requests: the exchange client places and cancels, the info client reads (drill-io.ts).
      const drills = perSigner((c) =>
        hasOrder(c) && hasCancel(c)
          ? createDrillIo({ info, exchange: c, coin: config.drillCoin })
          : undefined,
      );
      const drillIo: DrillIo | undefined = drills
        ? {
            place: (p) => drills(p.account).place(p),
            status: (p) => drills(p.account).status(p),
            cancel: (p) => drills(p.account).cancel(p),
          }
        : undefined;
      // The check after a fire covers a missed dex with the daemon's own cancel, whatever the engine-down policy.
      const fireCancellers = perSigner((c) =>
        hasCancel(c)
          ? createCancelExecutor({
              info,
              dexes: actOnDexes,
              exchange: c,
              onReport,
              ...(metaCache ? { metaCache } : {}),
            })
          : undefined,
      );
      const fireCancel: CancelOpenOrders | undefined =
        params.cancelOpenOrders ?? (fireCancellers ? (p) => fireCancellers(p.account)(p) : undefined);
      return {
        readRecord: read,
        startRecords,
        cancelOpenOrders,
        killOrders,
        closePositions,
        drillIo,
        fireCancel,
        actOnDexes,
        announcedOrders,
        deathGate,
      };
    },
    async close() {
      feed?.stop();
      deathGate?.close();
      await Promise.allSettled([...reconciling]);
      explorer?.close();
    },
  };
}
