import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { DecimalError, formatFixed, parseDecimal, ratio } from "../../src/core/decimal.js";
import { deriveFigures, type FiguresInput } from "../../src/watchers/figures.js";

/** The documented example state (docs/exchange-behaviour.md §13), plus a cross short and a position without liquidation price. */
function exampleState(): FiguresInput {
  return {
    assetPositions: [
      {
        position: {
          coin: "ETH",
          entryPx: "2986.3",
          leverage: { rawUsd: "-95.059824", type: "isolated", value: 20 },
          liquidationPx: "2866.26936529",
          marginUsed: "4.967826",
          positionValue: "100.02765",
          szi: "0.0335",
          unrealizedPnl: "-0.0134",
        },
      },
      {
        position: {
          coin: "BTC",
          entryPx: "60000.0",
          leverage: { type: "cross", value: 10 },
          liquidationPx: "71234.5",
          marginUsed: "600.0",
          positionValue: "5900.0",
          szi: "-0.1",
          unrealizedPnl: "100.0",
        },
      },
      {
        position: {
          coin: "SOL",
          entryPx: null,
          leverage: { type: "cross", value: 3 },
          liquidationPx: null,
          marginUsed: "10.0",
          positionValue: "30.0",
          szi: "0.2",
          unrealizedPnl: "0.0",
        },
      },
    ],
    crossMaintenanceMarginUsed: "150.5",
    crossMarginSummary: { accountValue: "13104.514502" },
    marginSummary: {
      accountValue: "13109.482328",
      totalMarginUsed: "614.967826",
      totalNtlPos: "6030.02765",
    },
    withdrawable: "13104.514502",
  };
}

describe("decimal", () => {
  test("default", () => {
    expect(parseDecimal("13109.482328")).toBe(13109482328000000000000n);
    expect(parseDecimal("-0.0335")).toBe(-33500000000000000n);
    expect(formatFixed(parseDecimal("-0.0335"))).toBe("-0.0335");
    expect(formatFixed(parseDecimal("100.000"))).toBe("100");
  });

  test("behavior: sums stay exact where floats do not", () => {
    // 0.1 + 0.2 is 0.30000000000000004 in floats
    expect(formatFixed(parseDecimal("0.1") + parseDecimal("0.2"))).toBe("0.3");
  });

  test("behavior: ratio keeps 15+ significant digits for tiny and huge quotients", () => {
    expect(ratio(1n, 3n)).toBe(1 / 3);
    expect(ratio(parseDecimal("1"), parseDecimal("300000000000"))).toBe(1 / 300000000000);
    expect(ratio(parseDecimal("123456789012.345678"), parseDecimal("0.000001"))).toBe(
      Number("123456789012345678"),
    );
    expect(ratio(-2n, 4n)).toBe(-0.5);
    expect(ratio(5n, 0n)).toBeNull();
  });

  test("behavior: parse and ratio agree with the plain decimal-text computation on random amounts", () => {
    // The oracle is the arithmetic spelled out on strings: the digits padded to 18 decimals, and the quotient's
    // digit count taken from its operands' decimal text (the fast path counts digits against a table of powers).
    const oracleParse = (text: string) => {
      const [, minus, whole, frac = ""] = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text)!;
      const magnitude = BigInt(whole!) * 10n ** 18n + BigInt(frac.slice(0, 18).padEnd(18, "0"));
      return minus ? -magnitude : magnitude;
    };
    const oracleRatio = (n: bigint, d: bigint) => {
      const [a, b] = [n < 0n ? -n : n, d < 0n ? -d : d];
      const digits = Math.max(20, b.toString().length - a.toString().length + 22);
      const text = ((a * 10n ** BigInt(digits)) / b).toString().padStart(digits + 1, "0");
      const value = Number(`${text.slice(0, -digits)}.${text.slice(-digits)}`);
      return n < 0n !== d < 0n ? -value : value;
    };
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^\d{1,30}$/), fc.option(fc.stringMatching(/^\d{1,24}$/)))
      .map(([minus, whole, frac]) => `${minus ? "-" : ""}${whole}${frac === null ? "" : `.${frac}`}`);
    fc.assert(
      fc.property(decimal, decimal, (a, b) => {
        const [x, y] = [parseDecimal(a), parseDecimal(b)];
        expect(x).toBe(oracleParse(a));
        if (x === 0n || y === 0n) return;
        expect(ratio(x, y)).toBe(oracleRatio(x, y));
        // the distance to liquidation divides at scale 10^36 (src/watchers/figures.ts)
        expect(ratio(x * 10n ** 20n, y * 10n ** 18n)).toBe(oracleRatio(x * 10n ** 20n, y * 10n ** 18n));
      }),
      { numRuns: 20_000 },
    );
  });

  test("error: non-numeric strings are refused with the value named", () => {
    for (const bad of ["", "abc", "1e5", " 1", "1.", ".5", "NaN", "Infinity", "0x10", "1,5"]) {
      expect(() => parseDecimal(bad, "szi")).toThrow(DecimalError);
    }
    expect(() => parseDecimal("1e5", "marginSummary.accountValue")).toThrowErrorMatchingInlineSnapshot(`
      [DecimalError: Invalid decimal "1e5" in marginSummary.accountValue.

      A decimal is an optional minus sign, digits, and optionally a point and more digits.]
    `);
  });
});

describe("deriveFigures", () => {
  test("default", () => {
    const f = deriveFigures(exampleState());
    expect(f.accountValue).toBe("13109.482328");
    expect(f.totalNtlPos).toBe("6030.02765");
    expect(f.withdrawable).toBe("13104.514502");
    expect(f.leverage).toBeCloseTo(6030.02765 / 13109.482328, 14);
    expect(f.marginUsage).toBeCloseTo(614.967826 / 13109.482328, 14);
    expect(f.maintenanceMarginRatio).toBeCloseTo(150.5 / 13104.514502, 14);
    expect(f.positions.map((p) => [p.coin, p.side, p.leverageType, p.leverageValue])).toEqual([
      ["ETH", "long", "isolated", 20],
      ["BTC", "short", "cross", 10],
      ["SOL", "long", "cross", 3],
    ]);
  });

  test("behavior: isolated long mark price and distance to liquidation", () => {
    const eth = deriveFigures(exampleState()).positions[0]!;
    const mark = 100.02765 / 0.0335;
    expect(eth.markPx).toBeCloseTo(mark, 9);
    expect(eth.markPx).toBe(2985.9); // exact: 100.02765 / 0.0335
    expect(eth.liquidationDistancePct).toBeCloseTo(((mark - 2866.26936529) / mark) * 100, 10);
    expect(eth.entryPx).toBe("2986.3");
    expect(eth.liquidationPx).toBe("2866.26936529");
  });

  test("behavior: cross short has its liquidation above the mark", () => {
    const btc = deriveFigures(exampleState()).positions[1]!;
    expect(btc.markPx).toBe(59000);
    expect(btc.liquidationDistancePct).toBeCloseTo(((71234.5 - 59000) / 59000) * 100, 10);
    expect(btc.szi).toBe("-0.1");
  });

  test("behavior: a null liquidation price leaves the distance absent", () => {
    const sol = deriveFigures(exampleState()).positions[2]!;
    expect(sol.markPx).toBe(150);
    expect(sol.liquidationPx).toBeNull();
    expect(sol.entryPx).toBeNull();
    expect("liquidationDistancePct" in sol).toBe(false);
    expect(JSON.parse(JSON.stringify(sol))).not.toHaveProperty("liquidationDistancePct");
  });

  test("behavior: an empty account has zero leverage; a zero account value gives null ratios", () => {
    const zero: FiguresInput = {
      assetPositions: [],
      crossMaintenanceMarginUsed: "0.0",
      crossMarginSummary: { accountValue: "0.0" },
      marginSummary: { accountValue: "0.0", totalMarginUsed: "0.0", totalNtlPos: "0.0" },
      withdrawable: "0.0",
    };
    const f = deriveFigures(zero);
    expect(f).toEqual({
      accountValue: "0.0",
      totalNtlPos: "0.0",
      totalMarginUsed: "0.0",
      withdrawable: "0.0",
      leverage: null,
      marginUsage: null,
      maintenanceMarginRatio: null,
      positions: [],
    });
    const funded = deriveFigures({
      ...zero,
      marginSummary: { accountValue: "500.0", totalMarginUsed: "0.0", totalNtlPos: "0.0" },
    });
    expect(funded.leverage).toBe(0);
  });

  test("error: a malformed decimal in the state is named", () => {
    const state = exampleState();
    state.assetPositions[1]!.position.positionValue = "12abc";
    expect(() => deriveFigures(state)).toThrow(/Invalid decimal "12abc" in position BTC positionValue/);
  });

  test("error: every decimal field is checked and named, the ones passed on as received too", () => {
    const fields = [
      ["szi", (s: FiguresInput) => s.assetPositions[0]!.position, "position ETH szi"],
      ["entryPx", (s: FiguresInput) => s.assetPositions[1]!.position, "position BTC entryPx"],
      ["unrealizedPnl", (s: FiguresInput) => s.assetPositions[2]!.position, "position SOL unrealizedPnl"],
      ["liquidationPx", (s: FiguresInput) => s.assetPositions[0]!.position, "position ETH liquidationPx"],
      ["withdrawable", (s: FiguresInput) => s, "withdrawable"],
    ] as const;
    for (const [field, holder, named] of fields) {
      const state = exampleState();
      (holder(state) as Record<string, unknown>)[field] = "1e5";
      expect(() => deriveFigures(state), field).toThrow(new RegExp(`Invalid decimal "1e5" in ${named}\\.`));
      (holder(state) as Record<string, unknown>)[field] = 7;
      expect(() => deriveFigures(state), field).toThrow(new RegExp(`Invalid decimal 7 in ${named}\\.`));
    }
  });
});
