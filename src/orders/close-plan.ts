/**
 * Close planning, pure: from a FRESH read of the positions (and meta and marks), the next reduce-only IOC orders
 * that move every position toward zero. One slice per coin per step at most; the caller sends them, waits for
 * the answers, reads the positions again and asks for the next step. It never carries a size over from an
 * earlier read: a slice is always computed from the position as it is now, so a late fill, a double submission
 * or a position changed by someone else can only make the next slice smaller (and the exchange's reduce-only
 * flag refuses or trims anything that would still increase or flip a position).
 *
 * Rules per slice (src/protocol/hyperliquid/order.ts, `closeSlice`; docs/close-orders.md):
 * side opposite to the position, size = min(|szi|, maxSliceUsd / mark) rounded DOWN to szDecimals, limit within
 * the slippage cap of the mark (sell rounded up, buy rounded down), never under $10 (the rest is dust, reported
 * and not sent).
 */
import { abs, parseDecimal } from "../core/decimal.js";
import {
  type CloseSlice,
  closeSlice,
  type OrderRequest,
  OrderRuleError,
} from "../protocol/hyperliquid/order.js";

/** One open position as read from `clearinghouseState` (info.ts `positions`). */
export type ClosePosition = {
  coin: string;
  /** signed size, a decimal string: negative is short */
  szi: string;
  /** "cross" or "isolated": both close the same way (reduce-only IOC against the position) */
  marginType: string;
};

export type CloseAsset = { name: string; szDecimals: number; isDelisted?: boolean | undefined };

export type ClosePlanInput = {
  /** the positions as just read: never a remembered copy */
  positions: ReadonlyArray<ClosePosition>;
  /** `meta.universe` (of the positions' dex): the asset index is the position in this list plus `assetOffset` */
  universe: ReadonlyArray<CloseAsset>;
  /**
   * What a builder-deployed dex adds to the index in its `meta` (100000 + dex index × 10000; Hyperliquid docs,
   * "Asset IDs"); 0 (default) on the first perp dex
   */
  assetOffset?: number | undefined;
  /** mark price per coin (decimal strings) */
  marks: Readonly<Record<string, string | undefined>>;
  /** slippage cap in basis points (1..5000) */
  capBps: number;
  /** largest slice, USD at the mark (≥ 10) */
  maxSliceUsd: string;
  /** coins to leave alone (e.g. an operator's allow-list inverted) */
  skipCoins?: ReadonlySet<string> | undefined;
};

export type PlannedClose = {
  coin: string;
  marginType: string;
  /** the position this slice was computed from */
  szi: string;
  order: OrderRequest;
  valueUsd: string;
  /** what stays open after a full fill */
  remainder: string;
};

export type ClosePlan = {
  /** at most one per coin, reduce-only IOC, to send now */
  orders: PlannedClose[];
  /** positions too small to close ($10 minimum): reported, not sent */
  dust: Array<{ coin: string; szi: string; valueUsd: string; reason: string }>;
  /** positions that cannot be closed by this plan (no mark, unknown coin, bad numbers): alert, not sent */
  blocked: Array<{ coin: string; szi: string; reason: string }>;
  /** true when nothing is left to send: every position is flat, dust or blocked */
  done: boolean;
};

/** The next step of a close: see the module comment. */
export function planCloseStep(input: ClosePlanInput): ClosePlan {
  const plan: ClosePlan = { orders: [], dust: [], blocked: [], done: true };
  const seen = new Set<string>();
  for (const p of input.positions) {
    let size: bigint;
    try {
      size = parseDecimal(p.szi, `${p.coin} szi`);
    } catch {
      plan.blocked.push({
        coin: p.coin,
        szi: p.szi,
        reason: `the position's size ${JSON.stringify(p.szi)} is not a decimal`,
      });
      continue;
    }
    if (size === 0n || input.skipCoins?.has(p.coin)) continue;
    // one slice per coin per step: a second entry for a coin (which one-way mode never sends) is refused
    if (seen.has(p.coin)) {
      plan.blocked.push({ coin: p.coin, szi: p.szi, reason: "the coin is listed twice in one read" });
      continue;
    }
    seen.add(p.coin);
    const asset = input.universe.findIndex((a) => a.name === p.coin);
    if (asset < 0) {
      plan.blocked.push({ coin: p.coin, szi: p.szi, reason: `${p.coin} is not in meta's universe` });
      continue;
    }
    const mark = input.marks[p.coin];
    if (mark === undefined) {
      plan.blocked.push({ coin: p.coin, szi: p.szi, reason: `no mark price for ${p.coin}` });
      continue;
    }
    let slice: CloseSlice | null;
    try {
      slice = closeSlice({
        asset: (input.assetOffset ?? 0) + asset,
        szi: p.szi,
        mark,
        szDecimals: input.universe[asset]!.szDecimals,
        capBps: input.capBps,
        maxSliceUsd: input.maxSliceUsd,
      });
    } catch (error) {
      const reason = error instanceof OrderRuleError ? error.shortMessage : String(error);
      plan.blocked.push({ coin: p.coin, szi: p.szi, reason });
      continue;
    }
    if (slice === null) continue;
    if (slice.kind === "dust") {
      plan.dust.push({ coin: p.coin, szi: p.szi, valueUsd: slice.valueUsd, reason: slice.reason });
      continue;
    }
    // the guarantees, checked once more where the decision is made: opposite side, never more than the position
    if (
      slice.order.isBuy !== size < 0n ||
      parseDecimal(slice.order.size) > abs(size) ||
      !slice.order.reduceOnly
    ) {
      plan.blocked.push({
        coin: p.coin,
        szi: p.szi,
        reason: "internal: a slice broke the reduce-only rules",
      });
      continue;
    }
    plan.orders.push({
      coin: p.coin,
      marginType: p.marginType,
      szi: p.szi,
      order: slice.order,
      valueUsd: slice.valueUsd,
      remainder: slice.remainder,
    });
  }
  plan.done = plan.orders.length === 0;
  return plan;
}
