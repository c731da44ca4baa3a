/**
 * The `order` action and the exchange's price and size rules, pure and decimal-exact.
 *
 * Wire form (Hyperliquid docs, exchange endpoint, "Place an order"; the official Python SDK's
 * `order_wires_to_order_action` / `order_request_to_order_wire`): `{"type":"order","orders":[{a,b,p,s,r,t,(c)}],
 * "grouping":"na"}`, keys in exactly that order, because msgpack keeps insertion order and the order is part of
 * the signed hash. Prices and sizes are decimal strings with trailing zeros removed (the Python SDK's
 * `float_to_wire` normalises its 8-decimal rendering; @nktkas/hyperliquid's `formatPrice` / `formatSize` trim the
 * same way): "1670.1", "0.0147", "100", never "100.0".
 *
 * Rules (Hyperliquid docs, "Tick and lot size"; docs/close-orders.md): a perp price has at most 5 significant figures
 * and at most 6 − szDecimals decimals, and an integer price is always allowed; a size has at most szDecimals
 * decimals; an order under $10 of value is refused ("Order must have minimum value of $10.").
 *
 * Everything here works on `Fixed` (core/decimal.ts, integers scaled by 10^18): no float ever reaches a wire
 * string.
 */
import { abs, type Fixed, formatFixed, parseDecimal, SCALE } from "../../core/decimal.js";
import { BaseError } from "../../core/errors/base.js";

export class OrderRuleError extends BaseError {
  override name = "OrderRuleError";
}

export type Tif = "Ioc" | "Alo" | "Gtc";

/** `t` of an order on the wire: a limit order with its time in force, or a trigger (TP/SL) order. */
export type OrderTypeWire =
  | { limit: { tif: Tif } }
  | { trigger: { isMarket: boolean; triggerPx: string; tpsl: "tp" | "sl" } };

/** One order exactly as it is signed and sent; keys in wire order. */
export type OrderWire = {
  a: number;
  b: boolean;
  p: string;
  s: string;
  r: boolean;
  t: OrderTypeWire;
  c?: string;
};

export type OrderAction = { type: "order"; orders: OrderWire[]; grouping: "na" };

/** What a caller asks for; prices and sizes already valid decimal strings (see `closeSlice` / `formatWire`). */
export type OrderRequest = {
  asset: number;
  isBuy: boolean;
  /** decimal string, e.g. "1670.1" */
  price: string;
  /** decimal string, e.g. "0.0147" */
  size: string;
  reduceOnly: boolean;
  type: { limit: { tif: Tif } } | { trigger: { isMarket: boolean; triggerPx: string; tpsl: "tp" | "sl" } };
  /** client order id, 0x + 32 hex digits */
  cloid?: string | undefined;
};

const CLOID_RE = /^0x[0-9a-fA-F]{32}$/;
const TIFS: ReadonlySet<string> = new Set(["Ioc", "Alo", "Gtc"]);

/**
 * A decimal as the wire wants it: plain notation, no trailing zeros, no trailing point, "-0" as "0"
 * ("100.0" → "100", "0.01470" → "0.0147"). Throws OrderRuleError on anything that is not a decimal.
 */
export function formatWire(value: string | Fixed): string {
  const fixed = typeof value === "bigint" ? value : parseOrThrow(value, "a wire decimal");
  return formatFixed(fixed);
}

function parseOrThrow(value: string, what: string): Fixed {
  try {
    return parseDecimal(value, what);
  } catch {
    throw new OrderRuleError(`${what} must be a decimal string, got ${JSON.stringify(value)}.`);
  }
}

/**
 * The `order` action for `orders`, in wire key order. Prices and sizes are re-rendered without trailing zeros
 * (what the SDKs sign); a price or size that is not positive, an asset that is not a non-negative integer, an
 * unknown tif or a malformed cloid is refused before anything is signed.
 */
export function orderAction(orders: ReadonlyArray<OrderRequest>): OrderAction {
  if (orders.length === 0) throw new OrderRuleError("An order action needs at least one order.");
  return {
    type: "order",
    orders: orders.map((o, i) => orderWire(o, i)),
    grouping: "na",
  };
}

function orderWire(o: OrderRequest, i: number): OrderWire {
  const where = `orders[${i}]`;
  if (!Number.isSafeInteger(o.asset) || o.asset < 0)
    throw new OrderRuleError(`${where}.asset must be a non-negative integer, got ${String(o.asset)}.`);
  const p = parseOrThrow(o.price, `${where}.price`);
  const s = parseOrThrow(o.size, `${where}.size`);
  if (p <= 0n) throw new OrderRuleError(`${where}.price must be > 0, got ${o.price}.`);
  if (s <= 0n) throw new OrderRuleError(`${where}.size must be > 0, got ${o.size}.`);
  let t: OrderTypeWire;
  if ("limit" in o.type) {
    if (!TIFS.has(o.type.limit.tif))
      throw new OrderRuleError(`${where}.tif must be Ioc, Alo or Gtc, got ${String(o.type.limit.tif)}.`);
    t = { limit: { tif: o.type.limit.tif } };
  } else {
    const { isMarket, triggerPx, tpsl } = o.type.trigger;
    // trigger key order as the SDKs sign it: isMarket, triggerPx, tpsl
    t = { trigger: { isMarket, triggerPx: formatWire(triggerPx), tpsl } };
  }
  const wire: OrderWire = {
    a: o.asset,
    b: o.isBuy,
    p: formatFixed(p),
    s: formatFixed(s),
    r: o.reduceOnly,
    t,
  };
  if (o.cloid !== undefined) {
    if (!CLOID_RE.test(o.cloid))
      throw new OrderRuleError(
        `${where}.cloid must be 0x and 32 hex digits, got ${JSON.stringify(o.cloid)}.`,
      );
    wire.c = o.cloid.toLowerCase();
  }
  return wire;
}

// --- price and size rules ---

/** Perps allow 6 − szDecimals price decimals (spot 8 − szDecimals, not used here). */
export const PERP_MAX_DECIMALS = 6;
export const MAX_SIGNIFICANT_FIGURES = 5;
/** The exchange's minimum order value, in USD (`Order must have minimum value of $10.`). */
export const MIN_ORDER_VALUE_USD = 10;

const pow10 = (k: number): bigint => 10n ** BigInt(k);

/** Digits of the integer part of |x| (0 for x < 1), x a Fixed. */
function integerDigits(x: Fixed): number {
  const whole = abs(x) / SCALE;
  return whole === 0n ? 0 : whole.toString().length;
}

/** floor(log10(x)) for x > 0 (a Fixed): the position of the first significant digit. */
function magnitude(x: Fixed): number {
  const digits = integerDigits(x);
  if (digits > 0) return digits - 1;
  // x < 1: count the zeros after the point
  const frac = x.toString().padStart(18, "0");
  return -(frac.search(/[1-9]/) + 1);
}

function checkSzDecimals(szDecimals: number): void {
  if (!Number.isSafeInteger(szDecimals) || szDecimals < 0 || szDecimals > PERP_MAX_DECIMALS)
    throw new OrderRuleError(`szDecimals must be an integer from 0 to 6, got ${String(szDecimals)}.`);
}

/**
 * True when `price` is a valid perp price for an asset with `szDecimals`: an integer, or at most 5 significant
 * figures and at most 6 − szDecimals decimals. (The simulator checks orders with this too.)
 */
export function isValidPerpPrice(price: string, szDecimals: number): boolean {
  checkSzDecimals(szDecimals);
  let p: Fixed;
  try {
    p = parseDecimal(price);
  } catch {
    return false;
  }
  if (p <= 0n) return false;
  if (p % SCALE === 0n) return true;
  const decimals = fractionDigits(p);
  if (decimals > PERP_MAX_DECIMALS - szDecimals) return false;
  return significantFigures(p) <= MAX_SIGNIFICANT_FIGURES;
}

/** True when `size` is positive and has at most szDecimals decimals. */
export function isValidSize(size: string, szDecimals: number): boolean {
  checkSzDecimals(szDecimals);
  let s: Fixed;
  try {
    s = parseDecimal(size);
  } catch {
    return false;
  }
  return s > 0n && fractionDigits(s) <= szDecimals;
}

function fractionDigits(x: Fixed): number {
  const frac = (abs(x) % SCALE).toString().padStart(18, "0").replace(/0+$/, "");
  return frac.length;
}

function significantFigures(x: Fixed): number {
  // digits of x·10^18 without the leading and trailing zeros
  return abs(x).toString().replace(/0+$/, "").length;
}

/**
 * The price step at `x`: 10^-d where d = min(6 − szDecimals, 4 − floor(log10 x)) (5 significant figures at the
 * magnitude of x), d possibly negative (x ≥ 100000: steps of 10, 100…). Every multiple of the step in x's decade
 * is valid, and so is the next power of ten, so rounding x up or down to the step stays valid.
 */
function priceStep(x: Fixed, szDecimals: number): bigint {
  const d = Math.min(PERP_MAX_DECIMALS - szDecimals, MAX_SIGNIFICANT_FIGURES - 1 - magnitude(x));
  return d >= 0 ? SCALE / pow10(d) : SCALE * pow10(-d);
}

const ceilTo = (num: bigint, den: bigint, step: bigint): bigint => {
  const unit = den * step;
  return ((num + unit - 1n) / unit) * step;
};
const floorTo = (num: bigint, den: bigint, step: bigint): bigint => (num / (den * step)) * step;

/**
 * The valid perp price nearest to `num/den` (a Fixed fraction, > 0) in the direction asked: `up` gives the
 * smallest valid price ≥ it, `down` the largest ≤ it (integers always count as valid; the finer of the two grids
 * wins). Throws when rounding down reaches 0.
 */
function roundPrice(num: bigint, den: bigint, szDecimals: number, direction: "up" | "down"): Fixed {
  const approx = num / den;
  if (approx <= 0n && direction === "down")
    throw new OrderRuleError("The price rounds down to 0: no valid price below it.");
  const base = approx > 0n ? approx : 1n;
  const step = priceStep(base, szDecimals);
  if (direction === "up") {
    const grid = ceilTo(num, den, step);
    const integer = ceilTo(num, den, SCALE);
    // the grid at x's magnitude may give a value in the next decade: still valid (a power of ten)
    return grid < integer ? grid : integer;
  }
  const grid = floorTo(num, den, step);
  const integer = floorTo(num, den, SCALE);
  const best = grid > integer ? grid : integer;
  if (best <= 0n) throw new OrderRuleError("The price rounds down to 0: no valid price below it.");
  return best;
}

/**
 * The limit price of a close: for a sell (closing a long) mark × (1 − cap) rounded UP to a valid price, for a buy
 * (closing a short) mark × (1 + cap) rounded DOWN, so the order can never fill beyond the slippage cap. `capBps`
 * is the cap in basis points (1 to 5000).
 */
export function closeLimitPrice(args: {
  mark: string;
  isBuy: boolean;
  capBps: number;
  szDecimals: number;
}): string {
  const { mark, isBuy, capBps, szDecimals } = args;
  checkSzDecimals(szDecimals);
  if (!Number.isSafeInteger(capBps) || capBps < 1 || capBps > 5000)
    throw new OrderRuleError(
      `The slippage cap must be an integer from 1 to 5000 bps, got ${String(capBps)}.`,
    );
  const m = parseOrThrow(mark, "mark");
  if (m <= 0n) throw new OrderRuleError(`The mark must be > 0, got ${mark}.`);
  const factor = BigInt(isBuy ? 10_000 + capBps : 10_000 - capBps);
  return formatFixed(roundPrice(m * factor, 10_000n, szDecimals, isBuy ? "down" : "up"));
}

/** `size` (a Fixed ≥ 0) rounded DOWN to szDecimals: a close is never larger than what was asked. */
export function floorSize(size: Fixed, szDecimals: number): Fixed {
  checkSzDecimals(szDecimals);
  const unit = SCALE / pow10(szDecimals);
  if (size <= 0n) return 0n;
  return (size / unit) * unit;
}

/** Value of `size` at `price` (Fixed × Fixed → Fixed, truncated). */
export function notional(size: Fixed, price: Fixed): Fixed {
  return (size * price) / SCALE;
}

export type CloseSlice =
  | {
      kind: "order";
      /** the order to send (reduce-only IOC) */
      order: OrderRequest;
      /** the slice's value at the valuation price min(mark, limit), USD */
      valueUsd: string;
      /** what stays open after the slice fills completely (|szi| − size) */
      remainder: string;
    }
  | {
      kind: "dust";
      /** the open size that is too small to send */
      size: string;
      valueUsd: string;
      reason: string;
    };

/**
 * One reduce-only IOC slice that closes part or all of a position (signed `szi`): side opposite to the position,
 * size = min(|szi|, maxSliceUsd / mark) rounded DOWN to szDecimals (never more than the position), limit price
 * within `capBps` of the mark. The slice is valued at min(mark, limit) (the lower of the two, so a slice called
 * ≥ $10 is ≥ $10 however the exchange values it); a slice under $10 is never sent: the position (or what is left
 * of it) is reported as dust. When a capped slice would leave a remainder under $10, the slice is shrunk so that
 * the remainder stays sendable (the slice only ever gets smaller); a slice cap worth less than $10 at the
 * valuation price is raised to the smallest $10 slice (the exchange's minimum is the hard rule). Returns null for
 * a flat position.
 */
export function closeSlice(args: {
  asset: number;
  szi: string;
  mark: string;
  szDecimals: number;
  capBps: number;
  maxSliceUsd: string;
  cloid?: string | undefined;
}): CloseSlice | null {
  const { asset, szi, mark, szDecimals, capBps, maxSliceUsd } = args;
  checkSzDecimals(szDecimals);
  const position = parseOrThrow(szi, "szi");
  if (position === 0n) return null;
  const m = parseOrThrow(mark, "mark");
  if (m <= 0n) throw new OrderRuleError(`The mark must be > 0, got ${mark}.`);
  const maxSlice = parseOrThrow(maxSliceUsd, "maxSliceUsd");
  if (maxSlice < BigInt(MIN_ORDER_VALUE_USD) * SCALE)
    throw new OrderRuleError(`The slice cap must be at least $${MIN_ORDER_VALUE_USD}, got ${maxSliceUsd}.`);
  const isBuy = position < 0n;
  const price = parseDecimal(closeLimitPrice({ mark, isBuy, capBps, szDecimals }));
  const valuation = price < m ? price : m;
  const open = floorSize(abs(position), szDecimals);
  const minValue = BigInt(MIN_ORDER_VALUE_USD) * SCALE;
  const unit = SCALE / pow10(szDecimals);
  // the largest size worth at most maxSlice at the mark
  const capped = floorSize((maxSlice * SCALE) / m, szDecimals);
  let size = open < capped ? open : capped;
  let remainder = open - size;
  if (remainder > 0n && notional(remainder, valuation) < minValue) {
    // keep a sendable remainder: the smallest size worth ≥ $10, taken off this slice
    const keep = ((minValue * SCALE + valuation * unit - 1n) / (valuation * unit)) * unit;
    const shrunk = size - (keep - remainder);
    if (shrunk > 0n && notional(shrunk, valuation) >= minValue) {
      size = shrunk;
      remainder = keep;
    }
  }
  const minSize = ((minValue * SCALE + valuation * unit - 1n) / (valuation * unit)) * unit;
  if (notional(size, valuation) < minValue && open >= minSize) {
    // a slice cap below the exchange's minimum at the valuation price: the minimum wins (the hard rule), and
    // the rest follows in later slices
    size = minSize;
    remainder = open - size;
  }
  const value = notional(size, valuation);
  if (size <= 0n || value < minValue) {
    const openValue = notional(abs(position), valuation);
    return {
      kind: "dust",
      size: formatFixed(abs(position)),
      valueUsd: formatFixed(openValue, 6),
      reason: `${formatFixed(abs(position))} open is worth $${formatFixed(openValue, 2)}, under the exchange's $${MIN_ORDER_VALUE_USD} minimum order value: not sent`,
    };
  }
  return {
    kind: "order",
    order: {
      asset,
      isBuy,
      price: formatFixed(price),
      size: formatFixed(size),
      reduceOnly: true,
      type: { limit: { tif: "Ioc" } },
      ...(args.cloid !== undefined ? { cloid: args.cloid } : {}),
    },
    valueUsd: formatFixed(value, 6),
    remainder: formatFixed(remainder),
  };
}

/**
 * What a per-order refusal means for a close (docs/close-orders.md, "What the exchange may refuse"), from the
 * exchange's texts (Hyperliquid docs, error responses; the post-only window: hummingbot#6730, #6800). The
 * 1,000-open-order refusal has no published text: it is recognised by "open orders" in it.
 */
export type OrderRefusal =
  /** the position is already closed or turned: nothing to do (the next read says so) */
  | "reduce_only"
  /** nothing inside the cap: retry from a fresh read */
  | "no_match"
  /** under $10: dust */
  | "min_value"
  /** malformed price or size: a bug, alert */
  | "tick"
  | "size"
  /** the post-only window after a network upgrade: alert and retry, never turn the close into another order */
  | "post_only_window"
  /** 1,000 or more open orders: cancel first */
  | "open_orders"
  | "margin"
  | "unknown";

export function classifyOrderRefusal(text: string): OrderRefusal {
  const t = text.toLowerCase();
  if (t.startsWith("reduce only order would increase position")) return "reduce_only";
  if (t.startsWith("order could not immediately match")) return "no_match";
  if (t.startsWith("order must have minimum value")) return "min_value";
  if (t.startsWith("price must be divisible by tick size") || t.startsWith("order has invalid price"))
    return "tick";
  if (t.startsWith("order has invalid size") || t.startsWith("order has zero size")) return "size";
  if (t.startsWith("only post-only orders allowed")) return "post_only_window";
  if (t.includes("open orders")) return "open_orders";
  if (t.startsWith("insufficient margin")) return "margin";
  return "unknown";
}

/**
 * The drill's resting order (docs/operations.md, "The drill"): a post-only (ALO) buy at half the mark, rounded
 * DOWN to a valid price, so far below the market that it rests and never fills, of the smallest size worth at
 * least `valueUsd` (≥ $10, the exchange's minimum) at that price: rounded UP to szDecimals. Not reduce-only: it
 * opens nothing unless it fills, and the drill cancels it (or the exchange's scheduled cancel does).
 */
export function drillOrder(args: {
  asset: number;
  mark: string;
  szDecimals: number;
  valueUsd: number;
}): OrderRequest {
  const { asset, mark, szDecimals, valueUsd } = args;
  checkSzDecimals(szDecimals);
  if (!(valueUsd >= MIN_ORDER_VALUE_USD))
    throw new OrderRuleError(`The drill's order must be worth at least $${MIN_ORDER_VALUE_USD}.`);
  const m = parseOrThrow(mark, "mark");
  if (m <= 0n) throw new OrderRuleError(`The mark must be > 0, got ${mark}.`);
  const price = roundPrice(m, 2n, szDecimals, "down");
  const want = (BigInt(Math.ceil(valueUsd * 100)) * SCALE * SCALE) / 100n / price;
  const unit = SCALE / pow10(szDecimals);
  const size = ((want + unit - 1n) / unit) * unit;
  return {
    asset,
    isBuy: true,
    price: formatFixed(price),
    size: formatFixed(size),
    reduceOnly: false,
    type: { limit: { tif: "Alo" } },
  };
}
