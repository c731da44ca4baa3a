/**
 * A removal refused by the volume gate on shutdown (docs/exchange-record.md, "Removal and the volume gate").
 * Removing the schedule is volume-gated like setting it, so an account below $1M of traded volume cannot
 * remove it, and could never have armed it either. Only `userRateLimit.cumVlm` below the gate proves that:
 * then the switch logs `shutdown.nothing_armed` and exits 0. Anything else is a real failure.
 */
import { HyperliquidApiError } from "../protocol/hyperliquid/errors.js";

/** The scheduleCancel volume gate in USD (docs/exchange-behaviour.md §4, §24). */
export const VOLUME_GATE_USD = 1_000_000;

export type RemovalVerdict =
  | { verdict: "nothing_armed"; cumVlm: number; detail: string }
  | { verdict: "failure"; cumVlm: number | null; detail: string };

/** Decides what a failed removal means; never rejects. */
export async function judgeRefusedRemoval(
  error: unknown,
  account: string,
  cumulativeVolume: (account: string) => Promise<number>,
): Promise<RemovalVerdict> {
  if (!(error instanceof HyperliquidApiError) || error.kind !== "volume_gate") {
    return {
      verdict: "failure",
      cumVlm: null,
      detail: "the removal failed for another reason than the volume gate",
    };
  }
  let cumVlm: number;
  try {
    cumVlm = await cumulativeVolume(account);
  } catch (readError) {
    const message = readError instanceof Error ? readError.message.split("\n")[0] : String(readError);
    return {
      verdict: "failure",
      cumVlm: null,
      detail: `the removal hit the volume gate and the traded volume could not be read (${message}); it cannot be shown that nothing was armed`,
    };
  }
  if (!Number.isFinite(cumVlm)) {
    return { verdict: "failure", cumVlm: null, detail: "userRateLimit.cumVlm is not a number" };
  }
  if (cumVlm < VOLUME_GATE_USD) {
    return {
      verdict: "nothing_armed",
      cumVlm,
      detail: `the account has traded $${cumVlm} (< $${VOLUME_GATE_USD}): the exchange refuses both setting and removing, so nothing could have been armed`,
    };
  }
  return {
    verdict: "failure",
    cumVlm,
    detail: `the removal was refused by the volume gate although userRateLimit shows $${cumVlm} traded (>= $${VOLUME_GATE_USD})`,
  };
}
