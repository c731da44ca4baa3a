/**
 * The exposure report's `exposure` line as the daemon's bus carries it (src/watchers/exposure-report.ts; its fields
 * are the contract's, docs/cli.md), parsed once for the parts that read its figures: the escalation's
 * rules (the account value, the notional, the nearest liquidation) and the death gate's risk order.
 *
 * Rules, and why:
 * - Only the line is taken (`module` and `event` both `exposure`); every other event parses to null.
 * - A figure that is not a decimal string is no figure (null), and a position's liquidation distance that is not a
 *   finite number is none: the readers pass over what they cannot read, as they always have, and never guess.
 * - Loose: the line's other fields (the reason, the margins, the positions' sizes) pass through untouched.
 */
import { z } from "zod";
import { DecimalString } from "./schemas.js";

/** A figure of the line: the exchange's decimal string as a number; anything else is null. */
const Figure = DecimalString.transform(Number).pipe(z.number()).nullable().catch(null);

export const ExposurePosition = z.looseObject({
  /** how far the mark is from the liquidation price, in percent (absent without a liquidation price) */
  liquidationDistancePct: z.number().optional().catch(undefined),
});
export type ExposurePosition = z.infer<typeof ExposurePosition>;

export const ExposureLine = z.looseObject({
  module: z.literal("exposure"),
  event: z.literal("exposure"),
  account: z.string(),
  /** the perp dex ("" the first one, whose figures the line's totals are: the field is absent then) */
  dex: z.string().catch(""),
  accountValue: Figure,
  totalNtlPos: Figure,
  /** the largest positions the line carries; none when unreadable */
  positions: z.array(ExposurePosition).catch([]),
});
export type ExposureLine = z.infer<typeof ExposureLine>;

/** The event as an exposure line, or null when it is not one (another event, or no account). */
export function parseExposureLine(event: unknown): ExposureLine | null {
  // Every event of the bus comes here (twice with the death gate and the escalation): the other events are turned
  // away on their module and name before the schema, which builds its list of issues for each (about 33 µs an
  // event under the shipped --jitless, against well under one).
  if (typeof event !== "object" || event === null) return null;
  const { module, event: name } = event as { module?: unknown; event?: unknown };
  if (module !== "exposure" || name !== "exposure") return null;
  const parsed = ExposureLine.safeParse(event);
  return parsed.success ? parsed.data : null;
}

/** The nearest liquidation among the line's positions (percent), or null when none has one. */
export function nearestLiquidationPct(positions: readonly ExposurePosition[]): number | null {
  const distances = positions
    .map((p) => p.liquidationDistancePct)
    .filter((d): d is number => d !== undefined && Number.isFinite(d));
  return distances.length > 0 ? Math.min(...distances) : null;
}
