/**
 * A deterministic, simulated HyperEVM chain for the simulator's JSON-RPC (`ots_*`, `eth_blockNumber`, `eth_chainId`).
 *
 * - Blocks appear over time: one every `blockTimeMs` of the injected clock, produced lazily when the chain is read.
 *   `setStalled(true)` stops production (to test stall warnings); un-stalling produces the next block at once.
 * - Everything derives from the seed: a cheap per-block "plan" (senders, recipients, values, gas, status) fixes the
 *   header (gasUsed, roots, hash), and the signed bodies are built only when a block's transactions are read.
 * - Transactions are real EIP-1559 transactions signed by wallets derived from the seed, so every `hash` is the
 *   keccak of the signed serialized transaction and `from` recovers from the signature.
 * - Header hashes are keccak(rlp(header)) in the London layout, chained through parentHash.
 * - transactionsRoot and receiptsRoot are keccak digests of the block plan, not Merkle-Patricia trie roots (nobody
 *   verifies them against the body; computing tries would need every block signed).
 * - The 5,000-transaction block (`bigBlock`) exceeds HyperEVM's 30M big-block gas limit at 21,000 gas a transfer;
 *   its gasLimit is raised to fit (the only block that does this).
 */
import {
  computeAddress,
  encodeRlp,
  getCreateAddress,
  keccak256,
  SigningKey,
  Transaction,
  toBeArray,
  toBeHex,
  toUtf8Bytes,
  zeroPadValue,
} from "ethers";
import type { Clock } from "../core/clock.js";
import { ArgumentError } from "../core/errors/argument.js";
import { createRng } from "./prng.js";

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

export type HeaderJson = {
  number: string;
  hash: string;
  parentHash: string;
  nonce: string;
  sha3Uncles: string;
  logsBloom: string;
  transactionsRoot: string;
  stateRoot: string;
  receiptsRoot: string;
  miner: string;
  difficulty: string;
  totalDifficulty: string;
  extraData: string;
  size: string;
  gasLimit: string;
  gasUsed: string;
  timestamp: string;
  mixHash: string;
  baseFeePerGas: string;
};

export type TransactionJson = {
  blockHash: string;
  blockNumber: string;
  from: string;
  gas: string;
  gasPrice: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  hash: string;
  input: string;
  nonce: string;
  to: string | null;
  transactionIndex: string;
  value: string;
  type: string;
  accessList: unknown[];
  chainId: string;
  v: string;
  r: string;
  s: string;
  yParity: string;
};

export type ReceiptJson = {
  transactionHash: string;
  transactionIndex: string;
  blockHash: string;
  blockNumber: string;
  from: string;
  to: string | null;
  status: string;
  gasUsed: string;
  cumulativeGasUsed: string;
  effectiveGasPrice: string;
  contractAddress: string | null;
  type: string;
  logs: null;
  logsBloom: null;
};

export type OtsBlockTransactionsJson = {
  fullblock: Omit<HeaderJson, "logsBloom"> & {
    logsBloom: null;
    uncles: string[];
    transactionCount: number;
    transactions?: TransactionJson[];
  };
  receipts: ReceiptJson[];
  txs?: TransactionJson[];
};

/** One transaction of a block, complete (input not cut), with its receipt and signed serialization. */
export type SimTransaction = { tx: TransactionJson; receipt: ReceiptJson; raw: string };

type TxPlan = {
  sender: number;
  kind: "transfer" | "call" | "create";
  to: string | null;
  value: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  ok: boolean;
  nonce: number;
  priorityFee: bigint;
  data: string;
};

type BlockPlan = {
  number: number;
  timeMs: number;
  baseFee: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  txs: TxPlan[];
};

const EMPTY_UNCLES = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";
/** keccak(rlp("")), the root of an empty trie. */
const EMPTY_TRIE = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
const ZERO_BLOOM = `0x${"00".repeat(256)}`;
const ZERO_ADDRESS = `0x${"00".repeat(20)}`;
const POW_NONCE = "0x0000000000000000";
const WALLETS = 8;
const NONCE_STRIDE = 100_000;
const SMALL_GAS_LIMIT = 2_000_000n;
const BIG_GAS_LIMIT = 30_000_000n;
/** Minimal init code (a contract that reverts on every call); only its bytes matter here. */
const INIT_CODE =
  "0x6080604052348015600f57600080fd5b50603f80601d6000396000f3fe6080604052600080fdfea164736f6c6343000814000a";
const BODY_CACHE = 64;

/** What building one block's transactions needs. */
type BodyContext = { plan: BlockPlan; blockHash: string; blockNumber: string; chainId: bigint };

const hex = (n: number | bigint): string => `0x${n.toString(16)}`;

/** splitmix32-style integer hash, so each block's PRNG is independent of every other block's. */
function mix(a: number, b: number): number {
  let h = (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d) >>> 0;
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

export class SimChain {
  readonly options: Required<Omit<SimChainOptions, "clock" | "genesisTime">> & { genesisTime: number };
  readonly bigBlock: number;
  readonly #clock: Clock;
  readonly #keys: SigningKey[];
  readonly #wallets: string[];
  readonly #recipients: string[];
  readonly #contracts: string[];
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
    const seed = this.options.seed;
    this.#keys = Array.from(
      { length: WALLETS },
      (_, i) => new SigningKey(keccak256(toUtf8Bytes(`hl-deadman-sim:${seed}:wallet:${i}`))),
    );
    this.#wallets = this.#keys.map((k) => computeAddress(k).toLowerCase());
    this.#contracts = Array.from({ length: 3 }, (_, i) =>
      keccak256(toUtf8Bytes(`hl-deadman-sim:${seed}:contract:${i}`))
        .slice(0, 42)
        .toLowerCase(),
    );
    this.#recipients = [
      ...Array.from({ length: 4 }, (_, i) =>
        keccak256(toUtf8Bytes(`hl-deadman-sim:${seed}:eoa:${i}`))
          .slice(0, 42)
          .toLowerCase(),
      ),
    ];
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
    const plan = this.#plan(n);
    const hash = this.#hash(n);
    const parentHash = n === 0 ? `0x${"00".repeat(32)}` : this.#hash(n - 1);
    const fields = this.#headerFields(plan, parentHash);
    return {
      number: hex(n),
      hash,
      parentHash,
      nonce: POW_NONCE,
      sha3Uncles: EMPTY_UNCLES,
      logsBloom: ZERO_BLOOM,
      transactionsRoot: fields.transactionsRoot,
      stateRoot: fields.stateRoot,
      receiptsRoot: fields.receiptsRoot,
      miner: ZERO_ADDRESS,
      difficulty: "0x0",
      totalDifficulty: "0x0",
      extraData: "0x",
      size: hex(this.#estimatedSize(plan)),
      gasLimit: hex(plan.gasLimit),
      gasUsed: hex(plan.gasUsed),
      timestamp: hex(Math.floor(plan.timeMs / 1000)),
      mixHash: fields.mixHash,
      baseFeePerGas: hex(plan.baseFee),
    };
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
    const body = this.#buildBody(n);
    if (n === this.bigBlock) this.#bigBody = body;
    else {
      if (this.#bodies.size >= BODY_CACHE) {
        const oldest = this.#bodies.keys().next().value;
        if (oldest !== undefined) this.#bodies.delete(oldest);
      }
      this.#bodies.set(n, body);
    }
    return body;
  }

  /** Addresses that send or receive transactions on this chain (lower-case), for tests to watch. */
  addressesSeen(): string[] {
    return [...this.#wallets, ...this.#recipients, ...this.#contracts];
  }

  /** The wallets that sign every transaction (lower-case addresses). */
  senders(): string[] {
    return [...this.#wallets];
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
      const parent = m === 0 ? `0x${"00".repeat(32)}` : (this.#hashes[m - 1] as string);
      const plan = this.#plan(m);
      const f = this.#headerFields(plan, parent);
      const q = (v: number | bigint) => toBeArray(v);
      const rlp = encodeRlp([
        parent,
        EMPTY_UNCLES,
        ZERO_ADDRESS,
        f.stateRoot,
        f.transactionsRoot,
        f.receiptsRoot,
        ZERO_BLOOM,
        q(0),
        q(m),
        q(plan.gasLimit),
        q(plan.gasUsed),
        q(Math.floor(plan.timeMs / 1000)),
        "0x",
        f.mixHash,
        POW_NONCE,
        q(plan.baseFee),
      ]);
      this.#hashes.push(keccak256(rlp));
      // Plans are cheap to rebuild; keep memory flat when the chain grows by days of blocks.
      if (m !== this.bigBlock && this.#plans.size > 4096) this.#plans.delete(m);
    }
    return this.#hashes[n] as string;
  }

  #headerFields(plan: BlockPlan, parentHash: string) {
    const seed = this.options.seed;
    const digest = (what: string) =>
      keccak256(
        toUtf8Bytes(`${seed}:${what}:${plan.number}:${plan.txs.length}:${plan.gasUsed}:${parentHash}`),
      );
    return {
      stateRoot: digest("state"),
      transactionsRoot: plan.txs.length === 0 ? EMPTY_TRIE : digest("txs"),
      receiptsRoot: plan.txs.length === 0 ? EMPTY_TRIE : digest("receipts"),
      mixHash: digest("mix"),
    };
  }

  #estimatedSize(plan: BlockPlan): number {
    let size = 540;
    for (const t of plan.txs) size += 116 + (t.data.length - 2) / 2;
    return size;
  }

  #plan(n: number): BlockPlan {
    const cached = this.#plans.get(n);
    if (cached) return cached;
    const { seed } = this.options;
    const rnd = createRng(mix(seed, n));
    const timeMs = this.#times[n] as number;
    const baseFee = 100_000_000n + BigInt(Math.floor(rnd() * 50_000_000));
    const isBig = n === this.bigBlock;
    const r = rnd();
    const count = isBig ? this.options.bigBlockTxs : r < 0.3 ? 0 : 1 + Math.floor(rnd() * 6);
    const perSender = new Array<number>(WALLETS).fill(0);
    const txs: TxPlan[] = [];
    let gasUsed = 0n;
    for (let i = 0; i < count; i++) {
      const sender = Math.floor(rnd() * WALLETS);
      const nonce = n * NONCE_STRIDE + (perSender[sender] as number);
      perSender[sender] = (perSender[sender] as number) + 1;
      const k = rnd();
      const create = (isBig && i === 1) || (!isBig && n % 10 === 3 && i === 0);
      const priorityFee = rnd() < 0.5 ? 0n : 10_000_000n;
      let plan: TxPlan;
      if (create) {
        plan = {
          sender,
          kind: "create",
          to: null,
          value: 0n,
          gasLimit: 200_000n,
          gasUsed: 123_456n,
          ok: true,
          nonce,
          priorityFee,
          data: INIT_CODE,
        };
      } else if (k < 0.6) {
        const to =
          rnd() < 0.5
            ? (this.#recipients[Math.floor(rnd() * this.#recipients.length)] as string)
            : (this.#wallets[(sender + 1 + Math.floor(rnd() * (WALLETS - 1))) % WALLETS] as string);
        plan = {
          sender,
          kind: "transfer",
          to,
          value: BigInt(1 + Math.floor(rnd() * 1_000_000)) * 10_000_000_000_000n,
          gasLimit: 21_000n,
          gasUsed: 21_000n,
          ok: true,
          nonce,
          priorityFee,
          data: "0x",
        };
      } else {
        const to = this.#contracts[Math.floor(rnd() * this.#contracts.length)] as string;
        const ok = rnd() >= 0.2;
        const amount = BigInt(1 + Math.floor(rnd() * 1_000_000_000));
        const recipient = this.#recipients[Math.floor(rnd() * this.#recipients.length)] as string;
        const gasLimit = 100_000n;
        plan = {
          sender,
          kind: "call",
          to,
          value: 0n,
          gasLimit,
          gasUsed: ok
            ? 30_000n + BigInt(Math.floor(rnd() * 50_000))
            : 25_000n + BigInt(Math.floor(rnd() * 5_000)),
          ok,
          nonce,
          priorityFee,
          data: `0xa9059cbb${zeroPadValue(recipient, 32).slice(2)}${toBeHex(amount, 32).slice(2)}`,
        };
      }
      gasUsed += plan.gasUsed;
      txs.push(plan);
    }
    let gasLimit = isBig || n % 60 === 0 ? BIG_GAS_LIMIT : SMALL_GAS_LIMIT;
    if (gasUsed > gasLimit) gasLimit = ((gasUsed + 999_999n) / 1_000_000n) * 1_000_000n;
    const plan: BlockPlan = { number: n, timeMs, baseFee, gasLimit, gasUsed, txs };
    this.#plans.set(n, plan);
    return plan;
  }

  #buildBody(n: number): SimTransaction[] {
    const ctx = this.#bodyContext(n);
    let cumulative = 0n;
    return ctx.plan.txs.map((p, i) => {
      cumulative += p.gasUsed;
      return this.#buildTx(ctx, i, cumulative);
    });
  }

  #bodyContext(n: number) {
    return {
      plan: this.#plan(n),
      blockHash: this.#hash(n),
      blockNumber: hex(n),
      chainId: BigInt(this.options.chainId),
    };
  }

  /** One signed transaction and its receipt; `cumulative` is the gas used up to and including it. */
  #buildTx(
    { plan, blockHash, blockNumber, chainId }: BodyContext,
    i: number,
    cumulative: bigint,
  ): SimTransaction {
    const p = plan.txs[i]!;
    const maxPriorityFeePerGas = p.priorityFee;
    const maxFeePerGas = plan.baseFee * 2n + p.priorityFee;
    const tx = Transaction.from({
      type: 2,
      chainId,
      nonce: p.nonce,
      to: p.to,
      value: p.value,
      gasLimit: p.gasLimit,
      maxFeePerGas,
      maxPriorityFeePerGas,
      data: p.data,
      accessList: [],
    });
    const key = this.#keys[p.sender] as SigningKey;
    tx.signature = key.sign(tx.unsignedHash);
    const raw = tx.serialized;
    const hash = tx.hash as string;
    const from = this.#wallets[p.sender] as string;
    const sig = tx.signature;
    const effectiveGasPrice = plan.baseFee + p.priorityFee;
    const txJson: TransactionJson = {
      blockHash,
      blockNumber,
      from,
      gas: hex(p.gasLimit),
      gasPrice: hex(effectiveGasPrice),
      maxFeePerGas: hex(maxFeePerGas),
      maxPriorityFeePerGas: hex(maxPriorityFeePerGas),
      hash,
      input: p.data,
      nonce: hex(p.nonce),
      to: p.to,
      transactionIndex: hex(i),
      value: hex(p.value),
      type: "0x2",
      accessList: [],
      chainId: hex(chainId),
      v: hex(sig.yParity),
      r: sig.r,
      s: sig.s,
      yParity: hex(sig.yParity),
    };
    const receipt: ReceiptJson = {
      transactionHash: hash,
      transactionIndex: hex(i),
      blockHash,
      blockNumber,
      from,
      to: p.to,
      status: p.ok ? "0x1" : "0x0",
      gasUsed: hex(p.gasUsed),
      cumulativeGasUsed: hex(cumulative),
      effectiveGasPrice: hex(effectiveGasPrice),
      contractAddress: p.kind === "create" ? getCreateAddress({ from, nonce: p.nonce }).toLowerCase() : null,
      type: "0x2",
      logs: null,
      logsBloom: null,
    };
    return { tx: txJson, receipt, raw };
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
      body.push(this.#buildTx(ctx, i, cumulative));
      if ((i + 1) % sliceSize === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.#bigBody) return; // built synchronously meanwhile (a request came first)
      }
    }
    this.#bigBody ??= body;
  }
}
