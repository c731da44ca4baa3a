/** The daemon's switches and pollers components (src/app/daemon.ts, `daemonComponents`). */
import { ConfigError } from "../../config/errors.js";
import { actionsPerDay } from "../../config/load.js";
import { effectiveBlockTimeUrl } from "../../config/networks.js";
import type { AccountRisk } from "../../config/weight.js";
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { DrillIo } from "../../core/orders-port.js";
import type { TimerHandle } from "../../core/runtime.js";
import { cronScheduler } from "../../core/scheduler.js";
import type { DeathGate } from "../../fleet-death/gate.js";
import { EvmClient } from "../../protocol/evm/client.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { NonceSource, NonceSpan } from "../../protocol/hyperliquid/nonce.js";
import type { AuditTrail } from "../../surface/audit/trail.js";
import type { createDaemonNotifications } from "../../surface/notify/index.js";
import {
  type CancelOpenOrders,
  type ClosePositions,
  createSwitch,
  type ScheduleCancelClient,
  type ShutdownOutcome,
  type Switch,
} from "../../switch/index.js";
import type { Ledger } from "../../switch/ledger.js";
import type { RecordResult } from "../../switch/record.js";
import { type BlockWitness, createBlockWitness } from "../../watchers/block-time.js";
import { createBudgetMonitor } from "../../watchers/budget.js";
import { createExposurePoller } from "../../watchers/exposure.js";
import { createOpenOrdersWatch } from "../../watchers/open-orders.js";
import type { Component } from "../components.js";
import type { AgentFeeds, Base, Board, DaemonChainWatch, Engine, Feed } from "../context.js";
import { feed } from "../context.js";
import {
  type ControlAnswer,
  type ControlRequest,
  type ControlServer,
  startControlServer,
} from "../control.js";
import { createDrillCommand, networkOf, restingNow } from "../drill.js";
import { createFireCheck, scheduleFireChecks } from "../fire-check.js";
import type { Coordination } from "./coordination.js";

/**
 * The exchange's per-IP weight at its steady rate: 1,200 a minute is one request every 50 ms
 * (docs/exchange-behaviour.md §10). Pushes are spread at least this far apart when the interval leaves room.
 */
export const PUSH_PACE_MS = 50;

/**
 * The spacing between consecutive accounts' push slots: the interval shared evenly among `accounts`, but never
 * wider than PUSH_PACE_MS, so that a fleet is spread instead of pushed in one burst (300 accounts at 15 s: one
 * every 50 ms) and still armed quickly (10 accounts: within half a second; 100: in 5 s). A burst of even 10 sends
 * its last push some 160 ms after its first (each signs, writes its write-ahead record and sends in turn:
 * BENCHMARKS.md, "The growth curve").
 */
export function pushSpacing(intervalMs: number, accounts: number): number {
  if (accounts <= 1) return 0;
  return Math.min(PUSH_PACE_MS, Math.floor(intervalMs / accounts));
}

/**
 * An account's risk as the exposure poll saw it on the first perp dex (src/config/weight.ts `orderByRisk`): its
 * nearest liquidation (a fraction; null without one) and its total notional; null when the figures are unreadable.
 */
export function riskOf(account: string, positions: unknown, totalNtlPos: unknown): AccountRisk | null {
  const notional = Number(totalNtlPos);
  if (!Number.isFinite(notional)) return null;
  const distances = (Array.isArray(positions) ? (positions as { liquidationDistancePct?: unknown }[]) : [])
    .map((p) => p.liquidationDistancePct)
    .filter((d): d is number => typeof d === "number" && Number.isFinite(d));
  return {
    account,
    liquidationDistance: distances.length > 0 ? Math.min(...distances) / 100 : null,
    notional: Math.abs(notional),
  };
}

/**
 * The switches, one per account: they follow the guard, the agent watch and the clock watch from here on, apply
 * the start-up record once started, and push at once and then on the slots. Closing them is the graceful stop:
 * stop pushing, then remove or keep the schedule (`stop.mode`).
 */
export function switchesComponent(): Component<
  Base & {
    logger: Logger;
    bus: EventBus;
    ledger: Ledger;
    signerNonces: ReadonlyMap<string, NonceSource>;
    nonceSpan: NonceSpan;
    signerClients: ReadonlyMap<string, ScheduleCancelClient>;
    info: InfoClient;
    readRecord: ((account: string) => Promise<RecordResult>) | undefined;
    startRecords: Map<string, RecordResult>;
    cancelOpenOrders: CancelOpenOrders | undefined;
    deathGate: DeathGate | undefined;
    killOrders: CancelOpenOrders | undefined;
    closePositions: ClosePositions | undefined;
    drillIo: DrillIo | undefined;
    board: Board;
    engine: Feed<Engine> & { now(account: string): Engine };
    agents: AgentFeeds;
    slotOrigin: number;
    clockSteps: Feed<number>;
    coordination: Coordination | null;
  },
  {
    switches: Switch[];
    outcomes: ShutdownOutcome[];
    triggers: Feed<string>;
    /** how long after the first switch the last one starts (the spread's first pass; 0 for one account) */
    firstPassMs: number;
  }
> {
  let switches: Switch[] = [];
  let witness: BlockWitness | undefined;
  let closeWitness: (() => void) | undefined;
  const pending: TimerHandle[] = [];
  let coordination: Coordination | null = null;
  const outcomes: ShutdownOutcome[] = [];
  let mode: () => "remove" | "keep" = () => "remove";
  return {
    name: "switches",
    start(ctx) {
      const { config, runtime, time, plan, ledger, signerNonces, nonceSpan, signerClients, info, bus, stop } =
        ctx;
      mode = () => stop.mode;
      const triggers = feed<string>();
      const escalating = new Set(config.escalateAccounts);
      const strangers = [...escalating].filter((a) => !plan.some((p) => p.account === a));
      if (strangers.length > 0)
        throw new ConfigError([
          `escalateAccounts: ${strangers.join(", ")} not among the accounts this daemon arms (${plan.map((p) => p.account).join(", ")})`,
        ]);
      const escalation = {
        afterDownMs: config.escalateAfter > 0 ? config.escalateAfter : null,
        liquidationPct: config.escalateLiquidationPct ?? null,
        drawdownPct: config.escalateDrawdownPct ?? null,
        notionalCapUsd: config.escalateNotionalUsd ?? null,
        retryMs: config.closeRetryInterval,
      };
      switches = plan.map(({ account, vaultAddress, signer }) =>
        createSwitch({
          account: { address: account, vaultAddress },
          policy: {
            intervalMs: config.interval,
            deadlineMs: config.deadline,
            requestTimeoutMs: config.requestTimeout,
            permanentRecheckMs: config.permanentRecheckInterval,
            triggerWarnRemaining: config.triggerWarnRemaining,
            onEngineDown: config.onEngineDown,
            cancelStops: config.cancelStops,
            escalation: escalating.has(account) ? escalation : null,
            coordination: ctx.coordination ? { actAlone: config.actAlone } : null,
            nonceSpan,
          },
          io: {
            client: signerClients.get(signer)!,
            ledger,
            nonces: signerNonces.get(signer)!,
            cancelOpenOrders: ctx.cancelOpenOrders,
            // every account's switch can close (the operator's `kill --close`); the escalation's rules only run for
            // the opted-in ones (`escalation` null: the machine never closes on its own)
            closePositions: ctx.closePositions,
            killOrders: ctx.killOrders,
            drillIo: ctx.drillIo,
            cumulativeVolume: async (user: string) => Number((await info.userRateLimit({ user })).cumVlm),
            onTrigger: (a: string) => triggers.publish(a),
            readRecord: ctx.readRecord,
          },
          runtime: { ...runtime, time, timeFloor: ledger.loadedUpdatedAt },
          bus,
        }),
      );
      // The replicas' election (coordination.ts) reaches every switch: the machine gates on it.
      coordination = ctx.coordination;
      if (coordination) {
        const c = coordination;
        for (const s of switches) s.dispatch({ type: "coordination", ...c.now() });
        c.subscribe((state) => {
          for (const s of switches) s.dispatch({ type: "coordination", ...state });
        });
        ctx.board.coordination = () => c.status();
      }
      const byAccount = new Map(switches.map((s) => [s.account, s]));
      // The passes of a simultaneous death (src/fleet-death/): the gate hears every engine change, each account's
      // deadline and risk, before the switches ask it for their passes.
      const gate = ctx.deathGate;
      if (gate) {
        gate.attach((account) => byAccount.get(account)?.protection().armedUntil ?? null);
        for (const s of switches) gate.engine(s.account, ctx.engine.now(s.account).up);
        ctx.engine.subscribe(({ up, accounts }) => {
          for (const s of switches) if (!accounts || accounts.includes(s.account)) gate.engine(s.account, up);
        });
        bus.subscribe((e) => {
          if (e.module !== "exposure" || e.event !== "exposure" || typeof e.account !== "string") return;
          if ((e.dex ?? "") !== "" || !byAccount.has(e.account)) return;
          const risk = riskOf(e.account, e.positions, e.totalNtlPos);
          if (risk) gate.risk(risk);
        });
      }
      for (const s of switches) {
        const engine = ctx.engine.now(s.account);
        if (!engine.up) s.dispatch({ type: "engine", up: false, detail: engine.detail, cause: engine.cause });
      }
      // A change for named accounts (the connection guard) reaches only their switches, in the same turn.
      ctx.engine.subscribe(({ up, detail, cause, accounts }) => {
        for (const s of switches)
          if (!accounts || accounts.includes(s.account)) s.dispatch({ type: "engine", up, detail, cause });
      });
      // An agent key's state reaches the switches it signs for, and only those.
      for (const { accounts, feed: agent } of ctx.agents) {
        const mine = switches.filter((s) => accounts.includes(s.account));
        const now = agent.now();
        if (now) for (const s of mine) s.dispatch({ type: "agent", state: now.state, detail: now.detail });
        agent.subscribe((a) => {
          for (const s of mine) s.dispatch({ type: "agent", state: a.state, detail: a.detail });
        });
      }
      // The exposure poll's figures reach the escalating accounts' switches (their rules read them): the first
      // perp dex's account value and total notional, and the nearest liquidation across every dex polled.
      if (escalating.size > 0) {
        const nearest = new Map<string, Map<string, number | null>>();
        bus.subscribe((e) => {
          if (e.module !== "exposure" || e.event !== "exposure" || typeof e.account !== "string") return;
          const s = byAccount.get(e.account);
          if (!s || !escalating.has(s.account)) return;
          const positions = Array.isArray(e.positions)
            ? (e.positions as { liquidationDistancePct?: unknown }[])
            : [];
          const distances = positions
            .map((p) => p.liquidationDistancePct)
            .filter((d): d is number => typeof d === "number" && Number.isFinite(d));
          const byDex = nearest.get(s.account) ?? new Map<string, number | null>();
          byDex.set(
            typeof e.dex === "string" ? e.dex : "",
            distances.length > 0 ? Math.min(...distances) : null,
          );
          nearest.set(s.account, byDex);
          if ((e.dex ?? "") !== "") return;
          const all = [...byDex.values()].filter((d): d is number => d !== null);
          const accountValue = Number(e.accountValue);
          const notionalUsd = Number(e.totalNtlPos);
          if (!Number.isFinite(accountValue) || !Number.isFinite(notionalUsd)) return;
          s.dispatch({
            type: "exposure",
            accountValue,
            notionalUsd,
            minLiquidationPct: all.length > 0 ? Math.min(...all) : null,
          });
        });
      }
      ctx.clockSteps.subscribe((deltaMs) => {
        for (const s of switches) s.dispatch({ type: "clockStep", deltaMs });
      });
      // The second witness of the exchange's time (issue 40): the HyperEVM block time, handed to every switch.
      // An API URL given by the caller (a test, an embedder) without an RPC URL has none, as for the explorer.
      const blockUrl = ctx.params.apiUrl && !config.rpcUrl ? null : effectiveBlockTimeUrl(config);
      if (blockUrl !== null) {
        const all = switches;
        const client = new EvmClient({ rpcUrl: blockUrl, timeoutMs: config.requestTimeout });
        closeWitness = () => client.close();
        witness = createBlockWitness({
          client,
          runtime,
          intervalMs: config.interval,
          bus,
          onSample: (sample) => {
            for (const s of all) s.dispatch({ type: "blockSample", ...sample });
          },
        });
        void witness.readNow();
        witness.start();
      }
      const started = switches;
      ctx.board.accounts = () => started.map((s) => s.status());
      // Spread: account i pushes first, and then on its slots, `i × step` after the grid's origin, so that N
      // accounts never push in one burst (docs/operations.md, "Many accounts, several signers").
      const step = pushSpacing(config.interval, switches.length);
      const begin = (s: Switch, offset: number) => {
        s.dispatch({ type: "start", slotOrigin: ctx.slotOrigin + offset });
        const record = ctx.startRecords.get(s.account);
        if (record) s.dispatch({ type: "record", result: record });
      };
      for (const [i, s] of switches.entries()) {
        if (i === 0 || step === 0) begin(s, 0);
        else pending.push(runtime.timers.after(i * step, () => begin(s, i * step)));
      }
      return {
        switches,
        outcomes,
        triggers: { subscribe: triggers.subscribe },
        firstPassMs: step * Math.max(0, switches.length - 1),
      };
    },
    async close() {
      witness?.stop();
      closeWitness?.();
      for (const t of pending.splice(0)) t.cancel();
      // Coordinated: resign and read the candidates first; the switches remove only when none is left.
      if (mode() === "remove") await coordination?.beforeStop();
      const results = await Promise.all(switches.map((s) => s.shutdown({ mode: mode() })));
      outcomes.push(...results);
    },
  };
}

/**
 * The pollers (and the check after every fire): exposure (a trigger polls at once), the action budget, the chain watch, the 00:00 UTC roll-over job
 * and the protection watch of the notifications. Their handles are taken here, but their first requests go out
 * once the first pushes have settled (confirmed, refused or failed), at most one request time-out after the
 * switches started (after a fleet's spread first pass): the first push shares neither the event loop, the exchange
 * nor the ledger's write with them.
 * node-cron is loaded and its first date computed only then too (that builds an Intl.DateTimeFormat, and loading
 * ICU's data costs ~5-10 ms of CPU the first push need not wait for); the job only prompts the switches.
 */
export function pollersComponent(): Component<
  Base & {
    logger: Logger;
    bus: EventBus;
    log: Logger;
    ledger: Ledger;
    info: InfoClient;
    notifications: ReturnType<typeof createDaemonNotifications>;
    board: Board;
    chain: DaemonChainWatch | null;
    slotOrigin: number;
    switches: Switch[];
    triggers: Feed<string>;
    firstPassMs: number;
    engine: { now(account: string): { up: boolean } };
    fireCancel: CancelOpenOrders | undefined;
    actOnDexes: string[];
  },
  { rollover: () => void }
> {
  const parts: { name: string; close(): unknown }[] = [];
  let log: Logger | undefined;
  return {
    name: "pollers",
    start(ctx) {
      const { params, config, runtime, accounts, info, logger, bus, switches, ledger, slotOrigin } = ctx;
      log = ctx.log;
      // The exposure poller: the accounts plus extra users.
      const exposure =
        config.exposureInterval > 0
          ? createExposurePoller({
              info,
              users: [...accounts, ...config.exposureUsers],
              dexes: config.dexes,
              runtime,
              intervalMs: config.exposureInterval,
              thresholds: config.thresholds,
              clockSkewWarnMs: config.clockSkewWarn,
              bus,
            })
          : null;
      if (exposure) {
        ctx.board.exposure = () => exposure.status();
        ctx.triggers.subscribe(() => void exposure.pollNow("trigger"));
      }
      // After every fire, every listed dex's open orders are read; a dex the fire missed is covered (fire-check.ts).
      const vaults = new Map(ctx.plan.map((p) => [p.account, p.vaultAddress]));
      const fireChecks = scheduleFireChecks(
        runtime.timers,
        createFireCheck({
          info,
          dexes: ctx.actOnDexes,
          cancel: ctx.fireCancel,
          cancelStops: config.cancelStops,
          engineUp: (account) => ctx.engine.now(account).up,
          userOf: (account) => {
            const vaultAddress = vaults.get(account);
            return { user: vaultAddress ?? account, ...(vaultAddress ? { vaultAddress } : {}) };
          },
          logger,
        }),
      );
      ctx.triggers.subscribe((account) => fireChecks.fired(account));
      parts.push({ name: "fire checks", close: () => fireChecks.stop() });
      // What a fire would cancel, for the status page: each account's open orders on the exposure cadence (a few
      // accounts only: src/watchers/open-orders.ts); read again after a trigger, which leaves none.
      const openOrders = createOpenOrdersWatch({
        info,
        accounts,
        dexes: config.dexes,
        runtime,
        intervalMs: config.exposureInterval,
        bus,
      });
      ctx.triggers.subscribe(() => void openOrders.readNow());
      // The address's lifetime action budget, which every push spends (docs/exchange-behaviour.md §10).
      const budget = createBudgetMonitor({
        info,
        accounts,
        runtime,
        bus,
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
        openOrders.start(slotOrigin);
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
      parts.push({ name: "open orders watch", close: () => openOrders.stop() });
      parts.push({ name: "budget monitor", close: () => budget.stop() });
      parts.push({ name: "chain watch", close: () => chain?.stop() });
      const rollover = () => {
        ledger.rollover();
        for (const s of switches) s.dispatch({ type: "dayRollover" });
      };
      const scheduler = params.scheduler ?? cronScheduler;
      const job = scheduler.schedule("0 0 * * *", rollover, {
        timezone: "UTC",
        name: "ledger-rollover",
        after: afterFirstPushes,
      });
      parts.push({ name: "ledger roll-over", close: () => job.stop() });
      // A fleet's first pass of pushes is spread over `firstPassMs`: the polls begin after it, so that their first
      // reads do not spend the IP's weight in the same minute as every account's first push.
      const afterFirstPass = () => {
        if (runtime.signal.aborted) return;
        bound = runtime.timers.after(config.requestTimeout, begin);
        void Promise.all(switches.map((s) => s.settle())).then(begin, begin);
      };
      if (ctx.firstPassMs > 0) {
        const pass = runtime.timers.after(ctx.firstPassMs, afterFirstPass);
        parts.push({ name: "first pass", close: () => pass.cancel() });
      } else afterFirstPass();
      const byAccount = new Map(switches.map((s) => [s.account, s]));
      ctx.notifications.watch({
        status: () => switches.map((s) => s.protection()),
        statusOf: (account) => byAccount.get(account)?.protection(),
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

/**
 * `hl-deadman kill` (docs/operations.md "When cancelling is not enough"): the named account, or every account
 * with `options.all`, each at once: latched HALTED, every resting order cancelled, with `options.close` closed
 * reduce-only. Answered with what each cancelled and closed, once every one has answered.
 */
async function kill(switches: readonly Switch[], request: ControlRequest): Promise<ControlAnswer> {
  const all = request.options?.all === true;
  const close = request.options?.close === true;
  if (all === (request.account !== undefined))
    return { ok: false, error: "name one account (--account) or --all, not both" };
  const targets = all ? switches : switches.filter((s) => s.account === request.account);
  if (targets.length === 0)
    return { ok: false, error: `${request.account ?? "no account"} is not an account this daemon arms` };
  const by = request.by ?? "unnamed";
  const outcomes = await Promise.all(
    targets.map(async (s) => ({ account: s.account, ...(await s.dispatch({ type: "kill", by, close })) })),
  );
  return { ok: true, result: { accounts: outcomes } };
}

/** The daemon's components, in start order (they close in the reverse): docs/daemon.md, "Start order and exit". */

/**
 * The control channel (src/app/control.ts): `reset` (and `drill`) from the operator's command line reach the running
 * daemon's switches here. Listed last: it answers only once every switch runs, and closes first.
 */
export function controlComponent(): Component<
  Base & {
    logger: Logger;
    switches: Switch[];
    audit: AuditTrail;
    bus: EventBus;
    drillIo: DrillIo | undefined;
    readRecord: ((account: string) => Promise<RecordResult>) | undefined;
    info: InfoClient;
    actOnDexes: string[];
  },
  { control: ControlServer | null }
> {
  let control: ControlServer | undefined;
  return {
    name: "control",
    async start(ctx) {
      const { params, config, apiUrl, logger, runtime, switches, audit, bus, drillIo, readRecord } = ctx;
      const find = (account: string | undefined) => switches.find((s) => s.account === account);
      const vaults = new Map(ctx.plan.map((p) => [p.account, p.vaultAddress]));
      const drill = createDrillCommand({
        // what rests now on every listed dex: the drill's fire takes it (its plan lists it, a confirm re-reads it)
        resting: (account) => restingNow(ctx.info, vaults.get(account) ?? account, ctx.actOnDexes),
        stateDir: params.stateDir,
        network: networkOf(apiUrl, config.network),
        coin: config.drillCoin,
        bus,
        timers: runtime.timers,
        now: () => runtime.clock.now(),
        readRecord,
        wired: drillIo !== undefined,
      });
      const opened = await startControlServer({
        stateDir: params.stateDir,
        logger,
        timers: runtime.timers,
        audit: (entry) => audit.append(entry),
        handlers: {
          reset(request) {
            const s = find(request.account);
            if (!s)
              return {
                ok: false,
                error: `${request.account ?? "no account"} is not an account this daemon arms`,
              };
            const r = s.dispatch({ type: "reset", by: request.by ?? "unnamed" });
            return r.released
              ? { ok: true, result: { account: s.account, released: true, detail: r.reason } }
              : { ok: false, error: r.reason };
          },
          drill: (request) => drill(find(request.account), request),
          kill: (request) => kill(switches, request),
        },
      }).catch((error: unknown) => {
        // Never a reason not to protect (a read-only state directory, a path too long for a socket): the daemon runs
        // on without `reset` and `drill`, and says so.
        const reason = error instanceof Error ? error.message : String(error);
        logger
          .child({ module: "control" })
          .error(
            { event: "control.unavailable", error: reason },
            `the control channel cannot listen (${reason}); reset and drill are unavailable until it is fixed and the daemon restarted`,
          );
        return null;
      });
      control = opened ?? undefined;
      return { control: opened };
    },
    close: () => control?.close(),
  };
}
