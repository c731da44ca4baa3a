/**
 * The agent watch's events (src/core/events.ts `AgentEvent`, src/watchers/agent-watch.ts) as log lines and metrics,
 * subscribers of the daemon's bus.
 */
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The agent watch's log lines, a subscriber of the bus (on the logger's `{ module: "agent", account, agent }`
 * child): a state when it changes, the expiry warning, a failed read once per streak.
 */
export function agentLog(logger: Logger): EventSubscriber {
  const children = new Map<string, Logger>();
  return (e) => {
    if (e.module !== "agent") return;
    const key = `${e.account} ${e.agent}`;
    let log = children.get(key);
    if (!log) {
      log = logger.child({ module: "agent", account: e.account, agent: e.agent });
      children.set(key, log);
    }
    switch (e.type) {
      case "agentState": {
        if (!e.changed) return;
        const fields = { event: `agent.${e.state}`, validUntil: e.validUntil };
        if (e.state === "ok") log.info(fields, e.detail);
        else log.error(fields, e.detail);
        return;
      }
      case "agentExpiring":
        log.warn(
          { event: "agent.expiring", validUntil: e.validUntil, daysLeft: e.daysLeft, warnDays: e.warnDays },
          `the API wallet ${e.agent} ("${e.name}") expires at ${iso(e.validUntil)}: approve a new agent before then`,
        );
        return;
      case "agentCheckFailed":
        log.warn({ event: "agent.check_failed", message: e.message }, "could not read the API wallet list");
        return;
      case "agentCheckRecovered":
        log.info({ event: "agent.check_recovered" }, "the API wallet list can be read again");
        return;
    }
  };
}

/** The agent's expiry metric (0: not listed), a subscriber of the bus: set on every answer. */
export function agentMetrics(metrics: Pick<Metrics, "agentValidUntil">): EventSubscriber {
  return (e) => {
    if (e.module !== "agent" || e.type !== "agentState") return;
    metrics.agentValidUntil.set(
      { account: e.account, agent: e.agent },
      e.validUntil === null ? 0 : e.validUntil / 1000,
    );
  };
}
