/**
 * Errors of the HyperEVM JSON-RPC client. None of them ever carries the RPC URL as given: the URL may hold an
 * endpoint key as a path segment (`…/<ENDPOINT_KEY>/evm`), so only `redactUrl(url)` appears, and the underlying
 * got error is not kept as `cause` (its options hold the full URL); its code and message are copied instead.
 */
import { BaseError } from "../errors/base.js";

/** The node answered with a JSON-RPC error object. */
export class JsonRpcError extends BaseError {
  override name = "JsonRpcError";
  readonly code: number;
  readonly data?: unknown;
  readonly method: string;
  constructor({
    code,
    message,
    data,
    method,
    url,
  }: { code: number; message: string; data?: unknown; method: string; url: string }) {
    super(`JSON-RPC error ${code} from ${method}: ${message}`, {
      metaMessages: [
        data === undefined ? undefined : `Data: ${typeof data === "string" ? data : JSON.stringify(data)}`,
        `URL: ${url}`,
      ],
    });
    this.code = code;
    this.data = data;
    this.method = method;
  }
}

/** The HTTP exchange completed with a non-2xx status. */
export class EvmHttpError extends BaseError {
  override name = "EvmHttpError";
  readonly status: number;
  readonly method: string;
  constructor({ status, body, method, url }: { status: number; body: string; method: string; url: string }) {
    super(`HTTP ${status} from the EVM RPC for ${method}.`, {
      metaMessages: [`URL: ${url}`, body ? `Body: ${body.slice(0, 200)}` : undefined],
    });
    this.status = status;
    this.method = method;
  }
}

/** No HTTP answer: connection refused or reset, DNS failure, time-out, abort. */
export class EvmTransportError extends BaseError {
  override name = "EvmTransportError";
  readonly code: string | undefined;
  readonly method: string;
  constructor({
    code,
    reason,
    method,
    url,
  }: { code: string | undefined; reason: string; method: string; url: string }) {
    super(`EVM RPC request ${method} failed: ${code ?? "error"}.`, {
      details: reason,
      metaMessages: [`URL: ${url}`],
    });
    this.code = code;
    this.method = method;
  }
}

/** The body was not JSON, not a JSON-RPC response, had the wrong id, or did not match the method's schema. */
export class EvmMalformedResponseError extends BaseError {
  override name = "EvmMalformedResponseError";
  readonly method: string;
  constructor({
    reason,
    method,
    url,
    issues = [],
  }: { reason: string; method: string; url: string; issues?: string[] }) {
    super(`Malformed response from the EVM RPC for ${method}: ${reason}.`, {
      metaMessages: [...issues.slice(0, 10), `URL: ${url}`],
    });
    this.method = method;
  }
}

/** The node does not know the block (result null, or reth's -32001 "block not found"). */
export class EvmNotFoundError extends BaseError {
  override name = "EvmNotFoundError";
  readonly block: string;
  constructor({ block, method }: { block: string; method: string }) {
    super(`block ${block} not found`, { metaMessages: [`Method: ${method}`] });
    this.block = block;
  }
}

/** A bad argument, refused before anything is sent. */
export class EvmArgumentError extends BaseError {
  override name = "EvmArgumentError";
}

/** Pages of one block did not add up: a transaction missing or duplicated, the block changed, receipts not matching. */
export class EvmInconsistentBlockError extends BaseError {
  override name = "EvmInconsistentBlockError";
  readonly block: number;
  constructor({ block, reason, metaMessages }: { block: number; reason: string; metaMessages?: string[] }) {
    super(`Inconsistent transactions for block ${block}: ${reason}.`, { metaMessages });
    this.block = block;
  }
}
