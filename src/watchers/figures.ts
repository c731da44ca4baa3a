/**
 * Derived exposure figures of one clearinghouse state (pure; no I/O).
 *
 * Arithmetic: every decimal string is parsed exactly into a BigInt scaled by 10^18 (src/core/decimal.ts).
 * Ratios are divided in BigInt with 20+ significant digits and converted to a JS number once, at the end,
 * so leverage, margin usage, mark price and distance to liquidation keep 15+ significant digits. The
 * amounts themselves are passed on as the exchange's strings, untouched.
 */
import {
  abs,
  checkDecimal,
  DecimalError,
  type Fixed,
  fixedToNumber,
  parseDecimal,
  ratio,
  SCALE,
} from "../core/decimal.js";

/**
 * The part of a clearinghouse state (docs/exchange-behaviour.md §13) the figures read. `ClearinghouseState` from
 * src/protocol/hyperliquid/schemas.ts is assignable to it; taking the structural subset keeps this module pure.
 */
export type FiguresInput = {
  assetPositions: readonly {
    position: {
      coin: string;
      szi: string;
      /** typed non-null by one SDK, optional by another (docs/exchange-behaviour.md §13): tolerate null */
      entryPx?: string | null | undefined;
      positionValue: string;
      unrealizedPnl: string;
      liquidationPx?: string | null | undefined;
      marginUsed?: string | undefined;
      leverage: { type: string; value: number; rawUsd?: string | null | undefined };
    };
  }[];
  marginSummary: { accountValue: string; totalNtlPos: string; totalMarginUsed: string };
  crossMarginSummary: { accountValue: string };
  crossMaintenanceMarginUsed: string;
  withdrawable: string;
};

export type PositionFigures = {
  coin: string;
  /** from the sign of szi; "flat" only if the exchange ever reports a zero size */
  side: "long" | "short" | "flat";
  szi: string;
  entryPx: string | null;
  positionValue: string;
  unrealizedPnl: string;
  liquidationPx: string | null;
  marginUsed: string | null;
  /** "cross" | "isolated" (or whatever the exchange sends) */
  leverageType: string;
  leverageValue: number;
  /** positionValue / |szi|; null when szi is 0 */
  markPx: number | null;
  /** |mark − liquidationPx| / mark × 100; absent when liquidationPx is null (or szi is 0) */
  liquidationDistancePct?: number;
};

export type AccountFigures = {
  accountValue: string;
  totalNtlPos: string;
  totalMarginUsed: string;
  withdrawable: string;
  /** totalNtlPos / accountValue; null when the account value is 0 or negative (no equity to divide by) */
  leverage: number | null;
  /** totalMarginUsed / accountValue; null when the account value is 0 or negative */
  marginUsage: number | null;
  /** crossMaintenanceMarginUsed / crossMarginSummary.accountValue; null when that value is 0 or negative */
  maintenanceMarginRatio: number | null;
  positions: PositionFigures[];
};

/** `a / b` for positive denominators only (a negative equity makes these ratios meaningless). */
function ratioOfEquity(numerator: Fixed, equity: Fixed): number | null {
  return equity > 0n ? ratio(numerator, equity) : null;
}

/**
 * `read(value)` (parseDecimal, checkDecimal) for a position's field; a refused value is named by the position and the
 * field. The name is built only on failure: this runs for every position of every account on every poll
 * (BENCHMARKS.md, exposure).
 */
function positionField<T>(coin: string, field: string, value: string, read: (value: string) => T): T {
  try {
    return read(value);
  } catch (err) {
    throw err instanceof DecimalError ? new DecimalError(value, `position ${coin} ${field}`) : err;
  }
}

export function derivePosition(
  position: FiguresInput["assetPositions"][number]["position"],
): PositionFigures {
  const coin = position.coin;
  const szi = positionField(coin, "szi", position.szi, parseDecimal);
  const value = positionField(coin, "positionValue", position.positionValue, parseDecimal);
  // validate the strings we pass on as received
  positionField(coin, "unrealizedPnl", position.unrealizedPnl, checkDecimal);
  const entryPx = position.entryPx ?? null;
  if (entryPx !== null) positionField(coin, "entryPx", entryPx, checkDecimal);
  const liquidationPx = position.liquidationPx ?? null;
  const size = abs(szi);
  const figures: PositionFigures = {
    coin: position.coin,
    side: szi > 0n ? "long" : szi < 0n ? "short" : "flat",
    szi: position.szi,
    entryPx,
    positionValue: position.positionValue,
    unrealizedPnl: position.unrealizedPnl,
    liquidationPx,
    marginUsed: position.marginUsed ?? null,
    leverageType: position.leverage.type,
    leverageValue: position.leverage.value,
    markPx: size === 0n ? null : ratio(value, size),
  };
  if (liquidationPx !== null && size !== 0n && value !== 0n) {
    const liq = positionField(coin, "liquidationPx", liquidationPx, parseDecimal);
    // |mark − liq| / mark = |positionValue − liq·|szi|| / positionValue, exact at scale 10^36
    const distance = ratio(abs(value * SCALE - liq * size) * 100n, abs(value) * SCALE);
    if (distance !== null) figures.liquidationDistancePct = distance;
  }
  return figures;
}

export function deriveFigures(state: FiguresInput): AccountFigures {
  const summary = state.marginSummary;
  const accountValue = parseDecimal(summary.accountValue, "marginSummary.accountValue");
  const notional = parseDecimal(summary.totalNtlPos, "marginSummary.totalNtlPos");
  const marginUsed = parseDecimal(summary.totalMarginUsed, "marginSummary.totalMarginUsed");
  checkDecimal(state.withdrawable, "withdrawable");
  const crossValue = parseDecimal(state.crossMarginSummary.accountValue, "crossMarginSummary.accountValue");
  const maintenance = parseDecimal(state.crossMaintenanceMarginUsed, "crossMaintenanceMarginUsed");
  return {
    accountValue: summary.accountValue,
    totalNtlPos: summary.totalNtlPos,
    totalMarginUsed: summary.totalMarginUsed,
    withdrawable: state.withdrawable,
    leverage: ratioOfEquity(notional, accountValue),
    marginUsage: ratioOfEquity(marginUsed, accountValue),
    maintenanceMarginRatio: ratioOfEquity(maintenance, crossValue),
    positions: state.assetPositions.map((p) => derivePosition(p.position)),
  };
}

/** A decimal string as a JS number (for gauges and threshold checks), parsed exactly first. */
export function decimalToNumber(value: string, what?: string): number {
  return fixedToNumber(parseDecimal(value, what));
}
