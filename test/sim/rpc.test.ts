import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { SimChain, type SimChainOptions } from "../../src/sim/chain.js";
import { createRpcHandler } from "../../src/sim/rpc.js";

function handler(opts: Partial<SimChainOptions> = {}) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const chain = new SimChain({ clock, initialBlocks: 40, bigBlockNumber: 30, bigBlockTxs: 60, ...opts });
  const h = createRpcHandler(chain);
  const send = (body: unknown) => {
    const res = h(typeof body === "string" ? body : JSON.stringify(body));
    return { status: res.status, json: res.body === undefined ? undefined : JSON.parse(res.body) };
  };
  return { chain, clock, send };
}

const req = (method: string, params: unknown[] = [], id: unknown = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

describe("createRpcHandler", () => {
  test("default: methods answer with the id echoed", () => {
    const { send, chain } = handler();
    expect(send(req("eth_blockNumber", [], "a")).json).toEqual({ jsonrpc: "2.0", id: "a", result: "0x27" });
    expect(send(req("eth_chainId", [], 7)).json.result).toBe("0x3e7");
    expect(send(req("ots_getApiLevel")).json.result).toBe(8);
    expect(send(req("ots_getHeaderByNumber", [5])).json.result).toEqual(chain.header(5));
    expect(send(req("ots_getHeaderByNumber", ["0x5"])).json.result).toEqual(chain.header(5));
    expect(send(req("ots_getHeaderByNumber", ["latest"])).json.result).toEqual(chain.header(39));
    expect(send(req("ots_getBlockTransactions", [30, 0, 10])).json.result.fullblock.transactionCount).toBe(
      60,
    );
  });

  test("behavior: unknown block → null (Erigon) or -32001 (reth option); header always null", () => {
    expect(handler().send(req("ots_getBlockTransactions", [999, 0, 10])).json.result).toBeNull();
    expect(handler().send(req("ots_getHeaderByNumber", [999])).json.result).toBeNull();
    const reth = handler({ unknownBlock: "error" });
    expect(reth.send(req("ots_getBlockTransactions", [999, 0, 10])).json.error).toEqual({
      code: -32001,
      message: "block not found: 0x3e7",
    });
    expect(reth.send(req("ots_getHeaderByNumber", [999])).json.result).toBeNull();
  });

  test("behavior: page beyond the last → empty lists; size 0 → -32602 or empty by option", () => {
    const beyond = handler().send(req("ots_getBlockTransactions", [30, 9, 10])).json.result;
    expect(beyond.fullblock.transactionCount).toBe(60);
    expect(beyond.fullblock.transactions).toEqual([]);
    expect(beyond.receipts).toEqual([]);
    const zero = handler().send(req("ots_getBlockTransactions", [30, 0, 0])).json;
    expect(zero.error.code).toBe(-32602);
    expect(zero.error.data).toMatch(/page size must be greater than 0/);
    const empty = handler({ sizeZero: "empty" }).send(req("ots_getBlockTransactions", [30, 0, 0])).json
      .result;
    expect(empty.receipts).toEqual([]);
  });

  // The JSON-RPC 2.0 conformance table (docs/exchange-behaviour.md §20).
  const table: Array<{ name: string; body: unknown; status: number; expected: unknown }> = [
    {
      name: "error: invalid JSON → -32700, id null",
      body: '{"jsonrpc":"2.0","method":"eth_blockNumber","id":1',
      status: 200,
      expected: { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } },
    },
    {
      name: "error: invalid JSON batch → a single -32700 object",
      body: '[{"jsonrpc":"2.0","method":"eth_blockNumber","id":1},{"jsonrpc":"2.0","method"',
      status: 200,
      expected: { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } },
    },
    {
      name: "error: empty batch → a single -32600",
      body: [],
      status: 200,
      expected: { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } },
    },
    {
      name: "error: [1,2,3] → three -32600",
      body: [1, 2, 3],
      status: 200,
      expected: [1, 2, 3].map(() => ({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Invalid Request" },
      })),
    },
    {
      name: "error: missing jsonrpc → -32600 with the readable id",
      body: { id: 4, method: "eth_blockNumber" },
      status: 200,
      expected: { jsonrpc: "2.0", id: 4, error: { code: -32600, message: "Invalid Request" } },
    },
    {
      name: "error: method not a string → -32600",
      body: { jsonrpc: "2.0", id: 5, method: 1 },
      status: 200,
      expected: { jsonrpc: "2.0", id: 5, error: { code: -32600, message: "Invalid Request" } },
    },
    {
      name: "error: unknown method → -32601",
      body: req("eth_sendRawTransaction", ["0x00"], 6),
      status: 200,
      expected: {
        jsonrpc: "2.0",
        id: 6,
        error: {
          code: -32601,
          message: "Method not found",
          data: "the method eth_sendRawTransaction does not exist/is not available",
        },
      },
    },
    {
      name: "error: too many params → -32602",
      body: req("eth_blockNumber", [1], 7),
      status: 200,
      expected: {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602, message: "Invalid params", data: "expected 0 params, got 1" },
      },
    },
    {
      name: "error: too few params → -32602",
      body: req("ots_getBlockTransactions", [1, 0], 8),
      status: 200,
      expected: {
        jsonrpc: "2.0",
        id: 8,
        error: { code: -32602, message: "Invalid params", data: "expected 3 params, got 2" },
      },
    },
    {
      name: "error: wrong type → -32602",
      body: req("ots_getBlockTransactions", [1, "0", 10], 9),
      status: 200,
      expected: {
        jsonrpc: "2.0",
        id: 9,
        error: {
          code: -32602,
          message: "Invalid params",
          data: 'invalid argument 1: page number must be a non-negative integer, got "0"',
        },
      },
    },
    {
      name: "behavior: notification → no body",
      body: { jsonrpc: "2.0", method: "eth_blockNumber" },
      status: 204,
      expected: undefined,
    },
    {
      name: "behavior: batch of notifications → no body",
      body: [
        { jsonrpc: "2.0", method: "eth_blockNumber" },
        { jsonrpc: "2.0", method: "nope" },
      ],
      status: 204,
      expected: undefined,
    },
    {
      name: "behavior: mixed batch (spec example) → array without the notification",
      body: [
        req("eth_chainId", [], "1"),
        { foo: "boo" },
        req("foo.get", [], "5"),
        { jsonrpc: "2.0", method: "eth_chainId" },
      ],
      status: 200,
      expected: [
        { jsonrpc: "2.0", id: "1", result: "0x3e7" },
        { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } },
        {
          jsonrpc: "2.0",
          id: "5",
          error: {
            code: -32601,
            message: "Method not found",
            data: "the method foo.get does not exist/is not available",
          },
        },
      ],
    },
  ];
  for (const row of table) {
    test(row.name, () => {
      const res = handler().send(row.body);
      expect(res.status).toBe(row.status);
      expect(res.json).toEqual(row.expected);
    });
  }
});
