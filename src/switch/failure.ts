/**
 * A failed request as the switch sees it: the row of the one policy table (src/protocol/policy.ts, docs/errors.md)
 * of the first error in the cause chain that belongs to a family. The switch reads the kind's row, not the error's
 * own `retryable`: a push its own time-out aborted is still a `transport` failure the switch tries again, with a
 * fresh nonce.
 */
import { HyperliquidApiError } from "../protocol/hyperliquid/errors.js";
import { classify } from "../protocol/policy.js";
import type { Failure } from "./model.js";

/**
 * An error of no family (a bug, a throw in a client): the request may or may not have left, so its outcome is
 * unknown (the next push waits for its expiry), a new push may help, and nothing about it is permanent.
 */
export const UNCLASSIFIED: Readonly<Omit<Failure, "message">> = Object.freeze({
  kind: "internal",
  permanent: false,
  retryable: true,
  outcomeUnknown: true,
});

export function describeFailure(error: unknown): Failure {
  const match = classify(error);
  if (!match) return { ...UNCLASSIFIED, message: error instanceof Error ? error.message : String(error) };
  const e = match.error;
  const { permanent, retryable, outcomeUnknown } = match.policy;
  const nonceDetail = typeof e.nonceDetail === "string" ? e.nonceDetail : undefined;
  return {
    kind: e.kind,
    // the server's text, and what the answer shows the operator must fix (a network mismatch)
    message:
      e instanceof HyperliquidApiError
        ? `${e.serverMessage ?? e.shortMessage}${e.hint ? ` (${e.hint})` : ""}`
        : e.message,
    permanent,
    retryable,
    outcomeUnknown,
    ...(nonceDetail ? { nonceDetail } : {}),
  };
}
