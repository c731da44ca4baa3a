/**
 * What a fire would cancel: each account's open orders, counted by kind, for the status page
 * (docs/observability.md, "Status page"). The scheduled cancel removes every open order of the account, trigger
 * (stop, take-profit) and reduce-only orders included, so the page shows them all and says which are which.
 *
 * - One `frontendOpenOrders` read per account and dex on the exposure poll's cadence (its own repetition through the
 *   runtime's `every`); the read that marks trigger and reduce-only orders (`openOrders` does not).
 * - Read only while the daemon arms at most OPEN_ORDERS_MAX_ACCOUNTS accounts (src/config/weight.ts): each read weighs 20 of the IP's
 *   1,200 a minute (src/config/weight.ts counts it), so a fleet's page says the count is not read, never a guess.
 * - Publishes an `open_orders` event on the bus (module `exposure`) per account after each read of all its dexes;
 *   a failed read publishes `openOrdersFailed` instead (the page keeps the last count with its time; the line,
 *   `open_orders.failed` at debug, is src/surface/watchers/exposure.ts's).
 */
import { readsOpenOrders } from "../config/weight.js";
import type { EventBus } from "../core/events.js";
import type { Repeating, Runtime } from "../core/runtime.js";
import type { FrontendOpenOrder } from "../protocol/hyperliquid/schemas.js";
import { loopHooks } from "./loop.js";

export type OpenOrdersInfo = {
  frontendOpenOrders(params: {
    user: string;
    dex?: string | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<FrontendOpenOrder[]>;
};

/** An account's open orders by kind: `trigger` (stops, take-profits) and `reduceOnly` may overlap. */
export type OpenOrderCounts = { total: number; trigger: number; reduceOnly: number };

export function countOpenOrders(orders: readonly FrontendOpenOrder[]): OpenOrderCounts {
  let trigger = 0;
  let reduceOnly = 0;
  for (const o of orders) {
    if (o.isTrigger === true) trigger++;
    if (o.reduceOnly === true) reduceOnly++;
  }
  return { total: orders.length, trigger, reduceOnly };
}

export function createOpenOrdersWatch({
  info,
  accounts,
  dexes = [""],
  runtime,
  intervalMs,
  bus,
}: {
  info: OpenOrdersInfo;
  /** the armed accounts, lower case */
  accounts: readonly string[];
  dexes?: readonly string[];
  runtime: Runtime;
  intervalMs: number;
  bus: EventBus;
}): { start(slotOrigin?: number): void; stop(): Promise<void>; readNow(): Promise<void> } {
  const enabled = readsOpenOrders(accounts.length, intervalMs);
  const dexList = dexes.length > 0 ? [...new Set(dexes)] : [""];
  let repeating: Repeating | undefined;
  let running: Promise<void> | null = null;
  const controller = new AbortController();

  async function readAccount(account: string) {
    const counts: OpenOrderCounts = { total: 0, trigger: 0, reduceOnly: 0 };
    for (const dex of dexList) {
      const orders = await info.frontendOpenOrders({
        user: account,
        ...(dex !== "" ? { dex } : {}),
        signal: controller.signal,
      });
      const c = countOpenOrders(orders);
      counts.total += c.total;
      counts.trigger += c.trigger;
      counts.reduceOnly += c.reduceOnly;
    }
    bus.publish({
      module: "exposure",
      event: "open_orders",
      level: "debug",
      account,
      at: runtime.clock.now(),
      ...counts,
    });
  }

  function readNow(): Promise<void> {
    if (!enabled || controller.signal.aborted) return Promise.resolve();
    running ??= (async () => {
      for (const account of accounts) {
        if (controller.signal.aborted) return;
        try {
          await readAccount(account);
        } catch (error) {
          if (controller.signal.aborted) return;
          bus.publish({ module: "exposurePoll", type: "openOrdersFailed", account, error });
        }
      }
    })().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    start(slotOrigin) {
      if (!enabled || repeating) return;
      void readNow();
      repeating = runtime.every(intervalMs, () => readNow(), {
        ...loopHooks(bus, "exposure", "open orders", intervalMs),
        immediate: false,
        startAt: slotOrigin,
      });
    },
    async stop() {
      repeating?.stop();
      controller.abort(new Error("open orders watch stopped"));
      await (running ?? Promise.resolve());
    },
    readNow,
  };
}
