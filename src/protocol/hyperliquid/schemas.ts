/**
 * Wire types of the Hyperliquid API: one zod schema per type and a type of the same name.
 *
 * Everything that comes in is parsed. Response objects are loose (`z.looseObject`): unknown fields pass
 * through, because the exchange adds fields without notice and a missing cosmetic field must not blind the
 * exposure poller. Monetary values stay decimal strings: no float arithmetic happens in the clients.
 * Sources: docs/exchange-behaviour.md §2, §5 (exchange), §13–§15 (info).
 */
import { z } from "zod";

/** A decimal string as the API sends it: "13109.482328", "-0.0134", "0.0". No exponent, no leading "+" or ".". */
export const DecimalString = z
  .string()
  .regex(/^-?\d+(\.\d+)?$/, { error: 'must be a decimal string such as "12.5" or "-0.1"' });
export type DecimalString = z.infer<typeof DecimalString>;

const TimestampMs = z.number().int().nonnegative();

/** A 42-character hex address as the API echoes it (any case). */
export const AddressString = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be 0x followed by 40 hexadecimal digits" });
export type AddressString = z.infer<typeof AddressString>;

export const MarginSummary = z.looseObject({
  accountValue: DecimalString,
  totalMarginUsed: DecimalString,
  totalNtlPos: DecimalString,
  /** may be negative */
  totalRawUsd: DecimalString,
});
export type MarginSummary = z.infer<typeof MarginSummary>;

/**
 * `{"type":"cross","value":N}` (no rawUsd), `{"type":"isolated","value":N,"rawUsd":"-95.05"}`, or a type the
 * exchange may add later, passed through as long as it has a numeric value (docs/exchange-behaviour.md §13).
 */
export const Leverage = z.union([
  z.looseObject({ type: z.literal("cross"), value: z.number() }),
  z.looseObject({ type: z.literal("isolated"), value: z.number(), rawUsd: DecimalString }),
  z.looseObject({
    type: z.string().refine((t) => t !== "cross" && t !== "isolated", {
      error: "cross and isolated leverage have their own shape",
    }),
    value: z.number(),
  }),
]);
export type Leverage = z.infer<typeof Leverage>;

export const CumFunding = z.looseObject({
  allTime: DecimalString,
  sinceChange: DecimalString,
  sinceOpen: DecimalString,
});
export type CumFunding = z.infer<typeof CumFunding>;

export const Position = z.looseObject({
  coin: z.string(),
  /** signed size: negative is short */
  szi: DecimalString,
  /** typed non-null by one SDK and optional by another: tolerate null (docs/exchange-behaviour.md §13) */
  entryPx: DecimalString.nullable(),
  leverage: Leverage,
  /** null when the position cannot be liquidated (e.g. fully collateralised) */
  liquidationPx: DecimalString.nullable(),
  marginUsed: DecimalString,
  maxLeverage: z.number(),
  positionValue: DecimalString,
  returnOnEquity: DecimalString,
  unrealizedPnl: DecimalString,
  /** cosmetic for the switch; optional so that its absence never fails a poll */
  cumFunding: CumFunding.optional(),
});
export type Position = z.infer<typeof Position>;

export const AssetPosition = z.looseObject({
  /** "oneWay" in practice; the complete set is not documented */
  type: z.string(),
  position: Position,
});
export type AssetPosition = z.infer<typeof AssetPosition>;

/** One user's perp state (`clearinghouseState`); an unknown user gets a zeroed state, not null (docs/exchange-behaviour.md §13). */
export const ClearinghouseState = z.looseObject({
  assetPositions: z.array(AssetPosition),
  crossMaintenanceMarginUsed: DecimalString,
  crossMarginSummary: MarginSummary,
  marginSummary: MarginSummary,
  /** server time of the snapshot (ms) */
  time: TimestampMs,
  withdrawable: DecimalString,
});
export type ClearinghouseState = z.infer<typeof ClearinghouseState>;

/** A bare JSON array in the order of `users` (docs/exchange-behaviour.md §14). */
export const BatchClearinghouseStatesResponse = z.array(ClearinghouseState);
export type BatchClearinghouseStatesResponse = z.infer<typeof BatchClearinghouseStatesResponse>;

export const BatchClearinghouseStatesRequest = z.strictObject({
  type: z.literal("batchClearinghouseStates"),
  users: z.array(AddressString).min(1),
  /** "" (or absent) is the first perp dex */
  dex: z.string().optional(),
});
export type BatchClearinghouseStatesRequest = z.infer<typeof BatchClearinghouseStatesRequest>;

/** One resting order (`openOrders`, docs/exchange-behaviour.md §15). */
export const OpenOrder = z.looseObject({
  coin: z.string(),
  /** "B" bid, "A" ask */
  side: z.enum(["A", "B"]),
  limitPx: DecimalString,
  sz: DecimalString,
  oid: z.number().int().nonnegative(),
  timestamp: TimestampMs,
  origSz: DecimalString.optional(),
  cloid: z.string().nullable().optional(),
  reduceOnly: z.boolean().optional(),
});
export type OpenOrder = z.infer<typeof OpenOrder>;

export const OpenOrdersResponse = z.array(OpenOrder);
export type OpenOrdersResponse = z.infer<typeof OpenOrdersResponse>;

/**
 * `userRateLimit`: the address's lifetime action budget (docs/exchange-behaviour.md §10): 10,000 requests plus one per USDC
 * traded; every scheduleCancel push spends one. When used reaches cap, the address gets one request per 10 s.
 */
export const UserRateLimit = z.looseObject({
  cumVlm: DecimalString,
  nRequestsUsed: z.number().int().nonnegative(),
  nRequestsCap: z.number().int().nonnegative(),
  /** newer schema (nktkas): requests bought with reserveRequestWeight */
  nRequestsSurplus: z.number().int().nonnegative().optional(),
});
export type UserRateLimit = z.infer<typeof UserRateLimit>;

/**
 * `userRole` (docs/exchange-behaviour.md §25): `user`, `vault` or `missing` alone; an API (agent) wallet
 * with the master it signs for in `data.user`; a sub-account with its master in `data.master`.
 */
const RoleAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .transform((a) => a.toLowerCase());
export const UserRole = z.union([
  // `data` optional: an agent whose master the exchange does not name is reported as such, not as a bad body.
  z.looseObject({ role: z.literal("agent"), data: z.looseObject({ user: RoleAddress }).optional() }),
  z.looseObject({ role: z.literal("subAccount"), data: z.looseObject({ master: RoleAddress }) }),
  z.looseObject({ role: z.enum(["user", "vault", "missing"]) }),
]);
export type UserRole = z.infer<typeof UserRole>;

export const OpenOrdersRequest = z.strictObject({
  type: z.literal("openOrders"),
  user: AddressString,
  dex: z.string().optional(),
});
export type OpenOrdersRequest = z.infer<typeof OpenOrdersRequest>;

/** The action. `time` ≥ now + 5 s; omit it (never `null`) to remove the schedule (docs/exchange-behaviour.md §2). */
export const ScheduleCancelAction = z.strictObject({
  type: z.literal("scheduleCancel"),
  time: z.number().int().nonnegative().optional(),
});
export type ScheduleCancelAction = z.infer<typeof ScheduleCancelAction>;

export const Signature = z.strictObject({
  r: z.string().regex(/^0x[0-9a-fA-F]{1,64}$/),
  s: z.string().regex(/^0x[0-9a-fA-F]{1,64}$/),
  v: z.union([z.literal(27), z.literal(28)]),
});
export type Signature = z.infer<typeof Signature>;

/** The signed body POSTed to /exchange; absent optional keys are omitted, not null. */
export const ScheduleCancelRequest = z.strictObject({
  action: ScheduleCancelAction,
  /** the local clock in ms; unique per signer */
  nonce: TimestampMs,
  signature: Signature,
  /** lower-case; acting for a vault or subaccount */
  vaultAddress: AddressString.optional(),
  /** ms after which the exchange refuses the action ("Action already expired") */
  expiresAfter: TimestampMs.optional(),
});
export type ScheduleCancelRequest = z.infer<typeof ScheduleCancelRequest>;

/** `{"status":"ok","response":{"type":"default"}}`; some docs show `"type":"scheduleCancel"` (docs/exchange-behaviour.md §5.1). */
export const ExchangeOkResponse = z.object({
  status: z.literal("ok"),
  response: z.looseObject({ type: z.string() }),
});
export type ExchangeOkResponse = z.infer<typeof ExchangeOkResponse>;

/** Refusals come back as HTTP 200 with a string (docs/exchange-behaviour.md §5). */
export const ExchangeErrResponse = z.object({
  status: z.literal("err"),
  response: z.string(),
});
export type ExchangeErrResponse = z.infer<typeof ExchangeErrResponse>;

/** The /exchange envelope. */
export const ExchangeResponse = z.discriminatedUnion("status", [ExchangeOkResponse, ExchangeErrResponse]);
export type ExchangeResponse = z.infer<typeof ExchangeResponse>;

// --- the exchange's record, the agent list, and the `cancel` action (docs/exchange-record.md) ---

/**
 * `frontendOpenOrders`: the open orders plus the fields that say what each one is (trigger, reduce-only,
 * order type). Loose, as the real API adds fields; only what the cancel executor reads is required.
 */
export const FrontendOpenOrder = z.looseObject({
  coin: z.string(),
  side: z.enum(["A", "B"]),
  limitPx: DecimalString,
  sz: DecimalString,
  oid: z.number().int().nonnegative(),
  timestamp: TimestampMs,
  isTrigger: z.boolean().optional(),
  reduceOnly: z.boolean().optional(),
  orderType: z.string().optional(),
  isPositionTpsl: z.boolean().optional(),
  triggerCondition: z.string().optional(),
  triggerPx: DecimalString.optional(),
  origSz: DecimalString.optional(),
  tif: z.string().nullable().optional(),
  cloid: z.string().nullable().optional(),
});
export type FrontendOpenOrder = z.infer<typeof FrontendOpenOrder>;
export const FrontendOpenOrdersResponse = z.array(FrontendOpenOrder);

/**
 * `historicalOrders`: the latest orders with their final status. An order the scheduled cancel removed ends
 * with status `scheduledCancel`, which does NOT end in `Canceled` (docs/exchange-record.md, "Fired").
 */
export const HistoricalOrder = z.looseObject({
  order: z.looseObject({
    coin: z.string(),
    oid: z.number().int().nonnegative(),
    timestamp: TimestampMs,
  }),
  status: z.string(),
  statusTimestamp: TimestampMs,
});
export type HistoricalOrder = z.infer<typeof HistoricalOrder>;
export const HistoricalOrdersResponse = z.array(HistoricalOrder);

/** `extraAgents`: the master's named API wallets; `validUntil` in ms (null tolerated: never seen, but cheap). */
export const ExtraAgent = z.looseObject({
  address: AddressString,
  name: z.string(),
  validUntil: TimestampMs.nullable(),
});
export type ExtraAgent = z.infer<typeof ExtraAgent>;
export const ExtraAgentsResponse = z.array(ExtraAgent);

/** `meta`: the perp universe of the first perp dex; an asset's index is its position in `universe`. */
export const PerpMeta = z.looseObject({
  universe: z.array(z.looseObject({ name: z.string(), isDelisted: z.boolean().optional() })),
});
export type PerpMeta = z.infer<typeof PerpMeta>;

/**
 * `perpDexs`: null for the first perp dex, then each builder-deployed dex in its index order (the docs' perpetuals
 * page, "Retrieve all perpetual dexs"). A dex's place here is its `perp_dex_index` in asset ids.
 */
export const PerpDexs = z.array(z.looseObject({ name: z.string().max(100) }).nullable()).max(10_000);
export type PerpDexs = z.infer<typeof PerpDexs>;

/** One L1 transaction as the explorer lists it (`userDetails`); `error` is null when the action was accepted. */
export const ExplorerTx = z.looseObject({
  action: z.looseObject({ type: z.string() }),
  block: z.number().int().nonnegative(),
  error: z.string().nullable(),
  hash: z.string(),
  time: TimestampMs,
  user: AddressString,
});
export type ExplorerTx = z.infer<typeof ExplorerTx>;

export const UserDetailsResponse = z.looseObject({
  type: z.literal("userDetails"),
  txs: z.array(ExplorerTx),
});
export type UserDetailsResponse = z.infer<typeof UserDetailsResponse>;

/**
 * `{"type":"cancel","cancels":[{"a":asset,"o":oid}],"f":true}`: key order is part of the signed hash (msgpack).
 * `f` (fast) comes after `cancels` and is left out entirely when false: an action hashed with `f: false` is
 * refused (Hyperliquid docs, exchange endpoint, "Cancel order(s)"; docs/exchange-record.md).
 */
export const CancelAction = z.strictObject({
  type: z.literal("cancel"),
  cancels: z
    .array(
      z.strictObject({
        a: z.number().int().nonnegative(),
        o: z.number().int().nonnegative(),
      }),
    )
    .min(1),
  f: z.literal(true).optional(),
});
export type CancelAction = z.infer<typeof CancelAction>;

/** Per-order outcome of a cancel: `"success"` or `{"error":"…"}` (docs/exchange-record.md, "Cancel"). */
export const CancelStatus = z.union([z.literal("success"), z.looseObject({ error: z.string() })]);
export type CancelStatus = z.infer<typeof CancelStatus>;

export const CancelOkResponse = z.looseObject({
  type: z.literal("cancel"),
  data: z.looseObject({ statuses: z.array(CancelStatus) }),
});
export type CancelOkResponse = z.infer<typeof CancelOkResponse>;
