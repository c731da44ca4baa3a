/** The switches component (src/app/daemon.ts, `daemonComponents`). */
import { escalationOf } from "../../config/rules.js";
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { DrillIo } from "../../core/orders-port.js";
import type { TimerHandle } from "../../core/runtime.js";
import { drill } from "../../drill/index.js";
import { escalation as escalationMachine } from "../../escalation/index.js";
import type { DeathGate } from "../../fleet-death/gate.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { NonceSource, NonceSpan } from "../../protocol/hyperliquid/nonce.js";
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
import type { Component } from "../components.js";
import type { AgentFeeds, Base, Board, Engine, Feed } from "../context.js";
import { feed } from "../context.js";
import { startBlockWitness } from "./block-witness.js";
import type { Coordination } from "./coordination.js";
import { startSpread } from "./spread.js";
import { followInputs } from "./switch-inputs.js";

export { PUSH_PACE_MS, pushSpacing } from "../../config/weight.js";

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
  let witness: { stop(): void } | null = null;
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
      const { escalating, escalation } = escalationOf(config, plan);
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
          // the switch's features, machines of their own rooms: fed its events, their commands carried out by it
          features: { escalation: escalationMachine, drill },
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
      followInputs(switches, { ...ctx, escalating });
      witness = startBlockWitness({ ...ctx, switches });
      const started = switches;
      ctx.board.accounts.publish(() => started.map((s) => s.status()));
      const { firstPassMs } = startSpread(switches, { ...ctx, pending });
      return { switches, outcomes, triggers: { subscribe: triggers.subscribe }, firstPassMs };
    },
    async close() {
      witness?.stop();
      for (const t of pending.splice(0)) t.cancel();
      // Coordinated: resign and read the candidates first; the switches remove only when none is left.
      if (mode() === "remove") await coordination?.beforeStop();
      const results = await Promise.all(switches.map((s) => s.shutdown({ mode: mode() })));
      outcomes.push(...results);
    },
  };
}
