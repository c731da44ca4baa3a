/**
 * A failed request as the switch sees it: its row of the one policy table (src/protocol/policy.ts,
 * docs/errors.md). The switch reads the kind's row, not the error's own `retryable`: a push its own time-out
 * aborted is still a `transport` failure the switch tries again, with a fresh nonce.
 */
import { HyperliquidApiError } from "../protocol/hyperliquid/errors.js";
import { policyFor } from "../protocol/policy.js";
import type { Failure } from "./machine.js";

/**
 * An error the table has no row for (a bug, a throw in a client): the request may or may not have left, so its
 * outcome is unknown (the next push waits for its expiry) and a new push may help.
 */
export const UNCLASSIFIED: Readonly<Omit<Failure, "message">> = Object.freeze({
  kind: "internal",
  permanent: false,
  retryable: true,
  outcomeUnknown: true,
});

export function describeFailure(error: unknown): Failure {
  if (error instanceof HyperliquidApiError) {
    const policy = policyFor("hyperliquid", error.kind, error.nonceDetail);
    return {
      kind: error.kind,
      // the server's text, and what the answer shows the operator must fix (a network mismatch)
      message: `${error.serverMessage ?? error.shortMessage}${error.hint ? ` (${error.hint})` : ""}`,
      permanent: policy.permanent,
      retryable: policy.retryable,
      outcomeUnknown: policy.outcomeUnknown,
      ...(error.nonceDetail ? { nonceDetail: error.nonceDetail } : {}),
    };
  }
  return { ...UNCLASSIFIED, message: error instanceof Error ? error.message : String(error) };
}
