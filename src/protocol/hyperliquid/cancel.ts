/**
 * The cancel executor for the engine-down policy `cancel` (docs/exchange-record.md, "Cancel before the exchange
 * has to"): read the open orders (`frontendOpenOrders`, which marks trigger and reduce-only orders) and `meta`
 * together, send at most two signed `cancel` actions at once (the resting orders with the fast flag, the trigger
 * orders without it), check each order's status, and confirm with a second read. Reduce-only TP/SL (trigger) orders stay unless `cancelStops`: they can only shrink a position, and they
 * are what protects it while the engine is down. Cancelling spends no daily trigger.
 *
 * It never throws: every failure is `{ confirmed: false, detail }`, and the switch then keeps the scheduled
 * cancel armed at the 5 s minimum as the backstop.
 */
import { HyperliquidApiError } from "./errors.js";
import type { CancelOrderStatus, ExchangeClient } from "./exchange.js";
import type { InfoClient } from "./info.js";
import type { FrontendOpenOrder, PerpMeta } from "./schemas.js";

export type CancelOpenOrdersParams = { account: string; vaultAddress?: string; cancelStops: boolean };
export type CancelOpenOrdersResult = { confirmed: boolean; cancelled: number; kept: number; detail?: string };
export type CancelOpenOrders = (params: CancelOpenOrdersParams) => Promise<CancelOpenOrdersResult>;

export type CancelExecutorDeps = {
  info: Pick<InfoClient, "frontendOpenOrders" | "meta">;
  exchange: Pick<ExchangeClient, "cancel">;
  /** Called once per run with the details (the switch logs `orders.cancelled`). */
  onReport?: (report: CancelReport) => void;
};

export type CancelReport = {
  account: string;
  /** the orders that were to go */
  targeted: Array<{ coin: string; oid: number; asset: number | null; orderType: string | undefined }>;
  /** reduce-only TP/SL orders left in place */
  kept: Array<{ coin: string; oid: number; orderType: string | undefined }>;
  statuses: CancelOrderStatus[];
  /** the cancel actions sent (at most two): the fast one for resting orders, the normal one for triggers */
  actions?: Array<{ fast: boolean; oids: number[] }>;
  /** targeted orders still open after the cancel (second read) */
  stillOpen: number[];
  confirmed: boolean;
  detail?: string;
};

/** A reduce-only TP/SL: a reduce-only trigger order (or one attached to a position). */
export function isProtectiveStop(o: FrontendOpenOrder): boolean {
  return o.reduceOnly === true && (o.isTrigger === true || o.isPositionTpsl === true);
}

/**
 * Asset index of a coin as the cancel action wants it: the perp's position in `meta.universe`; a spot pair
 * `@N` is 10000 + N and `PURR/USDC` is 10000. Builder-dex coins (`dex:COIN`) are not resolved here (null).
 */
export function assetIndexOf(coin: string, meta: PerpMeta): number | null {
  const spot = /^@(\d+)$/.exec(coin);
  if (spot) return 10_000 + Number(spot[1]);
  if (coin === "PURR/USDC") return 10_000;
  const i = meta.universe.findIndex((a) => a.name === coin);
  return i >= 0 ? i : null;
}

/** A trigger order (or a position TP/SL, which rests as one): the exchange refuses to fast-cancel it. */
export function isTriggerOrder(o: FrontendOpenOrder): boolean {
  return o.isTrigger === true || o.isPositionTpsl === true;
}

export type CancelBatch = { fast: boolean; orders: Array<{ asset: number; oid: number }> };

/**
 * The orders to cancel as at most two actions: the non-trigger orders with the fast flag first, the trigger
 * orders without it. Orders whose asset index is unknown are left out (reported by the caller).
 */
export function splitCancels(orders: ReadonlyArray<FrontendOpenOrder>, meta: PerpMeta): CancelBatch[] {
  const fast: CancelBatch = { fast: true, orders: [] };
  const normal: CancelBatch = { fast: false, orders: [] };
  for (const o of orders) {
    const asset = assetIndexOf(o.coin, meta);
    if (asset === null) continue;
    (isTriggerOrder(o) ? normal : fast).orders.push({ asset, oid: o.oid });
  }
  return [fast, normal].filter((b) => b.orders.length > 0);
}

function describe(error: unknown): string {
  if (error instanceof HyperliquidApiError) return `${error.kind}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

export function createCancelExecutor({ info, exchange, onReport }: CancelExecutorDeps): CancelOpenOrders {
  return async ({ account, vaultAddress, cancelStops }) => {
    const user = vaultAddress ?? account;
    const report: CancelReport = {
      account: user,
      targeted: [],
      kept: [],
      statuses: [],
      stillOpen: [],
      confirmed: false,
    };
    const done = (result: CancelOpenOrdersResult): CancelOpenOrdersResult => {
      report.confirmed = result.confirmed;
      if (result.detail !== undefined) report.detail = result.detail;
      onReport?.(report);
      return result;
    };
    // The open orders and the asset indices are read together: one round trip before the cancel.
    let open: FrontendOpenOrder[];
    let meta: PerpMeta;
    try {
      [open, meta] = await Promise.all([info.frontendOpenOrders({ user }), info.meta()]);
    } catch (error) {
      return done({
        confirmed: false,
        cancelled: 0,
        kept: 0,
        detail: `reading open orders or meta failed (${describe(error)})`,
      });
    }
    const keep = cancelStops ? [] : open.filter(isProtectiveStop);
    const go = open.filter((o) => !keep.includes(o));
    report.kept = keep.map((o) => ({ coin: o.coin, oid: o.oid, orderType: o.orderType }));
    if (go.length === 0) return done({ confirmed: true, cancelled: 0, kept: keep.length });

    report.targeted = go.map((o) => ({
      coin: o.coin,
      oid: o.oid,
      asset: assetIndexOf(o.coin, meta),
      orderType: o.orderType,
    }));
    const unresolved = report.targeted.filter((t) => t.asset === null).map((t) => `${t.coin}#${t.oid}`);
    // At most two actions, sent together: the resting orders in a fast cancel (`f: true`), the trigger orders
    // in a normal one, because the exchange refuses a fast cancel of a trigger order (docs/exchange-record.md, "The cancel mode").
    const batches = splitCancels(go, meta);
    report.actions = batches.map((b) => ({ fast: b.fast, oids: b.orders.map((o) => o.oid) }));

    let cancelled = 0;
    const problems: string[] = [];
    if (unresolved.length > 0) problems.push(`no asset index for ${unresolved.join(", ")}`);
    const sent = await Promise.allSettled(
      batches.map((b) =>
        exchange.cancel(b.orders, {
          ...(b.fast ? { fast: true } : {}),
          ...(vaultAddress !== undefined ? { vaultAddress } : {}),
        }),
      ),
    );
    for (const [i, outcome] of sent.entries()) {
      const kind = batches[i]?.fast ? "fast cancel" : "trigger cancel";
      if (outcome.status === "rejected") {
        problems.push(`${kind} failed (${describe(outcome.reason)})`);
        continue;
      }
      report.statuses.push(...outcome.value.statuses);
      cancelled += outcome.value.statuses.filter((s) => s.ok).length;
      const refused = outcome.value.statuses.filter((s) => !s.ok);
      if (refused.length > 0)
        problems.push(
          `${kind}: ${refused.length} refused (${refused.map((s) => `#${s.oid}: ${s.error}`).join("; ")})`,
        );
    }
    // Confirm from a second read: an order refused as "already canceled, or filled" is gone too.
    let after: FrontendOpenOrder[];
    try {
      after = await info.frontendOpenOrders({ user });
    } catch (error) {
      return done({
        confirmed: false,
        cancelled,
        kept: keep.length,
        detail: [...problems, `the confirming read failed (${describe(error)})`].join("; "),
      });
    }
    const targetedOids = new Set(go.map((o) => o.oid));
    report.stillOpen = after.filter((o) => targetedOids.has(o.oid)).map((o) => o.oid);
    const confirmed = report.stillOpen.length === 0;
    if (!confirmed)
      problems.push(
        `${report.stillOpen.length} still open after the cancel (${report.stillOpen.join(", ")})`,
      );
    return done({
      confirmed,
      cancelled,
      kept: keep.length,
      ...(problems.length > 0 ? { detail: problems.join("; ") } : {}),
    });
  };
}
