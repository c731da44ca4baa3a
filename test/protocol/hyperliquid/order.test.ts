/**
 * The `order` action and the price/size rules (src/protocol/hyperliquid/order.ts): the 7 official `order` vectors
 * byte for byte, @nktkas/hyperliquid's signing of a reduce-only IOC close, and the rounding rules of a close.
 */
import { readFileSync } from "node:fs";
import { signL1Action as nkSignL1Action } from "@nktkas/hyperliquid/signing";
import { formatPrice as nkFormatPrice, formatSize as nkFormatSize } from "@nktkas/hyperliquid/utils";
import { hexlify, Wallet } from "ethers";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseDecimal, SCALE } from "../../../src/core/decimal.js";
import {
  classifyOrderRefusal,
  closeLimitPrice,
  closeSlice,
  formatWire,
  isValidPerpPrice,
  isValidSize,
  type OrderRequest,
  OrderRuleError,
  orderAction,
} from "../../../src/protocol/hyperliquid/order.js";
import { l1ActionPreimage, signL1Action } from "../../../src/protocol/hyperliquid/signing.js";

type Vector = {
  ref: string;
  privateKey: string;
  action: { type: string; orders?: Array<Record<string, unknown>>; grouping?: string };
  nonce: number;
  vaultAddress: string | null;
  expiresAfter: number | null;
  isMainnet: boolean;
  preimageHex: string;
  signature: { r: string; s: string; v: number };
};

const vectors: Vector[] = (
  JSON.parse(
    readFileSync(new URL("../../fixtures/signing-vectors.json", import.meta.url), "utf8"),
  ) as Vector[]
).filter((v) => v.action.type === "order");

/** The request a vector's single order stands for (what a caller of orderAction passes). */
function requestOf(wire: Record<string, unknown>): OrderRequest {
  const t = wire.t as OrderRequest["type"];
  return {
    asset: wire.a as number,
    isBuy: wire.b as boolean,
    price: wire.p as string,
    size: wire.s as string,
    reduceOnly: wire.r as boolean,
    type: t,
    ...(wire.c !== undefined ? { cloid: wire.c as string } : {}),
  };
}

describe("order action: the official vectors", () => {
  test("default: there are exactly 7 order vectors (limit, cloid, tpsl; mainnet and testnet)", () => {
    expect(vectors).toHaveLength(7);
  });

  test.each(vectors.map((v, i) => [i, v] as const))(
    "behavior: vector %i builds the same action, bytes and signature",
    async (_i, v) => {
      const action = orderAction((v.action.orders ?? []).map(requestOf));
      // same keys in the same order (JSON text compares order too)
      expect(JSON.stringify(action)).toBe(JSON.stringify(v.action));
      const preimage = l1ActionPreimage({
        action,
        nonce: v.nonce,
        vaultAddress: v.vaultAddress,
        expiresAfter: v.expiresAfter,
      });
      expect(hexlify(preimage)).toBe(v.preimageHex);
      const sig = await signL1Action({
        privateKey: v.privateKey,
        action,
        nonce: v.nonce,
        vaultAddress: v.vaultAddress,
        expiresAfter: v.expiresAfter,
        isMainnet: v.isMainnet,
      });
      expect(sig).toEqual({ r: v.signature.r, s: v.signature.s, v: v.signature.v });
    },
  );

  test("behavior: trailing zeros are removed before signing (100.0 signs as 100)", () => {
    const base = requestOf(vectors[1]!.action.orders![0]!);
    const padded = orderAction([{ ...base, price: "100.000", size: "100.0" }]);
    expect(hexlify(l1ActionPreimage({ action: padded, nonce: 0 }))).toBe(vectors[1]!.preimageHex);
    expect(formatWire("0.01470")).toBe("0.0147");
    expect(formatWire("-0.0")).toBe("0");
  });

  test("failure: bad orders are refused before anything is signed", () => {
    const ok: OrderRequest = {
      asset: 0,
      isBuy: false,
      price: "100",
      size: "1",
      reduceOnly: true,
      type: { limit: { tif: "Ioc" } },
    };
    expect(() => orderAction([])).toThrow(OrderRuleError);
    expect(() => orderAction([{ ...ok, price: "0" }])).toThrow(/price must be > 0/);
    expect(() => orderAction([{ ...ok, size: "1e3" }])).toThrow(/size must be a decimal/);
    expect(() => orderAction([{ ...ok, asset: -1 }])).toThrow(/asset/);
    expect(() => orderAction([{ ...ok, type: { limit: { tif: "Fok" as "Ioc" } } }])).toThrow(/tif/);
    expect(() => orderAction([{ ...ok, cloid: "0x12" }])).toThrow(/cloid/);
  });
});

describe("order action: @nktkas/hyperliquid signs our reduce-only IOC closes identically", () => {
  test("behavior: 32 random closes (mainnet/testnet, vault, expiresAfter) sign the same", async () => {
    const vault: `0x${string}` = "0x1719884eb866cb12b2287399b15f7db5e7d775ea";
    const wallet = Wallet.createRandom();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 0, max: 5 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        async (asset, markCents, szDecimals, isMainnet, withVault, withExpiry) => {
          const mark = (markCents / 100).toString();
          const slice = closeSlice({
            asset,
            szi: "-123.456789",
            mark,
            szDecimals,
            capBps: 100,
            maxSliceUsd: "1000000000",
          });
          if (slice?.kind !== "order") return;
          const action = orderAction([slice.order]);
          expect(action.orders[0]).toMatchObject({ r: true, t: { limit: { tif: "Ioc" } }, b: true });
          const nonce = 1_735_689_600_000 + asset;
          const expiresAfter = withExpiry ? nonce + 30_000 : undefined;
          const ours = await signL1Action({
            wallet,
            action,
            nonce,
            vaultAddress: withVault ? vault : undefined,
            expiresAfter,
            isMainnet,
          });
          const theirs = await nkSignL1Action({
            wallet,
            action,
            nonce,
            isTestnet: !isMainnet,
            ...(withVault ? { vaultAddress: vault } : {}),
            ...(expiresAfter !== undefined ? { expiresAfter } : {}),
          });
          expect(ours).toEqual(theirs);
        },
      ),
      { numRuns: 32, seed: 29 },
    );
  });

  test("behavior: every price and size we produce is left unchanged by their formatPrice/formatSize", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 14n }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 6 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 5000 }),
        (digits, scale, szDecimals, isBuy, capBps) => {
          const mark = formatWire(
            `${digits / 10n ** BigInt(scale)}.${(digits % 10n ** BigInt(scale)).toString().padStart(scale, "0")}`.replace(
              /\.$/,
              "",
            ),
          );
          let px: string;
          try {
            px = closeLimitPrice({ mark, isBuy, capBps, szDecimals });
          } catch (e) {
            // only a buy can find no valid price (its bound under the smallest tick); sells round up
            expect(e).toBeInstanceOf(OrderRuleError);
            expect(isBuy).toBe(true);
            const tick = SCALE / 10n ** BigInt(6 - szDecimals);
            expect(parseDecimal(mark) * BigInt(10_000 + capBps) < tick * 10_000n).toBe(true);
            return;
          }
          expect(isValidPerpPrice(px, szDecimals)).toBe(true);
          expect(nkFormatPrice(px, szDecimals)).toBe(px);
          const sz = formatWire(mark);
          if (isValidSize(sz, szDecimals)) expect(nkFormatSize(sz, szDecimals)).toBe(sz);
        },
      ),
      { numRuns: 500, seed: 7 },
    );
  });
});

describe("price rules", () => {
  test("behavior: valid prices: 5 significant figures, 6 − szDecimals decimals, integers always", () => {
    expect(isValidPerpPrice("1670.1", 4)).toBe(true);
    expect(isValidPerpPrice("1670.12", 4)).toBe(false); // 6 significant figures
    expect(isValidPerpPrice("0.000123", 0)).toBe(true); // 3 sig figs, 6 decimals
    expect(isValidPerpPrice("0.0001234", 0)).toBe(false); // 7 decimals > 6
    expect(isValidPerpPrice("0.00012345", 0)).toBe(false); // 8 decimals > 6
    expect(isValidPerpPrice("0.12345", 2)).toBe(false); // 5 decimals > 6 − 2
    expect(isValidPerpPrice("0.1234", 2)).toBe(true);
    expect(isValidPerpPrice("123456", 5)).toBe(true); // integer: always
    expect(isValidPerpPrice("12345.6", 5)).toBe(false); // 1 decimal > 6 − 5
    expect(isValidPerpPrice("0", 2)).toBe(false);
    expect(isValidPerpPrice("1e3", 2)).toBe(false);
  });

  test("behavior: a sell-to-close rounds UP, a buy-to-close DOWN, never beyond the cap", () => {
    // 1% under 1670.13 = 1653.4287 → up to 1653.5 (5 sig figs)
    expect(closeLimitPrice({ mark: "1670.13", isBuy: false, capBps: 100, szDecimals: 4 })).toBe("1653.5");
    // 1% over = 1686.8313 → down to 1686.8
    expect(closeLimitPrice({ mark: "1670.13", isBuy: true, capBps: 100, szDecimals: 4 })).toBe("1686.8");
    // BTC, szDecimals 5: no decimals allowed; 97123 × 0.99 = 96151.77 → 96152 (integer always valid)
    expect(closeLimitPrice({ mark: "97123", isBuy: false, capBps: 100, szDecimals: 5 })).toBe("96152");
    // above 100000 an integer is finer than 5 significant figures: 123456 × 1.01 = 124690.56 → 124690
    expect(closeLimitPrice({ mark: "123456", isBuy: true, capBps: 100, szDecimals: 5 })).toBe("124690");
    // small prices: decimals capped at 6 − szDecimals
    expect(closeLimitPrice({ mark: "0.0123456", isBuy: false, capBps: 50, szDecimals: 0 })).toBe("0.012284");
    expect(closeLimitPrice({ mark: "0.0123456", isBuy: false, capBps: 50, szDecimals: 2 })).toBe("0.0123");
    expect(() => closeLimitPrice({ mark: "0.000001", isBuy: true, capBps: 10, szDecimals: 2 })).toThrow(
      /rounds down to 0/,
    );
    expect(() => closeLimitPrice({ mark: "100", isBuy: true, capBps: 0, szDecimals: 2 })).toThrow(/cap/);
  });

  test("property: the rounded limit is valid, inside the cap, and within one tick of the cap", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1000n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 5 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 2000 }),
        (digits, scale, szDecimals, isBuy, capBps) => {
          const markText = formatWire(
            `${digits / 10n ** BigInt(scale)}.${(digits % 10n ** BigInt(scale)).toString().padStart(scale, "0")}`.replace(
              /\.$/,
              "",
            ),
          );
          const m = parseDecimal(markText);
          // the exact bound, scaled by 10^4: mark × (1 ± cap)
          const bound = m * BigInt(isBuy ? 10_000 + capBps : 10_000 - capBps);
          let text: string;
          try {
            text = closeLimitPrice({ mark: markText, isBuy, capBps, szDecimals });
          } catch {
            // no valid price at or under the bound: it is under the smallest tick 10^-(6 − szDecimals)
            expect(isBuy).toBe(true);
            expect(bound < (SCALE / 10n ** BigInt(6 - szDecimals)) * 10_000n).toBe(true);
            return;
          }
          const px = parseDecimal(text) * 10_000n;
          if (isBuy) expect(px <= bound).toBe(true);
          else expect(px >= bound).toBe(true);
          expect(isValidPerpPrice(text, szDecimals)).toBe(true);
          // within one tick at the price's magnitude (5 significant figures, or the decimal limit)
          const whole = text.split(".")[0]!.replace(/^0+/, "").length;
          const lead = whole > 0 ? whole - 1 : -((text.split(".")[1] ?? "").search(/[1-9]/) + 1);
          const d = Math.min(6 - szDecimals, 4 - lead);
          const tick = d >= 0 ? SCALE / 10n ** BigInt(d) : SCALE * 10n ** BigInt(-d);
          const gap = px > bound ? px - bound : bound - px;
          expect(gap < tick * 10_000n).toBe(true);
        },
      ),
      { numRuns: 1000, seed: 11 },
    );
  });
});

describe("close slices", () => {
  test("behavior: a long closes with a reduce-only IOC sell, capped at the slice notional, size rounded down", () => {
    const slice = closeSlice({
      asset: 1,
      szi: "2.5",
      mark: "1670.13",
      szDecimals: 4,
      capBps: 100,
      maxSliceUsd: "1000",
    });
    // 1000 / 1670.13 = 0.598755… → 0.5987
    expect(slice).toEqual({
      kind: "order",
      order: {
        asset: 1,
        isBuy: false,
        price: "1653.5",
        size: "0.5987",
        reduceOnly: true,
        type: { limit: { tif: "Ioc" } },
      },
      valueUsd: "989.95045",
      remainder: "1.9013",
    });
  });

  test("behavior: a short closes with a buy; a small position closes whole", () => {
    const slice = closeSlice({
      asset: 5,
      szi: "-0.37",
      mark: "150.5",
      szDecimals: 2,
      capBps: 50,
      maxSliceUsd: "10000",
    });
    expect(slice?.kind === "order" && slice.order).toMatchObject({
      isBuy: true,
      size: "0.37",
      price: "151.25",
    });
    expect(slice?.kind === "order" && slice.remainder).toBe("0");
  });

  test("behavior: under $10 is dust and not sent; a remainder under $10 is avoided by a smaller slice", () => {
    const dust = closeSlice({
      asset: 0,
      szi: "0.0001",
      mark: "97000",
      szDecimals: 5,
      capBps: 100,
      maxSliceUsd: "100",
    });
    expect(dust).toMatchObject({ kind: "dust", size: "0.0001" });
    expect(dust?.kind === "dust" && dust.reason).toMatch(/under the exchange's \$10 minimum/);
    // $105 open, $50 slices: 50 then 50 would leave $5; the first slice leaves ≥ $10 instead
    const s = closeSlice({ asset: 3, szi: "105", mark: "1", szDecimals: 0, capBps: 100, maxSliceUsd: "50" });
    expect(s).toMatchObject({ kind: "order", order: { size: "50" }, remainder: "55" });
    const s2 = closeSlice({ asset: 3, szi: "55", mark: "1", szDecimals: 0, capBps: 100, maxSliceUsd: "50" });
    // 50 would leave 5: it takes 44 and leaves 11 (worth $10.89 at the 0.99 limit)
    expect(s2).toMatchObject({ kind: "order", order: { size: "44" }, remainder: "11" });
    expect(
      closeSlice({ asset: 0, szi: "0", mark: "1", szDecimals: 0, capBps: 1, maxSliceUsd: "50" }),
    ).toBeNull();
  });

  test("behavior: a slice cap worth under $10 at the limit is raised to the $10 minimum", () => {
    const s = closeSlice({ asset: 3, szi: "100", mark: "1", szDecimals: 0, capBps: 5000, maxSliceUsd: "10" });
    // valued at the 0.5 limit, 10 units are worth $5: 20 units are the smallest $10 slice
    expect(s).toMatchObject({ kind: "order", order: { size: "20", price: "0.5" } });
  });

  test("failure: a slice cap under $10 or a bad mark is refused", () => {
    expect(() =>
      closeSlice({ asset: 0, szi: "1", mark: "1", szDecimals: 0, capBps: 1, maxSliceUsd: "9.99" }),
    ).toThrow(/at least \$10/);
    expect(() =>
      closeSlice({ asset: 0, szi: "1", mark: "-1", szDecimals: 0, capBps: 1, maxSliceUsd: "100" }),
    ).toThrow(/mark must be > 0/);
  });
});

describe("order refusals", () => {
  test("behavior: each exchange text (with its asset suffix) names what a close does next", () => {
    const cases: Array<[string, string]> = [
      ["Reduce only order would increase position. asset=0", "reduce_only"],
      ["Order could not immediately match against any resting orders. asset=10107", "no_match"],
      ["Order must have minimum value of $10. asset=3", "min_value"],
      ["Price must be divisible by tick size. asset=1", "tick"],
      ["Order has invalid size. asset=1", "size"],
      ["Only post-only orders allowed immediately after a network upgrade", "post_only_window"],
      [
        "Too many open orders: reduce-only and trigger orders are refused with 1000 or more open orders. asset=0",
        "open_orders",
      ],
      ["Insufficient margin to place order. asset=3", "margin"],
      ["Order price too far from oracle", "unknown"],
    ];
    for (const [text, kind] of cases) expect([text, classifyOrderRefusal(text)]).toEqual([text, kind]);
  });
});
