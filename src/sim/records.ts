/**
 * What the simulator's world is made of: the inputs it accepts (users, orders, positions, validated by zod) and
 * the records it keeps (accounts, orders, triggers, fills, agents, the explorer's transactions, the log of
 * received actions), with the caps the exchange's docs give. The store that holds them is ./state.ts.
 */
import { z } from "zod";

export type SimEndpoint = "exchange" | "info" | "evm" | "explorer";

const Decimalish = z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/)]).transform(Number);

export const SimOrderInput = z.strictObject({
  coin: z.string().min(1),
  side: z.enum(["B", "A"]),
  limitPx: Decimalish,
  sz: Decimalish,
  /** Perp dex name; "" (default) is the first perp dex. */
  dex: z.string().default(""),
  cloid: z
    .string()
    .regex(/^0x[0-9a-fA-F]{32}$/)
    .optional(),
  reduceOnly: z.boolean().default(false),
  orderType: z
    .enum(["Limit", "Stop Market", "Stop Limit", "Take Profit Market", "Take Profit Limit"])
    .default("Limit"),
  tif: z.enum(["Gtc", "Alo", "Ioc"]).nullable().default("Gtc"),
  triggerPx: Decimalish.optional(),
});
export type SimOrderInput = z.input<typeof SimOrderInput>;

export type SimOrder = {
  readonly oid: number;
  readonly user: string;
  readonly coin: string;
  readonly side: "B" | "A";
  readonly limitPx: string;
  readonly sz: string;
  readonly origSz: string;
  readonly timestamp: number;
  readonly dex: string;
  readonly cloid: string | null;
  readonly reduceOnly: boolean;
  readonly orderType: string;
  readonly tif: string | null;
  readonly isTrigger: boolean;
  readonly triggerPx: string;
  readonly triggerCondition: string;
};

export const SimPositionInput = z.strictObject({
  coin: z.string().min(1),
  /** Signed size: negative is short. */
  szi: Decimalish.refine((v) => v !== 0, { error: "szi must not be 0" }),
  entryPx: Decimalish.refine((v) => v > 0, { error: "entryPx must be > 0" }),
  leverage: z.number().int().min(1).max(100).default(10),
  marginMode: z.enum(["cross", "isolated"]).default("cross"),
  maxLeverage: z.number().int().min(1).max(100).optional(),
  dex: z.string().default(""),
  /** Mark price to start from (default: the current mark of the coin, or entryPx). */
  markPx: Decimalish.optional(),
});
export type SimPositionInput = z.input<typeof SimPositionInput>;

export type SimPosition = {
  readonly coin: string;
  readonly szi: number;
  readonly entryPx: number;
  readonly leverage: number;
  readonly marginMode: "cross" | "isolated";
  readonly maxLeverage: number;
  readonly dex: string;
};

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be 0x followed by 40 hex digits" });

export const SimUserInput = z.strictObject({
  address: Address,
  /** Cumulative traded volume in USD; the scheduleCancel gate needs 1,000,000 (docs/exchange-behaviour.md §4). */
  volumeUsd: z.number().min(0).default(2_000_000),
  /** Per-user switch for the volume gate (default: the simulator's `volumeGate`). */
  volumeGate: z.boolean().optional(),
  /** API (agent) wallets approved by this user; they sign for the user and its vaults (docs/exchange-behaviour.md §7). */
  agents: z.array(Address).default([]),
  /** Vaults / sub-accounts this user may act for through `vaultAddress`. */
  vaults: z.array(Address).default([]),
  orders: z.array(SimOrderInput).default([]),
  positions: z.array(SimPositionInput).default([]),
  /** USDC collateral (account value before unrealized PnL). */
  balanceUsd: z.number().min(0).default(10_000),
  /** Address-based request budget (docs/exchange-behaviour.md §10); unlimited when absent. */
  addressBudget: z.number().int().min(0).optional(),
});
export type SimUserInput = z.input<typeof SimUserInput>;

export type SimTrigger = { time: number; day: string; cancelledOrders: number; counted: boolean };

/** An order that left the book, as `historicalOrders` lists it (status strings of the docs' table). */
export type SimHistoricalOrder = { order: SimOrder; status: string; statusTimestamp: number };

/** One L1 transaction as the explorer's `userDetails` lists it; error null when accepted. */
export type SimExplorerTx = {
  action: Record<string, unknown>;
  block: number;
  error: string | null;
  hash: string;
  time: number;
  user: string;
};

/** An approved API wallet: who it signs for, its name ("" unnamed) and when it expires (ms). */
export type SimAgent = { address: string; user: string; name: string; validUntil: number };

/** Default agent lifetime when none is given: 180 days (agents that never expire are not possible). */
export const DEFAULT_AGENT_LIFETIME_MS = 180 * 86_400_000;
/** The newest orders `historicalOrders` returns (the docs' cap). */
export const HISTORICAL_ORDERS_LIMIT = 2000;

export type ReceivedAction = {
  receivedAt: number;
  signer: string | null;
  user: string | null;
  vaultAddress: string | null;
  action: unknown;
  nonce: number | null;
  expiresAfter: number | null;
  httpStatus: number;
  accepted: boolean;
  response: unknown;
};

export type SimAccount = {
  address: string;
  volumeUsd: number;
  volumeGate: boolean | undefined;
  balanceUsd: number;
  addressBudget: number | undefined;
  requestsUsed: number;
  /** For a vault / sub-account: the master user that may act for it. */
  master: string | null;
  /** True when registered as a user (a key holder that may sign), false for a vault-only account. */
  isUser: boolean;
  orders: SimOrder[];
  positions: SimPosition[];
  schedule: number | null;
  triggers: SimTrigger[];
  /** orders that left the book, oldest first */
  history: SimHistoricalOrder[];
  /** fills, oldest first (at most USER_FILLS_LIMIT kept) */
  fills: SimFill[];
};

/**
 * The simulated book of a coin: one level on each side of the mark, bid = mark × (1 − spread), ask = mark ×
 * (1 + spread), each with `depth` coins (null: unlimited). The depth is what one order can take: it is not used
 * up (every order meets a fresh level), so a test sets the depth to get partial fills (docs/simulator.md, "Orders").
 */
export type SimBook = { spreadBps: number; depth: number | null };
export const DEFAULT_BOOK: SimBook = Object.freeze({ spreadBps: 10, depth: null });

/** One fill as `userFills` lists it. */
export type SimFill = {
  coin: string;
  px: string;
  sz: string;
  side: "B" | "A";
  time: number;
  startPosition: string;
  dir: string;
  closedPnl: string;
  hash: string;
  oid: number;
  crossed: boolean;
  fee: string;
  tid: number;
  feeToken: string;
};
/** `userFills` answers at most the 2,000 most recent fills. */
export const USER_FILLS_LIMIT = 2000;
