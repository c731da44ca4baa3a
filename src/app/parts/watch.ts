/**
 * The daemon's components that watch before the first push: the engine guard, the agent watch, and the clock watch
 * (the daemon's own once-per-interval work, on the push slots) (src/app/daemon.ts, `daemonComponents`).
 */

import { parseGuardSocket } from "../../config/listen.js";
import { guardConnectGraceOf } from "../../config/rules.js";
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { TimerHandle } from "../../core/runtime.js";
import type { GuardStatus } from "../../core/status.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { Ledger } from "../../switch/ledger.js";
import { type AgentState, createAgentWatch } from "../../watchers/agent-watch.js";
import type { AnnouncedOrders } from "../../watchers/announced-orders.js";
import { createConnectionGuard } from "../../watchers/connection-guard.js";
import { createGuard } from "../../watchers/guard.js";
import { CrossingLatch } from "../../watchers/skew.js";
import type { Component } from "../components.js";
import type { AgentFeeds, Base, Board, Engine, Feed } from "../context.js";
import { feed } from "../context.js";

/** What the daemon holds of its engine guard, file/URL or connection. */
export type DaemonGuard = { status(): GuardStatus; idle(): Promise<void> };

/**
 * The engine guard. File or URL: its first answer comes before the first push, and it drives every account. The
 * connection guard (`guardSocket`): listening before the first push, every account `waiting` (up) until an engine
 * names it, and each engine drives only the accounts it named (`Engine.accounts`). The ledger records, once per
 * account, that an engine held it; after a restart such an account waits only the connect grace (engine down,
 * `absent`, when no engine names it by then).
 */
export function guardComponent(): Component<
  Base & { bus: EventBus; board: Board; ledger: Ledger; announcedOrders?: AnnouncedOrders },
  { guard: DaemonGuard | null; engine: Feed<Engine> & { now(account: string): Engine } }
> {
  let close: (() => unknown) | undefined;
  return {
    name: "guard",
    async start({ config, runtime, bus, board, plan, ledger, announcedOrders }) {
      const engine = feed<Engine>();
      if (config.guardSocket) {
        const socket = createConnectionGuard({
          address: parseGuardSocket(config.guardSocket),
          accounts: plan.map((p) => p.account),
          heartbeatGapMs: config.guardHeartbeatGap,
          runtime,
          bus,
          onChange: (account, up, detail, cause) =>
            engine.publish({ up, detail, cause, accounts: [account] }),
          heldBefore: ledger.enginesHeld(),
          connectGraceMs: guardConnectGraceOf(config),
          onHeld: (account) => ledger.markEngineHeld(account),
          // the engines' announced orders go where the cancel pass looks (src/app/parts/io.ts)
          announced: announcedOrders,
        });
        await socket.start();
        // Version 2 engines are told what the daemon does to their accounts (docs/operations.md, "Cancel on
        // disconnect"): HALTED (by a rule, the operator's kill, or the ledger at start) until reset, and a drill.
        const told = new Set<string>();
        const halted = (account: string, reason: string) => {
          told.add(account);
          socket.tell({ type: "halted", account, reason });
        };
        const stopTelling = bus.subscribe((e) => {
          if (e.module !== "switch") return;
          const account = String(e.account);
          if (e.type === "escalated") halted(account, String(e.reason));
          else if (e.type === "killed") halted(account, `the operator's kill (${String(e.by)})`);
          else if (e.type === "gauge" && e.name === "halted") {
            if (e.value === true && !told.has(account))
              halted(account, ledger.get(account).halted?.reason ?? "HALTED");
            else if (e.value === false && told.delete(account)) socket.tell({ type: "resumed", account });
          } else if (e.type === "drillStarted")
            // the drill's fire comes within one deadline of its start; until then whatever rests may be cancelled
            socket.tell({ type: "drill", account, until: runtime.clock.now() + config.deadline });
        });
        close = () => {
          stopTelling();
          return socket.stop();
        };
        board.guard = () => socket.status();
        return {
          guard: { status: () => socket.status(), idle: async () => undefined },
          engine: { subscribe: engine.subscribe, now: (account) => socket.engine(account) },
        };
      }
      const guard = createGuard({
        file: config.guardFile,
        maxAgeMs: config.guardMaxAge,
        url: config.guardUrl,
        intervalMs: config.guardInterval,
        runtime,
        bus,
        onChange: (up, detail) => engine.publish({ up, detail }),
      });
      const started = guard;
      if (started) {
        close = () => started.stop();
        board.guard = () => started.status();
        try {
          await started.start();
        } catch (error) {
          started.stop();
          throw error;
        }
      }
      const now = (): Engine => {
        const s = started?.status();
        return s ? { up: s.up, detail: s.detail } : { up: true, detail: null };
      };
      return { guard, engine: { subscribe: engine.subscribe, now } };
    },
    close: () => close?.(),
  };
}

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

/**
 * The daemon's own once-per-interval work, on its own repetition on the push loops' grid (`slotOrigin`, which it
 * sets for the switches and the exposure poll, and the push interval): `every` wakes it with the pushes, on one
 * timer, just before them, never in a wake-up of its own (CPU per hour, BENCHMARKS.md). Per slot: `onInterval` (the service's lock refresh); with the exposure poll
 * off, the skew of the local clock from the answers' Date (the poll watches it otherwise); a wall-clock step
 * (wall and monotonic disagree), which is logged, counted and handed to the switches (readiness then waits for a
 * confirmed push). Deadlines are on the exchange's time, which a step does not move: this only reports.
 */
export function clockWatchComponent(): Component<
  Base & { bus: EventBus; log: Logger },
  { slotOrigin: number; clockSteps: Feed<number> }
> {
  let loop: { stop(): void } | undefined;
  return {
    name: "clock watch",
    start({ params, config, runtime, time, bus, log }) {
      const steps = feed<number>();
      const skewLatch = new CrossingLatch(config.clockSkewWarn);
      const watchSkew = config.exposureInterval <= 0;
      const slotOrigin = time.monotonic();
      const from = { module: "clock", origin: "daemon" } as const;
      const work = () => {
        if (params.onInterval) {
          try {
            params.onInterval();
          } catch (error) {
            bus.publish({ ...from, type: "intervalHookFailed", error });
          }
        }
        if (watchSkew && time.verified) {
          const skewMs = time.skewMs;
          const change = skewLatch.update(Math.abs(skewMs));
          bus.publish({
            ...from,
            type: "clockSkew",
            skewMs,
            uncertaintyMs: null,
            limitMs: config.clockSkewWarn,
            source: "date",
            change,
          });
        }
        const stepped = time.checkStep();
        if (!stepped) return;
        bus.publish({ ...from, type: "clockStepped", deltaMs: stepped.deltaMs });
        steps.publish(stepped.deltaMs);
      };
      // On the push loops' grid, made before them: one timer wakes it and then the pushes, no wake-up of its own.
      loop = runtime.withClock(time).every(config.interval, work, {
        name: "clock",
        immediate: false,
        startAt: slotOrigin,
        logger: log,
        // a stall is the push loop's to report and count, once (it wakes in the same wake-up)
        stallThresholdMs: Number.POSITIVE_INFINITY,
      });
      return { slotOrigin, clockSteps: { subscribe: steps.subscribe } };
    },
    close: () => loop?.stop(),
  };
}
