/**
 * Wire types of the order side (orders, fills, the universe's size decimals, marks): zod schemas with a type of
 * the same name, bounded (sizes, counts) as every outside answer is. Kept apart from schemas.ts so that the
 * package root's export list (which re-exports schemas.ts) does not change with them.
 */
import { z } from "zod";
import { DecimalString } from "./schemas.js";

const TimestampMs = z.number().int().nonnegative();

/** At most this many items are accepted in one list answer (fills, statuses): a bounded observation. */
export const MAX_LIST_ITEMS = 10_000;

/** A size or price as a bounded decimal string (at most 40 characters: no megabyte numbers). */
const BoundedDecimal = DecimalString.max(40);

/**
 * Per-order outcome of an `order` action (docs, exchange endpoint, "Place an order"): `{"resting":{"oid"}}`,
 * `{"filled":{"totalSz","avgPx","oid"}}` or `{"error":"…"}` (one per order, in order).
 */
export const OrderStatus = z.union([
  z.looseObject({ resting: z.looseObject({ oid: z.number().int().nonnegative() }) }),
  z.looseObject({
    filled: z.looseObject({
      totalSz: BoundedDecimal,
      avgPx: BoundedDecimal,
      oid: z.number().int().nonnegative(),
    }),
  }),
  z.looseObject({ error: z.string().max(2000) }),
]);
export type OrderStatus = z.infer<typeof OrderStatus>;

export const OrderOkResponse = z.looseObject({
  type: z.literal("order"),
  data: z.looseObject({ statuses: z.array(OrderStatus).max(MAX_LIST_ITEMS) }),
});
export type OrderOkResponse = z.infer<typeof OrderOkResponse>;

/** One fill (`userFills`); `side` "B" bought, "A" sold; `startPosition` is the signed size before the fill. */
export const UserFill = z.looseObject({
  coin: z.string().max(100),
  px: BoundedDecimal,
  sz: BoundedDecimal,
  side: z.enum(["A", "B"]),
  time: TimestampMs,
  startPosition: BoundedDecimal,
  dir: z.string().max(100),
  closedPnl: BoundedDecimal,
  oid: z.number().int().nonnegative(),
  crossed: z.boolean(),
  fee: BoundedDecimal.optional(),
  tid: z.number().int().nonnegative().optional(),
  hash: z.string().max(200).optional(),
});
export type UserFill = z.infer<typeof UserFill>;
/** `userFills` returns at most the 2,000 most recent fills (docs, info endpoint). */
export const UserFillsResponse = z.array(UserFill).max(2000);

/** `meta` with what orders need: each asset's `szDecimals` (0..6 for perps) and name; the index is the position. */
export const PerpMetaWithDecimals = z.looseObject({
  universe: z
    .array(
      z.looseObject({
        name: z.string().min(1).max(100),
        szDecimals: z.number().int().min(0).max(6),
        maxLeverage: z.number().int().positive().max(1000).optional(),
        isDelisted: z.boolean().optional(),
      }),
    )
    .max(MAX_LIST_ITEMS),
});
export type PerpMetaWithDecimals = z.infer<typeof PerpMetaWithDecimals>;

/** `metaAndAssetCtxs`: `[meta, ctxs]`, one context per asset in universe order; `markPx` is the mark price. */
export const AssetCtx = z.looseObject({ markPx: BoundedDecimal.nullable() });
export const MetaAndAssetCtxs = z
  .tuple([PerpMetaWithDecimals, z.array(AssetCtx).max(MAX_LIST_ITEMS)])
  .refine(([m, ctxs]) => m.universe.length === ctxs.length, {
    error: "one asset context per asset in the universe",
  });
