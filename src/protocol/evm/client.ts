/**
 * A JSON-RPC 2.0 client for HyperEVM over got, with the `ots_` block-explorer methods (docs/exchange-behaviour.md §17, §18).
 *
 * - Requests go through the one HTTP transport (src/protocol/http/http.ts: keep-alive agent, bounded bodies,
 *   time-outs, abort signal), like the exchange and info clients.
 * - ids are correlated (a response with another id is malformed); batches are answered in any order and restored
 *   to call order (docs/exchange-behaviour.md §20); errors map to the EvmError family (src/protocol/evm/errors.ts):
 *   JsonRpcError (code, message, data), non-2xx to EvmHttpError, no answer to EvmTransportError, bad bodies to
 *   EvmMalformedResponseError; bad arguments throw ArgumentError.
 * - The RPC URL may hold an endpoint key as a path segment; only its redacted form (`redactUrl`) is ever put in an
 *   error, and got's own errors (whose options hold the URL) are never attached as a cause.
 * - No retries here: callers (the CLI, the chain watch) decide; the chain watch simply tries again next tick.
 */
import { ArgumentError } from "../../core/errors/argument.js";
import { ValidationError } from "../../core/errors/base.js";
import { parse } from "../../core/errors/parse.js";
import { redactUrl } from "../../core/redact.js";
import { type BodyLimits, DEFAULT_BODY_LIMITS } from "../http/bounded-body.js";
import { TransportError } from "../http/errors.js";
import { createHttpTransport, type HttpResponse, type HttpTransport } from "../http/http.js";
import {
  EvmHttpError,
  EvmMalformedResponseError,
  EvmNotFoundError,
  EvmRedirectError,
  EvmTransportError,
  JsonRpcError,
} from "./errors.js";
import {
  type BlockTag,
  type BlockTransactionsOptions,
  fetchAllBlockTransactions,
  MAX_PAGE_SIZE,
  type RequestOptions,
} from "./otterscan.js";

export {
  type BlockTag,
  type BlockTransactionsOptions,
  MAX_PAGE_SIZE,
  type RequestOptions,
} from "./otterscan.js";

import {
  BlockNumberResult,
  type OtsBlockAllTransactions,
  type OtsBlockTransactions,
  OtsBlockTransactionsResult,
  type OtsFullblockHeader,
  OtsHeader,
} from "./schemas.js";

export type EvmClientOptions = {
  /** The JSON-RPC endpoint, used as given (may contain a key path segment; never shown). */
  rpcUrl: string;
  /** Time-out of one HTTP exchange (ms). Default 10 000. */
  timeoutMs?: number;
  userAgent?: string;
  /** Largest number of calls in one batch request; longer batches are split. Default 20. */
  batchMaxSize?: number;
  /** Bounds on each response body (size after decompression, JSON depth, values). Default DEFAULT_BODY_LIMITS. */
  limits?: Partial<BodyLimits>;
};

type RpcResponse = { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown };

export class EvmClient {
  readonly url: string;
  readonly #batchMaxSize: number;
  readonly #transport: HttpTransport;
  #nextId = 1;

  constructor({
    rpcUrl,
    timeoutMs = 10_000,
    userAgent,
    batchMaxSize = 20,
    limits = DEFAULT_BODY_LIMITS,
  }: EvmClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(rpcUrl);
    } catch {
      throw new ArgumentError(`Invalid RPC URL ${redactUrl(rpcUrl)}: not an absolute URL.`, {
        argument: "rpcUrl",
      });
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new ArgumentError(`Invalid RPC URL ${redactUrl(rpcUrl)}: the scheme must be http or https.`, {
        argument: "rpcUrl",
      });
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
      throw new ArgumentError(`timeoutMs must be a positive integer, got ${timeoutMs}.`, {
        argument: "timeoutMs",
      });
    if (!Number.isInteger(batchMaxSize) || batchMaxSize < 1)
      throw new ArgumentError(`batchMaxSize must be a positive integer, got ${batchMaxSize}.`, {
        argument: "batchMaxSize",
      });
    this.url = redactUrl(rpcUrl);
    this.#batchMaxSize = batchMaxSize;
    // No retries (retryLimit 0): the callers decide (see above).
    this.#transport = createHttpTransport({
      baseUrl: rpcUrl,
      timeoutMs,
      limits: { ...DEFAULT_BODY_LIMITS, ...limits },
      ...(userAgent ? { userAgent } : {}),
    });
  }

  /** One call; resolves to `result` (not validated: the typed methods below validate). */
  async request<T = unknown>(method: string, params: unknown[], { signal }: RequestOptions = {}): Promise<T> {
    const id = this.#nextId++;
    const body = await this.#post({ jsonrpc: "2.0", id, method, params }, method, signal);
    if (Array.isArray(body) || body === null || typeof body !== "object")
      throw this.#malformed(method, "expected one JSON-RPC response object");
    return this.#unwrap(body as RpcResponse, id, method) as T;
  }

  /** Several calls in batch requests of at most `batchMaxSize`; results in call order. Throws the first error in call order. */
  async batch(
    calls: Array<{ method: string; params: unknown[] }>,
    { signal }: RequestOptions = {},
  ): Promise<unknown[]> {
    const results: unknown[] = [];
    for (let start = 0; start < calls.length; start += this.#batchMaxSize) {
      const chunk = calls.slice(start, start + this.#batchMaxSize);
      const ids = chunk.map(() => this.#nextId++);
      const label = `batch(${[...new Set(chunk.map((c) => c.method))].join(",")})`;
      const payload = chunk.map((c, i) => ({
        jsonrpc: "2.0",
        id: ids[i],
        method: c.method,
        params: c.params,
      }));
      const body = await this.#post(payload, label, signal);
      if (!Array.isArray(body)) {
        // A whole-batch failure is one error object (-32700/-32600, docs/exchange-behaviour.md §20).
        if (body && typeof body === "object" && "error" in body)
          this.#unwrap(body as RpcResponse, null, label);
        throw this.#malformed(label, "expected an array of responses to a batch");
      }
      const byId = new Map<unknown, RpcResponse>();
      for (const item of body) {
        if (item && typeof item === "object" && "id" in item)
          byId.set((item as RpcResponse).id, item as RpcResponse);
      }
      chunk.forEach((c, i) => {
        const response = byId.get(ids[i]);
        if (!response) throw this.#malformed(c.method, `no response with id ${ids[i]} in the batch`);
        results.push(this.#unwrap(response, ids[i] as number, c.method));
      });
    }
    return results;
  }

  /** eth_blockNumber. */
  async blockNumber(opts: RequestOptions = {}): Promise<bigint> {
    const raw = await this.request("eth_blockNumber", [], opts);
    return BigInt(this.#validate(BlockNumberResult, raw, "eth_blockNumber"));
  }

  /**
   * The latest block's `timestamp` (whole seconds), from `eth_getBlockByNumber("latest", false)`: the daemon's
   * second witness of the exchange's time (src/switch/exchange-time.ts), served by every HyperEVM RPC (the
   * official one serves no `ots_`).
   */
  async latestBlockTime(opts: RequestOptions = {}): Promise<number> {
    const method = "eth_getBlockByNumber";
    const raw = await this.request(method, ["latest", false], opts);
    if (raw === null) throw new EvmNotFoundError({ block: "latest", method });
    const ts = (raw as { timestamp?: unknown }).timestamp;
    if (typeof raw !== "object" || typeof ts !== "string" || !/^0x[0-9a-fA-F]{1,16}$/.test(ts))
      throw this.#malformed(method, "the block has no hex `timestamp`");
    return Number.parseInt(ts.slice(2), 16);
  }

  /** ots_getHeaderByNumber; `null` (unknown block) becomes EvmNotFoundError. */
  async getHeaderByNumber(block: BlockTag, opts: RequestOptions = {}): Promise<OtsHeader> {
    const param = blockParam(block);
    const raw = await this.request("ots_getHeaderByNumber", [param], opts);
    if (raw === null)
      throw new EvmNotFoundError({ block: blockLabel(block), method: "ots_getHeaderByNumber" });
    return this.#validate(OtsHeader, raw, "ots_getHeaderByNumber");
  }

  /** One page of ots_getBlockTransactions, normalised to `{ fullblock, txs, receipts }`. Size must be 1..MAX_PAGE_SIZE. */
  async getBlockTransactions(
    block: BlockTag,
    page: number,
    size: number,
    opts: RequestOptions = {},
  ): Promise<OtsBlockTransactions> {
    const param = blockParam(block);
    if (!Number.isSafeInteger(page) || page < 0)
      throw new ArgumentError(`Invalid page ${page}: must be an integer >= 0.`, { argument: "page" });
    if (!Number.isSafeInteger(size) || size < 1 || size > MAX_PAGE_SIZE)
      throw new ArgumentError(`Invalid page size ${size}: must be an integer from 1 to ${MAX_PAGE_SIZE}.`, {
        argument: "size",
      });
    const method = "ots_getBlockTransactions";
    let raw: unknown;
    try {
      raw = await this.request(method, [param, page, size], opts);
    } catch (error) {
      // reth: -32001 "block not found: 0x…" (docs/exchange-behaviour.md §17)
      if (error instanceof JsonRpcError && error.code === -32001 && /not found/i.test(error.shortMessage))
        throw new EvmNotFoundError({ block: blockLabel(block), method });
      throw error;
    }
    if (raw === null) throw new EvmNotFoundError({ block: blockLabel(block), method });
    const result = this.#validate(OtsBlockTransactionsResult, raw, method);
    const { transactions, ...fullblock } = result.fullblock;
    const txs = result.txs ?? transactions;
    if (txs === undefined) {
      if (result.receipts.length > 0)
        throw this.#malformed(
          method,
          "receipts without transactions (neither fullblock.transactions nor txs)",
        );
      return { fullblock: fullblock as OtsFullblockHeader, txs: [], receipts: [] };
    }
    if (txs.length !== result.receipts.length)
      throw this.#malformed(
        method,
        `${txs.length} transactions but ${result.receipts.length} receipts in one page`,
      );
    return { fullblock: fullblock as OtsFullblockHeader, txs, receipts: result.receipts };
  }

  /** Every transaction of a block in block order, joined with its receipt; robust to both page orders (see otterscan.ts). */
  async blockTransactions(
    block: BlockTag,
    opts: BlockTransactionsOptions = {},
  ): Promise<OtsBlockAllTransactions> {
    return fetchAllBlockTransactions(this, block, opts);
  }

  /**
   * Whether the node serves the ots_ namespace: probes ots_getHeaderByNumber("latest") (any answer, even null or an
   * invalid-params error, means the method exists), then ots_getApiLevel when present. "Method not found" means no;
   * transport and HTTP errors are thrown, not taken for a no.
   */
  async supportsOtterscan(
    opts: RequestOptions = {},
  ): Promise<{ supported: boolean; apiLevel: number | null }> {
    try {
      await this.request("ots_getHeaderByNumber", ["latest"], opts);
    } catch (error) {
      if (isMethodNotFound(error)) return { supported: false, apiLevel: null };
      if (!(error instanceof JsonRpcError)) throw error;
    }
    try {
      const level = await this.request("ots_getApiLevel", [], opts);
      return { supported: true, apiLevel: typeof level === "number" ? level : null };
    } catch (error) {
      if (error instanceof JsonRpcError) return { supported: true, apiLevel: null };
      throw error;
    }
  }

  /** Ends keep-alive connections. */
  close(): void {
    this.#transport.close();
  }

  async #post(body: unknown, method: string, signal: AbortSignal | undefined): Promise<unknown> {
    let response: HttpResponse;
    try {
      // The same transport and bounded reader as the trading API (docs/security.md, "Bounded input"): size after
      // decompression, then JSON depth and value count before JSON.parse.
      response = await this.#transport.postJson(undefined, body, { signal });
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      if (error.kind === "malformed_response") throw this.#malformed(method, error.reason);
      if (error.kind === "redirect")
        throw new EvmRedirectError({
          status: error.status,
          location: error.location,
          sameOrigin: error.sameOrigin,
          reason: error.reason,
          method,
          url: this.url,
          cause: error,
        });
      throw new EvmTransportError({
        code: error.code,
        reason: error.reason,
        method,
        url: this.url,
        aborted: error.aborted,
        // Safe to keep: the transport's error holds only the redacted URL and a scrubbed reason.
        cause: error,
      });
    }
    const status = response.status;
    if (status < 200 || status > 299)
      throw new EvmHttpError({
        status,
        body: this.#transport.scrub(response.body.subarray(0, 4096).toString("utf8")),
        method,
        url: this.url,
      });
    if (response.json === undefined) {
      const text = response.bodyText;
      if (text.trim() === "") throw this.#malformed(method, `empty body (HTTP ${status})`);
      throw this.#malformed(
        method,
        `body is not JSON: ${JSON.stringify(this.#transport.scrub(text.slice(0, 80)))}`,
      );
    }
    return response.json;
  }

  #unwrap(response: RpcResponse, id: number | null, method: string): unknown {
    if (response.error !== undefined && response.error !== null) {
      const err = response.error as { code?: unknown; message?: unknown; data?: unknown };
      if (typeof err !== "object" || typeof err.code !== "number")
        throw this.#malformed(method, "error member without a numeric code");
      throw new JsonRpcError({
        code: err.code,
        message: this.#transport.scrub(typeof err.message === "string" ? err.message : ""),
        data: err.data,
        method,
        url: this.url,
      });
    }
    if (id !== null && response.id !== id)
      throw this.#malformed(
        method,
        `response id ${JSON.stringify(response.id)} does not match request id ${id}`,
      );
    if (!("result" in response)) throw this.#malformed(method, "neither result nor error");
    return response.result;
  }

  #validate<T extends Parameters<typeof parse>[0]>(schema: T, raw: unknown, method: string) {
    try {
      return parse(schema, raw, `${method} result`) as ReturnType<typeof parse<T>>;
    } catch (error) {
      if (error instanceof ValidationError)
        throw new EvmMalformedResponseError({
          reason: "the result does not match the method's schema",
          method,
          url: this.url,
          issues: error.issues,
        });
      throw error;
    }
  }

  #malformed(method: string, reason: string): EvmMalformedResponseError {
    return new EvmMalformedResponseError({ reason, method, url: this.url });
  }
}

/** -32601, or a gateway's "method … not supported/whitelisted" under another code (kind `method_not_found`). */
export function isMethodNotFound(error: unknown): boolean {
  return error instanceof JsonRpcError && error.kind === "method_not_found";
}

function blockParam(block: BlockTag): number | string {
  if (block === "latest") return "latest";
  if (typeof block === "bigint") {
    if (block < 0n) throw new ArgumentError(`Invalid block ${block}: must be >= 0.`, { argument: "block" });
    return block <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(block) : `0x${block.toString(16)}`;
  }
  if (typeof block === "number" && Number.isSafeInteger(block) && block >= 0) return block;
  throw new ArgumentError(`Invalid block ${String(block)}: must be an integer >= 0 or "latest".`, {
    argument: "block",
  });
}

function blockLabel(block: BlockTag): string {
  return typeof block === "string" ? block : block.toString();
}
