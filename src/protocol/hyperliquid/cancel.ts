/**
 * The cancel executor for the engine-down policy `cancel` (docs/exchange-record.md, "Cancel before the exchange
 * has to"): read the open orders (`frontendOpenOrders`, which marks trigger and reduce-only orders), send one
 * signed `cancel` action for every order that should go, check each order's status, and confirm with a second
 * read. Reduce-only TP/SL (trigger) orders stay unless `cancelStops`: they can only shrink a position, and they
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
    let open: FrontendOpenOrder[];
    try {
      open = await info.frontendOpenOrders({ user });
    } catch (error) {
      return done({
        confirmed: false,
        cancelled: 0,
        kept: 0,
        detail: `reading open orders failed (${describe(error)})`,
      });
    }
    const keep = cancelStops ? [] : open.filter(isProtectiveStop);
    const go = open.filter((o) => !keep.includes(o));
    report.kept = keep.map((o) => ({ coin: o.coin, oid: o.oid, orderType: o.orderType }));
    if (go.length === 0) return done({ confirmed: true, cancelled: 0, kept: keep.length });

    let meta: PerpMeta;
    try {
      meta = await info.meta();
    } catch (error) {
      return done({
        confirmed: false,
        cancelled: 0,
        kept: keep.length,
        detail: `reading meta failed (${describe(error)})`,
      });
    }
    report.targeted = go.map((o) => ({
      coin: o.coin,
      oid: o.oid,
      asset: assetIndexOf(o.coin, meta),
      orderType: o.orderType,
    }));
    const resolvable = report.targeted.filter((t): t is typeof t & { asset: number } => t.asset !== null);
    const unresolved = report.targeted.filter((t) => t.asset === null).map((t) => `${t.coin}#${t.oid}`);

    let cancelled = 0;
    const problems: string[] = [];
    if (unresolved.length > 0) problems.push(`no asset index for ${unresolved.join(", ")}`);
    if (resolvable.length > 0) {
      try {
        const result = await exchange.cancel(
          resolvable.map((t) => ({ asset: t.asset, oid: t.oid })),
          vaultAddress !== undefined ? { vaultAddress } : {},
        );
        report.statuses = result.statuses;
        cancelled = result.statuses.filter((s) => s.ok).length;
        const refused = result.statuses.filter((s) => !s.ok);
        if (refused.length > 0)
          problems.push(
            `${refused.length} refused (${refused.map((s) => `#${s.oid}: ${s.error}`).join("; ")})`,
          );
      } catch (error) {
        problems.push(`cancel failed (${describe(error)})`);
      }
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
