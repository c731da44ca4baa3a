/** The engine guard component (src/app/daemon.ts, `daemonComponents`). */
import { parseGuardSocket } from "../../config/listen.js";
import { guardConnectGraceOf } from "../../config/rules.js";
import type { EventBus } from "../../core/events.js";
import type { GuardStatus } from "../../core/status.js";
import type { Ledger } from "../../switch/ledger.js";
import type { AnnouncedOrders } from "../../watchers/announced-orders.js";
import { createConnectionGuard } from "../../watchers/connection-guard.js";
import { createGuard } from "../../watchers/guard.js";
import type { Component } from "../components.js";
import type { Base, Board, Engine, Feed } from "../context.js";
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
          // the engines' announced orders go where the cancel pass looks (src/app/parts/known-orders.ts)
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
        board.guard.publish(() => socket.status());
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
        board.guard.publish(() => started.status());
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
