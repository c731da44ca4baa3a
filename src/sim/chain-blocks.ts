/**
 * A planned block (./chain-plan.ts) made concrete: its header in the London layout, hashed as keccak(rlp(header))
 * and chained through parentHash, and its transactions, real EIP-1559 transactions signed by the parties' wallets
 * (every `hash` is the keccak of the signed serialization; `from` recovers from the signature), with receipts.
 * transactionsRoot and receiptsRoot are keccak digests of the plan, not Merkle-Patricia trie roots (nobody
 * verifies them against the body; computing tries would need every block signed).
 */
import {
  encodeRlp,
  getCreateAddress,
  keccak256,
  type SigningKey,
  Transaction,
  toBeArray,
  toUtf8Bytes,
} from "ethers";
import type { HeaderJson, ReceiptJson, SimTransaction, TransactionJson } from "./chain-json.js";
import type { BlockPlan, ChainParties } from "./chain-plan.js";

const EMPTY_UNCLES = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";
/** keccak(rlp("")), the root of an empty trie. */
const EMPTY_TRIE = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
const ZERO_BLOOM = `0x${"00".repeat(256)}`;
const ZERO_ADDRESS = `0x${"00".repeat(20)}`;
const POW_NONCE = "0x0000000000000000";
export const ZERO_HASH = `0x${"00".repeat(32)}`;

export const hex = (n: number | bigint): string => `0x${n.toString(16)}`;

/** The digests a header carries, from the seed, the plan and the parent's hash. */
function headerFields(seed: number, plan: BlockPlan, parentHash: string) {
  const digest = (what: string) =>
    keccak256(toUtf8Bytes(`${seed}:${what}:${plan.number}:${plan.txs.length}:${plan.gasUsed}:${parentHash}`));
  return {
    stateRoot: digest("state"),
    transactionsRoot: plan.txs.length === 0 ? EMPTY_TRIE : digest("txs"),
    receiptsRoot: plan.txs.length === 0 ? EMPTY_TRIE : digest("receipts"),
    mixHash: digest("mix"),
  };
}

/** keccak(rlp(header)) of the planned block whose parent has `parentHash`. */
export function headerHash(seed: number, plan: BlockPlan, parentHash: string): string {
  const f = headerFields(seed, plan, parentHash);
  const q = (v: number | bigint) => toBeArray(v);
  return keccak256(
    encodeRlp([
      parentHash,
      EMPTY_UNCLES,
      ZERO_ADDRESS,
      f.stateRoot,
      f.transactionsRoot,
      f.receiptsRoot,
      ZERO_BLOOM,
      q(0),
      q(plan.number),
      q(plan.gasLimit),
      q(plan.gasUsed),
      q(Math.floor(plan.timeMs / 1000)),
      "0x",
      f.mixHash,
      POW_NONCE,
      q(plan.baseFee),
    ]),
  );
}

/** The header of a planned block as the JSON-RPC answers it (all fields of docs/exchange-behaviour.md §18). */
export function headerJson(seed: number, plan: BlockPlan, hash: string, parentHash: string): HeaderJson {
  const fields = headerFields(seed, plan, parentHash);
  return {
    number: hex(plan.number),
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
    size: hex(estimatedSize(plan)),
    gasLimit: hex(plan.gasLimit),
    gasUsed: hex(plan.gasUsed),
    timestamp: hex(Math.floor(plan.timeMs / 1000)),
    mixHash: fields.mixHash,
    baseFeePerGas: hex(plan.baseFee),
  };
}

function estimatedSize(plan: BlockPlan): number {
  let size = 540;
  for (const t of plan.txs) size += 116 + (t.data.length - 2) / 2;
  return size;
}

/** What building one block's transactions needs. */
export type BodyContext = {
  plan: BlockPlan;
  blockHash: string;
  blockNumber: string;
  chainId: bigint;
  parties: ChainParties;
};

/** One signed transaction and its receipt; `cumulative` is the gas used up to and including it. */
export function buildTx(
  { plan, blockHash, blockNumber, chainId, parties }: BodyContext,
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
  const key = parties.keys[p.sender] as SigningKey;
  tx.signature = key.sign(tx.unsignedHash);
  const raw = tx.serialized;
  // ethers' `tx.hash` is this keccak of the same serialization, which it would build a second time
  const hash = keccak256(raw);
  const from = parties.wallets[p.sender] as string;
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
