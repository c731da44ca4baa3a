/**
 * The exposure line as its readers take it off the bus (src/protocol/hyperliquid/exposure-line.ts): the
 * escalation's figures and the death gate's risk (src/config/weight.ts `riskOf`). What is not a line, or not a
 * figure, is passed over, never guessed.
 */
import { describe, expect, test } from "vitest";
import { riskOf } from "../../../src/config/weight.js";
import { nearestLiquidationPct, parseExposureLine } from "../../../src/protocol/hyperliquid/exposure-line.js";

const line = (fields: Record<string, unknown>) => ({
  module: "exposure",
  event: "exposure",
  level: "info",
  account: "0xabc",
  accountValue: "1000.5",
  totalNtlPos: "-2500",
  positions: [
    { coin: "BTC", liquidationDistancePct: 12.5 },
    { coin: "ETH", liquidationDistancePct: 4 },
    { coin: "SOL" },
  ],
  ...fields,
});

describe("exposure line", () => {
  test("default: the figures as numbers, the first perp dex as '', the nearest liquidation", () => {
    const parsed = parseExposureLine(line({}));
    expect(parsed).toMatchObject({ account: "0xabc", dex: "", accountValue: 1000.5, totalNtlPos: -2500 });
    expect(nearestLiquidationPct(parsed!.positions)).toBe(4);
    expect(riskOf(parsed!)).toEqual({ account: "0xabc", liquidationDistance: 0.04, notional: 2500 });
    expect(parseExposureLine(line({ dex: "xyz" }))?.dex).toBe("xyz");
  });

  test("error: another event, or a line without an account, is no line", () => {
    expect(parseExposureLine(line({ module: "exposurePoll" }))).toBeNull();
    expect(parseExposureLine(line({ event: "exposure.alert" }))).toBeNull();
    expect(parseExposureLine(line({ account: undefined }))).toBeNull();
    expect(parseExposureLine({ module: "switch", type: "pushed" })).toBeNull();
  });

  test("error: a figure that is not a decimal string is none; an unreadable distance is no liquidation", () => {
    const parsed = parseExposureLine(
      line({
        accountValue: "NaN",
        totalNtlPos: 12,
        positions: [{ liquidationDistancePct: "3" }, { liquidationDistancePct: Number.POSITIVE_INFINITY }],
      }),
    );
    expect(parsed).toMatchObject({ accountValue: null, totalNtlPos: null });
    expect(nearestLiquidationPct(parsed!.positions)).toBeNull();
    expect(riskOf(parsed!)).toBeNull();
    const noPositions = parseExposureLine(line({ positions: "none" }));
    expect(noPositions?.positions).toEqual([]);
    expect(riskOf(noPositions!)).toEqual({ account: "0xabc", liquidationDistance: null, notional: 2500 });
  });
});
