/**
 * The simulator's `order` action over real HTTP on 127.0.0.1, through the project's own clients
 * (ExchangeClient.order, InfoClient.positions / userFills / perpMeta / metaAndMarks / historicalOrders): fills,
 * partial fills and expiries against the one-level book, reduce-only refusal and trimming, the price/size/value
 * rules with the exchange's texts, the 1,000-open-order rule, the post-only window fault, isolated and cross
 * positions, and a whole close driven by the pure planner.
 */
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { planCloseStep } from "../../src/orders/close-plan.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import type { OrderRequest } from "../../src/protocol/hyperliquid/order.js";
import { localSigner } from "../../src/protocol/hyperliquid/signing.js";
import { POST_ONLY_WINDOW_TEXT, tooManyOpenOrdersText } from "../../src/sim/orders.js";
import { type SimulatorHandle, type SimulatorUser, startSimulator } from "../../src/sim/server.js";
import { post, testWallet } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const user = testWallet("orders-user");
let sim: SimulatorHandle | undefined;
let exchange: ExchangeClient | undefined;
let info: InfoClient | undefined;
afterEach(async () => {
  exchange?.close();
  info?.close();
  await sim?.close();
  sim = undefined;
});

async function start(extra: Partial<SimulatorUser> = {}): Promise<void> {
  const clock = new ManualClock(T0);
  sim = await startSimulator({
    clock,
    users: [
      {
        address: user.address,
        positions: [
          { coin: "BTC", szi: 0.5, entryPx: 90_000, markPx: 97_000, marginMode: "cross" },
          { coin: "ETH", szi: -2, entryPx: 3_200, markPx: 3_100, marginMode: "isolated", leverage: 5 },
        ],
        ...extra,
      },
    ],
  });
  exchange = new ExchangeClient({
    apiUrl: sim.apiUrl,
    signer: localSigner(user.privateKey),
    isMainnet: true,
    clock,
  });
  info = new InfoClient({ apiUrl: sim.apiUrl, clock });
}

const ioc = (
  o: Partial<OrderRequest> & Pick<OrderRequest, "asset" | "isBuy" | "price" | "size">,
): OrderRequest => ({
  reduceOnly: true,
  type: { limit: { tif: "Ioc" } },
  ...o,
});
const szi = async (coin: string) =>
  (await info!.positions({ user: user.address })).positions.find((p) => p.coin === coin)?.szi ?? "0";

describe("simulator orders: the book", () => {
  test("behavior: a reduce-only IOC sell fills at the bid, the position shrinks, userFills and historicalOrders say so", async () => {
    await start();
    const r = await exchange!.order([ioc({ asset: 0, isBuy: false, price: "96030", size: "0.1" })]);
    // bid = 97000 × (1 − 10 bps) = 96903
    expect(r.statuses).toEqual([
      { kind: "filled", oid: expect.any(Number), totalSz: "0.1", avgPx: "96903.0" },
    ]);
    expect(await szi("BTC")).toBe("0.4");
    // the batch read (the exposure poll's) sees the same position
    const [batch] = await info!.batchClearinghouseStates({ users: [user.address] });
    expect(batch!.assetPositions.find((a) => a.position.coin === "BTC")?.position.szi).toBe("0.4");
    const fills = await info!.userFills({ user: user.address });
    expect(fills[0]).toMatchObject({
      coin: "BTC",
      side: "A",
      sz: "0.1",
      px: "96903.0",
      startPosition: "0.5",
      dir: "Close Long",
    });
    // realised: 0.1 × (96903 − 90000) = 690.3
    expect(fills[0]!.closedPnl).toBe("690.3");
    const history = await info!.historicalOrders({ user: user.address });
    expect(history[0]).toMatchObject({ status: "filled", order: { coin: "BTC", oid: fills[0]!.oid } });
  });

  test("behavior: a limited depth fills part of an IOC and cancels the rest; a limit short of the book expires", async () => {
    await start();
    await post(`${sim!.adminUrl}/book`, { coin: "BTC", depth: 0.12345 });
    const r = await exchange!.order([ioc({ asset: 0, isBuy: false, price: "96030", size: "0.3" })]);
    expect(r.statuses[0]).toMatchObject({ kind: "filled", totalSz: "0.12345" });
    expect(await szi("BTC")).toBe("0.37655");
    // a sell limit above the bid does not cross
    const none = await exchange!.order([ioc({ asset: 0, isBuy: false, price: "96950", size: "0.1" })]);
    expect(none.statuses).toEqual([
      { kind: "error", error: "Order could not immediately match against any resting orders. asset=0" },
    ]);
    expect(await szi("BTC")).toBe("0.37655");
    expect((await info!.historicalOrders({ user: user.address }))[0]?.status).toBe("iocCancelRejected");
  });

  test("behavior: Gtc rests when it does not cross; Alo that would cross is refused with the bbo", async () => {
    await start();
    const gtc = await exchange!.order([
      {
        asset: 0,
        isBuy: true,
        price: "90000",
        size: "0.01",
        reduceOnly: false,
        type: { limit: { tif: "Gtc" } },
      },
    ]);
    expect(gtc.statuses[0]).toMatchObject({ kind: "resting" });
    expect((await info!.frontendOpenOrders({ user: user.address })).map((o) => o.limitPx)).toEqual(["90000"]);
    const alo = await exchange!.order([
      {
        asset: 0,
        isBuy: true,
        price: "98000",
        size: "0.01",
        reduceOnly: false,
        type: { limit: { tif: "Alo" } },
      },
    ]);
    expect(alo.statuses).toEqual([
      {
        kind: "error",
        error: "Post only order would have immediately matched, bbo was 96903.0@97097.0. asset=0",
      },
    ]);
  });
});

describe("simulator orders: reduce-only", () => {
  test("failure: a reduce-only order on the position's side is refused with the exchange's text", async () => {
    await start();
    const r = await exchange!.order([ioc({ asset: 0, isBuy: true, price: "97970", size: "0.1" })]);
    expect(r.statuses).toEqual([
      { kind: "error", error: "Reduce only order would increase position. asset=0" },
    ]);
    expect(await szi("BTC")).toBe("0.5");
  });

  test("behavior: an oversized or repeated reduce-only close never flips: trimmed to the position, then refused", async () => {
    await start();
    const close = ioc({ asset: 1, isBuy: true, price: "3131", size: "5" });
    // short 2 ETH (isolated): a buy of 5 fills 2, the rest is cancelled
    const first = await exchange!.order([close]);
    expect(first.statuses[0]).toMatchObject({ kind: "filled", totalSz: "2" });
    expect(await szi("ETH")).toBe("0");
    // sent twice (a retry after a lost answer): nothing left to reduce
    const second = await exchange!.order([close]);
    expect(second.statuses).toEqual([
      { kind: "error", error: "Reduce only order would increase position. asset=1" },
    ]);
    expect(sim!.state.getPositions(user.address).find((p) => p.coin === "ETH")).toBeUndefined();
  });
});

describe("simulator orders: the wire rules", () => {
  test("failure: a price with 6 significant figures or too many decimals, a size finer than szDecimals, a value under $10", async () => {
    await start();
    const cases: Array<[OrderRequest, string]> = [
      [
        ioc({ asset: 1, isBuy: true, price: "3131.25", size: "0.1" }),
        "Price must be divisible by tick size. asset=1",
      ],
      // BTC has szDecimals 5: no decimals at all in a non-integer price
      [
        ioc({ asset: 0, isBuy: false, price: "96030.5", size: "0.1" }),
        "Price must be divisible by tick size. asset=0",
      ],
      [ioc({ asset: 1, isBuy: true, price: "3131", size: "0.00001" }), "Order has invalid size. asset=1"],
      [
        ioc({ asset: 1, isBuy: true, price: "3131", size: "0.003" }),
        "Order must have minimum value of $10. asset=1",
      ],
    ];
    for (const [order, error] of cases) {
      const r = await exchange!.order([order]);
      expect(r.statuses).toEqual([{ kind: "error", error }]);
    }
    expect(await szi("ETH")).toBe("-2.0");
    const meta = await info!.perpMeta();
    expect(meta.universe.slice(0, 2).map((a) => [a.name, a.szDecimals])).toEqual([
      ["BTC", 5],
      ["ETH", 4],
    ]);
  });

  test("failure: with 1,000 other open orders a reduce-only close is refused until one is cancelled", async () => {
    const orders = Array.from({ length: 1000 }, (_, i) => ({
      coin: "SOL",
      side: "B" as const,
      limitPx: String(100 + (i % 10)),
      sz: "1",
    }));
    await start({ orders });
    const close = ioc({ asset: 0, isBuy: false, price: "96030", size: "0.1" });
    const refused = await exchange!.order([close]);
    expect(refused.statuses).toEqual([{ kind: "error", error: tooManyOpenOrdersText(0) }]);
    const oid = sim!.state.getOpenOrders(user.address)[0]!.oid;
    await exchange!.cancel([{ asset: 5, oid }]);
    const ok = await exchange!.order([close]);
    expect(ok.statuses[0]).toMatchObject({ kind: "filled", totalSz: "0.1" });
  });

  test("failure: in the post-only window (a fault) an IOC close is refused and stays refused until the window ends", async () => {
    await start();
    const set = await post(`${sim!.adminUrl}/faults`, {
      endpoint: "exchange",
      fault: { postOnlyWindow: true },
    });
    expect(set.status).toBe(200);
    const close = ioc({ asset: 0, isBuy: false, price: "96030", size: "0.1" });
    expect((await exchange!.order([close])).statuses).toEqual([
      { kind: "error", error: POST_ONLY_WINDOW_TEXT },
    ]);
    // a post-only order is taken
    const alo = await exchange!.order([
      {
        asset: 0,
        isBuy: false,
        price: "99000",
        size: "0.1",
        reduceOnly: true,
        type: { limit: { tif: "Alo" } },
      },
    ]);
    expect(alo.statuses[0]).toMatchObject({ kind: "resting" });
    expect(await szi("BTC")).toBe("0.5");
    await post(`${sim!.adminUrl}/faults`, { endpoint: "exchange", fault: null });
    expect((await exchange!.order([close])).statuses[0]).toMatchObject({ kind: "filled" });
  });
});

describe("simulator orders: a close driven by the planner", () => {
  test("behavior: slices from fresh reads close a cross long to zero and an isolated short to dust, depth-limited", async () => {
    await start({
      positions: [
        { coin: "BTC", szi: 0.5, entryPx: 90_000, markPx: 97_000, marginMode: "cross" },
        { coin: "ETH", szi: -2.00031, entryPx: 3_200, markPx: 3_100, marginMode: "isolated", leverage: 5 },
      ],
    });
    await post(`${sim!.adminUrl}/book`, { coin: "BTC", depth: 0.07 });
    const states = await info!.positions({ user: user.address });
    expect(states.positions.map((p) => [p.coin, p.marginType])).toEqual([
      ["BTC", "cross"],
      ["ETH", "isolated"],
    ]);
    let steps = 0;
    let last = null as ReturnType<typeof planCloseStep> | null;
    for (; steps < 30; steps++) {
      const [{ positions }, { meta, marks }] = await Promise.all([
        info!.positions({ user: user.address }),
        info!.metaAndMarks(),
      ]);
      last = planCloseStep({ positions, universe: meta.universe, marks, capBps: 100, maxSliceUsd: "20000" });
      if (last.done) break;
      const r = await exchange!.order(last.orders.map((o) => o.order));
      expect(r.statuses.every((s) => s.kind === "filled")).toBe(true);
    }
    // BTC: 0.5 in fills of at most 0.07 (depth) → 8 slices; ETH: $6.2k in one
    expect(steps).toBe(8);
    expect(last?.done).toBe(true);
    // the ETH position was off its 4-decimal grid (planted so): 0.00001 stays, reported as dust, never sent
    expect(last?.dust).toEqual([
      expect.objectContaining({ coin: "ETH", szi: "-0.00001", valueUsd: "0.031" }),
    ]);
    expect(await szi("BTC")).toBe("0");
    expect(await szi("ETH")).toBe("-0.00001");
    const fills = await info!.userFills({ user: user.address });
    expect(fills.filter((f) => f.coin === "BTC").length).toBe(8);
    expect(fills.every((f) => f.dir === "Close Long" || f.dir === "Close Short")).toBe(true);
  });
});
