/**
 * Errors of the HyperEVM JSON-RPC client: one family, EvmError (a BaseError with `domain: "evm"`, a typed `kind`,
 * the JSON-RPC `method` and the redacted URL), with one subclass per kind for its own typed fields. The policy of
 * each kind (retryable, permanent, exit code) is in the one table of src/core/errors/policy.ts (docs/errors.md).
 *
 * None of them ever carries the RPC URL as given: the URL may hold an endpoint key as a path segment
 * (`…/<ENDPOINT_KEY>/evm`), so only `redactUrl(url)` appears, and no got error is ever kept as `cause` (its
 * options hold the full URL); the transport copies its code and scrubbed message into a TransportError
 * (src/protocol/http/http.ts), which is safe to keep as the cause.
 */
import { ArgumentError } from "../../core/errors/argument.js";
import { BaseError, type BaseErrorParameters } from "../../core/errors/base.js";
import { type PolicyRows, policyRow as row } from "../../core/errors/policy.js";
import { ExitCode } from "../../core/exit-codes.js";

export type EvmErrorKind =
  /** the node answered with a JSON-RPC error object */
  | "json_rpc"
  /** a JSON-RPC error saying the method (the ots_ namespace) is not served: -32601 or a gateway's wording */
  | "method_not_found"
  /** a non-2xx HTTP status */
  | "http"
  /** no answer: refused, reset, DNS, time-out, abort */
  | "transport"
  /** not JSON, not a JSON-RPC response, the wrong id, over the body bounds, or not the method's schema */
  | "malformed_response"
  /** a 3xx answer with a Location: never followed (src/protocol/http/http.ts), the URL is not the node's */
  | "redirect"
  /** the node does not know the block */
  | "not_found"
  /** the pages of one block did not add up */
  | "inconsistent_block";

export type EvmErrorParameters = BaseErrorParameters & {
  kind: EvmErrorKind;
  /** the JSON-RPC method (or `batch(m1,m2)`) */
  method: string;
  /** the RPC URL, already redacted */
  url?: string | undefined;
};

/** The base of the family: every EVM client error is one, with its kind. */
export class EvmError extends BaseError {
  override name = "EvmError";
  readonly domain = "evm" as const;
  readonly kind: EvmErrorKind;
  readonly method: string;
  readonly url: string | undefined;
  constructor(shortMessage: string, { kind, method, url, ...args }: EvmErrorParameters) {
    super(shortMessage, {
      ...args,
      metaMessages: [...(args.metaMessages ?? []), url ? `URL: ${url}` : undefined],
    });
    this.kind = kind;
    this.method = method;
    this.url = url;
  }
}

/** -32601, or a gateway's "method … not supported/whitelisted" under another code. */
export function isMethodNotFoundAnswer(code: number, message: string): boolean {
  if (code === -32601) return true;
  return /(method|namespace).*(not found|not supported|unsupported|does not exist|not available|not whitelisted|not allowed)/i.test(
    message,
  );
}

/** The node answered with a JSON-RPC error object (kind `json_rpc`, or `method_not_found`). */
export class JsonRpcError extends EvmError {
  override name = "JsonRpcError";
  readonly code: number;
  readonly data?: unknown;
  constructor({
    code,
    message,
    data,
    method,
    url,
  }: { code: number; message: string; data?: unknown; method: string; url: string }) {
    super(`JSON-RPC error ${code} from ${method}: ${message}`, {
      // the node's own words, not the method name or batch label this message adds
      kind: isMethodNotFoundAnswer(code, message) ? "method_not_found" : "json_rpc",
      method,
      url,
      metaMessages: [
        data === undefined ? undefined : `Data: ${typeof data === "string" ? data : JSON.stringify(data)}`,
      ],
    });
    this.code = code;
    this.data = data;
  }
}

/** The HTTP exchange completed with a non-2xx status. */
export class EvmHttpError extends EvmError {
  override name = "EvmHttpError";
  readonly status: number;
  constructor({ status, body, method, url }: { status: number; body: string; method: string; url: string }) {
    super(`HTTP ${status} from the EVM RPC for ${method}.`, {
      kind: "http",
      method,
      url,
      metaMessages: [body ? `Body: ${body.slice(0, 200)}` : undefined],
    });
    this.status = status;
  }
}

/** No HTTP answer: connection refused or reset, DNS failure, time-out, abort. */
export class EvmTransportError extends EvmError {
  override name = "EvmTransportError";
  readonly code: string | undefined;
  readonly aborted: boolean;
  constructor({
    code,
    reason,
    method,
    url,
    aborted = false,
    cause,
  }: {
    code: string | undefined;
    reason: string;
    method: string;
    url: string;
    aborted?: boolean;
    cause?: unknown;
  }) {
    super(`EVM RPC request ${method} failed: ${code ?? "error"}.`, {
      kind: "transport",
      details: reason,
      cause,
      method,
      url,
    });
    this.code = code;
    this.aborted = aborted;
  }
}

/** The RPC URL answered with a redirect, which is never followed: the configured URL must be the node's own. */
export class EvmRedirectError extends EvmError {
  override name = "EvmRedirectError";
  readonly status: number | undefined;
  /** where the redirect pointed, redacted */
  readonly location: string | undefined;
  readonly sameOrigin: boolean | undefined;
  constructor({
    status,
    location,
    sameOrigin,
    reason,
    method,
    url,
    cause,
  }: {
    status: number | undefined;
    location: string | undefined;
    sameOrigin: boolean | undefined;
    reason: string;
    method: string;
    url: string;
    cause?: unknown;
  }) {
    super(`EVM RPC request ${method} was redirected (HTTP ${status ?? "3xx"}): not followed.`, {
      kind: "redirect",
      details: reason,
      cause,
      method,
      url,
      metaMessages: ["Set the RPC URL to the final one: hl-deadman follows no redirect."],
    });
    this.status = status;
    this.location = location;
    this.sameOrigin = sameOrigin;
  }
}

/** The body was not JSON, not a JSON-RPC response, had the wrong id, or did not match the method's schema. */
export class EvmMalformedResponseError extends EvmError {
  override name = "EvmMalformedResponseError";
  readonly reason: string;
  readonly issues: string[];
  constructor({
    reason,
    method,
    url,
    issues = [],
  }: { reason: string; method: string; url: string; issues?: string[] }) {
    super(`Malformed response from the EVM RPC for ${method}: ${reason}.`, {
      kind: "malformed_response",
      method,
      url,
      metaMessages: issues.slice(0, 10),
    });
    this.reason = reason;
    this.issues = issues;
  }
}

/** The node does not know the block (result null, or reth's -32001 "block not found"). */
export class EvmNotFoundError extends EvmError {
  override name = "EvmNotFoundError";
  readonly block: string;
  constructor({ block, method }: { block: string; method: string }) {
    super(`block ${block} not found`, { kind: "not_found", method, metaMessages: [`Method: ${method}`] });
    this.block = block;
  }
}

/** Pages of one block did not add up: a transaction missing or duplicated, the block changed, receipts not matching. */
export class EvmInconsistentBlockError extends EvmError {
  override name = "EvmInconsistentBlockError";
  readonly block: number;
  constructor({
    block,
    reason,
    metaMessages,
    method = "ots_getBlockTransactions",
  }: { block: number; reason: string; metaMessages?: string[]; method?: string }) {
    super(`Inconsistent transactions for block ${block}: ${reason}.`, {
      kind: "inconsistent_block",
      method,
      metaMessages,
    });
    this.block = block;
  }
}

/** A bad argument, refused before anything is sent: the project's one ArgumentError (src/core/errors/argument.ts). */
export { ArgumentError as EvmArgumentError };

const { runtime, unavailable } = ExitCode;

/** The HyperEVM client's rows of the error policy (src/protocol/policy.ts composes the table). */
export const EVM_POLICY: PolicyRows<EvmErrorKind> = Object.freeze({
  json_rpc: row(false, false, false, runtime, "the node answered with a JSON-RPC error"),
  method_not_found: row(false, true, false, unavailable, "the node does not serve the method (ots_)"),
  http: row(true, false, false, unavailable, "a non-2xx HTTP status"),
  transport: row(true, false, false, unavailable, "no answer: time-out, reset, refused, DNS, abort"),
  malformed_response: row(true, false, false, runtime, "not JSON-RPC, wrong id, or not the method's shape"),
  redirect: row(
    false,
    false,
    false,
    unavailable,
    "a 3xx redirect, never followed: the URL is not the node's",
  ),
  not_found: row(false, false, false, runtime, "the node does not know the block"),
  inconsistent_block: row(true, false, false, runtime, "pages of one block did not add up"),
});
