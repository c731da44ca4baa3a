/**
 * Decimal strings as the real API writes them: plain notation, trailing zeros trimmed but at least one
 * decimal ("0.0", "13104.514502", "-0.0134"), a fixed number of significant decimals per field
 * (docs/exchange-behaviour.md §13 example: USD amounts 6 decimals, prices up to 8, returnOnEquity 7).
 */
export function decimal(value: number, maxDecimals = 6): string {
  if (!Number.isFinite(value)) return "0.0";
  let s = fixed(value, maxDecimals);
  if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, ".0");
  else s = `${s}.0`;
  if (/^-0(\.0+)?$/.test(s)) s = "0.0";
  return s;
}

/**
 * `toFixed` with half-up rounding on the value's 15 significant digits, so binary noise does not round
 * 4.9886525 down to 4.988652.
 */
function fixed(value: number, decimals: number): string {
  const precise = Math.abs(value).toPrecision(15);
  if (precise.includes("e")) return value.toFixed(decimals);
  const [int = "0", frac = ""] = precise.split(".");
  const digits = BigInt(int + frac.padEnd(decimals + 1, "0").slice(0, decimals + 1));
  const rounded = (digits + 5n) / 10n;
  const text = rounded.toString().padStart(decimals + 1, "0");
  const out = decimals > 0 ? `${text.slice(0, -decimals)}.${text.slice(-decimals)}` : text;
  return value < 0 && /[1-9]/.test(out) ? `-${out}` : out;
}

/** The volume in the gate message is written without a forced decimal: "$0", "$129582.4", "$373.47205". */
export function volumeText(usd: number): string {
  const s = fixed(usd, 6).replace(/0+$/, "").replace(/\.$/, "");
  return s === "-0" ? "0" : s;
}

/** Prices: fewer decimals as the price grows (about 5–6 significant figures, like the exchange's tick sizes). */
export function price(value: number): string {
  return decimal(value, value >= 10_000 ? 1 : value >= 1_000 ? 2 : value >= 100 ? 3 : value >= 10 ? 4 : 6);
}
