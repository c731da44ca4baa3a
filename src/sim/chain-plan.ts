/**
 * What each block of the simulated chain holds, derived from the seed alone: the parties (the wallets that sign,
 * the accounts and contracts they pay or call) and a cheap per-block plan (senders, recipients, values, gas,
 * status). The plan fixes the header; the signed bodies are built from it only when read (./chain-blocks.ts).
 */
import { computeAddress, keccak256, SigningKey, toBeHex, toUtf8Bytes, zeroPadValue } from "ethers";
import { createRng } from "./prng.js";

export type TxPlan = {
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

export type BlockPlan = {
  number: number;
  timeMs: number;
  baseFee: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  txs: TxPlan[];
};

/** The wallets that sign every transaction. */
export const WALLETS = 8;
/** A block's transactions take their nonces from n × NONCE_STRIDE on, so no two blocks share one. */
export const NONCE_STRIDE = 100_000;
const SMALL_GAS_LIMIT = 2_000_000n;
const BIG_GAS_LIMIT = 30_000_000n;
/** Minimal init code (a contract that reverts on every call); only its bytes matter here. */
const INIT_CODE =
  "0x6080604052348015600f57600080fd5b50603f80601d6000396000f3fe6080604052600080fdfea164736f6c6343000814000a";

/** Who takes part in the chain's transactions, lower-case addresses; the keys sign as `wallets` (same order). */
export type ChainParties = {
  keys: SigningKey[];
  wallets: string[];
  recipients: string[];
  contracts: string[];
};

/** The parties of the chain of `seed`. */
export function chainParties(seed: number): ChainParties {
  const keys = Array.from(
    { length: WALLETS },
    (_, i) => new SigningKey(keccak256(toUtf8Bytes(`hl-deadman-sim:${seed}:wallet:${i}`))),
  );
  return {
    keys,
    wallets: keys.map((k) => computeAddress(k).toLowerCase()),
    contracts: Array.from({ length: 3 }, (_, i) =>
      keccak256(toUtf8Bytes(`hl-deadman-sim:${seed}:contract:${i}`))
        .slice(0, 42)
        .toLowerCase(),
    ),
    recipients: Array.from({ length: 4 }, (_, i) =>
      keccak256(toUtf8Bytes(`hl-deadman-sim:${seed}:eoa:${i}`))
        .slice(0, 42)
        .toLowerCase(),
    ),
  };
}

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

/**
 * The plan of block `n` stamped `timeMs`, from its own PRNG: 0 to 6 transactions (none in about 30% of blocks),
 * `bigBlockTxs` in the big block; a contract creation first in blocks n ≡ 3 (mod 10) and second in the big block;
 * a gas limit of 30M on the big block and every 60th, 2M otherwise, raised to fit what the transactions use.
 */
export function planBlock(
  n: number,
  {
    seed,
    timeMs,
    isBig,
    bigBlockTxs,
    parties,
  }: { seed: number; timeMs: number; isBig: boolean; bigBlockTxs: number; parties: ChainParties },
): BlockPlan {
  const rnd = createRng(mix(seed, n));
  const baseFee = 100_000_000n + BigInt(Math.floor(rnd() * 50_000_000));
  const r = rnd();
  const count = isBig ? bigBlockTxs : r < 0.3 ? 0 : 1 + Math.floor(rnd() * 6);
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
          ? (parties.recipients[Math.floor(rnd() * parties.recipients.length)] as string)
          : (parties.wallets[(sender + 1 + Math.floor(rnd() * (WALLETS - 1))) % WALLETS] as string);
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
      const to = parties.contracts[Math.floor(rnd() * parties.contracts.length)] as string;
      const ok = rnd() >= 0.2;
      const amount = BigInt(1 + Math.floor(rnd() * 1_000_000_000));
      const recipient = parties.recipients[Math.floor(rnd() * parties.recipients.length)] as string;
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
  return { number: n, timeMs, baseFee, gasLimit, gasUsed, txs };
}
