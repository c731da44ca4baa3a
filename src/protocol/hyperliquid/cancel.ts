/**
 * The cancel executor for the engine-down policy `cancel` (docs/exchange-record.md, "Cancel before the exchange
 * has to"; docs/operations.md, "The cancel path"): one pass spends the least of the IP's weight it can.
 * - The orders the order feed knows (a fresh list, and `meta` read before) are cancelled at once, without a read
 *   first: at most two signed `cancel` actions (the resting orders with the fast flag, the trigger orders without).
 * - Then one read of the open orders (`frontendOpenOrders`, which marks trigger and reduce-only orders), after those
 *   cancels were answered: it confirms them and catches what the list missed (then cancelled and read once more).
 *   Without a fresh list it is the first look, and a second read confirms.
 * - `meta` (the asset indices) is cached: read at start, again only when an order names a coin it does not know.
 * Reduce-only TP/SL (trigger) orders stay unless `cancelStops`: they can only shrink a position, and they are what
 * protects it while the engine is down. Cancelling spends no daily trigger.
 *
 * Every dex of the list (`--dex`, the exposure poll's) gets this pass, at the same time: its own known orders, its own
 * confirming read, its own asset ids (asset-ids.ts: a builder-deployed dex's start at 100000 + its index in
 * `perpDexs` × 10000) and its own cached `meta`. The run is confirmed only when every dex's pass is; its weight is
 * the sum, its failure the first dex's that failed (docs/operations.md, "Every listed dex").
 *
 * It never throws and never waits to try again: every failure is `{ confirmed: false, failure, detail }` with what
 * failed (a read or an action, the error policy's kind), and the switch decides whether the pass is tried again or
 * the scheduled cancel falls back to the 5 s minimum (src/switch/engine-down.ts).
 */
import type { CancelFailure, CancelPassResult } from "../../core/orders-port.js";
import { assetOffset, dexIndexOf } from "./asset-ids.js";
import { HyperliquidApiError, kindIsRetryable } from "./errors.js";
import type { CancelOrderStatus, ExchangeClient } from "./exchange.js";
import type { InfoClient } from "./info.js";
import type { FrontendOpenOrder, PerpMeta } from "./schemas.js";

export type CancelOpenOrdersParams = {
  account: string;
  vaultAddress?: string;
  cancelStops: boolean;
  /** only these dexes (a fire's sweep: the dexes it missed); default every dex the executor covers */
  dexes?: readonly string[] | undefined;
};
export type CancelOpenOrdersResult = CancelPassResult;
export type CancelOpenOrders = (params: CancelOpenOrdersParams) => Promise<CancelOpenOrdersResult>;
/**
 * The executor, and its `prime`: each listed builder dex's place in `perpDexs` and its `meta` read ahead (at
 * start), so that a pass at death goes from its read straight to its cancel on every dex. Never throws: what could
 * not be read is read by the first pass that needs it.
 */
export type CancelExecutor = CancelOpenOrders & { prime(): Promise<void> };

export type CancelExecutorDeps = {
  info: Pick<InfoClient, "frontendOpenOrders" | "meta"> & Partial<Pick<InfoClient, "perpDexs">>;
  /**
   * The perp dexes whose orders are cancelled ("" is the first perp dex; default [""]): the exposure poll's list
   * (`--dex`). Each is read and cancelled with its own asset ids (asset-ids.ts).
   */
  dexes?: readonly string[] | undefined;
  exchange: Pick<ExchangeClient, "cancel">;
  /** Called once per run with the details (the switch logs `orders.cancelled`). */
  onReport?: (report: CancelReport) => void;
  /**
   * The user's open orders when a fresh list is kept (the order feed), else null: they are read first. The feed
   * follows the first perp dex; a builder dex's orders are always read first.
   */
  knownOrders?: ((user: string) => FrontendOpenOrder[] | null) | undefined;
  /** the first perp dex's `meta` as last read, shared by the executors of one IP; absent: a cache of its own */
  metaCache?: MetaCache | undefined;
  /**
   * Awaited before each confirming read: the weight of a simultaneous death is shared out by src/fleet-death/, which
   * lets the read go when the IP's weight allows (true), or not at all when the engine is back (false: the pass
   * ends unconfirmed, which the switch ignores once the engine is up). Absent: the read goes at once.
   */
  beforeConfirm?: ((user: string) => Promise<boolean>) | undefined;
};

export type CancelReport = {
  account: string;
  /** a builder-deployed dex's name; absent for the first perp dex */
  dex?: string;
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
  /** the IP weight of the pass's requests the exchange took (a 429 is not counted) */
  weight?: number;
};

/** A reduce-only TP/SL: a reduce-only trigger order (or one attached to a position). */
export function isProtectiveStop(o: FrontendOpenOrder): boolean {
  return o.reduceOnly === true && (o.isTrigger === true || o.isPositionTpsl === true);
}

/**
 * Asset index of a coin as the cancel action wants it: the perp's position in `meta.universe` plus the dex's
 * `offset` (0 on the first perp dex; 100000 + dex index × 10000 on a builder-deployed one, whose `meta` lists its
 * coins as `dex:COIN`: asset-ids.ts); on the first dex, a spot pair `@N` is 10000 + N and `PURR/USDC` is 10000.
 */
export function assetIndexOf(coin: string, meta: PerpMeta, offset = 0): number | null {
  if (offset === 0) {
    const spot = /^@(\d+)$/.exec(coin);
    if (spot) return 10_000 + Number(spot[1]);
    if (coin === "PURR/USDC") return 10_000;
  }
  const i = meta.universe.findIndex((a) => a.name === coin);
  return i >= 0 ? offset + i : null;
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
  { unknownKindIsTrigger = false, offset = 0 }: { unknownKindIsTrigger?: boolean; offset?: number } = {},
): CancelBatch[] {
  const fast: CancelBatch = { fast: true, orders: [] };
  const normal: CancelBatch = { fast: false, orders: [] };
  for (const o of orders) {
    const asset = assetIndexOf(o.coin, meta, offset);
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
 * The exchange's `meta` as last read: the asset indices a cancel names. Read once at start (prime), and again by a
 * pass only when an order names a coin it does not know, so a cancel from a fresh order list never waits on a read
 * and a pass spends no weight on it.
 */
export type MetaCache = { get(): PerpMeta | null; set(meta: PerpMeta): void; prime(): Promise<void> };

export function createMetaCache(info: Pick<InfoClient, "meta">, dex = ""): MetaCache {
  let meta: PerpMeta | null = null;
  return {
    get: () => meta,
    set: (m) => {
      meta = m;
    },
    async prime() {
      try {
        meta = await (dex === "" ? info.meta() : info.meta({ dex }));
      } catch {
        // unknown for now: a cancel reads it at death, as without a fresh list
      }
    },
  };
}

type Sent = { cancelled: number; statuses: CancelOrderStatus[]; gone: Set<number> };

/** The IP weight of the pass's requests (docs/operations.md, "The IP's weight"): an info read 20, an action 1 + ⌊n/40⌋. */
export const CANCEL_WEIGHT = Object.freeze({
  read: 20,
  action: (orders: number) => 1 + Math.floor(orders / 40),
});

export type { CancelFailure };

function failureOf(request: CancelFailure["request"], error: unknown): CancelFailure {
  if (error instanceof HyperliquidApiError)
    return { kind: error.kind, request, retryable: kindIsRetryable(error.kind) };
  return { kind: "internal", request, retryable: false };
}

/** A refused request (HTTP 429) was not counted against the IP's weight (the exchange refused it before). */
const charged = (error: unknown) => !(error instanceof HyperliquidApiError && error.kind === "rate_limited");

/** A builder-dex coin (`dex:COIN`): never in the first perp dex's `meta`, so reading it again cannot help. */
const builderDex = (coin: string) => coin.includes(":");

export function createCancelExecutor({
  info,
  dexes = [""],
  exchange,
  onReport,
  knownOrders,
  metaCache = createMetaCache(info),
  beforeConfirm,
}: CancelExecutorDeps): CancelExecutor {
  // Each builder dex's `meta` cached as the first dex's is; its offset from `perpDexs`, read once (asset-ids.ts).
  const metaCaches = new Map<string, MetaCache>([["", metaCache]]);
  const metaCacheOf = (dex: string): MetaCache => {
    let cache = metaCaches.get(dex);
    if (!cache) {
      cache = createMetaCache(info, dex);
      metaCaches.set(dex, cache);
    }
    return cache;
  };
  // `perpDexs` is read once (a dex's index never changes once deployed), again only while a dex is not in it; the
  // dexes of one run share one read, and the pass that sent it pays its weight.
  let listed: ReadonlyArray<{ name: string } | null> | null = null;
  let reading: Promise<ReadonlyArray<{ name: string } | null>> | null = null;
  const offsetOf = async (dex: string): Promise<{ offset: number; read: boolean }> => {
    let read = false;
    if (listed === null || dexIndexOf(listed, dex) === null) {
      if (!info.perpDexs)
        throw new Error("this info client cannot read perpDexs: builder-dex asset ids unknown");
      if (reading === null) {
        read = true;
        reading = info.perpDexs().finally(() => {
          reading = null;
        });
      }
      listed = await reading;
    }
    const i = dexIndexOf(listed, dex);
    if (i === null) throw new Error(`the exchange lists no perp dex named ${JSON.stringify(dex)} (perpDexs)`);
    return { offset: assetOffset(i), read };
  };

  /** One dex's pass: the known orders first, one confirming read, `meta` only when a coin is not known. */
  const cancelOn = async (
    user: string,
    vaultAddress: string | undefined,
    cancelStops: boolean,
    dex: string,
  ): Promise<CancelOpenOrdersResult & { spent: number }> => {
    const dexMeta = metaCacheOf(dex);
    const onDex = dex === "" ? {} : { dex };
    const report: CancelReport = {
      account: user,
      ...onDex,
      targeted: [],
      kept: [],
      statuses: [],
      stillOpen: [],
      confirmed: false,
    };
    let weight = 0;
    const problems: string[] = [];
    let failure: CancelFailure | undefined;
    let cancelled = 0;
    const failed = (request: CancelFailure["request"], what: string, error: unknown, cost: number) => {
      if (charged(error)) weight += cost;
      failure ??= failureOf(request, error);
      problems.push(`${what} failed (${describe(error)})`);
    };
    const done = (confirmed: boolean, kept: number): CancelOpenOrdersResult & { spent: number } => {
      report.confirmed = confirmed;
      report.weight = weight;
      if (problems.length > 0) report.detail = problems.join("; ");
      onReport?.(report);
      return {
        confirmed,
        cancelled,
        kept,
        ...(problems.length > 0 ? { detail: problems.join("; ") } : {}),
        ...(confirmed ? {} : { weight, ...(failure ? { failure } : {}) }),
        spent: weight,
      };
    };
    const keepOf = (orders: FrontendOpenOrder[]) => (cancelStops ? [] : orders.filter(isProtectiveStop));
    /** a confirming read waits for the weight shared out at a simultaneous death; false: not sent */
    const mayConfirm = async () => {
      if (!beforeConfirm || (await beforeConfirm(user))) return true;
      problems.push("the confirming read was not sent (the engine is back)");
      return false;
    };

    const read = async (what: string): Promise<FrontendOpenOrder[] | null> => {
      try {
        const open = await info.frontendOpenOrders({ user, ...onDex });
        weight += CANCEL_WEIGHT.read;
        return open;
      } catch (error) {
        failed("read", what, error, CANCEL_WEIGHT.read);
        return null;
      }
    };
    // At most two actions, sent together: the resting orders in a fast cancel (`f: true`), the trigger orders in a
    // normal one, because the exchange refuses a fast cancel of a trigger order (docs/exchange-record.md, "The
    // cancel mode").
    const send = async (batches: CancelBatch[]): Promise<Sent> => {
      const out: Sent = { cancelled: 0, statuses: [], gone: new Set() };
      report.actions = [
        ...(report.actions ?? []),
        ...batches.map((b) => ({ fast: b.fast, oids: b.orders.map((o) => o.oid) })),
      ];
      const sent = await Promise.allSettled(
        batches.map((b) =>
          exchange.cancel(b.orders, {
            ...(b.fast ? { fast: true } : {}),
            ...(vaultAddress !== undefined ? { vaultAddress } : {}),
          }),
        ),
      );
      for (const [i, outcome] of sent.entries()) {
        const batch = batches[i]!;
        const kind = batch.fast ? "fast cancel" : "trigger cancel";
        const cost = CANCEL_WEIGHT.action(batch.orders.length);
        if (outcome.status === "rejected") {
          failed("cancel", kind, outcome.reason, cost);
          continue;
        }
        weight += cost;
        // Answered: every order it named is cancelled now or was already gone ("already canceled, or filled").
        for (const o of batch.orders) out.gone.add(o.oid);
        out.statuses.push(...outcome.value.statuses);
        out.cancelled += outcome.value.statuses.filter((s) => s.ok).length;
        const refused = outcome.value.statuses.filter((s) => !s.ok);
        if (refused.length > 0)
          problems.push(
            `${kind}: ${refused.length} refused (${refused.map((s) => `#${s.oid}: ${s.error}`).join("; ")})`,
          );
      }
      report.statuses.push(...out.statuses);
      cancelled += out.cancelled;
      return out;
    };
    const targeted = new Map<number, FrontendOpenOrder>();
    const target = (orders: FrontendOpenOrder[], meta: PerpMeta | null, offset: number) => {
      for (const o of orders) targeted.set(o.oid, o);
      report.targeted = [...targeted.values()].map((o) => ({
        coin: o.coin,
        oid: o.oid,
        asset: meta ? assetIndexOf(o.coin, meta, offset) : null,
        orderType: o.orderType,
      }));
    };

    // 1. The orders known at death (a fresh list from the order feed, and `meta` already read): cancelled at once,
    // without a read first. A reduce-only order whose kind the list does not say could be a protective stop, and
    // an order whose asset `meta` does not know may be a newly listed one: the read below decides both. (The feed
    // follows the first perp dex: a builder dex's pass starts at its read.)
    const known = dex === "" ? (knownOrders?.(user) ?? null) : null;
    const cachedMeta = dexMeta.get();
    const knew = known !== null && cachedMeta !== null;
    if (knew) {
      const keep = keepOf(known);
      const early = known.filter(
        (o) =>
          !keep.includes(o) &&
          !(o.reduceOnly === true && typeof o.isTrigger !== "boolean") &&
          assetIndexOf(o.coin, cachedMeta) !== null,
      );
      const batches = splitCancels(early, cachedMeta, { unknownKindIsTrigger: true });
      if (batches.length > 0) {
        target(early, cachedMeta, 0);
        await send(batches);
      }
    }

    // 2. The open orders read after every cancel above was answered: with a known list this is the confirming read
    // (whatever the list missed, or a cancel that failed, is still open here); without one it is the first look.
    if (knew && !(await mayConfirm())) return done(false, 0);
    const open = await read("reading the open orders");
    if (open === null) return done(false, 0);
    const keep = keepOf(open);
    report.kept = keep.map((o) => ({ coin: o.coin, oid: o.oid, orderType: o.orderType }));
    const go = open.filter((o) => !keep.includes(o));
    // Nothing left to go (a known list's cancel answered for all of it, or nothing was open): confirmed.
    if (go.length === 0) return done(true, keep.length);

    // 3. The asset indices from the cache; `meta` is read again only when it was never read or names none of an
    // order's coin (a newly listed asset). A failed read leaves the cached one, if any, to the orders it knows.
    // On a builder dex the ids start at its offset, from `perpDexs` read once for the executor's life.
    let offset = 0;
    if (dex !== "") {
      try {
        const o = await offsetOf(dex);
        offset = o.offset;
        if (o.read) weight += CANCEL_WEIGHT.read;
      } catch (error) {
        failed("read", "reading perpDexs", error, CANCEL_WEIGHT.read);
        return done(false, keep.length);
      }
    }
    const isOther = (coin: string) => (dex === "" ? builderDex(coin) : false);
    let meta = dexMeta.get();
    if (meta === null || go.some((o) => !isOther(o.coin) && assetIndexOf(o.coin, meta!, offset) === null)) {
      try {
        meta = await (dex === "" ? info.meta() : info.meta({ dex }));
        weight += CANCEL_WEIGHT.read;
        dexMeta.set(meta);
      } catch (error) {
        failed("read", "reading meta", error, CANCEL_WEIGHT.read);
        if (meta === null) return done(false, keep.length);
      }
    }
    const resolved = meta;
    target(go, resolved, offset);
    const unresolved = go
      .filter((o) => assetIndexOf(o.coin, resolved, offset) === null)
      .map((o) => `${o.coin}#${o.oid}`);
    if (unresolved.length > 0) problems.push(`no asset index for ${unresolved.join(", ")}`);
    const batches = splitCancels(go, resolved, { offset });
    if (batches.length > 0) await send(batches);

    // 4. Confirm from a further read: an order refused as "already canceled, or filled" is gone too.
    if (!(await mayConfirm())) return done(false, keep.length);
    const after = await read("the confirming read");
    if (after === null) return done(false, keep.length);
    const goOids = new Set(go.map((o) => o.oid));
    report.stillOpen = after.filter((o) => goOids.has(o.oid)).map((o) => o.oid);
    const confirmed = report.stillOpen.length === 0;
    if (!confirmed)
      problems.push(
        `${report.stillOpen.length} still open after the cancel (${report.stillOpen.join(", ")})`,
      );
    return done(confirmed, keep.length);
  };

  // Every listed dex at once: each gets its own pass (its orders, its asset ids), and the run is confirmed only when
  // every dex's is. A detail names the dex it is about; the failure the switch judges is the first dex's that failed.
  const run: CancelOpenOrders = async ({ account, vaultAddress, cancelStops, dexes: only }) => {
    const user = vaultAddress ?? account;
    const list = [...new Set(only ?? dexes)];
    const results = await Promise.all(list.map((dex) => cancelOn(user, vaultAddress, cancelStops, dex)));
    if (results.length === 1) {
      const { spent: _, ...one } = results[0]!;
      return one;
    }
    const details = results
      .map((r, i) =>
        r.detail === undefined ? null : list[i] === "" ? r.detail : `dex ${list[i]}: ${r.detail}`,
      )
      .filter((d): d is string => d !== null);
    const confirmed = results.every((r) => r.confirmed);
    const failure = results.find((r) => r.failure !== undefined)?.failure;
    return {
      confirmed,
      cancelled: results.reduce((n, r) => n + r.cancelled, 0),
      kept: results.reduce((n, r) => n + r.kept, 0),
      ...(details.length > 0 ? { detail: details.join("; ") } : {}),
      ...(confirmed
        ? {}
        : {
            // every dex's pass spent weight, confirmed or not: the retry's budget counts it all
            weight: results.reduce((n, r) => n + r.spent, 0),
            ...(failure ? { failure } : {}),
          }),
    };
  };
  const prime = async () => {
    await Promise.all(
      [...new Set(dexes)]
        .filter((d) => d !== "")
        .map(async (dex) => {
          await offsetOf(dex).catch(() => undefined);
          await metaCacheOf(dex).prime();
        }),
    );
  };
  return Object.assign(run, { prime });
}
