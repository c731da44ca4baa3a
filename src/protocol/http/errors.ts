/**
 * The generic HTTP transport's own error (src/protocol/http/http.ts): it knows nothing of Hyperliquid or JSON-RPC, so
 * it says only that no answer arrived (`transport`), that the answer could not be read within the bounds of
 * docs/security.md, "Bounded input" (`malformed_response`), or that the answer was a redirect, which no call
 * follows (`redirect`). Each protocol layer maps it to its own family (HyperliquidApiError, EvmError); the policy
 * of each kind is in src/core/errors/policy.ts.
 *
 * It never keeps the underlying got error as `cause` (its options hold the full URL, which may carry an endpoint
 * key): the code and the scrubbed message are copied, and the URL is kept only redacted.
 */
import { BaseError } from "../../core/errors/base.js";
import { type PolicyRows, policyRow as row } from "../../core/errors/policy.js";
import { ExitCode } from "../../core/exit-codes.js";
import type { BodyLimitKind } from "./bounded-body.js";

export type TransportErrorKind =
  /** no answer: time-out, reset, refused, DNS, socket hang up, aborted, or the transport is closed */
  | "transport"
  /** an answer over the body bounds, in an encoding we do not decode, or not valid compressed data */
  | "malformed_response"
  /**
   * a 3xx answer with a Location: no call follows a redirect (one to another origin would carry a signed action, a
   * webhook's credentials or an endpoint key's request to a host nobody configured), so the URL must be the final one
   */
  | "redirect";

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
  /** the answer's status (`redirect`) */
  status?: number | undefined;
  /** where the redirect pointed, redacted (`redirect`) */
  location?: string | undefined;
  /** the redirect pointed to the request's own origin (scheme, host and port) (`redirect`) */
  sameOrigin?: boolean | undefined;
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
  readonly status: number | undefined;
  readonly location: string | undefined;
  readonly sameOrigin: boolean | undefined;
  constructor({
    kind,
    url,
    reason,
    code,
    aborted = false,
    limit,
    status,
    location,
    sameOrigin,
  }: TransportErrorParameters) {
    super(`HTTP request failed (${kind}): ${reason}.`, { metaMessages: [`URL: ${url}`] });
    this.kind = kind;
    this.url = url;
    this.reason = reason;
    this.code = code;
    this.aborted = aborted;
    this.limit = limit;
    this.status = status;
    this.location = location;
    this.sameOrigin = sameOrigin;
  }
}

const { unavailable } = ExitCode;

/** The transport's rows of the error policy (src/protocol/policy.ts composes the table). */
export const TRANSPORT_POLICY: PolicyRows<TransportErrorKind> = Object.freeze({
  transport: row(true, false, true, unavailable, "no answer (before a protocol layer maps it)"),
  malformed_response: row(true, false, true, unavailable, "a body over the bounds (docs/security.md)"),
  redirect: row(false, false, false, unavailable, "a 3xx redirect (before a protocol layer maps it)"),
});
