/**
 * The simulator's `order` action: limit orders (Ioc, Alo, Gtc) and trigger orders against a one-level book around
 * each coin's mark (records.ts `SimBook`), with the exchange's checks and refusal texts:
 *
 * - prices: 5 significant figures and at most 6 − szDecimals decimals, integers always
 *   ("Price must be divisible by tick size."); sizes: at most szDecimals decimals ("Order has invalid size.");
 *   value under $10 ("Order must have minimum value of $10."): the docs' error table (api/error-responses);
 * - reduce-only: an order that does not close the position is refused ("Reduce only order would increase
 *   position."); one larger than the position fills at most the position (the rest is cancelled), so a
 *   reduce-only order never flips or grows a position;
 * - with 1,000 or more other open orders a reduce-only or trigger order is refused (docs, rate limits and user
 *   limits); the exchange's wording is not published, the text here is the simulator's;
 * - the post-only window after a network upgrade (a fault, `postOnlyWindow`): anything but an Alo order is
 *   refused with "Only post-only orders allowed immediately after a network upgrade" (hummingbot#6730, #6800);
 * - an Alo order that would cross: "Post only order would have immediately matched, bbo was {bid}@{ask}.";
 *   an Ioc order that finds nothing at its price: "Order could not immediately match against any resting orders."
 *
 * Each refusal is one status inside an "ok" answer with " asset=N" appended, as the real answers carry it.
 * Positions move with fills in exact decimals (core/decimal.ts): the size, the entry price (weighted on an
 * increase, kept on a reduction) and the balance (realised PnL), for isolated and cross positions alike.
 */
import { z } from "zod";
import { abs, type Fixed, formatFixed, parseDecimal, SCALE } from "../core/decimal.js";
import { isValidPerpPrice, isValidSize } from "../protocol/hyperliquid/order.js";
import { decimal, price as priceText } from "./format.js";
import type { SimAccount, SimOrder } from "./records.js";
import type { SimStore } from "./state.js";
import { szDecimalsOf } from "./universe.js";

/** With this many other open orders, reduce-only and trigger orders are refused. */
export const OPEN_ORDER_RULE = 1000;
export const POST_ONLY_WINDOW_TEXT = "Only post-only orders allowed immediately after a network upgrade";

/** The simulator's wording for the 1,000-open-order rule (the exchange's own text is not published). */
export function tooManyOpenOrdersText(asset: number): string {
  return `Too many open orders: reduce-only and trigger orders are refused with ${OPEN_ORDER_RULE} or more open orders. asset=${asset}`;
}

const WireDecimal = z.string().max(40);
export const OrderActionIn = z.strictObject({
  type: z.literal("order"),
  orders: z
    .array(
      z.strictObject({
        a: z.number().int().min(0),
        b: z.boolean(),
        p: WireDecimal,
        s: WireDecimal,
        r: z.boolean(),
        t: z.union([
          z.strictObject({ limit: z.strictObject({ tif: z.enum(["Alo", "Ioc", "Gtc"]) }) }),
          z.strictObject({
            trigger: z.strictObject({
              isMarket: z.boolean(),
              triggerPx: WireDecimal,
              tpsl: z.enum(["tp", "sl"]),
            }),
          }),
        ]),
        c: z
          .string()
          .regex(/^0x[0-9a-fA-F]{32}$/)
          .optional(),
      }),
    )
    .min(1)
    .max(1000),
  grouping: z.enum(["na", "normalTpsl", "positionTpsl"]),
});
export type OrderActionIn = z.infer<typeof OrderActionIn>;
type WireOrder = OrderActionIn["orders"][number];

export type OrderStatusOut =
  | { resting: { oid: number; cloid?: string } }
  | { filled: { totalSz: string; avgPx: string; oid: number; cloid?: string } }
  | { error: string };

/** Fixed → a JS number for the store (sizes and prices on their grids: exact in a double's 15 digits). */
const toNumber = (x: Fixed): number => Number(formatFixed(x));
const fromNumber = (x: number): Fixed => parseDecimal(decimal(x, 12).replace(/\.0$/, ""));

/** Places the orders of one accepted action for `acc`; one status per order, in order. */
export function placeOrders(
  store: SimStore,
  acc: SimAccount,
  action: OrderActionIn,
  opts: { postOnlyWindow: boolean },
): OrderStatusOut[] {
  return action.orders.map((o) => placeOne(store, acc, o, opts));
}

function placeOne(
  store: SimStore,
  acc: SimAccount,
  o: WireOrder,
  opts: { postOnlyWindow: boolean },
): OrderStatusOut {
  const now = store.clock.now();
  // the asset id names the dex too: 100000 + dex index × 10000 + index on a builder-deployed dex
  const where = store.assetOf(o.a);
  if (where === undefined) return { error: `Order has invalid asset. asset=${o.a}` };
  const { coin, dex } = where;
  const szDecimals = szDecimalsOf(coin);
  const isTrigger = "trigger" in o.t;
  const tif = "limit" in o.t ? o.t.limit.tif : null;
  const record = (status: string): SimOrder => {
    const order = simOrder(store, acc, o, coin, dex, now);
    store.rememberOrder(acc, order, status, now);
    return order;
  };
  const refuse = (text: string, status: string): OrderStatusOut => {
    record(status);
    return { error: `${text} asset=${o.a}` };
  };
  if (opts.postOnlyWindow && tif !== "Alo") return { error: POST_ONLY_WINDOW_TEXT };
  if (!isValidPerpPrice(o.p, szDecimals))
    return refuse("Price must be divisible by tick size.", "tickRejected");
  if (!isValidSize(o.s, szDecimals)) return { error: `Order has invalid size. asset=${o.a}` };
  const px = parseDecimal(o.p);
  const sz = parseDecimal(o.s);
  if ((px * sz) / SCALE < 10n * SCALE)
    return refuse("Order must have minimum value of $10.", "minTradeNtlRejected");
  if ((o.r || isTrigger) && acc.orders.length >= OPEN_ORDER_RULE)
    return { error: tooManyOpenOrdersText(o.a) };
  const position = acc.positions.find((p) => p.coin === coin && p.dex === dex);
  const szi = position ? fromNumber(position.szi) : 0n;
  const closing = o.b ? szi < 0n : szi > 0n;
  if (o.r && !closing) return refuse("Reduce only order would increase position.", "reduceOnlyRejected");

  if (isTrigger) {
    const order = simOrder(store, acc, o, coin, dex, now);
    acc.orders.push(order);
    return { resting: { oid: order.oid, ...(o.c ? { cloid: o.c } : {}) } };
  }
  const mark = store.getMark(coin);
  const book = store.getBook(coin);
  // the book: one level each side of the mark
  const m = mark === undefined ? null : fromNumber(mark);
  const bid = m === null ? null : (m * BigInt(10_000 - book.spreadBps)) / 10_000n;
  const ask = m === null ? null : (m * BigInt(10_000 + book.spreadBps)) / 10_000n;
  const crosses = o.b ? ask !== null && px >= ask : bid !== null && px <= bid;
  if (tif === "Alo" && crosses) {
    const bbo = `${priceText(toNumber(bid!))}@${priceText(toNumber(ask!))}`;
    return refuse(`Post only order would have immediately matched, bbo was ${bbo}.`, "badAloPxRejected");
  }
  let filled = 0n;
  const fillPx = o.b ? ask : bid;
  if (crosses && fillPx !== null) {
    filled = sz;
    if (book.depth !== null) {
      const depth = floorTo(fromNumber(book.depth), szDecimals);
      if (depth < filled) filled = depth;
    }
    // reduce-only: at most what is open, so the position never flips or grows
    if (o.r && abs(szi) < filled) filled = abs(szi);
  }
  const order = simOrder(store, acc, o, coin, dex, now);
  if (filled > 0n) applyFill(store, acc, coin, dex, o.b, filled, fillPx!, order.oid, now);
  const rest = sz - filled;
  if (tif === "Ioc" || rest === 0n) {
    if (filled === 0n) {
      store.rememberOrder(acc, order, "iocCancelRejected", now);
      return { error: `Order could not immediately match against any resting orders. asset=${o.a}` };
    }
    store.rememberOrder(acc, order, "filled", now);
    return {
      filled: {
        totalSz: formatFixed(filled),
        avgPx: priceText(toNumber(fillPx!)),
        oid: order.oid,
        ...(o.c ? { cloid: o.c } : {}),
      },
    };
  }
  // Gtc / Alo: the rest rests on the book (it is not matched later when the mark moves)
  acc.orders.push({ ...order, sz: formatFixed(rest) });
  if (filled > 0n)
    return {
      filled: { totalSz: formatFixed(filled), avgPx: priceText(toNumber(fillPx!)), oid: order.oid },
    };
  return { resting: { oid: order.oid, ...(o.c ? { cloid: o.c } : {}) } };
}

function floorTo(x: Fixed, decimals: number): Fixed {
  const unit = SCALE / 10n ** BigInt(decimals);
  return (x / unit) * unit;
}

function simOrder(
  store: SimStore,
  acc: SimAccount,
  o: WireOrder,
  coin: string,
  dex: string,
  now: number,
): SimOrder {
  const trigger = "trigger" in o.t ? o.t.trigger : null;
  const side = o.b ? "B" : "A";
  const orderType = trigger
    ? `${trigger.tpsl === "tp" ? "Take Profit" : "Stop"} ${trigger.isMarket ? "Market" : "Limit"}`
    : "Limit";
  return {
    oid: store.nextOid(),
    user: acc.address,
    coin,
    side,
    limitPx: formatFixed(parseDecimal(o.p)),
    sz: formatFixed(parseDecimal(o.s)),
    origSz: formatFixed(parseDecimal(o.s)),
    timestamp: now,
    dex,
    cloid: o.c ?? null,
    reduceOnly: o.r,
    orderType,
    tif: "limit" in o.t ? o.t.limit.tif : null,
    isTrigger: trigger !== null,
    triggerPx: trigger ? formatFixed(parseDecimal(trigger.triggerPx)) : "0.0",
    triggerCondition: trigger
      ? `Price ${side === "B" ? "above" : "below"} ${formatFixed(parseDecimal(trigger.triggerPx))}`
      : "N/A",
  };
}

/**
 * Moves the account's position by a fill of `size` at `px` (exact decimals): the size changes sign only through
 * zero (a non-reduce-only order may open the other side), the entry price is the weighted average on an increase
 * and kept on a reduction, the realised PnL goes to the balance, and a position that reaches zero is removed.
 */
function applyFill(
  store: SimStore,
  acc: SimAccount,
  coin: string,
  dex: string,
  isBuy: boolean,
  size: Fixed,
  px: Fixed,
  oid: number,
  now: number,
): void {
  const i = acc.positions.findIndex((p) => p.coin === coin && p.dex === dex);
  const old = i >= 0 ? acc.positions[i]! : null;
  const before = old ? fromNumber(old.szi) : 0n;
  const entry = old ? fromNumber(old.entryPx) : px;
  const delta = isBuy ? size : -size;
  const after = before + delta;
  // the part of the fill that closes the old position, and its realised PnL
  const closed = before !== 0n && before > 0n !== isBuy ? (abs(before) < size ? abs(before) : size) : 0n;
  const pnl = before > 0n ? ((px - entry) * closed) / SCALE : ((entry - px) * closed) / SCALE;
  let newEntry = entry;
  if (closed === 0n) newEntry = (abs(before) * entry + size * px) / (abs(before) + size);
  else if (abs(delta) > abs(before)) newEntry = px; // through zero: the new side opens at the fill price
  acc.balanceUsd = toNumber(fromNumber(acc.balanceUsd) + pnl);
  const dir =
    closed > 0n
      ? abs(delta) > abs(before)
        ? before > 0n
          ? "Long > Short"
          : "Short > Long"
        : before > 0n
          ? "Close Long"
          : "Close Short"
      : isBuy
        ? "Open Long"
        : "Open Short";
  if (after === 0n) acc.positions.splice(i, 1);
  else {
    const next = {
      coin,
      szi: toNumber(after),
      entryPx: toNumber(newEntry),
      leverage: old?.leverage ?? 10,
      marginMode: old?.marginMode ?? ("cross" as const),
      maxLeverage: old?.maxLeverage ?? 20,
      dex,
    };
    if (i >= 0) acc.positions[i] = next;
    else acc.positions.push(next);
  }
  store.recordFill(acc, {
    coin,
    px: priceText(toNumber(px)),
    sz: formatFixed(size),
    side: isBuy ? "B" : "A",
    time: now,
    startPosition: formatFixed(before),
    dir,
    closedPnl: decimal(toNumber(pnl), 6),
    hash: `0x${"0".repeat(64)}`,
    oid,
    crossed: true,
    fee: "0.0",
    feeToken: "USDC",
  });
}
