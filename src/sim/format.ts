/**
 * Decimal strings as the real API writes them: plain notation, trailing zeros trimmed but at least one
 * decimal ("0.0", "13104.514502", "-0.0134"), a fixed number of significant decimals per field
 * (api-facts §B1 example: USD amounts 6 decimals, prices up to 8, returnOnEquity 7).
 */
export function decimal(value: number, maxDecimals = 6): string {
  if (!Number.isFinite(value)) return "0.0";
  let s = value.toFixed(maxDecimals);
  if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, ".0");
  if (/^-0(\.0+)?$/.test(s)) s = "0.0";
  return s;
}

/** The volume in the gate message is written without a forced decimal: "$0", "$129582.4", "$373.47205". */
export function volumeText(usd: number): string {
  const s = usd.toFixed(6).replace(/0+$/, "").replace(/\.$/, "");
  return s === "-0" ? "0" : s;
}

/** Prices get 5 significant figures of precision past the integer part, like the exchange's tick rules allow. */
export function price(value: number): string {
  return decimal(value, value >= 10_000 ? 1 : value >= 1_000 ? 2 : value >= 100 ? 3 : value >= 10 ? 4 : 6);
}
