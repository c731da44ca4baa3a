/**
 * The orders an engine announced (src/watchers/announced-orders.ts) as the cancel pass's known orders
 * (src/protocol/hyperliquid/cancel.ts `knownOrders`): the pass names orders by coin and learns their kind from
 * `isTrigger` / `reduceOnly`, so each announced asset index is turned back into its coin through `meta`.
 */
import type { AnnouncedOrder } from "../../core/guard-protocol.js";
import type { FrontendOpenOrder, PerpMeta } from "./schemas.js";

/** The coin an asset index names (the inverse of cancel.ts `assetIndexOf`), or null when `meta` cannot say. */
export function coinOfAsset(asset: number, meta: PerpMeta): string | null {
  if (asset >= 10_000 && asset < 100_000) return `@${asset - 10_000}`;
  if (asset < 10_000) return meta.universe[asset]?.name ?? null;
  return null; // a builder dex's asset: not in the first perp dex's `meta`
}

/**
 * The announced orders as open orders for the pass: only what the pass reads is real (coin, oid, and the kind, said
 * explicitly so that a reduce-only trigger is kept as a stop and a trigger is never fast-cancelled); side, price and
 * size are not announced and are placeholders. An order whose asset `meta` does not name is left out: the pass's
 * read finds it. Null without `meta` (the pass then reads first, as without an announcement).
 */
export function announcedOpenOrders(
  orders: readonly AnnouncedOrder[],
  meta: PerpMeta | null,
  at: number,
): FrontendOpenOrder[] | null {
  if (meta === null) return null;
  const out: FrontendOpenOrder[] = [];
  for (const o of orders) {
    const coin = coinOfAsset(o.asset, meta);
    if (coin === null) continue;
    out.push({
      coin,
      oid: o.oid,
      side: "B",
      limitPx: "0",
      sz: "0",
      timestamp: at,
      isTrigger: o.trigger,
      reduceOnly: o.reduceOnly,
    });
  }
  return out;
}
