/**
 * A deterministic, simulated HyperEVM chain for the simulator's JSON-RPC (`ots_*`, `eth_blockNumber`, `eth_chainId`).
 *
 * - Blocks appear over time: one every `blockTimeMs` of the injected clock, produced lazily when the chain is read.
 *   `setStalled(true)` stops production (to test stall warnings); un-stalling produces the next block at once.
 * - Everything derives from the seed: a cheap per-block plan (./chain-plan.ts: senders, recipients, values, gas,
 *   status) fixes the header (gasUsed, roots, hash), and the signed bodies are built only when a block's
 *   transactions are read (./chain-blocks.ts: real EIP-1559 transactions, London-layout header hashes).
 * - The 5,000-transaction block (`bigBlock`) exceeds HyperEVM's 30M big-block gas limit at 21,000 gas a transfer;
 *   its gasLimit is raised to fit (the only block that does this).
 * - This file keeps the chain's time (which blocks exist), its pages and its caches.
 */
import type { Clock } from "../core/clock.js";
import { ArgumentError } from "../core/errors/argument.js";
import { type BodyContext, buildTx, headerHash, headerJson, hex, ZERO_HASH } from "./chain-blocks.js";
import type { HeaderJson, OtsBlockTransactionsJson, SimTransaction } from "./chain-json.js";
import { type BlockPlan, type ChainParties, chainParties, NONCE_STRIDE, planBlock } from "./chain-plan.js";

export type SimChainOptions = {
  clock: Clock;
  /** Seed of everything (wallets, transactions, hashes). Default 1. */
  seed?: number;
  /**
   * Page order of ots_getBlockTransactions. `fromStart` (default): page p holds positions p*s..p*s+s-1 as the service
   * spec says (reth main since PR #23442, anvil). `fromEnd`: page 0 holds the last s transactions (Erigon, older reth;
   * docs/exchange-behaviour.md §17).
   */
  pageOrder?: "fromStart" | "fromEnd";
  /** Page size 0: `error` (-32602, default) or `empty` lists (what the slice arithmetic of real nodes gives, docs/exchange-behaviour.md §17). */
  sizeZero?: "error" | "empty";
  /** Unknown block in ots_getBlockTransactions: `null` (Erigon, default) or `error` (reth's -32001 "block not found"). */
  unknownBlock?: "null" | "error";
  /**
   * Where ots_getBlockTransactions puts the page's transactions: `fullblock` (in `fullblock.transactions`, as Erigon
   * and reth do, default), `top` (a top-level `txs`, as the service spec's table reads) or `both`.
   */
  txsPlacement?: "fullblock" | "top" | "both";
  /** A new block every this many ms of the clock. Default 1000 (HyperEVM small blocks, docs/exchange-behaviour.md §16). */
  blockTimeMs?: number;
  /** Time (ms) of block 0. Default: so that block `initialBlocks - 1` is stamped with the clock's time at creation. */
  genesisTime?: number;
  /** Blocks that exist at creation. Default 120. */
  initialBlocks?: number;
  /** The block that holds `bigBlockTxs` transactions. Default 100. */
  bigBlockNumber?: number;
  /** Transactions in the big block. Default 5000. */
  bigBlockTxs?: number;
  /** eth_chainId. Default 999 (HyperEVM mainnet). */
  chainId?: number;
};

const BODY_CACHE = 64;
/**
 * The big block's body, shared by every chain of this process built the same way: a body is a pure function of the
 * seed, the chain id, the block's number and hash (which covers its time and every block before it) and its size,
 * and signing 5,000 transactions costs seconds of CPU. Keyed by exactly those; a handful kept.
 */
const BIG_BODIES = new Map<string, SimTransaction[]>();
const BIG_BODIES_KEPT = 4;

export class SimChain {
  readonly options: Required<Omit<SimChainOptions, "clock" | "genesisTime">> & { genesisTime: number };
  readonly bigBlock: number;
  readonly #clock: Clock;
  readonly #parties: ChainParties;
  /** Block times (ms), index = block number. */
  readonly #times: number[] = [];
  /** Block hashes computed so far (a prefix of the chain). */
  readonly #hashes: string[] = [];
  readonly #plans = new Map<number, BlockPlan>();
  readonly #bodies = new Map<number, SimTransaction[]>();
  #bigBody: SimTransaction[] | null = null;
  #nextAt: number;
  #stalled = false;

  constructor(opts: SimChainOptions) {
    const blockTimeMs = opts.blockTimeMs ?? 1000;
    const initialBlocks = opts.initialBlocks ?? 120;
    const bigBlockTxs = opts.bigBlockTxs ?? 5000;
    if (!Number.isInteger(blockTimeMs) || blockTimeMs < 1)
      throw new ArgumentError(`blockTimeMs must be an integer >= 1, got ${blockTimeMs}`);
    if (!Number.isInteger(initialBlocks) || initialBlocks < 1)
      throw new ArgumentError(`initialBlocks must be an integer >= 1, got ${initialBlocks}`);
    if (!Number.isInteger(bigBlockTxs) || bigBlockTxs < 0 || bigBlockTxs >= NONCE_STRIDE)
      throw new ArgumentError(`bigBlockTxs must be an integer in [0, ${NONCE_STRIDE}), got ${bigBlockTxs}`);
    this.#clock = opts.clock;
    const genesisTime = opts.genesisTime ?? opts.clock.now() - (initialBlocks - 1) * blockTimeMs;
    this.options = {
      seed: opts.seed ?? 1,
      pageOrder: opts.pageOrder ?? "fromStart",
      sizeZero: opts.sizeZero ?? "error",
      unknownBlock: opts.unknownBlock ?? "null",
      txsPlacement: opts.txsPlacement ?? "fullblock",
      blockTimeMs,
      genesisTime,
      initialBlocks,
      bigBlockNumber: opts.bigBlockNumber ?? Math.min(100, initialBlocks - 1),
      bigBlockTxs,
      chainId: opts.chainId ?? 999,
    };
    this.bigBlock = this.options.bigBlockNumber;
    this.#parties = chainParties(this.options.seed);
    for (let n = 0; n < initialBlocks; n++) this.#times.push(genesisTime + n * blockTimeMs);
    this.#nextAt = genesisTime + initialBlocks * blockTimeMs;
  }

  /** Newest block number; blocks due by the clock are produced first. */
  head(): number {
    this.#produce();
    return this.#times.length - 1;
  }

  /** The header of block n (all fields of docs/exchange-behaviour.md §18, hex strings), or null when it does not exist (yet). */
  header(n: number): HeaderJson | null {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.head()) return null;
    const parentHash = n === 0 ? ZERO_HASH : this.#hash(n - 1);
    return headerJson(this.options.seed, this.#plan(n), this.#hash(n), parentHash);
  }

  /** Number of transactions in block n (cheap: does not sign), or null for an unknown block. */
  transactionCount(n: number): number | null {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.head()) return null;
    return this.#plan(n).txs.length;
  }

  /**
   * The ots_getBlockTransactions result for page `page` of size `size` in the configured page order, or null for an
   * unknown block. A page beyond the last, and size 0, give empty lists (the RPC layer turns size 0 into -32602 when
   * configured so).
   */
  blockTransactions(n: number, page: number, size: number): OtsBlockTransactionsJson | null {
    const header = this.header(n);
    if (header === null) return null;
    const count = this.#plan(n).txs.length;
    let start = 0;
    let end = 0;
    if (size > 0 && count > 0) {
      if (this.options.pageOrder === "fromStart") {
        start = Math.min(page * size, count);
        end = Math.min(page * size + size, count);
      } else {
        end = Math.max(0, count - page * size);
        start = Math.max(0, end - size);
      }
    }
    const items = start < end ? this.transactions(n).slice(start, end) : [];
    const cut = items.map(({ tx }) => ({
      ...tx,
      input: tx.input.length >= 10 ? tx.input.slice(0, 10) : tx.input,
    }));
    const { logsBloom: _bloom, ...rest } = header;
    const placement = this.options.txsPlacement;
    return {
      fullblock: {
        ...rest,
        logsBloom: null,
        uncles: [],
        transactionCount: count,
        ...(placement !== "top" ? { transactions: cut } : {}),
      },
      receipts: items.map(({ receipt }) => receipt),
      ...(placement !== "fullblock" ? { txs: cut } : {}),
    };
  }

  /** Every transaction of block n, complete, with receipt and raw signed bytes (built and cached on first use). */
  transactions(n: number): SimTransaction[] {
    if (n === this.bigBlock && this.#bigBody) return this.#bigBody;
    const cached = this.#bodies.get(n);
    if (cached) return cached;
    if (this.header(n) === null) throw new ArgumentError(`block ${n} does not exist`);
    if (n === this.bigBlock) {
      const { seed, chainId, bigBlockTxs } = this.options;
      const key = `${seed}:${chainId}:${n}:${this.#hash(n)}:${bigBlockTxs}`;
      let body = BIG_BODIES.get(key);
      if (!body) {
        body = this.#buildBody(n);
        if (BIG_BODIES.size >= BIG_BODIES_KEPT) {
          const oldest = BIG_BODIES.keys().next().value;
          if (oldest !== undefined) BIG_BODIES.delete(oldest);
        }
        BIG_BODIES.set(key, body);
      }
      this.#bigBody = body;
      return body;
    }
    const body = this.#buildBody(n);
    if (this.#bodies.size >= BODY_CACHE) {
      const oldest = this.#bodies.keys().next().value;
      if (oldest !== undefined) this.#bodies.delete(oldest);
    }
    this.#bodies.set(n, body);
    return body;
  }

  /** Addresses that send or receive transactions on this chain (lower-case), for tests to watch. */
  addressesSeen(): string[] {
    const { wallets, recipients, contracts } = this.#parties;
    return [...wallets, ...recipients, ...contracts];
  }

  /** The wallets that sign every transaction (lower-case addresses). */
  senders(): string[] {
    return [...this.#parties.wallets];
  }

  /** Whether the big block's body is built (by `transactions` or `warmBigBlock`). */
  get bigBlockBuilt(): boolean {
    return this.#bigBody !== null;
  }

  /** Stops (true) or resumes (false) block production. Resuming produces the next block at the current time. */
  setStalled(stalled: boolean): void {
    if (stalled === this.#stalled) return;
    if (stalled) {
      this.#produce();
      this.#stalled = true;
    } else {
      this.#stalled = false;
      this.#nextAt = Math.max(this.#nextAt, this.#clock.now());
    }
  }

  get stalled(): boolean {
    return this.#stalled;
  }

  #produce(): void {
    if (this.#stalled) return;
    const now = this.#clock.now();
    const step = this.options.blockTimeMs;
    while (this.#nextAt <= now) {
      this.#times.push(this.#nextAt);
      this.#nextAt += step;
    }
  }

  #hash(n: number): string {
    while (this.#hashes.length <= n) {
      const m = this.#hashes.length;
      const parent = m === 0 ? ZERO_HASH : (this.#hashes[m - 1] as string);
      this.#hashes.push(headerHash(this.options.seed, this.#plan(m), parent));
      // Plans are cheap to rebuild; keep memory flat when the chain grows by days of blocks.
      if (m !== this.bigBlock && this.#plans.size > 4096) this.#plans.delete(m);
    }
    return this.#hashes[n] as string;
  }

  #plan(n: number): BlockPlan {
    const cached = this.#plans.get(n);
    if (cached) return cached;
    const plan = planBlock(n, {
      seed: this.options.seed,
      timeMs: this.#times[n] as number,
      isBig: n === this.bigBlock,
      bigBlockTxs: this.options.bigBlockTxs,
      parties: this.#parties,
    });
    this.#plans.set(n, plan);
    return plan;
  }

  #buildBody(n: number): SimTransaction[] {
    const ctx = this.#bodyContext(n);
    let cumulative = 0n;
    return ctx.plan.txs.map((p, i) => {
      cumulative += p.gasUsed;
      return buildTx(ctx, i, cumulative);
    });
  }

  #bodyContext(n: number): BodyContext {
    return {
      plan: this.#plan(n),
      blockHash: this.#hash(n),
      blockNumber: hex(n),
      chainId: BigInt(this.options.chainId),
      parties: this.#parties,
    };
  }

  /**
   * Builds and caches the big block in slices, yielding to the event loop between them, so a long-running
   * simulator (`hl-deadman sim`) answers its other requests while the 5,000 transactions are signed (2–3 s of
   * CPU in one go otherwise, on first use). Resolves at once when it is already built.
   */
  async warmBigBlock({ sliceSize = 100 }: { sliceSize?: number } = {}): Promise<void> {
    const n = this.bigBlock;
    if (this.#bigBody || this.header(n) === null) return;
    const ctx = this.#bodyContext(n);
    const body: SimTransaction[] = [];
    let cumulative = 0n;
    for (let i = 0; i < ctx.plan.txs.length; i++) {
      cumulative += ctx.plan.txs[i]!.gasUsed;
      body.push(buildTx(ctx, i, cumulative));
      if ((i + 1) % sliceSize === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.#bigBody) return; // built synchronously meanwhile (a request came first)
      }
    }
    this.#bigBody ??= body;
  }
}
