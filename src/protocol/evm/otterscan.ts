/**
 * Paging every transaction of one block out of ots_getBlockTransactions, robustly.
 *
 * Real nodes disagree on page order (docs/exchange-behaviour.md §17): the service spec, anvil and reth main (PR #23442) put the
 * FIRST s transactions on page 0; Erigon and older reth put the LAST s there. Page arithmetic alone is therefore
 * not trusted: `fullblock.transactionCount` (the whole block's count, a JSON number) fixes how many pages to ask for
 * (ceil(N/s) in either order), and each item is placed by its own `transactionIndex`. Every position must be filled
 * exactly once, every transaction must have its receipt (joined by hash), and the block hash and count must not
 * change between pages; otherwise EvmInconsistentBlockError says what went wrong.
 */

import { ArgumentError } from "../../core/errors/argument.js";
import { EvmInconsistentBlockError } from "./errors.js";
import type { OtsBlockAllTransactions, OtsBlockTransactions, OtsReceipt, OtsTransaction } from "./schemas.js";

/** Largest page size the client sends. No maximum is documented (docs/exchange-behaviour.md §17); Erigon caps at 255 (uint8), reth has none. */
export const MAX_PAGE_SIZE = 1000;

export type BlockTag = number | bigint | "latest";

export type RequestOptions = { signal?: AbortSignal | undefined };

export type BlockTransactionsOptions = RequestOptions & {
  /** Transactions per page. Default 100. */
  pageSize?: number;
  /** Pages in flight at once. Default 4. */
  concurrency?: number;
  /** Called after each page arrives (for progress). */
  onPage?: (progress: { page: number; pages: number; received: number; total: number }) => void;
};

/** What the paging needs of a client (EvmClient has it): the head's number and one page of a block. */
export type BlockPageSource = {
  blockNumber(opts?: RequestOptions): Promise<bigint>;
  getBlockTransactions(
    block: BlockTag,
    page: number,
    size: number,
    opts?: RequestOptions,
  ): Promise<OtsBlockTransactions>;
};

export async function fetchAllBlockTransactions(
  client: BlockPageSource,
  block: BlockTag,
  { pageSize = 100, concurrency = 4, onPage, signal }: BlockTransactionsOptions = {},
): Promise<OtsBlockAllTransactions> {
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
    throw new ArgumentError(`Invalid page size ${pageSize}: must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > 32)
    throw new ArgumentError(`Invalid concurrency ${concurrency}: must be an integer from 1 to 32.`);
  // Pin "latest" to a number first: every page must come from the same block.
  const number = block === "latest" ? await client.blockNumber({ signal }) : block;
  const blockNo = Number(number);
  const first = await client.getBlockTransactions(number, 0, pageSize, { signal });
  const total = first.fullblock.transactionCount;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const txs = new Array<OtsTransaction | undefined>(total);
  const receipts = new Array<OtsReceipt | undefined>(total);
  const seenOn = new Map<number, number>();
  let received = 0;
  const fail = (reason: string, metaMessages?: string[]) =>
    new EvmInconsistentBlockError({ block: blockNo, reason, metaMessages });

  if (BigInt(first.fullblock.number) !== BigInt(number))
    throw fail(`asked for block ${number}, the node answered block ${BigInt(first.fullblock.number)}`);

  const place = (p: number, page: OtsBlockTransactions) => {
    if (page.fullblock.hash !== first.fullblock.hash)
      throw fail(
        `the block changed while paging (hash ${first.fullblock.hash} on page 0, ${page.fullblock.hash} on page ${p})`,
      );
    if (page.fullblock.transactionCount !== total)
      throw fail(
        `transactionCount changed while paging (${total} on page 0, ${page.fullblock.transactionCount} on page ${p})`,
      );
    const byHash = new Map(page.receipts.map((r) => [r.transactionHash.toLowerCase(), r]));
    for (const tx of page.txs) {
      const index = Number(BigInt(tx.transactionIndex));
      if (index >= total)
        throw fail(`transaction ${tx.hash} has index ${index}, beyond the block's ${total} transactions`);
      const earlier = seenOn.get(index);
      if (earlier !== undefined)
        throw fail(`transaction index ${index} was returned twice (pages ${earlier} and ${p})`);
      const receipt = byHash.get(tx.hash.toLowerCase());
      if (!receipt) throw fail(`no receipt for transaction ${tx.hash} (index ${index}, page ${p})`);
      if (receipt.transactionIndex !== undefined && Number(BigInt(receipt.transactionIndex)) !== index)
        throw fail(
          `the receipt of ${tx.hash} says index ${Number(BigInt(receipt.transactionIndex))}, the transaction ${index}`,
        );
      seenOn.set(index, p);
      txs[index] = tx;
      receipts[index] = receipt;
      received++;
    }
    onPage?.({ page: p, pages, received, total });
  };
  place(0, first);

  if (pages > 1) {
    const controller = new AbortController();
    const pageSignal = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
    let next = 1;
    const worker = async () => {
      while (next < pages && !pageSignal.aborted) {
        const p = next++;
        try {
          place(p, await client.getBlockTransactions(number, p, pageSize, { signal: pageSignal }));
        } catch (error) {
          controller.abort();
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, pages - 1) }, worker));
  }

  const missing: number[] = [];
  for (let i = 0; i < total && missing.length < 6; i++) if (txs[i] === undefined) missing.push(i);
  if (missing.length > 0)
    throw fail(`${total - received} of ${total} transactions missing after ${pages} pages of ${pageSize}`, [
      `First missing indices: ${missing.slice(0, 5).join(", ")}`,
    ]);

  return {
    fullblock: first.fullblock,
    txs: txs as OtsTransaction[],
    receipts: receipts as OtsReceipt[],
    pageOrder: detectOrder(first, total, pageSize),
    pages,
  };
}

/** Which order the node used, judged from page 0 (docs/exchange-behaviour.md §17). */
export function detectOrder(
  page0: OtsBlockTransactions,
  total: number,
  pageSize: number,
): "fromStart" | "fromEnd" | "unknown" {
  if (page0.txs.length === 0) return "unknown";
  const indices = page0.txs.map((t) => Number(BigInt(t.transactionIndex)));
  const min = Math.min(...indices);
  const max = Math.max(...indices);
  if (total <= pageSize) return "fromStart";
  if (min === 0) return "fromStart";
  if (max === total - 1) return "fromEnd";
  return "unknown";
}
