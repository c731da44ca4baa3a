/**
 * POST /info: batchClearinghouseStates (plus clearinghouseState, openOrders, frontendOpenOrders, userRateLimit, userRole, historicalOrders, extraAgents, meta), computed
 * from the simulated positions and marks in the shape of docs/exchange-behaviour.md §13.
 */
import { z } from "zod";
import { DESERIALIZE_ERROR, type HandlerResult } from "./exchange.js";
import { decimal, price } from "./format.js";
import type { SimAccount, SimOrder, SimPosition } from "./records.js";
import type { SimStore } from "./state.js";
import { szDecimalsOf } from "./universe.js";

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const Dex = z.string().optional();

const InfoRequest = z.discriminatedUnion("type", [
  z.object({ type: z.literal("batchClearinghouseStates"), users: z.array(Address), dex: Dex }),
  z.object({ type: z.literal("clearinghouseState"), user: Address, dex: Dex }),
  z.object({ type: z.literal("openOrders"), user: Address, dex: Dex }),
  z.object({ type: z.literal("frontendOpenOrders"), user: Address, dex: Dex }),
  z.object({ type: z.literal("userRateLimit"), user: Address }),
  z.object({ type: z.literal("historicalOrders"), user: Address }),
  z.object({ type: z.literal("extraAgents"), user: Address }),
  z.object({ type: z.literal("meta"), dex: Dex }),
  z.object({ type: z.literal("metaAndAssetCtxs"), dex: Dex }),
  z.object({ type: z.literal("userFills"), user: Address, aggregateByTime: z.boolean().optional() }),
  z.object({ type: z.literal("userRole"), user: Address }),
  z.object({ type: z.literal("perpDexs") }),
]);
export type InfoRequest = z.infer<typeof InfoRequest>;

/** IP weight per request (docs/exchange-behaviour.md §10): clearinghouseState 2, order lists 20; the undocumented batch:
 *  2 + 1 per 10 users (our choice: one clearinghouseState plus a surcharge that grows with the batch). */
export function infoWeight(req: unknown): number {
  const r = req as { type?: unknown; users?: unknown } | null;
  if (r && r.type === "userRole") return 60;
  if (r && r.type === "batchClearinghouseStates" && Array.isArray(r.users)) {
    return 2 + Math.floor(r.users.length / 10);
  }
  if (
    r &&
    (r.type === "openOrders" ||
      r.type === "frontendOpenOrders" ||
      r.type === "userRateLimit" ||
      r.type === "historicalOrders" ||
      r.type === "extraAgents" ||
      r.type === "meta" ||
      r.type === "metaAndAssetCtxs" ||
      r.type === "perpDexs" ||
      r.type === "userFills")
  )
    return 20;
  return 2;
}

export function handleInfo(store: SimStore, rawBody: string): HandlerResult {
  let raw: unknown;
  try {
    raw = JSON.parse(rawBody);
  } catch {
    return unprocessable();
  }
  const parsed = InfoRequest.safeParse(raw);
  if (!parsed.success) return unprocessable();
  const req = parsed.data;
  const dex = "dex" in req ? (req.dex ?? "") : "";
  const now = store.clock.now();
  switch (req.type) {
    case "batchClearinghouseStates":
      // One state per user, in request order: the position is the only link (docs/exchange-behaviour.md §14).
      return ok(req.users.map((u) => clearinghouseState(store, store.account(u), dex, now)));
    case "clearinghouseState":
      return ok(clearinghouseState(store, store.account(req.user), dex, now));
    case "openOrders":
      return ok(ordersOf(store.account(req.user), dex).map(openOrderJson));
    case "frontendOpenOrders":
      return ok(ordersOf(store.account(req.user), dex).map(frontendOrderJson));
    case "historicalOrders":
      // Newest first, each with its final status and when it got it (the docs' historicalOrders shape).
      return ok(
        [...store.getHistoricalOrders(req.user)].reverse().map((h) => ({
          order: frontendOrderJson(h.order),
          status: h.status,
          statusTimestamp: h.statusTimestamp,
        })),
      );
    case "extraAgents":
      // Named agents of the master; an expired agent is pruned, so it is no longer listed.
      return ok(
        store
          .getAgents(req.user)
          .filter((a) => a.name !== "" && a.validUntil > now)
          .map((a) => ({ address: a.address, name: a.name, validUntil: a.validUntil })),
      );
    case "userRole":
      return ok(userRole(store, req.user));
    case "perpDexs":
      // null for the first perp dex, then each builder-deployed dex in its index order (the docs' shape)
      return ok(
        store.dexes.map((d) =>
          d === ""
            ? null
            : {
                name: d,
                fullName: `${d} dex`,
                deployer: `0x${"0".repeat(40)}`,
                oracleUpdater: null,
                feeRecipient: null,
                assetToStreamingOiCap: [],
                assetToFundingMultiplier: [],
              },
        ),
      );
    case "meta":
      // an unknown dex answers null, as the exchange does
      if (!store.dexes.includes(dex)) return ok(null);
      return ok(meta(store, dex));
    case "metaAndAssetCtxs":
      if (!store.dexes.includes(dex)) return ok(null);
      // [meta, one context per asset in universe order]; markPx null for a coin the simulator has no mark for
      return ok([
        meta(store, dex),
        store.universeOf(dex).map((coin) => {
          const mark = store.getMark(coin);
          const px = mark === undefined ? null : price(mark);
          return {
            markPx: px,
            midPx: px,
            oraclePx: px,
            prevDayPx: px,
            funding: "0.0",
            openInterest: "0.0",
            premium: "0.0",
            dayNtlVlm: "0.0",
            impactPxs: null,
          };
        }),
      ]);
    case "userFills":
      // newest first, at most 2,000 (the docs' userFills)
      return ok([...store.getFills(req.user)].reverse());
    case "userRateLimit": {
      // docs/exchange-behaviour.md §10: 10,000 requests plus 1 per USDC traded, over the address's lifetime (a user's
      // `addressBudget` option replaces the cap). An unknown address reads as a fresh one.
      const acc = store.account(req.user);
      const volume = acc?.volumeUsd ?? 0;
      return ok({
        cumVlm: decimal(volume),
        nRequestsUsed: acc?.requestsUsed ?? 0,
        nRequestsCap: acc?.addressBudget ?? 10_000 + Math.floor(volume),
        nRequestsSurplus: 0,
      });
    }
  }
}

/**
 * `meta`: the dex's universe in index order, each with its size decimals (the simulator's table, universe.ts); a
 * builder-deployed dex's coins are named `dex:COIN`.
 */
function meta(store: SimStore, dex = ""): Record<string, unknown> {
  return {
    universe: store.universeOf(dex).map((name) => ({
      name,
      szDecimals: szDecimalsOf(name),
      maxLeverage: 20,
      marginTableId: 20,
    })),
    marginTables: [],
  };
}

/**
 * The real shapes (docs/exchange-behaviour.md §25): `{"role":"user"|"vault"|"missing"}`, an agent
 * `{"role":"agent","data":{"user":MASTER}}`, a sub-account `{"role":"subAccount","data":{"master":MASTER}}`.
 */
function userRole(store: SimStore, address: string): unknown {
  const key = address.toLowerCase();
  const acc = store.account(key);
  if (acc?.isUser) return { role: "user" };
  // an expired or deregistered agent is no longer an agent (docs/exchange-record.md)
  const master = store.userForSigner(key);
  if (master) return { role: "agent", data: { user: master } };
  if (acc?.master) return { role: "subAccount", data: { master: acc.master } };
  if (acc) return { role: "vault" };
  return { role: "missing" };
}

function unprocessable(): HandlerResult {
  return { status: 422, contentType: "text/plain; charset=utf-8", body: DESERIALIZE_ERROR };
}

function ok(body: unknown): HandlerResult {
  return { status: 200, contentType: "application/json", body: JSON.stringify(body) };
}

export function ordersOf(acc: SimAccount | undefined, dex: string): SimOrder[] {
  return (acc?.orders ?? []).filter((o) => o.dex === dex);
}

/** The fields both order lists start with (docs/exchange-behaviour.md §15). */
function orderBase(o: SimOrder): Record<string, unknown> {
  return { coin: o.coin, side: o.side, limitPx: o.limitPx, sz: o.sz, oid: o.oid, timestamp: o.timestamp };
}

function openOrderJson(o: SimOrder): Record<string, unknown> {
  return {
    ...orderBase(o),
    origSz: o.origSz,
    ...(o.cloid ? { cloid: o.cloid } : {}),
    ...(o.reduceOnly ? { reduceOnly: true } : {}),
  };
}

/** An order as `frontendOpenOrders` (and the WebSocket's `openOrders`) gives it. */
export function frontendOrderJson(o: SimOrder): Record<string, unknown> {
  return {
    ...orderBase(o),
    triggerCondition: o.triggerCondition,
    isTrigger: o.isTrigger,
    triggerPx: o.triggerPx,
    children: [],
    isPositionTpsl: false,
    reduceOnly: o.reduceOnly,
    orderType: o.orderType,
    origSz: o.origSz,
    tif: o.tif,
    cloid: o.cloid,
  };
}

/** Maintenance margin rate: half the initial margin at max leverage (the exchange's documented rule). */
export function maintenanceRate(p: SimPosition): number {
  return 1 / (2 * p.maxLeverage);
}

type Computed = {
  p: SimPosition;
  mark: number;
  positionValue: number;
  unrealizedPnl: number;
  marginUsed: number;
  initialMargin: number;
  maintenance: number;
};

function compute(store: SimStore, p: SimPosition): Computed {
  const mark = store.getMark(p.coin) ?? p.entryPx;
  const size = Math.abs(p.szi);
  const positionValue = size * mark;
  const unrealizedPnl = p.szi * (mark - p.entryPx);
  const initialMargin = (size * p.entryPx) / p.leverage;
  // Cross: margin follows the mark (positionValue / leverage). Isolated: the margin put in at entry plus the
  // unrealized PnL, which is what the real isolated example shows (docs/exchange-behaviour.md §13: rawUsd = marginUsed − szi·mark).
  const marginUsed =
    p.marginMode === "cross" ? positionValue / p.leverage : Math.max(0, initialMargin + unrealizedPnl);
  return {
    p,
    mark,
    positionValue,
    unrealizedPnl,
    marginUsed,
    initialMargin,
    maintenance: positionValue * maintenanceRate(p),
  };
}

/**
 * One clearinghouse state. The collateral (`balanceUsd`) includes the isolated margins; the total account
 * value adds every unrealized PnL; the cross account value is the total minus the isolated margins (as in
 * the real example: 13109.482328 − 4.967826 = 13104.514502).
 */
export function clearinghouseState(
  store: SimStore,
  acc: SimAccount | undefined,
  dex: string,
  now: number,
): Record<string, unknown> {
  const positions = (acc?.positions ?? []).filter((p) => p.dex === dex).map((p) => compute(store, p));
  // Collateral sits on the first dex only; other dexes start at zero (our choice: separate clearinghouses).
  const balance = dex === "" ? (acc?.balanceUsd ?? 0) : 0;
  const cross = positions.filter((c) => c.p.marginMode === "cross");
  const isolated = positions.filter((c) => c.p.marginMode === "isolated");
  const sum = (xs: Computed[], f: (c: Computed) => number) => xs.reduce((a, c) => a + f(c), 0);
  const totalAccountValue = balance + sum(positions, (c) => c.unrealizedPnl);
  const crossAccountValue = totalAccountValue - sum(isolated, (c) => c.marginUsed);
  const crossMaintenance = sum(cross, (c) => c.maintenance);
  const crossMarginUsed = sum(cross, (c) => c.marginUsed);

  const assetPositions = positions.map((c) => {
    const { p } = c;
    let liq: number | null;
    if (p.marginMode === "cross") {
      // Price at which the cross account value meets the cross maintenance margin, others held fixed.
      const others = crossMaintenance - c.maintenance;
      liq = (p.szi * c.mark - (crossAccountValue - others)) / (p.szi - Math.abs(p.szi) * maintenanceRate(p));
    } else {
      liq = (p.szi * c.mark - c.marginUsed) / (p.szi - Math.abs(p.szi) * maintenanceRate(p));
    }
    // A long fully covered by equity cannot be liquidated: the real API then answers null.
    if (!Number.isFinite(liq) || liq <= 0) liq = null;
    const leverage =
      p.marginMode === "cross"
        ? { type: "cross", value: p.leverage }
        : { type: "isolated", value: p.leverage, rawUsd: decimal(c.marginUsed - p.szi * c.mark, 6) };
    return {
      type: "oneWay",
      position: {
        coin: p.coin,
        szi: decimal(p.szi, 5),
        leverage,
        entryPx: price(p.entryPx),
        positionValue: decimal(c.positionValue, 6),
        unrealizedPnl: decimal(c.unrealizedPnl, 6),
        returnOnEquity: decimal(c.unrealizedPnl / c.initialMargin, 7),
        liquidationPx: liq === null ? null : decimal(liq, 8),
        marginUsed: decimal(c.marginUsed, 6),
        maxLeverage: p.maxLeverage,
        cumFunding: { allTime: "0.0", sinceOpen: "0.0", sinceChange: "0.0" },
      },
    };
  });
  const summary = (xs: Computed[], accountValue: number) => ({
    accountValue: decimal(accountValue, 6),
    totalNtlPos: decimal(
      sum(xs, (c) => c.positionValue),
      6,
    ),
    totalRawUsd: decimal(accountValue - sum(xs, (c) => c.p.szi * c.mark), 6),
    totalMarginUsed: decimal(
      sum(xs, (c) => c.marginUsed),
      6,
    ),
  });
  return {
    marginSummary: summary(positions, totalAccountValue),
    crossMarginSummary: summary(cross, crossAccountValue),
    crossMaintenanceMarginUsed: decimal(crossMaintenance, 6),
    withdrawable: decimal(Math.max(0, crossAccountValue - crossMarginUsed), 6),
    assetPositions,
    time: now,
  };
}
