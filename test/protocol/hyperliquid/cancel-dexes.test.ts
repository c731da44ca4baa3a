/**
 * Every listed dex gets issue 38's pass (issue 39, finding 3), against a fake exchange with a first perp dex and
 * builder-deployed dexes, each request logged with its dex: the known orders first on the first dex (the order feed
 * follows it only), one confirming read per dex, each builder dex's asset ids from its own `meta` and its place in
 * `perpDexs` (100000 + index × 10000 + meta index; Hyperliquid docs, "Asset IDs"), `perpDexs` read once and shared,
 * the run confirmed only when every dex's pass is, its weight the sum and its failure the failing dex's.
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
const METAS: Record<string, PerpMeta> = {
  "": { universe: [{ name: "BTC" }, { name: "ETH" }] },
  // `abc` is the 1st builder dex in perpDexs, `xyz` the 2nd
  abc: { universe: [{ name: "abc:SOL" }] },
  xyz: { universe: [{ name: "xyz:AAA" }, { name: "xyz:ETH" }] },
};

/** An exchange with orders per dex; `failReads` names dexes whose reads answer 503. */
function fakeExchange(open: Record<string, FrontendOpenOrder[]>, failReads: string[] = []) {
  const log: string[] = [];
  const state: Record<string, FrontendOpenOrder[]> = Object.fromEntries(
    Object.entries(open).map(([d, o]) => [d, [...o]]),
  );
  const sent: Array<{ asset: number; oid: number }> = [];
  const info = {
    async frontendOpenOrders({ dex = "" }: { user: string; dex?: string }) {
      if (failReads.includes(dex)) {
        log.push(`read(${dex}):503`);
        throw new HyperliquidApiError({ kind: "server_error", endpoint: "info", status: 503 });
      }
      log.push(`read(${dex})`);
      return (state[dex] ?? []).map((o) => ({ ...o }));
    },
    async meta({ dex = "" }: { dex?: string } = {}) {
      log.push(`meta(${dex})`);
      return METAS[dex]!;
    },
    async perpDexs() {
      log.push("perpDexs");
      return [null, { name: "abc" }, { name: "xyz" }];
    },
  };
  const exchange = {
    async cancel(orders: ReadonlyArray<{ asset: number; oid: number }>, opts: { fast?: boolean } = {}) {
      log.push(`cancel${opts.fast ? ":f" : ""}:${orders.map((o) => o.oid).join(",")}`);
      sent.push(...orders);
      const statuses = orders.map((o) => {
        let found = false;
        for (const d of Object.keys(state)) {
          if (state[d]!.some((x) => x.oid === o.oid)) found = true;
          state[d] = state[d]!.filter((x) => x.oid !== o.oid);
        }
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
  return { log, state, sent, info, exchange };
}

describe("every listed dex gets the cancel pass", () => {
  test("behavior: builder-dex orders go by their builder-dex asset ids; one confirming read per dex; perpDexs read once", async () => {
    const x = fakeExchange({
      "": [order(1, "BTC")],
      xyz: [order(2, "xyz:ETH"), order(3, "xyz:AAA", { isTrigger: true, orderType: "Stop Limit" })],
      abc: [order(4, "abc:SOL")],
    });
    const reports: CancelReport[] = [];
    const pass = createCancelExecutor({ ...x, dexes: ["", "xyz", "abc"], onReport: (r) => reports.push(r) });
    expect(await pass({ account: USER, cancelStops: false })).toEqual({
      confirmed: true,
      cancelled: 4,
      kept: 0,
    });
    // xyz is perpDexs index 2: 100000 + 2 × 10000 + its meta index; abc index 1
    expect(new Map(x.sent.map((o) => [o.oid, o.asset]))).toEqual(
      new Map([
        [1, 0],
        [2, 120_001],
        [3, 120_000],
        [4, 110_000],
      ]),
    );
    expect(x.log.filter((l) => l === "perpDexs")).toHaveLength(1);
    for (const d of ["", "xyz", "abc"]) expect(x.log.filter((l) => l === `read(${d})`)).toHaveLength(2);
    expect(reports.map((r) => r.dex ?? "")).toEqual(expect.arrayContaining(["", "xyz", "abc"]));
    // the trigger order went without the fast flag (a fast cancel of a trigger is refused)
    expect(x.log).toContain("cancel:3");

    // the next pass reads neither perpDexs nor a builder dex's meta again
    x.state.xyz = [order(5, "xyz:ETH")];
    x.log.length = 0;
    expect(await pass({ account: USER, cancelStops: false })).toMatchObject({
      confirmed: true,
      cancelled: 1,
    });
    expect(x.log.filter((l) => l === "perpDexs" || l.startsWith("meta"))).toEqual([]);
  });

  test("behavior: the order feed's list is cancelled before any read on the first dex; a builder dex reads first", async () => {
    const known = [order(1, "BTC")];
    const x = fakeExchange({ "": known, xyz: [order(2, "xyz:ETH")] });
    const metaCache = createMetaCache(x.info);
    await metaCache.prime();
    x.log.length = 0;
    const pass = createCancelExecutor({ ...x, dexes: ["", "xyz"], metaCache, knownOrders: () => known });
    expect(await pass({ account: USER, cancelStops: false })).toMatchObject({
      confirmed: true,
      cancelled: 2,
    });
    // first dex: cancel then one read (21); xyz: read, perpDexs, meta, cancel, read
    expect(x.log.indexOf("cancel:f:1")).toBeLessThan(x.log.indexOf("read()"));
    expect(x.log.filter((l) => l === "read()")).toHaveLength(1);
    expect(x.log.indexOf("read(xyz)")).toBeLessThan(x.log.indexOf("cancel:f:2"));
  });

  test("behavior: one dex's failed read makes the run unconfirmed, with that dex's failure and every dex's weight", async () => {
    const x = fakeExchange({ "": [order(1, "BTC")], xyz: [order(2, "xyz:ETH")] }, ["xyz"]);
    const r = await createCancelExecutor({ ...x, dexes: ["", "xyz"] })({ account: USER, cancelStops: false });
    expect(r.confirmed).toBe(false);
    expect(r.cancelled).toBe(1);
    expect(r.failure).toEqual({ kind: "server_error", request: "read", retryable: true });
    expect(r.detail).toMatch(/^dex xyz: /);
    // the first dex's confirmed pass (read, meta, cancel, read) counts too, and the failed read
    expect(r.weight).toBe(3 * CANCEL_WEIGHT.read + CANCEL_WEIGHT.action(1) + CANCEL_WEIGHT.read);
  });

  test("behavior: a dex the exchange does not list is an unconfirmed pass, never a guessed id", async () => {
    const x = fakeExchange({ "": [], nope: [order(9, "nope:X")] });
    const r = await createCancelExecutor({ ...x, dexes: ["", "nope"] })({
      account: USER,
      cancelStops: false,
    });
    expect(r).toMatchObject({ confirmed: false, cancelled: 0 });
    expect(r.detail).toContain("lists no perp dex named");
    expect(x.sent).toEqual([]);
  });

  test("behavior: a fire's sweep names its dexes: only those are read", async () => {
    const x = fakeExchange({ "": [order(1, "BTC")], xyz: [order(2, "xyz:ETH")] });
    const pass = createCancelExecutor({ ...x, dexes: ["", "xyz"] });
    expect(await pass({ account: USER, cancelStops: false, dexes: ["xyz"] })).toEqual({
      confirmed: true,
      cancelled: 1,
      kept: 0,
    });
    expect(x.log.some((l) => l === "read()")).toBe(false);
    expect(x.state[""]).toHaveLength(1);
  });

  test("behavior: primed at start, a builder dex's pass at death goes from its read straight to its cancel", async () => {
    const x = fakeExchange({ "": [], xyz: [order(2, "xyz:ETH")] });
    const pass = createCancelExecutor({ ...x, dexes: ["", "xyz"] });
    await pass.prime();
    expect(x.log).toEqual(["perpDexs", "meta(xyz)"]);
    x.log.length = 0;
    expect(await pass({ account: USER, cancelStops: false })).toMatchObject({
      confirmed: true,
      cancelled: 1,
    });
    expect(x.log.filter((l) => l.includes("xyz") || l.startsWith("cancel") || l === "perpDexs")).toEqual([
      "read(xyz)",
      "cancel:f:2",
      "read(xyz)",
    ]);
  });
});
