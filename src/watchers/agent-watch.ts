/**
 * The agent watch (docs/exchange-record.md, "The agent watch"). An API wallet (agent) dies without an error:
 * it expires at `validUntil`, or an `approveAgent` with the same name deregisters it, and the first sign used
 * to be a refused push. At start-up and then every `intervalMs` this reads the master's `extraAgents`:
 *
 * - the signer is listed and valid → `ok` (and `agent.expiring` at warn, once per UTC day, when it expires
 *   within `warnDays`; the metric `hl_deadman_agent_valid_until_timestamp_seconds` carries the expiry);
 * - listed with `validUntil` passed, or gone after having been seen with a `validUntil` now passed → `expired`;
 * - not listed → `userRole` of the signer tells an unnamed agent (not listed by `extraAgents`, still valid)
 *   from a missing one → `missing`, with the likely causes in the detail.
 *
 * A signer that is the master itself needs no check. A failed read changes no state (logged once per streak).
 * `onAgentState` is called on the first answer and on every change; the switch turns `missing` / `expired`
 * into NOT PROTECTED (agent_missing / agent_expired). What it reads it publishes as typed events on the bus
 * (src/core/events.ts `AgentEvent`); its log lines and its metric are subscribers in src/surface/watchers/agent.ts.
 */

import { utcDay } from "../core/clock.js";
import { type AgentEvent, createEventBus, type EventBus } from "../core/events.js";
import type { Runtime, TimerHandle } from "../core/runtime.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";

export const DEFAULT_AGENT_CHECK_INTERVAL_MS = 3_600_000;
export const DEFAULT_AGENT_WARN_DAYS = 7;
const DAY_MS = 86_400_000;

export type AgentStateName = "ok" | "missing" | "expired";

export type AgentState = {
  state: AgentStateName;
  detail: string;
  account: string;
  agent: string;
  /** ms; null when the exchange does not say (unnamed agent) or the agent is gone */
  validUntil: number | null;
};

export type AgentWatch = {
  start(): void;
  stop(): void;
  /** One check now; resolves to the state (null when the read failed). Never rejects. */
  checkNow(): Promise<AgentState | null>;
  /** the last known state, or null before the first answer */
  state(): AgentState | null;
};

export type CreateAgentWatchParameters = {
  info: Pick<InfoClient, "extraAgents" | "userRole">;
  /** the master account the agent signs for */
  account: string;
  /** the signing address (the agent's, or the master's own) */
  signer: string;
  /**
   * the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts); validity is judged on its
   * clock (the daemon's runtime over the exchange's time)
   */
  runtime: Runtime;
  /**
   * the daemon's event bus, where its log lines and metric subscribe (src/surface/watchers/agent.ts); without one
   * (a one-off check: `hl-deadman doctor`), what it reads is told to no one but `onAgentState`
   */
  bus?: EventBus | undefined;
  intervalMs?: number;
  warnDays?: number;
  onAgentState: (state: AgentState) => void;
};

const iso = (ms: number) => new Date(ms).toISOString();

export function missingDetail(agent: string, account: string): string {
  return (
    `the signer ${agent} is not an API wallet of ${account} any more. Likely causes: it expired (validUntil ` +
    "passed); an approveAgent with the same name deregistered it (re-approving a name replaces the old agent); " +
    "or --account names the wrong master. Approve a new agent (never reuse an old agent address) and restart."
  );
}

export function createAgentWatch({
  info,
  account,
  signer,
  runtime,
  bus = createEventBus(),
  intervalMs = DEFAULT_AGENT_CHECK_INTERVAL_MS,
  warnDays = DEFAULT_AGENT_WARN_DAYS,
  onAgentState,
}: CreateAgentWatchParameters): AgentWatch {
  const { clock, timers } = runtime;
  const master = account.toLowerCase();
  const agent = signer.toLowerCase();
  const selfSigned = master === agent;
  const emit = (e: DistributiveOmit<AgentEvent, "module" | "account" | "agent">) =>
    bus.publish({ ...e, module: "agent", account: master, agent } as AgentEvent);
  let current: AgentState | null = null;
  /** the last validUntil the exchange showed: tells "expired and pruned" from "deregistered" */
  let lastSeenValidUntil: number | null = null;
  let warnedDay: string | null = null;
  let failing = false;
  let timer: TimerHandle | undefined;
  let running: Promise<AgentState | null> | null = null;
  let stopped = false;

  const publish = (next: AgentState) => {
    const changed = current === null || current.state !== next.state;
    current = next;
    emit({
      type: "agentState",
      state: next.state,
      detail: next.detail,
      validUntil: next.validUntil,
      changed,
    });
    if (changed) onAgentState(next);
  };

  const evaluate = async (): Promise<AgentState> => {
    const now = clock.now();
    const agents = await info.extraAgents({ user: master });
    const mine = agents.find((a) => a.address.toLowerCase() === agent);
    if (mine) {
      const validUntil = mine.validUntil;
      if (validUntil !== null) lastSeenValidUntil = validUntil;
      if (validUntil !== null && validUntil <= now) {
        return {
          state: "expired",
          detail: `the API wallet ${agent} ("${mine.name}") expired at ${iso(validUntil)}; approve a new one`,
          account: master,
          agent,
          validUntil,
        };
      }
      if (validUntil !== null && validUntil - now < warnDays * DAY_MS) {
        const today = utcDay(now);
        if (warnedDay !== today) {
          warnedDay = today;
          emit({
            type: "agentExpiring",
            name: mine.name,
            validUntil,
            daysLeft: Number(((validUntil - now) / DAY_MS).toFixed(2)),
            warnDays,
          });
        }
      }
      return {
        state: "ok",
        detail: `the API wallet ${agent} ("${mine.name}") is valid${validUntil !== null ? ` until ${iso(validUntil)}` : ""}`,
        account: master,
        agent,
        validUntil,
      };
    }
    if (lastSeenValidUntil !== null && lastSeenValidUntil <= now) {
      return {
        state: "expired",
        detail: `the API wallet ${agent} expired at ${iso(lastSeenValidUntil)} and was pruned; approve a new one`,
        account: master,
        agent,
        validUntil: lastSeenValidUntil,
      };
    }
    // extraAgents lists named agents; an unnamed agent is only visible through the signer's role.
    const role = await info.userRole({ user: agent });
    if (role.role === "agent" && role.data?.user?.toLowerCase() === master) {
      return {
        state: "ok",
        detail: `the API wallet ${agent} is an unnamed agent of ${master} (its expiry is not listed; name the agent to have it watched)`,
        account: master,
        agent,
        validUntil: null,
      };
    }
    return {
      state: "missing",
      detail: missingDetail(agent, master),
      account: master,
      agent,
      validUntil: null,
    };
  };

  const checkOnce = async (): Promise<AgentState | null> => {
    try {
      const next = await evaluate();
      if (failing) {
        failing = false;
        emit({ type: "agentCheckRecovered" });
      }
      if (!stopped) publish(next);
      return next;
    } catch (error) {
      const message = (error instanceof Error ? error.message.split("\n")[0] : String(error)) ?? "";
      if (!failing) emit({ type: "agentCheckFailed", message });
      failing = true;
      return null;
    }
  };

  const checkNow = async (): Promise<AgentState | null> => {
    if (selfSigned)
      return { state: "ok", detail: "the master signs itself", account: master, agent, validUntil: null };
    if (running) return running;
    running = checkOnce().finally(() => {
      running = null;
    });
    return running;
  };

  const schedule = () => {
    if (stopped || intervalMs <= 0) return;
    timer = timers.after(intervalMs, () => {
      void checkNow().then(schedule);
    });
  };

  return {
    start() {
      if (selfSigned) return;
      void checkNow().then(schedule);
    },
    stop() {
      stopped = true;
      timer?.cancel();
    },
    checkNow,
    state: () => current,
  };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
