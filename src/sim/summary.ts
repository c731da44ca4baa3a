/**
 * GET /admin/state: the simulator's world summed up for people, tests and benchmarks: the clock and the UTC day,
 * the requests per endpoint, the last 100 cancel actions, the marks, books and agents, and each account's
 * schedule, triggers, orders, positions and fills (counted).
 */
import { utcDay } from "../core/clock.js";
import type { SimStore } from "./state.js";

/** Human-readable summary of the store, for GET /admin/state. */
export function storeSummary(store: SimStore): Record<string, unknown> {
  const now = store.clock.now();
  return {
    now,
    day: utcDay(now),
    requests: store.requestCounts(),
    actions: store.actions.length,
    // The last 100 cancel actions, fast flag included (tests and benchmarks read them over /admin/state).
    cancels: store.actions
      .filter((a) => (a.action as { type?: unknown } | null)?.type === "cancel")
      .slice(-100)
      .map((a) => {
        const action = a.action as { cancels?: Array<{ o?: unknown }>; f?: unknown };
        return {
          receivedAt: a.receivedAt,
          user: a.user,
          fast: action.f === true,
          oids: Array.isArray(action.cancels) ? action.cancels.map((c) => c?.o ?? null) : [],
          accepted: a.accepted,
          response: a.response,
        };
      }),
    marks: Object.fromEntries(store.marks),
    books: Object.fromEntries(store.books),
    agents: Object.fromEntries(store.agents),
    agentInfo: [...store.agentInfo.values()],
    accounts: [...store.accounts.values()].map((a) => ({
      address: a.address,
      isUser: a.isUser,
      master: a.master,
      volumeUsd: a.volumeUsd,
      balanceUsd: a.balanceUsd,
      requestsUsed: a.requestsUsed,
      addressBudget: a.addressBudget ?? null,
      schedule: a.schedule,
      triggersToday: store.triggersOn(a.address, utcDay(now)),
      triggers: a.triggers,
      openOrders: a.orders.length,
      // the orders a cancel on engine death must take (all but the reduce-only stops it keeps by default)
      openOrdersNotStops: a.orders.filter((o) => !(o.reduceOnly && o.isTrigger)).length,
      positions: a.positions.map((p) => ({
        coin: p.coin,
        szi: p.szi,
        marginMode: p.marginMode,
        ...(p.dex !== "" ? { dex: p.dex } : {}),
      })),
      ...(a.orders.some((o) => o.dex !== "")
        ? {
            openOrdersByDex: Object.fromEntries(
              store.dexes.map((d) => [d, a.orders.filter((o) => o.dex === d).length]),
            ),
          }
        : {}),
      fills: a.fills.length,
    })),
  };
}
