/** The agent watch component (src/app/daemon.ts, `daemonComponents`). */
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { TimerHandle } from "../../core/runtime.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import { type AgentState, createAgentWatch } from "../../watchers/agent-watch.js";
import type { Component } from "../components.js";
import type { AgentFeeds, Base } from "../context.js";
import { feed } from "../context.js";

/**
 * The agent watches, one per signer that is an API wallet of the account it acts for directly (planAccounts,
 * planSigners): its state comes before the first push (bounded by one request time-out), then every
 * agentCheckInterval; a missing or expired agent is NOT PROTECTED at once, for the accounts that key signs for.
 */
export function agentWatchComponent(): Component<
  Base & { logger: Logger; bus: EventBus; info: InfoClient },
  { agents: AgentFeeds }
> {
  const watches: ReturnType<typeof createAgentWatch>[] = [];
  return {
    name: "agent watch",
    async start({ config, runtime, time, plan, bus, info }) {
      const agents: AgentFeeds = [];
      for (const signer of new Set(plan.map((p) => p.signer))) {
        const mine = plan.filter((p) => p.signer === signer);
        const master = mine.find((p) => p.vaultAddress === undefined)?.account;
        if (master === undefined || master === signer) continue;
        const states = feed<AgentState>();
        const created = createAgentWatch({
          info,
          account: master,
          signer,
          // validity is judged on the exchange's time
          runtime: runtime.withClock(time),
          bus,
          intervalMs: config.agentCheckInterval,
          warnDays: config.agentWarnDays,
          onAgentState: (a) => states.publish(a),
        });
        watches.push(created);
        agents.push({
          // the agent acts for its master, and through vaultAddress for the master's subaccounts and vaults
          accounts: mine.map((p) => p.account),
          feed: { subscribe: states.subscribe, now: () => created.state() },
        });
      }
      let bound: TimerHandle | undefined;
      await Promise.race([
        Promise.all(watches.map((w) => w.checkNow())),
        new Promise<void>((resolve) => {
          bound = runtime.timers.after(config.requestTimeout, resolve);
        }),
      ]);
      bound?.cancel();
      for (const w of watches) w.start();
      return { agents };
    },
    close: () => {
      for (const w of watches) w.stop();
    },
  };
}
