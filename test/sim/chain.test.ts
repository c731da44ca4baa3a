import { getCreateAddress, keccak256, Transaction } from "ethers";
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { SimChain } from "../../src/sim/chain.js";

const SPEC_HEADER_FIELDS = [
  "number",
  "hash",
  "parentHash",
  "nonce",
  "sha3Uncles",
  "logsBloom",
  "transactionsRoot",
  "stateRoot",
  "receiptsRoot",
  "miner",
  "difficulty",
  "totalDifficulty",
  "extraData",
  "size",
  "gasLimit",
  "gasUsed",
  "timestamp",
  "mixHash",
  "baseFeePerGas",
];

function chain(opts: Partial<ConstructorParameters<typeof SimChain>[0]> = {}) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  return {
    clock,
    chain: new SimChain({ clock, initialBlocks: 40, bigBlockNumber: 30, bigBlockTxs: 300, ...opts }),
  };
}

describe("SimChain", () => {
  test("default: headers carry every docs/exchange-behaviour.md §18 field as hex and chain by parentHash", () => {
    const { chain: c, clock } = chain();
    expect(c.head()).toBe(39);
    const h = c.header(39)!;
    expect(Object.keys(h).sort()).toEqual([...SPEC_HEADER_FIELDS].sort());
    for (const k of SPEC_HEADER_FIELDS) expect(h[k as keyof typeof h]).toMatch(/^0x[0-9a-f]*$/);
    expect(h.nonce).toBe("0x0000000000000000");
    expect(Number(h.timestamp)).toBe(Math.floor(clock.now() / 1000));
    for (let n = 1; n <= 39; n++) expect(c.header(n)!.parentHash).toBe(c.header(n - 1)!.hash);
    expect(new Set(Array.from({ length: 40 }, (_, n) => c.header(n)!.hash)).size).toBe(40);
    expect(c.header(40)).toBeNull();
    expect(c.header(-1)).toBeNull();
  });

  test("behavior: deterministic from the seed, different across seeds", () => {
    const a = chain().chain;
    const b = chain().chain;
    const other = chain({ seed: 2 }).chain;
    expect(a.header(12)).toEqual(b.header(12));
    expect(a.transactions(13).map((t) => t.tx.hash)).toEqual(b.transactions(13).map((t) => t.tx.hash));
    expect(other.header(12)!.hash).not.toBe(a.header(12)!.hash);
  });

  test("behavior: blocks appear with the clock and stop while stalled", () => {
    const { chain: c, clock } = chain();
    clock.advance(5_000);
    expect(c.head()).toBe(44);
    c.setStalled(true);
    clock.advance(30_000);
    expect(c.head()).toBe(44);
    c.setStalled(false);
    expect(c.head()).toBe(45);
    expect(Number(c.header(45)!.timestamp)).toBe(Math.floor(clock.now() / 1000));
    clock.advance(2_000);
    expect(c.head()).toBe(47);
  });

  test("behavior: transactions are real signed transactions; receipts are consistent", () => {
    const { chain: c } = chain();
    let sawFailed = false;
    let sawCreate = false;
    for (let n = 0; n <= 39; n++) {
      const items = c.transactions(n);
      const header = c.header(n)!;
      let cumulative = 0n;
      items.forEach(({ tx, receipt, raw }, i) => {
        const parsed = Transaction.from(raw);
        expect(parsed.hash).toBe(tx.hash);
        expect(keccak256(raw)).toBe(tx.hash);
        expect(parsed.from!.toLowerCase()).toBe(tx.from);
        expect(parsed.data).toBe(tx.input);
        expect(receipt.transactionHash).toBe(tx.hash);
        expect(Number(tx.transactionIndex)).toBe(i);
        expect(tx.blockHash).toBe(header.hash);
        cumulative += BigInt(receipt.gasUsed);
        expect(BigInt(receipt.cumulativeGasUsed)).toBe(cumulative);
        expect(BigInt(receipt.effectiveGasPrice)).toBeGreaterThanOrEqual(BigInt(header.baseFeePerGas));
        if (receipt.status === "0x0") sawFailed = true;
        if (tx.to === null) {
          sawCreate = true;
          expect(receipt.contractAddress).toBe(
            getCreateAddress({ from: tx.from, nonce: Number(tx.nonce) }).toLowerCase(),
          );
        } else expect(receipt.contractAddress).toBeNull();
      });
      expect(BigInt(header.gasUsed)).toBe(cumulative);
      expect(BigInt(header.gasUsed)).toBeLessThanOrEqual(BigInt(header.gasLimit));
    }
    expect(sawFailed).toBe(true);
    expect(sawCreate).toBe(true);
  });

  test("behavior: page order fromStart (spec) and fromEnd (Erigon)", () => {
    const start = chain().chain;
    const end = chain({ pageOrder: "fromEnd" }).chain;
    const big = start.bigBlock;
    const idx = (r: ReturnType<SimChain["blockTransactions"]>) =>
      r!.fullblock.transactions!.map((t) => Number(t.transactionIndex));
    expect(idx(start.blockTransactions(big, 0, 100))).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(idx(start.blockTransactions(big, 2, 100))).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i));
    expect(idx(end.blockTransactions(big, 0, 100))).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i));
    expect(idx(end.blockTransactions(big, 1, 120))).toEqual(Array.from({ length: 120 }, (_, i) => 60 + i));
    expect(idx(end.blockTransactions(big, 2, 120))).toEqual(Array.from({ length: 60 }, (_, i) => i));
    const beyond = start.blockTransactions(big, 3, 100)!;
    expect(beyond.fullblock.transactionCount).toBe(300);
    expect(beyond.fullblock.transactions).toEqual([]);
    expect(beyond.receipts).toEqual([]);
    expect(end.blockTransactions(big, 3, 100)!.receipts).toEqual([]);
  });

  test("behavior: ots page shape: input cut to the selector, logs null, receipts in tx order", () => {
    const { chain: c } = chain();
    const r = c.blockTransactions(c.bigBlock, 0, 50)!;
    expect(r.fullblock.logsBloom).toBeNull();
    expect(r.fullblock.transactionCount).toBe(300);
    const full = c.transactions(c.bigBlock);
    r.fullblock.transactions!.forEach((tx, i) => {
      expect(tx.input.length).toBeLessThanOrEqual(10);
      expect(full[i]!.tx.input.startsWith(tx.input)).toBe(true);
      expect(r.receipts[i]!.transactionHash).toBe(tx.hash);
      expect(r.receipts[i]!.logs).toBeNull();
    });
    expect(r.txs).toBeUndefined();
    const both = chain({ txsPlacement: "both" }).chain.blockTransactions(30, 0, 5)!;
    expect(both.txs).toEqual(both.fullblock.transactions);
  });

  test("behavior: warmBigBlock builds the big block in slices, identical to the synchronous build", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const warm = new SimChain({ clock, seed: 7, bigBlockTxs: 600 });
    const cold = new SimChain({ clock, seed: 7, bigBlockTxs: 600 });
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    await warm.warmBigBlock({ sliceSize: 50 });
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(0); // the event loop ran while it was building
    const a = warm.transactions(warm.bigBlock);
    const b = cold.transactions(cold.bigBlock);
    expect(a).toHaveLength(600);
    expect(a.map((t) => t.tx.hash)).toEqual(b.map((t) => t.tx.hash));
    expect(a.at(-1)!.receipt.cumulativeGasUsed).toBe(b.at(-1)!.receipt.cumulativeGasUsed);
    // Already built: returns at once and keeps the same objects.
    await warm.warmBigBlock();
    expect(warm.transactions(warm.bigBlock)).toBe(a);
  });
});
