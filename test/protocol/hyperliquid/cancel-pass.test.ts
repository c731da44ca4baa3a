/**
 * The cancel pass spends the least of the IP's weight (issue 38, finding 3), against a fake exchange that logs each
 * request in order: the orders a fresh feed knows are cancelled without a read first and one read confirms them;
 * the confirming read is always made (a refused one is reported for the switch to try again, never skipped); `meta`
 * is cached and read again only for a coin it does not know; a 429 is reported as such.
 */
import { describe, expect, test } from "vitest";
import {
  CANCEL_WEIGHT,
  type CancelReport,
  createCancelExecutor,
  createMetaCache,
} from "../../../src/protocol/hyperliquid/cancel.js";
import { HyperliquidApiError } from "../../../src/protocol/hyperliquid/errors.js";
import type { FrontendOpenOrder, PerpMeta } from "../../../src/protocol/hyperliquid/schemas.js";

const USER = "0x00000000000000000000000000000000000000aa";
const order = (oid: number, coin: string, extra: Partial<FrontendOpenOrder> = {}): FrontendOpenOrder => ({
  coin,
  side: "B",
  limitPx: "1",
  sz: "1",
  oid,
  timestamp: 1,
  isTrigger: false,
  reduceOnly: false,
  ...extra,
});
const META: PerpMeta = { universe: [{ name: "BTC" }, { name: "ETH" }] };
const limited = (endpoint: "info" | "exchange") =>
  new HyperliquidApiError({
    kind: "rate_limited",
    endpoint,
    status: 429,
    serverMessage: '"Too many requests"',
  });

/** An exchange holding `open`; each request is logged; `refuse` makes the next reads answer 429. */
function fakeExchange(open: FrontendOpenOrder[], universe: PerpMeta = META) {
  const log: string[] = [];
  const state = { open: [...open], universe, refuseReads: 0 };
  const info = {
    async frontendOpenOrders() {
      if (state.refuseReads > 0) {
        state.refuseReads--;
        log.push("read:429");
        throw limited("info");
      }
      log.push("read");
      return state.open.map((o) => ({ ...o }));
    },
    async meta() {
      log.push("meta");
      return state.universe;
    },
  };
  const exchange = {
    async cancel(orders: ReadonlyArray<{ asset: number; oid: number }>, opts: { fast?: boolean } = {}) {
      log.push(`cancel${opts.fast ? ":f" : ""}:${orders.map((o) => o.oid).join(",")}`);
      const statuses = orders.map((o) => {
        const found = state.open.some((x) => x.oid === o.oid);
        state.open = state.open.filter((x) => x.oid !== o.oid);
        return found
          ? { asset: o.asset, oid: o.oid, ok: true }
          : {
              asset: o.asset,
              oid: o.oid,
              ok: false,
              error: "Order was never placed, already canceled, or filled.",
            };
      });
      return { nonce: 1, statuses, latencyMs: 1 };
    },
  };
  return { log, state, info, exchange };
}

async function primed(x: ReturnType<typeof fakeExchange>) {
  const metaCache = createMetaCache(x.info);
  await metaCache.prime();
  x.log.length = 0;
  return metaCache;
}

describe("the cancel pass's weight", () => {
  test("behavior: a fresh list is cancelled without a read first; one read confirms it: 21 weight", async () => {
    const orders = [order(1, "BTC"), order(2, "ETH")];
    const x = fakeExchange(orders);
    const reports: CancelReport[] = [];
    const pass = createCancelExecutor({
      ...x,
      metaCache: await primed(x),
      knownOrders: () => orders,
      onReport: (r) => reports.push(r),
    });
    expect(await pass({ account: USER, cancelStops: false })).toEqual({
      confirmed: true,
      cancelled: 2,
      kept: 0,
    });
    // the cancel before any read, then the one read; no meta
    expect(x.log).toEqual(["cancel:f:1,2", "read"]);
    expect(reports[0]!.weight).toBe(CANCEL_WEIGHT.action(2) + CANCEL_WEIGHT.read);
    expect(reports[0]!.weight).toBe(21);
    expect(reports[0]!.targeted.map((t) => t.oid)).toEqual([1, 2]);
  });

  test("behavior: what the list missed is found by the confirming read, cancelled, and read once more", async () => {
    const x = fakeExchange([order(1, "BTC"), order(2, "ETH"), order(3, "ETH")]);
    const pass = createCancelExecutor({
      ...x,
      metaCache: await primed(x),
      knownOrders: () => [order(1, "BTC"), order(2, "ETH")],
    });
    expect(await pass({ account: USER, cancelStops: false })).toEqual({
      confirmed: true,
      cancelled: 3,
      kept: 0,
    });
    expect(x.log).toEqual(["cancel:f:1,2", "read", "cancel:f:3", "read"]);
    expect(x.state.open).toEqual([]);
  });

  test("behavior: without a fresh list: read, cancel, read, and meta from the cache: 41 weight", async () => {
    const x = fakeExchange([order(1, "BTC"), order(2, "ETH")]);
    const reports: CancelReport[] = [];
    const pass = createCancelExecutor({ ...x, metaCache: await primed(x), onReport: (r) => reports.push(r) });
    expect((await pass({ account: USER, cancelStops: false })).confirmed).toBe(true);
    expect(x.log).toEqual(["read", "cancel:f:1,2", "read"]);
    expect(reports[0]!.weight).toBe(41);
    // nothing open: one read, 20
    x.log.length = 0;
    expect((await pass({ account: USER, cancelStops: false })).confirmed).toBe(true);
    expect(x.log).toEqual(["read"]);
    expect(reports[1]!.weight).toBe(20);
  });

  test("behavior: meta is cached across passes and read again only for a coin it does not know (never for a builder-dex coin)", async () => {
    const x = fakeExchange([order(1, "BTC")]);
    const metaCache = createMetaCache(x.info);
    const pass = createCancelExecutor({ ...x, metaCache });
    // never read: the first pass reads it once
    await pass({ account: USER, cancelStops: false });
    expect(x.log).toEqual(["read", "meta", "cancel:f:1", "read"]);
    // a second pass with a known coin: no meta
    x.log.length = 0;
    x.state.open = [order(2, "ETH")];
    await pass({ account: USER, cancelStops: false });
    expect(x.log).toEqual(["read", "cancel:f:2", "read"]);
    // a newly listed coin: meta read again, and the order cancelled with its index
    x.log.length = 0;
    x.state.universe = { universe: [...META.universe, { name: "HYPE" }] };
    x.state.open = [order(3, "HYPE")];
    const reports: CancelReport[] = [];
    const again = createCancelExecutor({ ...x, metaCache, onReport: (r) => reports.push(r) });
    expect((await again({ account: USER, cancelStops: false })).confirmed).toBe(true);
    expect(x.log).toEqual(["read", "meta", "cancel:f:3", "read"]);
    expect(reports[0]!.targeted[0]).toMatchObject({ coin: "HYPE", asset: 2 });
    expect(metaCache.get()?.universe).toHaveLength(3);
    // a builder-dex coin is never in this meta: not read again for it
    x.log.length = 0;
    x.state.open = [order(4, "xyz:TSLA")];
    const r = await again({ account: USER, cancelStops: false });
    expect(x.log).toEqual(["read", "read"]);
    expect(r.confirmed).toBe(false);
    expect(r.detail).toContain("no asset index for xyz:TSLA#4");
  });

  test("behavior: a known list with a coin the cached meta does not know leaves that order to the read (meta read again there)", async () => {
    const x = fakeExchange([order(1, "BTC"), order(5, "HYPE")], {
      universe: [...META.universe, { name: "HYPE" }],
    });
    const metaCache = createMetaCache({ meta: async () => META });
    await metaCache.prime();
    const pass = createCancelExecutor({
      ...x,
      metaCache,
      knownOrders: () => [order(1, "BTC"), order(5, "HYPE")],
    });
    expect((await pass({ account: USER, cancelStops: false })).confirmed).toBe(true);
    expect(x.log).toEqual(["cancel:f:1", "read", "meta", "cancel:f:5", "read"]);
  });

  test("behavior: the confirming read refused (429) after the known orders were cancelled: reported as rate_limited, never confirmed; the next pass makes it", async () => {
    const orders = [order(1, "BTC"), order(2, "ETH")];
    const x = fakeExchange(orders);
    const reports: CancelReport[] = [];
    let known: FrontendOpenOrder[] = orders;
    const pass = createCancelExecutor({
      ...x,
      metaCache: await primed(x),
      knownOrders: () => known,
      onReport: (r) => reports.push(r),
    });
    x.state.refuseReads = 1;
    const first = await pass({ account: USER, cancelStops: false });
    expect(x.log).toEqual(["cancel:f:1,2", "read:429"]);
    // the orders are gone already; the pass is not confirmed until a read says so, and says why
    expect(x.state.open).toEqual([]);
    expect(first).toMatchObject({
      confirmed: false,
      cancelled: 2,
      failure: { kind: "rate_limited", request: "read", retryable: true },
      // the cancel was taken (1); the refused read was not counted
      weight: 1,
    });
    expect(first.detail).toMatch(/reading the open orders failed \(rate_limited/);
    // the switch tries again: the feed's list is empty now, the read is made and confirms
    known = [];
    x.log.length = 0;
    expect(await pass({ account: USER, cancelStops: false })).toEqual({
      confirmed: true,
      cancelled: 0,
      kept: 0,
    });
    expect(x.log).toEqual(["read"]);
  });

  test("behavior: a cancel action refused with 429 is reported as rate_limited (a cancel), the orders still open", async () => {
    const x = fakeExchange([order(1, "BTC")]);
    const exchange = {
      async cancel(): Promise<never> {
        x.log.push("cancel:429");
        throw limited("exchange");
      },
    };
    const pass = createCancelExecutor({ info: x.info, exchange, metaCache: await primed(x) });
    const r = await pass({ account: USER, cancelStops: false });
    expect(x.log).toEqual(["read", "cancel:429", "read"]);
    expect(r).toMatchObject({
      confirmed: false,
      failure: { kind: "rate_limited", request: "cancel" },
      weight: 40,
    });
    expect(r.detail).toMatch(/1 still open/);
  });
});
