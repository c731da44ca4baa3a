import { JsonRpcProvider, Network, Transaction } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../../src/sim/server.js";

// An independent client: ethers' JsonRpcProvider (which batches by default) reads the simulator's ots_ results.
let sim: SimulatorHandle;
let provider: JsonRpcProvider;

beforeAll(async () => {
  sim = await startSimulator({ ipWeightPerMinute: null, chain: { bigBlockTxs: 250 } });
  provider = new JsonRpcProvider(sim.rpcUrl, Network.from(999), { staticNetwork: true });
});
afterAll(async () => {
  provider.destroy();
  await sim.close();
});

describe("ethers JsonRpcProvider against the simulator", () => {
  test("default: eth_ methods and ots_getApiLevel", async () => {
    expect(await provider.getBlockNumber()).toBe(sim.chain.head());
    expect(await provider.send("eth_chainId", [])).toBe("0x3e7");
    expect(await provider.send("ots_getApiLevel", [])).toBe(8);
  });

  test("default: ots_getHeaderByNumber by number, hex and latest; null for an unknown block", async () => {
    const [a, b, latest, unknown] = await Promise.all([
      provider.send("ots_getHeaderByNumber", [12]),
      provider.send("ots_getHeaderByNumber", ["0xc"]),
      provider.send("ots_getHeaderByNumber", ["latest"]),
      provider.send("ots_getHeaderByNumber", [99_999_999]),
    ]);
    expect(a).toEqual(sim.chain.header(12));
    expect(b).toEqual(a);
    expect(Number(latest.number)).toBe(sim.chain.head());
    expect(unknown).toBeNull();
  });

  test("behavior: ots_getBlockTransactions pages; hashes and senders verified by ethers from the raw transactions", async () => {
    const big = sim.chain.bigBlock;
    const pages = await Promise.all(
      [0, 1, 2].map((p) => provider.send("ots_getBlockTransactions", [big, p, 100])),
    );
    const txs = pages.flatMap((p) => p.fullblock.transactions);
    expect(pages[0].fullblock.transactionCount).toBe(250);
    expect(txs.map((t: { transactionIndex: string }) => Number(t.transactionIndex))).toEqual(
      Array.from({ length: 250 }, (_, i) => i),
    );
    const raw = sim.chain.transactions(big);
    txs.forEach((t: { hash: string; from: string }, i: number) => {
      const parsed = Transaction.from(raw[i]!.raw);
      expect(parsed.hash).toBe(t.hash);
      if (i % 50 === 0) expect(parsed.from!.toLowerCase()).toBe(t.from);
    });
    // A plain transfer (input "0x", not cut) rebuilds to the same hash from the RPC fields alone.
    const transfer = txs.find((t: { input: string }) => t.input === "0x");
    const rebuilt = Transaction.from({
      type: 2,
      chainId: 999n,
      nonce: Number(transfer.nonce),
      to: transfer.to,
      value: BigInt(transfer.value),
      gasLimit: BigInt(transfer.gas),
      maxFeePerGas: BigInt(transfer.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(transfer.maxPriorityFeePerGas),
      data: transfer.input,
      accessList: [],
      signature: { r: transfer.r, s: transfer.s, yParity: Number(transfer.yParity) as 0 | 1 },
    });
    expect(rebuilt.hash).toBe(transfer.hash);
    expect(rebuilt.from!.toLowerCase()).toBe(transfer.from);
  });

  test("error: JSON-RPC errors surface through ethers with their code", async () => {
    await expect(provider.send("ots_getBlockTransactions", [1, 0, 0])).rejects.toMatchObject({
      error: { code: -32602 },
    });
    await expect(provider.send("ots_nope", [])).rejects.toMatchObject({ error: { code: -32601 } });
  });
});
