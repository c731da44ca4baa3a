/**
 * Exact decimal arithmetic for the exchange's decimal strings ("13109.482328", "-0.0335").
 *
 * A decimal string is parsed into a BigInt scaled by 10^18 (`Fixed`), so sums, differences and products of
 * amounts are exact. A ratio (leverage, margin usage, distance to liquidation) is computed as a BigInt
 * quotient with at least 20 significant digits and only then converted to a JS number by parsing its decimal
 * text, which JavaScript rounds correctly: the number carries 15+ significant digits, far more than any
 * leverage or percentage needs. No amount ever passes through a float before the final division.
 *
 * The exposure reporter parses and divides a few thousand of these per poll (BENCHMARKS.md, exposure): a parse is
 * one BigInt conversion of the digits, and `ratio` counts its operands' digits against a table of powers of ten
 * instead of formatting them.
 */
import { BaseError } from "./errors/base.js";

/** Digits after the decimal point kept by `parseDecimal`; the exchange sends at most ~8. */
export const DECIMAL_SCALE = 18;
/** 1 as a `Fixed` (10^18). */
export const SCALE = 10n ** BigInt(DECIMAL_SCALE);

/** A decimal amount as an integer number of 10^-18 units. */
export type Fixed = bigint;

export class DecimalError extends BaseError {
  override name = "DecimalError";
  readonly value: unknown;
  constructor(value: unknown, what?: string) {
    super(`Invalid decimal ${JSON.stringify(value)}${what ? ` in ${what}` : ""}.`, {
      metaMessages: ["A decimal is an optional minus sign, digits, and optionally a point and more digits."],
    });
    this.value = value;
  }
}

const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;
const ZEROS = "0".repeat(DECIMAL_SCALE);

/** 10^0 .. 10^79: the exchange's amounts scaled by 10^18, and the quotients of `ratio`, stay well inside. */
const POW10: readonly bigint[] = Array.from({ length: 80 }, (_, k) => 10n ** BigInt(k));
const pow10 = (k: number): bigint => POW10[k] ?? 10n ** BigInt(k);

/** The number of decimal digits of `x` >= 0 (1 for 0), without formatting it. */
function decimalLength(x: bigint): number {
  if (x >= POW10[POW10.length - 1]!) return x.toString().length;
  // the smallest k with x < 10^k
  let lo = 1;
  let hi = POW10.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (x < POW10[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Parses a decimal string exactly into a `Fixed`. Digits beyond the 18th fractional digit are truncated
 * (toward zero); exponents, blanks, `NaN` and anything else are refused with a DecimalError naming the value.
 */
export function parseDecimal(value: string, what?: string): Fixed {
  if (typeof value !== "string") throw new DecimalError(value, what);
  const match = DECIMAL_RE.exec(value);
  if (!match) throw new DecimalError(value, what);
  const [, minus, whole = "0", frac = ""] = match;
  // one BigInt parse of the digits scaled by 10^18 (whole, then exactly 18 fractional digits)
  const fraction =
    frac.length >= DECIMAL_SCALE ? frac.slice(0, DECIMAL_SCALE) : frac + ZEROS.slice(frac.length);
  const magnitude = BigInt(whole + fraction);
  return minus ? -magnitude : magnitude;
}

/**
 * Checks that `value` is a decimal `parseDecimal` accepts, without converting it: for the strings passed on as
 * received (an entry price, an unrealized PnL), where a conversion would be thrown away.
 */
export function checkDecimal(value: string, what?: string): void {
  if (typeof value !== "string" || !DECIMAL_RE.test(value)) throw new DecimalError(value, what);
}

export const abs = (x: bigint): bigint => (x < 0n ? -x : x);

/** Formats a `Fixed` as a plain decimal string without trailing zeros ("1.5", "-0.0335", "0"). */
export function formatFixed(value: Fixed, maxFractionDigits = DECIMAL_SCALE): string {
  const negative = value < 0n;
  let magnitude = abs(value);
  if (maxFractionDigits < DECIMAL_SCALE) {
    // round half away from zero to maxFractionDigits
    const unit = 10n ** BigInt(DECIMAL_SCALE - maxFractionDigits);
    magnitude = ((magnitude + unit / 2n) / unit) * unit;
  }
  const whole = magnitude / SCALE;
  const frac = (magnitude % SCALE)
    .toString()
    .padStart(DECIMAL_SCALE, "0")
    .slice(0, maxFractionDigits)
    .replace(/0+$/, "");
  const text = frac ? `${whole}.${frac}` : `${whole}`;
  return negative && magnitude !== 0n ? `-${text}` : text;
}

/** Converts a `Fixed` to the nearest JS number (via its decimal text, so the rounding is correct). */
export function fixedToNumber(value: Fixed): number {
  return Number(formatFixed(value));
}

/**
 * `numerator / denominator` as a JS number, computed in BigInt with at least 20 significant digits before the
 * one final conversion. Both arguments must share a scale (any scale). Returns null when the denominator is 0.
 */
export function ratio(numerator: bigint, denominator: bigint): number | null {
  if (denominator === 0n) return null;
  if (numerator === 0n) return 0;
  const negative = numerator < 0n !== denominator < 0n;
  const n = abs(numerator);
  const d = abs(denominator);
  // enough fractional digits that the quotient keeps >= 20 significant digits whatever the magnitudes
  const digits = Math.max(20, decimalLength(d) - decimalLength(n) + 22);
  const q = (n * pow10(digits)) / d;
  const text = q.toString().padStart(digits + 1, "0");
  const decimal = `${text.slice(0, text.length - digits)}.${text.slice(text.length - digits)}`;
  const result = Number(decimal);
  return negative ? -result : result;
}
