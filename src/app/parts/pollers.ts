import { actionsPerDay } from "../../config/load.js";
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import { cronScheduler } from "../../core/scheduler.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { createDaemonNotifications } from "../../surface/notify/index.js";
import type { CancelOpenOrders, Switch } from "../../switch/index.js";
import type { Ledger } from "../../switch/ledger.js";
import { createBudgetMonitor } from "../../watchers/budget.js";
import { createExposurePoller } from "../../watchers/exposure.js";
import { createOpenOrdersWatch } from "../../watchers/open-orders.js";
import type { Component } from "../components.js";
import type { Base, Board, DaemonChainWatch, Feed } from "../context.js";
import { closeEach, type Part } from "./close-each.js";
import { startFireChecks } from "./fire-checks.js";
import { firstPushesGate } from "./first-pushes.js";

/**
 * The pollers (and the check after every fire): exposure (a trigger polls at once), the action budget, the chain watch, the 00:00 UTC roll-over job
 * and the protection watch of the notifications. Their handles are taken here, but their first requests go out
 * once the first pushes have settled (confirmed, refused or failed), at most one request time-out after the
 * switches started (after a fleet's spread first pass): the first push shares neither the event loop, the exchange
 * nor the ledger's write with them.
 * node-cron is loaded and its first date computed only then too (that builds an Intl.DateTimeFormat, and loading
 * ICU's data costs ~5-10 ms of CPU the first push need not wait for); the job only prompts the switches.
 */
export function pollersComponent(): Component<
  Base & {
    logger: Logger;
    bus: EventBus;
    log: Logger;
    ledger: Ledger;
    info: InfoClient;
    notifications: ReturnType<typeof createDaemonNotifications>;
    board: Board;
    chain: DaemonChainWatch | null;
    slotOrigin: number;
    switches: Switch[];
    triggers: Feed<string>;
    firstPassMs: number;
    engine: { now(account: string): { up: boolean } };
    fireCancel: CancelOpenOrders | undefined;
    actOnDexes: string[];
  },
  { rollover: () => void }
> {
  const parts: Part[] = [];
  let log: Logger | undefined;
  return {
    name: "pollers",
    start(ctx) {
      const { params, config, runtime, accounts, info, bus, switches, ledger, slotOrigin } = ctx;
      log = ctx.log;
      // The exposure poller: the accounts plus extra users.
      const exposure =
        config.exposureInterval > 0
          ? createExposurePoller({
              info,
              users: [...accounts, ...config.exposureUsers],
              dexes: config.dexes,
              runtime,
              intervalMs: config.exposureInterval,
              thresholds: config.thresholds,
              clockSkewWarnMs: config.clockSkewWarn,
              bus,
            })
          : null;
      if (exposure) {
        ctx.board.exposure.publish(() => exposure.status());
        ctx.triggers.subscribe(() => void exposure.pollNow("trigger"));
      }
      const fireChecks = startFireChecks(ctx);
      parts.push({ name: "fire checks", close: () => fireChecks.stop() });
      // What a fire would cancel, for the status page: each account's open orders on the exposure cadence (a few
      // accounts only: src/watchers/open-orders.ts); read again after a trigger, which leaves none.
      const openOrders = createOpenOrdersWatch({
        info,
        accounts,
        dexes: config.dexes,
        runtime,
        intervalMs: config.exposureInterval,
        bus,
      });
      ctx.triggers.subscribe(() => void openOrders.readNow());
      // The address's lifetime action budget, which every push spends (docs/exchange-behaviour.md §10).
      const budget = createBudgetMonitor({
        info,
        accounts,
        runtime,
        bus,
        intervalMs: config.budgetInterval,
        actionsPerDay: actionsPerDay(config.interval),
        warnDays: config.budgetWarnDays,
      });
      const chain = ctx.chain;
      const first = firstPushesGate({
        runtime,
        switches,
        requestTimeoutMs: config.requestTimeout,
        begin: () => {
          exposure?.start(slotOrigin);
          openOrders.start(slotOrigin);
          budget.start();
          void chain?.start();
        },
      });
      parts.push({
        name: "exposure poller",
        close: () => {
          first.cancel();
          return exposure?.stop();
        },
      });
      parts.push({ name: "open orders watch", close: () => openOrders.stop() });
      parts.push({ name: "budget monitor", close: () => budget.stop() });
      parts.push({ name: "chain watch", close: () => chain?.stop() });
      const rollover = () => {
        ledger.rollover();
        for (const s of switches) s.dispatch({ type: "dayRollover" });
      };
      const scheduler = params.scheduler ?? cronScheduler;
      const job = scheduler.schedule("0 0 * * *", rollover, {
        timezone: "UTC",
        name: "ledger-rollover",
        after: first.afterFirstPushes,
      });
      parts.push({ name: "ledger roll-over", close: () => job.stop() });
      // The polls begin after the first pushes (and a fleet's spread first pass): first-pushes.ts.
      const pass = first.arm(ctx.firstPassMs);
      if (pass) parts.push({ name: "first pass", close: () => pass.cancel() });
      const byAccount = new Map(switches.map((s) => [s.account, s]));
      ctx.notifications.watch({
        status: () => switches.map((s) => s.protection()),
        statusOf: (account) => byAccount.get(account)?.protection(),
        intervalMs: config.interval,
        deadlineMs: config.deadline,
      });
      return { rollover };
    },
    // Each poller closes on its own, in reverse; one that fails to close does not keep the others running.
    close: () => closeEach(parts, log),
  };
}
