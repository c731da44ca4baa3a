/**
 * The generic HTTP transport's own error (src/transport/http.ts): it knows nothing of Hyperliquid or JSON-RPC, so
 * it says only that no answer arrived (`transport`) or that the answer could not be read within the bounds of
 * docs/security.md, "Bounded input" (`malformed_response`). Each protocol layer maps it to its own family
 * (HyperliquidApiError, EvmError); the policy of each kind is in src/errors/policy.ts.
 *
 * It never keeps the underlying got error as `cause` (its options hold the full URL, which may carry an endpoint
 * key): the code and the scrubbed message are copied, and the URL is kept only redacted.
 */
import { BaseError } from "../errors/base.js";
import type { BodyLimitKind } from "../utils/bounded-body.js";

export type TransportErrorKind =
  /** no answer: time-out, reset, refused, DNS, socket hang up, aborted, or the transport is closed */
  | "transport"
  /** an answer over the body bounds, in an encoding we do not decode, or not valid compressed data */
  | "malformed_response";

export type TransportErrorParameters = {
  kind: TransportErrorKind;
  /** the request URL, already redacted */
  url: string;
  /** what went wrong, already scrubbed of secrets */
  reason: string;
  /** the system or got error code (ECONNREFUSED, ETIMEDOUT, ERR_ABORTED …) */
  code?: string | undefined;
  /** the caller's signal aborted the request */
  aborted?: boolean | undefined;
  /** which body bound was crossed (`malformed_response`) */
  limit?: BodyLimitKind | undefined;
};

export class TransportError extends BaseError {
  override name = "TransportError";
  readonly domain = "transport" as const;
  readonly kind: TransportErrorKind;
  readonly url: string;
  readonly reason: string;
  readonly code: string | undefined;
  readonly aborted: boolean;
  readonly limit: BodyLimitKind | undefined;
  constructor({ kind, url, reason, code, aborted = false, limit }: TransportErrorParameters) {
    super(`HTTP request failed (${kind}): ${reason}.`, { metaMessages: [`URL: ${url}`] });
    this.kind = kind;
    this.url = url;
    this.reason = reason;
    this.code = code;
    this.aborted = aborted;
    this.limit = limit;
  }
}
