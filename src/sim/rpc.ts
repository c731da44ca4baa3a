/**
 * The simulator's HyperEVM JSON-RPC 2.0 handler (mounted by src/sim/server.ts at `POST /evm` and `POST /<key>/evm`).
 *
 * Conformance (docs/exchange-behaviour.md §20, jsonrpc.org/specification):
 * - invalid JSON → one -32700 error with id null (also when the body looked like a batch);
 * - a request that is not a valid request object → -32600 with id null (or its id when that id is readable);
 *   an empty batch `[]` → one -32600 error (not an array); `[1,2,3]` → an array of three -32600 errors;
 * - unknown method → -32601; wrong arity or types → -32602 (message "Invalid params", detail in `data`, as reth does);
 * - `id` is echoed; a batch is answered by an array; notifications (no `id`) get no response, and a body made only
 *   of notifications gets HTTP 204 with no body.
 * Methods: eth_blockNumber, eth_chainId, eth_getBlockByNumber (the header with `timestamp` in whole seconds of the
 * simulator's own clock, and the block's transaction hashes; the daemon's second witness of the exchange's time),
 * ots_getApiLevel (8, docs/exchange-behaviour.md §19), ots_getHeaderByNumber (null when unknown, §18),
 * ots_getBlockTransactions (§17; page order, size 0 and unknown-block behaviour are SimChain options).
 */
import type { SimChain } from "./chain.js";

export type RpcHandlerResult = { status: number; body: string | undefined };

type JsonRpcId = string | number | null;
type Response = { jsonrpc: "2.0"; id: JsonRpcId; result?: unknown; error?: RpcErrorObject };
type RpcErrorObject = { code: number; message: string; data?: unknown };

class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const invalidParams = (detail: string) => new RpcFailure(-32602, "Invalid params", detail);

const OTS_API_LEVEL = 8;

function isId(v: unknown): v is JsonRpcId {
  return v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

function arity(params: unknown[], min: number, max: number): void {
  if (params.length < min || params.length > max) {
    const want = min === max ? `${min}` : `${min} to ${max}`;
    throw invalidParams(`expected ${want} params, got ${params.length}`);
  }
}

/** Block argument: a JSON integer, a 0x-hex string, or a tag (latest/pending/safe/finalized = head, earliest = 0). */
function blockArg(chain: SimChain, v: unknown, position: number): number {
  if (typeof v === "number") {
    if (Number.isSafeInteger(v) && v >= 0) return v;
  } else if (typeof v === "string") {
    if (/^0x[0-9a-fA-F]{1,16}$/.test(v)) return Number.parseInt(v.slice(2), 16);
    if (v === "latest" || v === "pending" || v === "safe" || v === "finalized") return chain.head();
    if (v === "earliest") return 0;
  }
  throw invalidParams(
    `invalid argument ${position}: block must be a non-negative integer, a 0x-hex quantity or a tag, got ${JSON.stringify(v)}`,
  );
}

function uintArg(v: unknown, position: number, name: string): number {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
  throw invalidParams(
    `invalid argument ${position}: ${name} must be a non-negative integer, got ${JSON.stringify(v)}`,
  );
}

function call(chain: SimChain, method: string, params: unknown[]): unknown {
  switch (method) {
    case "eth_blockNumber":
      arity(params, 0, 0);
      return `0x${chain.head().toString(16)}`;
    case "eth_chainId":
      arity(params, 0, 0);
      return `0x${chain.options.chainId.toString(16)}`;
    case "eth_getBlockByNumber": {
      arity(params, 2, 2);
      if (typeof params[1] !== "boolean")
        throw invalidParams(
          `invalid argument 1: expected a boolean (full transactions), got ${JSON.stringify(params[1])}`,
        );
      const n = blockArg(chain, params[0], 0);
      const header = chain.header(n);
      if (header === null) return null;
      // hashes only (full objects are not served: nothing here asks for them)
      if (params[1])
        throw invalidParams("invalid argument 1: full transaction objects are not served by the simulator");
      return { ...header, transactions: chain.transactions(n).map((t) => t.tx.hash), uncles: [] };
    }
    case "ots_getApiLevel":
      arity(params, 0, 0);
      return OTS_API_LEVEL;
    case "ots_getHeaderByNumber": {
      arity(params, 1, 1);
      return chain.header(blockArg(chain, params[0], 0));
    }
    case "ots_getBlockTransactions": {
      arity(params, 3, 3);
      const block = blockArg(chain, params[0], 0);
      const page = uintArg(params[1], 1, "page number");
      const size = uintArg(params[2], 2, "page size");
      if (size === 0 && chain.options.sizeZero === "error")
        throw invalidParams("invalid argument 2: page size must be greater than 0");
      const result = chain.blockTransactions(block, page, size);
      if (result === null && chain.options.unknownBlock === "error")
        // reth: HeaderNotFound → ResourceNotFound (-32001) "block not found: 0x…" (docs/exchange-behaviour.md §17, reth error mapping)
        throw new RpcFailure(-32001, `block not found: 0x${block.toString(16)}`);
      return result;
    }
    default:
      throw new RpcFailure(
        -32601,
        "Method not found",
        `the method ${method} does not exist/is not available`,
      );
  }
}

/** Handles one request object; undefined for a notification. */
function handleOne(chain: SimChain, req: unknown): Response | undefined {
  if (req === null || typeof req !== "object" || Array.isArray(req)) {
    return { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } };
  }
  const r = req as Record<string, unknown>;
  const hasId = "id" in r;
  const idOk = hasId && isId(r.id);
  const id: JsonRpcId = idOk ? (r.id as JsonRpcId) : null;
  const valid =
    r.jsonrpc === "2.0" &&
    typeof r.method === "string" &&
    (r.params === undefined ||
      Array.isArray(r.params) ||
      (typeof r.params === "object" && r.params !== null)) &&
    (!hasId || idOk);
  if (!valid) return { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid Request" } };
  const notification = !hasId;
  try {
    if (r.params !== undefined && !Array.isArray(r.params))
      throw invalidParams("params must be an array (positional) for this method");
    const result = call(chain, r.method as string, (r.params as unknown[] | undefined) ?? []);
    return notification ? undefined : { jsonrpc: "2.0", id, result };
  } catch (error) {
    if (notification) return undefined;
    if (error instanceof RpcFailure) {
      const err: RpcErrorObject = { code: error.code, message: error.message };
      if (error.data !== undefined) err.data = error.data;
      return { jsonrpc: "2.0", id, error: err };
    }
    return {
      jsonrpc: "2.0",
      id,
      error: {
        code: -32603,
        message: "Internal error",
        data: error instanceof Error ? error.message : String(error),
      },
    };
  }
}

/** Builds the handler: raw request body in, HTTP status and body out. */
export function createRpcHandler(chain: SimChain): (rawBody: string) => RpcHandlerResult {
  return (rawBody: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawBody);
    } catch {
      return json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0)
        return json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } });
      const responses = parsed.map((item) => handleOne(chain, item)).filter((r) => r !== undefined);
      return responses.length === 0 ? { status: 204, body: undefined } : json(responses);
    }
    const response = handleOne(chain, parsed);
    return response === undefined ? { status: 204, body: undefined } : json(response);
  };
}

function json(value: unknown): RpcHandlerResult {
  return { status: 200, body: JSON.stringify(value) };
}
