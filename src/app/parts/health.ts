/** The daemon's health, readiness and metrics server component (src/app/daemon.ts, `daemonComponents`). */
import type { Logger } from "../../core/logger.js";
import { EXPOSURE_OFF, NO_GUARD, type Readiness } from "../../core/status.js";
import { VERSION } from "../../core/version.js";
import type { AuditTrail } from "../../surface/audit/trail.js";
import { computeReadiness, createHealthServer, type HealthServer } from "../../surface/health.js";
import { type createStatusModel, statusPageRoutes } from "../../surface/status-page/index.js";
import type { Ledger } from "../../switch/ledger.js";
import type { Component } from "../components.js";
import type { Base, Board } from "../context.js";

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
        const judged = computeReadiness({
          // judged on the later of the local clock and the exchange estimate (exchange-time.ts `Times.ready`)
          now: time.readinessNow(),
          accounts: statuses,
          exposure: board.exposure(),
          guard: board.guard(),
          intervalMs: config.interval,
          deadlineMs: config.deadline,
        });
        const coordination = board.coordination?.();
        if (!coordination) return judged;
        // etcd lost: the replica protects (pushes, cancels) but the pair's guarantee is gone: said, and not ready
        const lost =
          coordination.role === "lost"
            ? [
                `coordination: etcd is unreachable (${coordination.detail ?? "no answer"}); pushing and cancelling go on, ${coordination.actAlone ? "gated actions are taken alone (actAlone)" : "no closing, drill, reset or removal on stop is taken (actAlone is off)"}`,
              ]
            : [];
        return {
          ...judged,
          ready: judged.ready && lost.length === 0,
          reasons: [...judged.reasons, ...lost],
          coordination,
        };
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
            audit: () => ({ head: audit.head, recent: audit.recent(), unavailable: audit.unavailable }),
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
          guard: config.guardSocket ? "socket" : config.guardFile ? "file" : config.guardUrl ? "url" : null,
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
