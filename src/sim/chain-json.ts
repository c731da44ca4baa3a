/**
 * The simulated HyperEVM chain's answers as the JSON-RPC carries them: a header (docs/exchange-behaviour.md §18),
 * a transaction, a receipt, an `ots_getBlockTransactions` page; all quantities are hex strings.
 */

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
