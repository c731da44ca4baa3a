/**
 * The daemon: one switch per account, the trigger ledger and its 00:00 UTC roll-over, the engine guard, the agent
 * watch, the exposure poller, the action budget, the optional chain watch and the health/metrics server, as an
 * ordered list of components (`daemonComponents`; each in src/app/parts/, run by src/app/components.ts): each
 * starts on what the ones before it provide, they close in reverse, once, under the runtime's one abort signal,
 * and a component that fails to start closes again everything started before it; `startDaemon` then rejects with
 * a `DaemonStartError` naming it (docs/daemon.md, "Start order and exit").
 */

import { effectiveUrls } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { systemClock } from "../core/clock.js";
import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";
import type { Logger } from "../core/logger.js";
import { createRuntime, ExchangeTime, systemTimers } from "../core/runtime.js";
import { type GuardStatus, NO_GUARD, type Readiness, type SwitchStatus } from "../core/status.js";
import { VERSION } from "../core/version.js";
import type { LocalSigner } from "../protocol/hyperliquid/signing.js";
import { parseListenAddress } from "../surface/health.js";
import { createMetrics, type Metrics, metricsPerAccount } from "../surface/metrics.js";
import type { ShutdownOutcome, Switch } from "../switch/index.js";
import type { Ledger } from "../switch/ledger.js";
import { ComponentStartFailure, Components } from "./components.js";
import type { Base, StartDaemonParameters } from "./context.js";
import { agentWatchComponent } from "./parts/agent-watch.js";
import { auditComponent } from "./parts/audit.js";
import { chainWatchComponent } from "./parts/chain-watch.js";
import { clientsComponent } from "./parts/clients.js";
import { clockWatchComponent } from "./parts/clock-watch.js";
import { controlComponent } from "./parts/control.js";
import { coordinationComponent } from "./parts/coordination.js";
import { guardComponent } from "./parts/guard.js";
import { healthComponent } from "./parts/health.js";
import { ledgerComponent } from "./parts/ledger.js";
import { notificationsComponent } from "./parts/notifications.js";
import { pollersComponent } from "./parts/pollers.js";
import { recordComponent } from "./parts/record.js";
import { switchesComponent } from "./parts/switches.js";

export type { DaemonChainWatch, StartDaemonParameters } from "./context.js";

/** What the daemon needs from the chain watch (src/watchers/chain-watch.ts). */
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

/** One account the daemon arms: the vaultAddress its pushes carry and the signer (lower-case) that signs them. */
export type PlanEntry = { account: string; vaultAddress: string | undefined; signer: string };

/** Accounts to protect and the vaultAddress each push carries (docs/daemon.md "Accounts"). */
export function planAccounts(config: Config, signer: string): PlanEntry[] {
  if (config.vault) return [{ account: config.vault, vaultAddress: config.vault, signer }];
  const accounts = config.accounts.length > 0 ? [...new Set(config.accounts)] : [signer];
  // One account acts directly, without vaultAddress: the signer's own address when it is listed, else the first
  // account listed. A push without vaultAddress protects the signer's user, which is the signer itself or, when
  // the signer is an API (agent) wallet, the master it was approved for (docs/exchange-behaviour.md §7) -- the recommended set-up
  // is a dedicated agent key with `--account MASTER`. Every other account is a subaccount or vault of that user
  // and is sent as vaultAddress. The daemon logs this plan at start (`daemon.start`, `accounts.agent`).
  const direct = accounts.includes(signer) ? signer : accounts[0]!;
  return accounts.map((account) => ({
    account,
    vaultAddress: account === direct ? undefined : account,
    signer,
  }));
}

/**
 * Several signers (config `signers`): each signer's `account` is pushed without vaultAddress, each of its `vaults`
 * with it; in the order written (docs/operations.md, "Many accounts, several signers").
 */
export function planSigners(
  signers: readonly { address: string; account?: string | undefined; vaults: readonly string[] }[],
): PlanEntry[] {
  return signers.flatMap(({ address, account, vaults }) => [
    ...(account ? [{ account, vaultAddress: undefined, signer: address }] : []),
    ...vaults.map((v) => ({ account: v, vaultAddress: v, signer: address })),
  ]);
}

/** The daemon's components, in start order (they close in the reverse): docs/daemon.md, "Start order and exit". */
export function daemonComponents() {
  return [
    notificationsComponent(),
    auditComponent(),
    ledgerComponent(),
    clientsComponent(),
    recordComponent(),
    chainWatchComponent(),
    healthComponent(),
    guardComponent(),
    agentWatchComponent(),
    clockWatchComponent(),
    coordinationComponent(),
    switchesComponent(),
    pollersComponent(),
    controlComponent(),
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
  const signer = wallet.address.toLowerCase();
  const wallets = new Map<string, LocalSigner>([[signer, wallet]]);
  for (const s of params.signers ?? []) wallets.set(s.wallet.address.toLowerCase(), s.wallet);
  const plan =
    params.signers && params.signers.length > 0
      ? planSigners(params.signers.map((s) => ({ ...s, address: s.wallet.address.toLowerCase() })))
      : planAccounts(config, signer);
  const metrics =
    params.metrics ?? createMetrics({ perAccount: metricsPerAccount(config.metricsPerAccount, plan.length) });
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
    wallets,
    plan,
    accounts: plan.map((p) => p.account),
    apiUrl: params.apiUrl ?? effectiveUrls(config).apiUrl,
    networkLabel: params.networkLabel ?? config.network,
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
