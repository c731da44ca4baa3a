import { Transaction } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ManualClock } from "../../../src/core/clock.js";
import { EvmClient } from "../../../src/protocol/evm/client.js";
import {
  EvmArgumentError,
  EvmHttpError,
  EvmInconsistentBlockError,
  EvmMalformedResponseError,
  EvmNotFoundError,
  EvmTransportError,
  JsonRpcError,
} from "../../../src/protocol/evm/errors.js";
import { createRpcHandler } from "../../../src/sim/rpc.js";
import { type SimulatorHandle, startSimulator } from "../../../src/sim/server.js";
import { noOtsAnswer, startFakeRpc } from "./helpers.js";

const KEY = "s3cr3tEndpointKey0123456789";

let sim: SimulatorHandle;
let client: EvmClient;

beforeAll(async () => {
  sim = await startSimulator({
    clock: new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0)),
    ipWeightPerMinute: null,
  });
  client = new EvmClient({ rpcUrl: sim.rpcUrl.replace(/\/evm$/, `/${KEY}/evm`), timeoutMs: 2_000 });
});
afterAll(async () => {
  client.close();
  await sim.close();
});

async function catchError(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

function expectNoKey(error: Error) {
  const text = [
    error.message,
    error.stack ?? "",
    JSON.stringify(error),
    String((error as { cause?: unknown }).cause ?? ""),
  ].join("\n");
  expect(text).not.toContain(KEY);
}

describe("EvmClient", () => {
  test("default: eth_blockNumber and ots_getHeaderByNumber through a key path segment", async () => {
    const head = sim.chain.head();
    expect(await client.blockNumber()).toBe(BigInt(head));
    expect(await client.getHeaderByNumber(5)).toEqual(sim.chain.header(5));
    expect(await client.getHeaderByNumber(5n)).toEqual(sim.chain.header(5));
    expect((await client.getHeaderByNumber("latest")).number).toBe(`0x${head.toString(16)}`);
  });

  test("default: one page of ots_getBlockTransactions, normalised", async () => {
    const page = await client.getBlockTransactions(sim.chain.bigBlock, 1, 10);
    expect(page.fullblock.transactionCount).toBe(5000);
    expect(page.fullblock).not.toHaveProperty("transactions");
    expect(page.txs.map((t) => Number(t.transactionIndex))).toEqual(
      Array.from({ length: 10 }, (_, i) => 10 + i),
    );
    expect(page.receipts.map((r) => r.transactionHash)).toEqual(page.txs.map((t) => t.hash));
  });

  test("error: page size is validated before sending", async () => {
    for (const size of [0, -1, 1.5, 1001]) {
      const error = await catchError(client.getBlockTransactions(1, 0, size));
      expect(error).toBeInstanceOf(EvmArgumentError);
      expect(error.message).toContain(`Invalid page size ${size}`);
    }
    expect(await catchError(client.getBlockTransactions(1, -1, 10))).toBeInstanceOf(EvmArgumentError);
  });

  test("error: unknown block → EvmNotFoundError (null result)", async () => {
    const e1 = await catchError(client.getHeaderByNumber(10_000_000));
    expect(e1).toBeInstanceOf(EvmNotFoundError);
    expect(e1.message).toMatch(/^block 10000000 not found/);
    expect(await catchError(client.getBlockTransactions(10_000_000, 0, 10))).toBeInstanceOf(EvmNotFoundError);
    expect(await catchError(client.blockTransactions(10_000_000))).toBeInstanceOf(EvmNotFoundError);
  });

  test("behavior: the 5,000-tx block, every page (fromStart), hashes are keccak of the signed transactions", async () => {
    const pagesSeen: number[] = [];
    const all = await client.blockTransactions(sim.chain.bigBlock, {
      pageSize: 100,
      concurrency: 4,
      onPage: ({ page }) => pagesSeen.push(page),
    });
    expect(all.txs).toHaveLength(5000);
    expect(all.receipts).toHaveLength(5000);
    expect(all.pages).toBe(50);
    expect(all.pageOrder).toBe("fromStart");
    expect(pagesSeen.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const full = sim.chain.transactions(sim.chain.bigBlock);
    all.txs.forEach((tx, i) => {
      expect(Number(tx.transactionIndex)).toBe(i);
      expect(all.receipts[i]!.transactionHash).toBe(tx.hash);
      const signed = Transaction.from(full[i]!.raw);
      expect(signed.hash).toBe(tx.hash);
      // Recovering the sender costs ~1 ms: check a sample.
      if (i % 250 === 0) expect(signed.from!.toLowerCase()).toBe(tx.from);
    });
    expect(all.receipts.some((r) => r.status === "0x0")).toBe(true);
    expect(all.receipts.some((r) => r.contractAddress)).toBe(true);
  });

  test("behavior: the 5,000-tx block from an Erigon-ordered node (fromEnd) comes back in block order", async () => {
    const erigon = await startSimulator({
      pageOrder: "fromEnd",
      clock: new ManualClock(Date.UTC(2026, 0, 1, 12)),
    });
    // the simulator builds and signs the 5,000 transactions on the first page's request: on a crowded machine that
    // takes longer than the client's default 10 s bound (a bound of the test, not a measured figure)
    const c = new EvmClient({ rpcUrl: erigon.rpcUrl, timeoutMs: 60_000 });
    try {
      const all = await c.blockTransactions(erigon.chain.bigBlock, { pageSize: 300, concurrency: 3 });
      expect(all.pageOrder).toBe("fromEnd");
      expect(all.pages).toBe(17);
      expect(all.txs.map((t) => Number(t.transactionIndex))).toEqual(
        Array.from({ length: 5000 }, (_, i) => i),
      );
      expect(all.txs.map((t) => t.hash)).toEqual(
        erigon.chain.transactions(erigon.chain.bigBlock).map((x) => x.tx.hash),
      );
      expect(all.receipts.map((r) => r.transactionHash)).toEqual(all.txs.map((t) => t.hash));
    } finally {
      c.close();
      await erigon.close();
    }
  });

  test("behavior: reth's -32001 and the spec's top-level txs are understood", async () => {
    const reth = await startSimulator({
      chain: { unknownBlock: "error", txsPlacement: "top", bigBlockTxs: 40 },
    });
    const c = new EvmClient({ rpcUrl: reth.rpcUrl });
    try {
      expect(await catchError(c.getBlockTransactions(10_000_000, 0, 10))).toBeInstanceOf(EvmNotFoundError);
      const all = await c.blockTransactions(reth.chain.bigBlock, { pageSize: 7 });
      expect(all.txs.map((t) => t.hash)).toEqual(
        reth.chain.transactions(reth.chain.bigBlock).map((x) => x.tx.hash),
      );
    } finally {
      c.close();
      await reth.close();
    }
  });

  test("behavior: batch correlates ids and restores call order, split by batchMaxSize", async () => {
    const c = new EvmClient({ rpcUrl: sim.rpcUrl, batchMaxSize: 2 });
    try {
      const results = await c.batch([
        { method: "ots_getHeaderByNumber", params: [3] },
        { method: "eth_chainId", params: [] },
        { method: "ots_getApiLevel", params: [] },
        { method: "ots_getHeaderByNumber", params: [4] },
        { method: "eth_blockNumber", params: [] },
      ]);
      expect(results).toEqual([
        sim.chain.header(3),
        "0x3e7",
        8,
        sim.chain.header(4),
        `0x${sim.chain.head().toString(16)}`,
      ]);
      expect(await c.batch([])).toEqual([]);
      const error = await catchError(
        c.batch([
          { method: "eth_chainId", params: [] },
          { method: "nope", params: [] },
        ]),
      );
      expect(error).toBeInstanceOf(JsonRpcError);
      expect((error as JsonRpcError).code).toBe(-32601);
      expect((error as JsonRpcError).method).toBe("nope");
    } finally {
      c.close();
    }
  });

  test("behavior: batch responses in reverse order are matched by id", async () => {
    const handler = createRpcHandler(sim.chain);
    const fake = await startFakeRpc((body) => {
      const out = JSON.parse(handler(body).body!) as unknown[];
      return { body: JSON.stringify(out.reverse()) };
    });
    const c = new EvmClient({ rpcUrl: fake.url });
    try {
      expect(
        await c.batch([
          { method: "eth_chainId", params: [] },
          { method: "ots_getApiLevel", params: [] },
        ]),
      ).toEqual(["0x3e7", 8]);
    } finally {
      c.close();
      await fake.close();
    }
  });

  test("error: JSON-RPC errors carry code, message, data and method", async () => {
    const error = (await catchError(client.request("eth_getBalance", ["0x0"]))) as JsonRpcError;
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.code).toBe(-32601);
    expect(error.method).toBe("eth_getBalance");
    expect(error.data).toBe("the method eth_getBalance does not exist/is not available");
    expect(error.message).toContain("JSON-RPC error -32601 from eth_getBalance: Method not found");
    expectNoKey(error);
  });

  test("error: HTTP 503, malformed body, wrong id, time-out and refused connection; the key is never shown", async () => {
    const errors: Error[] = [];
    sim.faults.set("evm", { errorRate: 1, errorStatus: 503 });
    errors.push(await catchError(client.blockNumber()));
    sim.faults.set("evm", { malformed: true });
    errors.push(await catchError(client.blockNumber()));
    sim.faults.set("evm", { wrongShape: true });
    errors.push(await catchError(client.getHeaderByNumber(1)));
    sim.faults.set("evm", { blackhole: true });
    const slow = new EvmClient({ rpcUrl: sim.rpcUrl.replace(/\/evm$/, `/${KEY}/evm`), timeoutMs: 300 });
    errors.push(await catchError(slow.blockNumber()));
    slow.close();
    sim.faults.clear();
    const refused = new EvmClient({ rpcUrl: `http://127.0.0.1:1/${KEY}/evm` });
    errors.push(await catchError(refused.blockNumber()));
    refused.close();

    expect(errors[0]).toBeInstanceOf(EvmHttpError);
    expect((errors[0] as EvmHttpError).status).toBe(503);
    expect(errors[1]).toBeInstanceOf(EvmMalformedResponseError);
    expect(errors[2]).toBeInstanceOf(EvmMalformedResponseError);
    expect(errors[3]).toBeInstanceOf(EvmTransportError);
    expect((errors[3] as EvmTransportError).code).toBe("ETIMEDOUT");
    expect(errors[4]).toBeInstanceOf(EvmTransportError);
    expect((errors[4] as EvmTransportError).code).toBe("ECONNREFUSED");
    for (const e of errors) {
      expect(e.message).toContain("/***/evm");
      expectNoKey(e);
    }
  });

  test("error: a node returning the same page for every page number → duplicated index", async () => {
    const handler = createRpcHandler(sim.chain);
    const fake = await startFakeRpc((body) => {
      const req = JSON.parse(body) as { method: string; params: unknown[] };
      if (req.method === "ots_getBlockTransactions") req.params[1] = 0;
      return { body: handler(JSON.stringify(req)).body! };
    });
    const c = new EvmClient({ rpcUrl: fake.url });
    try {
      const error = await catchError(
        c.blockTransactions(sim.chain.bigBlock, { pageSize: 1000, concurrency: 1 }),
      );
      expect(error).toBeInstanceOf(EvmInconsistentBlockError);
      expect(error.message).toContain(
        `Inconsistent transactions for block ${sim.chain.bigBlock}: transaction index 0 was returned twice (pages 0 and 1)`,
      );
    } finally {
      c.close();
      await fake.close();
    }
  });

  test("error: a node dropping transactions → missing ones are named", async () => {
    const handler = createRpcHandler(sim.chain);
    const fake = await startFakeRpc((body) => {
      const out = JSON.parse(handler(body).body!) as {
        result?: { fullblock: { transactions?: unknown[] }; receipts: unknown[] };
      };
      const r = out.result;
      if (r && (JSON.parse(body) as { params: number[] }).params[1] === 2) {
        r.fullblock.transactions = r.fullblock.transactions!.slice(1);
        r.receipts = r.receipts.slice(1);
      }
      return { body: JSON.stringify(out) };
    });
    const c = new EvmClient({ rpcUrl: fake.url });
    try {
      const error = await catchError(c.blockTransactions(sim.chain.bigBlock, { pageSize: 1000 }));
      expect(error).toBeInstanceOf(EvmInconsistentBlockError);
      expect(error.message).toContain("1 of 5000 transactions missing after 5 pages of 1000");
      expect(error.message).toContain("First missing indices: 2000");
    } finally {
      c.close();
      await fake.close();
    }
  });

  test("behavior: supportsOtterscan: yes with api level 8, no on -32601, transport errors thrown", async () => {
    expect(await client.supportsOtterscan()).toEqual({ supported: true, apiLevel: 8 });
    const plain = await startFakeRpc(noOtsAnswer);
    const c = new EvmClient({ rpcUrl: plain.url });
    try {
      expect(await c.supportsOtterscan()).toEqual({ supported: false, apiLevel: null });
    } finally {
      c.close();
      await plain.close();
    }
    const down = new EvmClient({ rpcUrl: "http://127.0.0.1:1/evm" });
    expect(await catchError(down.supportsOtterscan())).toBeInstanceOf(EvmTransportError);
    down.close();
  });

  test("error: invalid RPC URL is refused without echoing it", () => {
    expect(() => new EvmClient({ rpcUrl: `ftp://host/${KEY}/evm` })).toThrow(/scheme must be http or https/);
    try {
      new EvmClient({ rpcUrl: `ftp://host/${KEY}/evm` });
    } catch (error) {
      expectNoKey(error as Error);
    }
  });
});

describe("JsonRpcError: its kind comes from the node's answer", () => {
  const url = "http://127.0.0.1:1/evm";
  test("pure: a gateway's 'not whitelisted' is method_not_found; a method name in the label is not", () => {
    expect(
      new JsonRpcError({
        code: -32000,
        message: "the method ots_getBlockTransactions is not whitelisted",
        method: "ots_getBlockTransactions",
        url,
      }).kind,
    ).toBe("method_not_found");
    expect(new JsonRpcError({ code: -32601, message: "nope", method: "eth_call", url }).kind).toBe(
      "method_not_found",
    );
    // the label names a method and the answer says "not found": the node did not refuse the method
    expect(
      new JsonRpcError({ code: -32000, message: "header not found", method: "eth_getMethodTable", url }).kind,
    ).toBe("json_rpc");
  });
});
