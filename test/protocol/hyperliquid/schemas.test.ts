import { describe, expect, test } from "vitest";
import {
  BatchClearinghouseStatesResponse,
  ClearinghouseState,
  DecimalString,
  ExchangeResponse,
  Leverage,
  OpenOrder,
  ScheduleCancelAction,
} from "../../../src/protocol/hyperliquid/schemas.js";
import { DOCUMENTED_OPEN_ORDER } from "../../fixtures/documented.js";

// The documented example, docs/exchange-behaviour.md §13, verbatim.
const DOCUMENTED = {
  assetPositions: [
    {
      position: {
        coin: "ETH",
        cumFunding: { allTime: "514.085417", sinceChange: "0.0", sinceOpen: "0.0" },
        entryPx: "2986.3",
        leverage: { rawUsd: "-95.059824", type: "isolated", value: 20 },
        liquidationPx: "2866.26936529",
        marginUsed: "4.967826",
        maxLeverage: 50,
        positionValue: "100.02765",
        returnOnEquity: "-0.0026789",
        szi: "0.0335",
        unrealizedPnl: "-0.0134",
      },
      type: "oneWay",
    },
  ],
  crossMaintenanceMarginUsed: "0.0",
  crossMarginSummary: {
    accountValue: "13104.514502",
    totalMarginUsed: "0.0",
    totalNtlPos: "0.0",
    totalRawUsd: "13104.514502",
  },
  marginSummary: {
    accountValue: "13109.482328",
    totalMarginUsed: "4.967826",
    totalNtlPos: "100.02765",
    totalRawUsd: "13009.454678",
  },
  time: 1708622398623,
  withdrawable: "13104.514502",
};

const clone = <T>(v: T): T => structuredClone(v);

describe("ClearinghouseState", () => {
  test("default: the documented example parses, values stay strings", () => {
    const state = ClearinghouseState.parse(DOCUMENTED);
    expect(state.marginSummary.accountValue).toBe("13109.482328");
    expect(state.assetPositions[0]!.position.szi).toBe("0.0335");
    expect(state.assetPositions[0]!.position.leverage).toEqual({
      rawUsd: "-95.059824",
      type: "isolated",
      value: 20,
    });
    expect(state.time).toBe(1708622398623);
  });

  test("behavior: cross leverage without rawUsd, null liquidationPx and entryPx", () => {
    const input = clone(DOCUMENTED);
    const p = input.assetPositions[0]!.position as Record<string, unknown>;
    p.leverage = { type: "cross", value: 10 };
    p.liquidationPx = null;
    p.entryPx = null;
    const state = ClearinghouseState.parse(input);
    expect(state.assetPositions[0]!.position.leverage).toEqual({ type: "cross", value: 10 });
    expect(state.assetPositions[0]!.position.liquidationPx).toBeNull();
  });

  test("behavior: unknown leverage types and extra fields pass through", () => {
    const input = clone(DOCUMENTED) as Record<string, unknown>;
    input.newTopLevel = { a: 1 };
    const ap = (input.assetPositions as Record<string, unknown>[])[0]!;
    ap.type = "hedge";
    const p = ap.position as Record<string, unknown>;
    p.leverage = { type: "portfolio", value: 3, extra: "1" };
    p.someNewField = "x";
    const state = ClearinghouseState.parse(input) as Record<string, unknown>;
    expect(state.newTopLevel).toEqual({ a: 1 });
    const pos = ClearinghouseState.parse(input).assetPositions[0]!;
    expect(pos.type).toBe("hedge");
    expect(pos.position.leverage).toEqual({ type: "portfolio", value: 3, extra: "1" });
    expect((pos.position as Record<string, unknown>).someNewField).toBe("x");
  });

  test("behavior: a zeroed state (unknown user) parses", () => {
    const zero = { accountValue: "0.0", totalMarginUsed: "0.0", totalNtlPos: "0.0", totalRawUsd: "0.0" };
    const state = ClearinghouseState.parse({
      assetPositions: [],
      crossMaintenanceMarginUsed: "0.0",
      crossMarginSummary: zero,
      marginSummary: zero,
      time: 1,
      withdrawable: "0.0",
    });
    expect(state.assetPositions).toEqual([]);
  });

  test("error: a missing marginSummary is rejected", () => {
    const input = clone(DOCUMENTED) as Record<string, unknown>;
    delete input.marginSummary;
    const r = ClearinghouseState.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(["marginSummary"]);
  });

  test("error: a missing crossMarginSummary is rejected", () => {
    const input = clone(DOCUMENTED) as Record<string, unknown>;
    delete input.crossMarginSummary;
    expect(ClearinghouseState.safeParse(input).success).toBe(false);
  });

  test("error: a non-numeric decimal is rejected with its path", () => {
    const input = clone(DOCUMENTED);
    input.marginSummary.accountValue = "abc";
    const r = ClearinghouseState.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(["marginSummary", "accountValue"]);
    expect(r.error!.issues[0]!.message).toMatch(/decimal string/);
  });

  test("error: isolated leverage without rawUsd is rejected", () => {
    expect(Leverage.safeParse({ type: "isolated", value: 5 }).success).toBe(false);
    expect(Leverage.safeParse({ type: "cross" }).success).toBe(false);
  });

  test("error: time must be a number", () => {
    const input = clone(DOCUMENTED) as Record<string, unknown>;
    input.time = "1708622398623";
    expect(ClearinghouseState.safeParse(input).success).toBe(false);
  });

  test("default: a batch response is an array of states", () => {
    expect(BatchClearinghouseStatesResponse.parse([DOCUMENTED, DOCUMENTED])).toHaveLength(2);
    expect(BatchClearinghouseStatesResponse.safeParse({ states: [] }).success).toBe(false);
  });
});

describe("DecimalString", () => {
  test.each(["0", "0.0", "-0.0134", "13109.482328", "1000000"])("default: accepts %s", (v) => {
    expect(DecimalString.parse(v)).toBe(v);
  });
  test.each(["abc", "", "1e5", "1.", ".5", "+1", "1,5", " 1", "NaN"])("error: rejects %j", (v) => {
    expect(DecimalString.safeParse(v).success).toBe(false);
  });
  test("error: rejects numbers (amounts are strings on the wire)", () => {
    expect(DecimalString.safeParse(1.5).success).toBe(false);
  });
});

describe("OpenOrder", () => {
  test("default: the documented item parses", () => {
    const order = OpenOrder.parse({
      ...DOCUMENTED_OPEN_ORDER,
      cloid: "0x1234567890abcdef1234567890abcdef",
      reduceOnly: true,
    });
    expect(order.oid).toBe(91490942);
  });
  test("error: an unknown side is rejected", () => {
    expect(
      OpenOrder.safeParse({ coin: "BTC", side: "X", limitPx: "1", sz: "1", oid: 1, timestamp: 1 }).success,
    ).toBe(false);
  });
});

describe("ExchangeResponse and ScheduleCancelAction", () => {
  test("default: ok and err envelopes", () => {
    expect(ExchangeResponse.parse({ status: "ok", response: { type: "default" } })).toEqual({
      status: "ok",
      response: { type: "default" },
    });
    expect(ExchangeResponse.parse({ status: "err", response: "Action already expired" }).status).toBe("err");
  });
  test("error: wrong shapes", () => {
    expect(ExchangeResponse.safeParse({ status: "err", response: { x: 1 } }).success).toBe(false);
    expect(ExchangeResponse.safeParse({ status: "weird" }).success).toBe(false);
    expect(ExchangeResponse.safeParse(null).success).toBe(false);
  });
  test("behavior: time may be omitted but not null", () => {
    expect(ScheduleCancelAction.safeParse({ type: "scheduleCancel" }).success).toBe(true);
    expect(ScheduleCancelAction.safeParse({ type: "scheduleCancel", time: null }).success).toBe(false);
    expect(ScheduleCancelAction.safeParse({ type: "scheduleCancel", time: 1.5 }).success).toBe(false);
  });
});
