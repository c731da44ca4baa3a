/**
 * Readiness (GET /readyz, docs/daemon.md): computed from the board's latest (src/app/context.ts `Board`), which the
 * health component subscribes to before the parts that publish on it exist. Before the switches have published,
 * the daemon is not ready ("starting"); with coordination, etcd lost is said and not ready.
 */
import type { Config } from "../../config/schema.js";
import type { ExchangeTime } from "../../core/runtime.js";
import {
  type CoordinationStatus,
  EXPOSURE_OFF,
  type ExposureStatus,
  type GuardStatus,
  NO_GUARD,
  type Readiness,
  type SwitchStatus,
} from "../../core/status.js";
import { computeReadiness } from "../../surface/health.js";
import type { Board } from "../context.js";

export function boardReadiness(
  board: Board,
  { time, config }: { time: ExchangeTime; config: Config },
): () => Readiness {
  const latest: {
    accounts: (() => SwitchStatus[]) | null;
    exposure: () => ExposureStatus;
    guard: () => GuardStatus;
    coordination: (() => CoordinationStatus) | null;
  } = { accounts: null, exposure: () => EXPOSURE_OFF, guard: () => NO_GUARD, coordination: null };
  board.accounts.subscribe((read) => (latest.accounts = read));
  board.exposure.subscribe((read) => (latest.exposure = read));
  board.guard.subscribe((read) => (latest.guard = read));
  board.coordination.subscribe((read) => (latest.coordination = read));
  return (): Readiness => {
    const statuses = latest.accounts?.();
    if (!statuses)
      return {
        ready: false,
        reasons: ["starting: the switches have not started yet"],
        accounts: [],
        exposure: latest.exposure(),
        guard: latest.guard(),
      };
    const judged = computeReadiness({
      // judged on the later of the local clock and the exchange estimate (exchange-time.ts `Times.ready`)
      now: time.readinessNow(),
      accounts: statuses,
      exposure: latest.exposure(),
      guard: latest.guard(),
      intervalMs: config.interval,
      deadlineMs: config.deadline,
    });
    const coordination = latest.coordination?.();
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
}
