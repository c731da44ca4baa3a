/**
 * Wire schemas of the `ots_` methods (docs/exchange-behaviour.md §17–§19). Quantities stay 0x-hex strings as
 * on the wire (helpers in ./format.ts convert them to bigint); objects are loose so fields a node adds (reth's
 * receipt `timestamp`, post-Cancun header roots) survive into `--json` output untouched.
 *
 * Only what the client relies on is required; fields real nodes omit (reth dropped `totalDifficulty`, Erigon nulls
 * `logsBloom` in `fullblock`) are optional.
 */
import { z } from "zod";

/** A 0x-prefixed hex quantity (`0x0`, `0x3e8`). */
export const Quantity = z.string().regex(/^0x[0-9a-fA-F]+$/, "must be a 0x-hex quantity");
export type Quantity = z.infer<typeof Quantity>;

/** 0x-prefixed hex data of any length (`0x` included). */
export const HexData = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, "must be 0x-hex data");
export type HexData = z.infer<typeof HexData>;

/** A 32-byte hash. */
export const Hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a 32-byte 0x-hex hash");
export type Hash = z.infer<typeof Hash>;

/** A 20-byte address (any case). */
export const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 20-byte 0x-hex address");
export type Address = z.infer<typeof Address>;

/** Result of `ots_getHeaderByNumber` (docs/exchange-behaviour.md §18). */
export const OtsHeader = z.looseObject({
  number: Quantity,
  hash: Hash,
  parentHash: Hash,
  /** always 0x0000000000000000 on a proof-of-stake chain */
  nonce: HexData.optional(),
  sha3Uncles: Hash.optional(),
  logsBloom: HexData.nullable().optional(),
  transactionsRoot: Hash.optional(),
  stateRoot: Hash.optional(),
  receiptsRoot: Hash.optional(),
  miner: Address.optional(),
  difficulty: Quantity.optional(),
  totalDifficulty: Quantity.nullable().optional(),
  extraData: HexData.optional(),
  size: Quantity.optional(),
  gasLimit: Quantity,
  gasUsed: Quantity,
  /** Unix seconds */
  timestamp: Quantity,
  mixHash: Hash.optional(),
  /** post-EIP-1559 base fee (wei) */
  baseFeePerGas: Quantity.nullable().optional(),
});
export type OtsHeader = z.infer<typeof OtsHeader>;

/** One transaction of a page; `input` is cut to the 4-byte selector by the node (docs/exchange-behaviour.md §17). */
export const OtsTransaction = z.looseObject({
  hash: Hash,
  from: Address,
  /** null for a contract creation */
  to: Address.nullable(),
  value: Quantity,
  gas: Quantity.optional(),
  gasPrice: Quantity.optional(),
  input: HexData.optional(),
  nonce: Quantity.optional(),
  /** position in the block (hex); the client places items by it, never by page arithmetic */
  transactionIndex: Quantity,
  type: Quantity.optional(),
  blockNumber: Quantity.nullable().optional(),
  blockHash: Hash.nullable().optional(),
});
export type OtsTransaction = z.infer<typeof OtsTransaction>;

/** A simplified receipt: logs stripped. */
export const OtsReceipt = z.looseObject({
  transactionHash: Hash,
  transactionIndex: Quantity.optional(),
  /** 0x1 success, 0x0 failure (a result, not an API error) */
  status: Quantity,
  gasUsed: Quantity,
  /** gas used up to and including this transaction */
  cumulativeGasUsed: Quantity,
  effectiveGasPrice: Quantity.optional(),
  /** address of a created contract, null when none */
  contractAddress: Address.nullable().optional(),
  from: Address.optional(),
  to: Address.nullable().optional(),
});
export type OtsReceipt = z.infer<typeof OtsReceipt>;

/** `fullblock` of ots_getBlockTransactions: header fields plus the whole block's `transactionCount` (a JSON number). */
export const OtsFullblockHeader = z.looseObject({
  number: Quantity,
  hash: Hash,
  parentHash: Hash.optional(),
  timestamp: Quantity,
  gasLimit: Quantity,
  gasUsed: Quantity,
  baseFeePerGas: Quantity.nullable().optional(),
  miner: Address.optional(),
  /** the WHOLE block's transaction count, a JSON number (not hex), not the page's */
  transactionCount: z.number().int().nonnegative(),
});
export type OtsFullblockHeader = z.infer<typeof OtsFullblockHeader>;

export const OtsFullblock = OtsFullblockHeader.extend({ transactions: z.array(OtsTransaction).optional() });
export type OtsFullblock = z.infer<typeof OtsFullblock>;

/** Raw result of ots_getBlockTransactions: the page's transactions in `fullblock.transactions` (Erigon, reth) or `txs` (spec table). */
export const OtsBlockTransactionsResult = z.looseObject({
  fullblock: OtsFullblock,
  receipts: z.array(OtsReceipt),
  txs: z.array(OtsTransaction).optional(),
});
export type OtsBlockTransactionsResult = z.infer<typeof OtsBlockTransactionsResult>;

/** One page, normalised: `fullblock` without `transactions`, the page's `txs` and `receipts` in the node's order. */
export type OtsBlockTransactions = {
  fullblock: OtsFullblockHeader;
  txs: OtsTransaction[];
  receipts: OtsReceipt[];
};

/** Every transaction of a block in block order, each joined with its receipt. */
export type OtsBlockAllTransactions = OtsBlockTransactions & {
  /** page order the node used: page 0 = first transactions (spec, reth main) or last ones (Erigon) */
  pageOrder: "fromStart" | "fromEnd" | "unknown";
  pages: number;
};

export const BlockNumberResult = Quantity;
export const ApiLevelResult = z.number().int();
