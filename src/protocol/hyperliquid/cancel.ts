/**
 * The cancel executor for the engine-down policy `cancel` (docs/exchange-record.md, "Cancel before the exchange
 * has to"): read the open orders (`frontendOpenOrders`, which marks trigger and reduce-only orders) and `meta`
 * together, send at most two signed `cancel` actions at once (the resting orders with the fast flag, the trigger
 * orders without it), check each order's status, and confirm with a second read. When the order feed keeps a
 * fresh list of the account's orders and `meta` was read before, those orders are cancelled at once, before the
 * read, which then only catches what the list missed (docs/operations.md, "The orders known at death"). Reduce-only TP/SL (trigger) orders stay unless `cancelStops`: they can only shrink a position, and they
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
  /** The user's open orders when a fresh list is kept (the order feed), else null: they are read first. */
  knownOrders?: ((user: string) => FrontendOpenOrder[] | null) | undefined;
  /** `meta` read before death; without it a known list waits for the read like any other. */
  metaCache?: MetaCache | undefined;
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
 * orders without it (and, with `unknownKindIsTrigger`, the orders that do not say whether they are triggers).
 * Orders whose asset index is unknown are left out (reported by the caller).
 */
export function splitCancels(
  orders: ReadonlyArray<FrontendOpenOrder>,
  meta: PerpMeta,
  { unknownKindIsTrigger = false }: { unknownKindIsTrigger?: boolean } = {},
): CancelBatch[] {
  const fast: CancelBatch = { fast: true, orders: [] };
  const normal: CancelBatch = { fast: false, orders: [] };
  for (const o of orders) {
    const asset = assetIndexOf(o.coin, meta);
    if (asset === null) continue;
    // An order whose kind is not said goes without the fast flag: a fast cancel of a trigger order is refused.
    const trigger = isTriggerOrder(o) || (unknownKindIsTrigger && typeof o.isTrigger !== "boolean");
    (trigger ? normal : fast).orders.push({ asset, oid: o.oid });
  }
  return [fast, normal].filter((b) => b.orders.length > 0);
}

function describe(error: unknown): string {
  if (error instanceof HyperliquidApiError) return `${error.kind}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The exchange's `meta` as last read: the asset indices a cancel names. Read once at start (prime) and again by
 * every read-at-death pass, so a cancel from a fresh order list never waits on a read.
 */
export type MetaCache = { get(): PerpMeta | null; set(meta: PerpMeta): void; prime(): Promise<void> };

export function createMetaCache(info: Pick<InfoClient, "meta">): MetaCache {
  let meta: PerpMeta | null = null;
  return {
    get: () => meta,
    set: (m) => {
      meta = m;
    },
    async prime() {
      try {
        meta = await info.meta();
      } catch {
        // unknown for now: a cancel reads it at death, as without a fresh list
      }
    },
  };
}

type Sent = { cancelled: number; statuses: CancelOrderStatus[]; problems: string[]; gone: Set<number> };

export function createCancelExecutor({
  info,
  exchange,
  onReport,
  knownOrders,
  metaCache,
}: CancelExecutorDeps): CancelOpenOrders {
  const send = async (batches: CancelBatch[], vaultAddress: string | undefined): Promise<Sent> => {
    const out: Sent = { cancelled: 0, statuses: [], problems: [], gone: new Set() };
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
        out.problems.push(`${kind} failed (${describe(outcome.reason)})`);
        continue;
      }
      // Answered: every order it named is cancelled now or was already gone ("already canceled, or filled").
      for (const o of batches[i]?.orders ?? []) out.gone.add(o.oid);
      out.statuses.push(...outcome.value.statuses);
      out.cancelled += outcome.value.statuses.filter((s) => s.ok).length;
      const refused = outcome.value.statuses.filter((s) => !s.ok);
      if (refused.length > 0)
        out.problems.push(
          `${kind}: ${refused.length} refused (${refused.map((s) => `#${s.oid}: ${s.error}`).join("; ")})`,
        );
    }
    return out;
  };

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
    const keepOf = (orders: FrontendOpenOrder[]) => (cancelStops ? [] : orders.filter(isProtectiveStop));

    // The orders known at death (a fresh list from the order feed, and meta read before): cancelled at once, before
    // any read. A reduce-only order whose kind the list does not say could be a protective stop: the read decides.
    const known = knownOrders?.(user) ?? null;
    const cachedMeta = metaCache?.get() ?? null;
    let early: Promise<Sent> | null = null;
    let earlyOrders: FrontendOpenOrder[] = [];
    if (known !== null && cachedMeta !== null) {
      const keep = keepOf(known);
      earlyOrders = known.filter(
        (o) => !keep.includes(o) && !(o.reduceOnly === true && typeof o.isTrigger !== "boolean"),
      );
      const batches = splitCancels(earlyOrders, cachedMeta, { unknownKindIsTrigger: true });
      if (batches.length > 0) {
        report.actions = batches.map((b) => ({ fast: b.fast, oids: b.orders.map((o) => o.oid) }));
        early = send(batches, vaultAddress);
      }
    }

    // The open orders and the asset indices are read together: one round trip before the cancel (with a fresh list,
    // the confirming pass that catches anything the list missed).
    let open: FrontendOpenOrder[];
    let meta: PerpMeta;
    try {
      [open, meta] = await Promise.all([info.frontendOpenOrders({ user }), info.meta()]);
    } catch (error) {
      const first = early ? await early : null;
      return done({
        confirmed: false,
        cancelled: first?.cancelled ?? 0,
        kept: 0,
        detail: [...(first?.problems ?? []), `reading open orders or meta failed (${describe(error)})`].join(
          "; ",
        ),
      });
    }
    metaCache?.set(meta);
    const first = early ? await early : null;
    if (first) report.statuses.push(...first.statuses);
    const keep = keepOf(open);
    const go = open.filter((o) => !keep.includes(o));
    report.kept = keep.map((o) => ({ coin: o.coin, oid: o.oid, orderType: o.orderType }));
    if (go.length === 0 && first === null) return done({ confirmed: true, cancelled: 0, kept: keep.length });

    // Targeted: what the read found, and what the known list's cancel answered for (the read may come after it).
    const targets = new Map<number, FrontendOpenOrder>();
    for (const o of [...earlyOrders.filter((o) => first?.gone.has(o.oid)), ...go]) targets.set(o.oid, o);
    report.targeted = [...targets.values()].map((o) => ({
      coin: o.coin,
      oid: o.oid,
      asset: assetIndexOf(o.coin, meta),
      orderType: o.orderType,
    }));
    const unresolved = go.filter((o) => assetIndexOf(o.coin, meta) === null).map((o) => `${o.coin}#${o.oid}`);
    // At most two actions, sent together: the resting orders in a fast cancel (`f: true`), the trigger orders
    // in a normal one, because the exchange refuses a fast cancel of a trigger order (docs/exchange-record.md, "The cancel mode").
    // After a cancel from the known list, only what it did not answer for goes again.
    const batches = splitCancels(
      go.filter((o) => !first?.gone.has(o.oid)),
      meta,
    );
    if (batches.length > 0)
      report.actions = [
        ...(report.actions ?? []),
        ...batches.map((b) => ({ fast: b.fast, oids: b.orders.map((o) => o.oid) })),
      ];

    const problems: string[] = [...(first?.problems ?? [])];
    if (unresolved.length > 0) problems.push(`no asset index for ${unresolved.join(", ")}`);
    const second = batches.length > 0 ? await send(batches, vaultAddress) : null;
    let cancelled = first?.cancelled ?? 0;
    if (second) {
      report.statuses.push(...second.statuses);
      cancelled += second.cancelled;
      problems.push(...second.problems);
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
    const targetedOids = new Set(report.targeted.map((o) => o.oid));
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
