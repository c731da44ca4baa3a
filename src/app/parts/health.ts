/** The daemon's health, readiness and metrics server component (src/app/daemon.ts, `daemonComponents`). */

import { readsOpenOrders } from "../../config/weight.js";
import type { Logger } from "../../core/logger.js";
import type { Readiness } from "../../core/status.js";
import { VERSION } from "../../core/version.js";
import type { AuditTrail } from "../../surface/audit/trail.js";
import { createHealthServer, type HealthServer } from "../../surface/health.js";
import { metricsPerAccount } from "../../surface/metrics.js";
import { type createStatusModel, statusPageRoutes } from "../../surface/status-page/index.js";
import type { Ledger } from "../../switch/ledger.js";
import type { Component } from "../components.js";
import { type Base, type Board, createBoard } from "../context.js";
import { boardReadiness } from "./readiness.js";

/** At most this many accounts are listed in the start line (`daemon.start`); the status page lists them all. */
const PLAN_LOGGED = 50;

/**
 * The health, readiness and metrics server, bound before the guard is asked and before any switch pushes: a taken
 * port arms nothing. Then `daemon.start` says what is about to be protected.
 */
export function healthComponent(): Component<
  Base & {
    logger: Logger;
    log: Logger;
    ledger: Ledger;
    statusModel: ReturnType<typeof createStatusModel>;
    audit: AuditTrail;
  },
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
      audit,
      ledger,
      signer,
      plan,
      accounts,
      networkLabel,
    }) {
      // The later parts publish how to read their status on the board; readiness reads the latest (readiness.ts).
      const board = createBoard();
      const readiness = boardReadiness(board, { time, config });
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
            network: networkLabel,
            openOrdersRead: readsOpenOrders(plan.length, config.exposureInterval),
            audit: () => ({ head: audit.head, recent: audit.recent(), unavailable: audit.unavailable }),
          }),
        });
      }
      log.info(
        {
          event: "daemon.start",
          version: VERSION,
          signer,
          // bounded: a thousand accounts would make a line of 130 kB (journald splits lines above 48 kB)
          accounts: plan.slice(0, PLAN_LOGGED),
          ...(plan.length > PLAN_LOGGED ? { accountsNotListed: plan.length - PLAN_LOGGED } : {}),
          signers: new Set(plan.map((p) => p.signer)).size,
          metricsPerAccount: metricsPerAccount(config.metricsPerAccount, plan.length),
          network: networkLabel,
          intervalMs: config.interval,
          deadlineMs: config.deadline,
          requestTimeoutMs: config.requestTimeout,
          ledger: ledger.path,
          onShutdown: config.onShutdown,
          guard: config.guardSocket ? "socket" : config.guardFile ? "file" : config.guardUrl ? "url" : null,
        },
        `hl-deadman ${VERSION}: keeping the scheduled cancel armed for ${accounts.length > PLAN_LOGGED ? `${accounts.length} accounts` : accounts.join(", ")}`,
      );
      for (const { account, vaultAddress, signer } of plan) {
        if (vaultAddress === undefined && account !== signer) {
          log.info(
            { event: "accounts.agent", account, signer },
            `signer ${signer} acts as an API wallet for ${account} (no vaultAddress); for a subaccount or vault use ${config.signers.length > 0 ? "the signer's vaults" : "--vault"}`,
          );
        }
      }
      return { board, readiness, health };
    },
    close: () => health?.close(),
  };
}
