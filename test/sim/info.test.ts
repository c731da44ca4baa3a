import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from "../../src/sim/server.js";
import { post, testWallet } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const a = testWallet("info-a").address;
const b = testWallet("info-b").address;
const unknown = testWallet("info-unknown").address;
const DESERIALIZE = "Failed to deserialize the JSON body into the target type";

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: SimulatorOptions = {}) {
  sim = await startSimulator({ clock: new ManualClock(T0), ...options });
  return sim;
}
const info = (body: unknown) => post(`${sim?.apiUrl}/info`, body);
type State = {
  marginSummary: Record<string, string>;
  crossMarginSummary: Record<string, string>;
  crossMaintenanceMarginUsed: string;
  withdrawable: string;
  assetPositions: Array<{ type: string; position: Record<string, unknown> }>;
  time: number;
};

const ZERO_SUMMARY = { accountValue: "0.0", totalNtlPos: "0.0", totalRawUsd: "0.0", totalMarginUsed: "0.0" };

describe("POST /info batchClearinghouseStates", () => {
  test("default", async () => {
    await start({ users: [{ address: a, balanceUsd: 1000 }] });
    const res = await info({ type: "batchClearinghouseStates", users: [a] });
    expect(res.status).toBe(200);
    expect(res.json).toEqual([
      {
        marginSummary: {
          accountValue: "1000.0",
          totalNtlPos: "0.0",
          totalRawUsd: "1000.0",
          totalMarginUsed: "0.0",
        },
        crossMarginSummary: {
          accountValue: "1000.0",
          totalNtlPos: "0.0",
          totalRawUsd: "1000.0",
          totalMarginUsed: "0.0",
        },
        crossMaintenanceMarginUsed: "0.0",
        withdrawable: "1000.0",
        assetPositions: [],
        time: T0,
      },
    ]);
  });

  test("behavior: one state per user in request order; unknown users get a zeroed state", async () => {
    await start({
      users: [
        { address: a, balanceUsd: 111 },
        { address: b, balanceUsd: 222 },
      ],
    });
    const res = await info({
      type: "batchClearinghouseStates",
      users: [b, unknown, a, b.toUpperCase().replace("0X", "0x")],
    });
    const states = res.json as State[];
    expect(states.map((s) => s.marginSummary.accountValue)).toEqual(["222.0", "0.0", "111.0", "222.0"]);
    expect(states[1]).toEqual({
      marginSummary: ZERO_SUMMARY,
      crossMarginSummary: ZERO_SUMMARY,
      crossMaintenanceMarginUsed: "0.0",
      withdrawable: "0.0",
      assetPositions: [],
      time: T0,
    });
    expect((await info({ type: "batchClearinghouseStates", users: [] })).json).toEqual([]);
  });

  test("behavior: the isolated example of the docs (ETH 0.0335 @ 2986.3, 20x)", async () => {
    await start({
      users: [
        {
          address: a,
          balanceUsd: 13_109.495728,
          positions: [
            {
              coin: "ETH",
              szi: 0.0335,
              entryPx: 2986.3,
              leverage: 20,
              marginMode: "isolated",
              maxLeverage: 50,
            },
          ],
        },
      ],
    });
    sim?.state.setMark("ETH", "2985.9");
    const [s] = (await info({ type: "batchClearinghouseStates", users: [a] })).json as State[];
    const p = s?.assetPositions[0];
    expect(p?.type).toBe("oneWay");
    // Values the real example shows exactly: positionValue, unrealizedPnl, returnOnEquity.
    expect(p?.position).toMatchObject({
      coin: "ETH",
      szi: "0.0335",
      entryPx: "2986.3",
      positionValue: "100.02765",
      unrealizedPnl: "-0.0134",
      returnOnEquity: "-0.0026789",
      maxLeverage: 50,
      cumFunding: { allTime: "0.0", sinceChange: "0.0", sinceOpen: "0.0" },
    });
    // Isolated margin = entry notional / leverage + uPnL; rawUsd = marginUsed − szi·mark.
    expect(p?.position.marginUsed).toBe("4.988653");
    expect(p?.position.leverage).toEqual({ type: "isolated", value: 20, rawUsd: "-95.038998" });
    // The isolated margin leaves the cross summary; it stays in the total (as in the real example).
    expect(s?.marginSummary.accountValue).toBe("13109.482328");
    expect(s?.crossMarginSummary.accountValue).toBe("13104.493676");
    expect(s?.crossMarginSummary.totalNtlPos).toBe("0.0");
    expect(s?.marginSummary.totalNtlPos).toBe("100.02765");
    expect(s?.marginSummary.totalRawUsd).toBe("13009.454678");
    expect(s?.withdrawable).toBe("13104.493676");
    // Liquidation of the isolated long: (szi·mark − margin) / (szi·(1 − mmr)), mmr = 1/(2·50).
    const liq = (0.0335 * 2985.9 - 4.9886525) / (0.0335 * (1 - 0.01));
    expect(Number(p?.position.liquidationPx)).toBeCloseTo(liq, 6);
  });

  test("behavior: a cross long, a cross short, an isolated short, and a null liquidationPx", async () => {
    await start({
      users: [
        {
          address: a,
          balanceUsd: 10_000,
          positions: [
            { coin: "BTC", szi: 0.1, entryPx: 100_000, leverage: 10, marginMode: "cross" },
            { coin: "SOL", szi: -10, entryPx: 200, leverage: 5, marginMode: "cross" },
            { coin: "ETH", szi: -1, entryPx: 3000, leverage: 5, marginMode: "isolated" },
          ],
        },
        // A tiny long fully covered by equity cannot be liquidated.
        {
          address: b,
          balanceUsd: 5_000,
          positions: [{ coin: "BTC", szi: 0.001, entryPx: 100_000, leverage: 2 }],
        },
      ],
    });
    sim?.state.setMark("BTC", 101_000);
    sim?.state.setMark("SOL", 190);
    sim?.state.setMark("ETH", 3100);
    const [sa, sb] = (await info({ type: "batchClearinghouseStates", users: [a, b] })).json as State[];
    const byCoin = Object.fromEntries((sa?.assetPositions ?? []).map((x) => [x.position.coin, x.position]));
    expect(byCoin.BTC).toMatchObject({
      szi: "0.1",
      positionValue: "10100.0",
      unrealizedPnl: "100.0",
      marginUsed: "1010.0",
      returnOnEquity: "0.1",
      leverage: { type: "cross", value: 10 },
      maxLeverage: 40,
    });
    expect(byCoin.BTC?.leverage).not.toHaveProperty("rawUsd");
    expect(byCoin.SOL).toMatchObject({
      szi: "-10.0",
      positionValue: "1900.0",
      unrealizedPnl: "100.0",
      marginUsed: "380.0",
      returnOnEquity: "0.25",
    });
    // Isolated short: margin 600 − 100 uPnL = 500; rawUsd = 500 + 3100.
    expect(byCoin.ETH).toMatchObject({
      szi: "-1.0",
      positionValue: "3100.0",
      unrealizedPnl: "-100.0",
      marginUsed: "500.0",
      returnOnEquity: "-0.1666667",
      leverage: { type: "isolated", value: 5, rawUsd: "3600.0" },
    });
    // Total: 10000 + 100 + 100 − 100 = 10100; cross = total − isolated margin 500.
    expect(sa?.marginSummary).toEqual({
      accountValue: "10100.0",
      totalNtlPos: "15100.0",
      totalRawUsd: "5000.0", // 10100 − (0.1·101000 − 10·190 − 1·3100)
      totalMarginUsed: "1890.0",
    });
    expect(sa?.crossMarginSummary).toEqual({
      accountValue: "9600.0",
      totalNtlPos: "12000.0",
      totalRawUsd: "1400.0",
      totalMarginUsed: "1390.0",
    });
    // Maintenance: BTC 10100/80 + SOL 1900/40.
    expect(sa?.crossMaintenanceMarginUsed).toBe("173.75");
    expect(sa?.withdrawable).toBe("8210.0");
    // The short's liquidation is above the mark, the long's below it.
    expect(Number(byCoin.SOL?.liquidationPx)).toBeGreaterThan(190);
    expect(Number(byCoin.BTC?.liquidationPx)).toBeLessThan(101_000);
    expect(Number(byCoin.ETH?.liquidationPx)).toBeGreaterThan(3100);
    expect(sb?.assetPositions[0]?.position.liquidationPx).toBeNull();
  });

  test("behavior: values follow the mark and the time follows the simulator clock", async () => {
    const clock = new ManualClock(T0);
    sim = await startSimulator({
      clock,
      users: [{ address: a, positions: [{ coin: "BTC", szi: 1, entryPx: 50_000, leverage: 5 }] }],
    });
    const pnl = async () => {
      const [s] = (await info({ type: "batchClearinghouseStates", users: [a] })).json as State[];
      return [s?.assetPositions[0]?.position.unrealizedPnl, s?.time];
    };
    expect(await pnl()).toEqual(["0.0", T0]);
    sim.state.setMark("BTC", 49_000);
    clock.advance(1234);
    expect(await pnl()).toEqual(["-1000.0", T0 + 1234]);
  });

  test("behavior: dex selects positions registered under that dex", async () => {
    await start({
      users: [
        {
          address: a,
          positions: [
            { coin: "BTC", szi: 1, entryPx: 50_000 },
            { coin: "xyz:GOLD", szi: 2, entryPx: 2_000, dex: "xyz" },
          ],
        },
      ],
    });
    const coins = async (dex?: string) => {
      const body = { type: "batchClearinghouseStates", users: [a], ...(dex === undefined ? {} : { dex }) };
      const [s] = (await info(body)).json as State[];
      return s?.assetPositions.map((x) => x.position.coin);
    };
    expect(await coins()).toEqual(["BTC"]);
    expect(await coins("")).toEqual(["BTC"]);
    expect(await coins("xyz")).toEqual(["xyz:GOLD"]);
    expect(await coins("other")).toEqual([]);
  });

  test("error: 422 for a missing or invalid users list, a bad address, an unknown type, bad JSON", async () => {
    await start();
    const cases: unknown[] = [
      { type: "batchClearinghouseStates" },
      { type: "batchClearinghouseStates", users: "0x" },
      { type: "batchClearinghouseStates", users: [a, "0x1234"] },
      { type: "batchClearinghouseStates", users: [a], dex: 5 },
      { type: "noSuchInfo", users: [a] },
      { users: [a] },
    ];
    for (const body of cases) {
      const res = await info(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.text).toBe(DESERIALIZE);
    }
    const bad = await post(`${sim?.apiUrl}/info`, "{", { raw: true });
    expect(bad.status).toBe(422);
  });
});

describe("POST /info openOrders and frontendOpenOrders", () => {
  test("default", async () => {
    await start({
      users: [
        {
          address: a,
          orders: [
            { coin: "BTC", side: "B", limitPx: 95_000, sz: 0.1 },
            {
              coin: "BTC",
              side: "A",
              limitPx: 91_000,
              sz: 0.2,
              reduceOnly: true,
              orderType: "Stop Market",
              triggerPx: 92_000,
            },
          ],
        },
      ],
    });
    const open = (await info({ type: "openOrders", user: a })).json as Array<Record<string, unknown>>;
    expect(open).toHaveLength(2);
    expect(open[0]).toEqual({
      coin: "BTC",
      side: "B",
      limitPx: "95000.0",
      sz: "0.1",
      oid: expect.any(Number),
      timestamp: T0,
      origSz: "0.1",
    });
    expect(open[1]).toMatchObject({ side: "A", reduceOnly: true, sz: "0.2" });
    const front = (await info({ type: "frontendOpenOrders", user: a })).json as Array<
      Record<string, unknown>
    >;
    expect(front[1]).toMatchObject({
      isTrigger: true,
      triggerPx: "92000.0",
      orderType: "Stop Market",
      triggerCondition: "Price below 92000.0",
      tif: null,
      reduceOnly: true,
    });
    expect(front[0]).toMatchObject({ isTrigger: false, orderType: "Limit", tif: "Gtc" });
    expect((await info({ type: "openOrders", user: unknown })).json).toEqual([]);
    expect((await info({ type: "openOrders" })).status).toBe(422);
  });
});
