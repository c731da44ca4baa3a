/**
 * The close executor asks the machine before EVERY order it sends (issue 39, finding 1): a pass in flight stops at
 * its next step once the answer says no (the engine back), and nothing more leaves. Fake info and exchange clients:
 * each order fills a slice, the positions shrink as the exchange would move them.
 */
import { describe, expect, test } from "vitest";
import { createCloseExecutor } from "../../src/orders/close-executor.js";

function world() {
  // two positions, each several slices large ($1,000 slices at the marks)
  const positions = new Map<string, number>([
    ["BTC", 0.25],
    ["ETH", -3],
  ]);
  const marks = { BTC: "100000", ETH: "3000" };
  const sent: string[][] = [];
  const info = {
    positions: async () => ({
      positions: [...positions].map(([coin, szi]) => ({ coin, szi: String(szi), marginType: "cross" })),
    }),
    metaAndMarks: async () => ({
      meta: {
        universe: [
          { name: "BTC", szDecimals: 5 },
          { name: "ETH", szDecimals: 4 },
        ],
      },
      marks,
    }),
  };
  const exchange = {
    order: async (orders: ReadonlyArray<{ asset: number; isBuy: boolean; size: string; price: string }>) => {
      sent.push(orders.map((o) => `${o.isBuy ? "buy" : "sell"} ${o.size} #${o.asset}`));
      return {
        statuses: orders.map((o, i) => {
          const coin = o.asset === 0 ? "BTC" : "ETH";
          const szi = positions.get(coin)!;
          const size = Number(o.size);
          positions.set(coin, Number((szi > 0 ? szi - size : szi + size).toFixed(6)));
          return { kind: "filled" as const, oid: sent.length * 10 + i, totalSz: o.size, avgPx: marks[coin] };
        }),
      };
    },
  };
  return { positions, sent, info, exchange };
}

describe("close executor: the machine's evidence before every order", () => {
  test("the answer turns to no after two orders: the pass stops there, held, with the positions left", async () => {
    const w = world();
    let asked = 0;
    const close = createCloseExecutor({
      info: w.info as never,
      exchange: w.exchange,
      cancelOpenOrders: async () => ({ confirmed: true, cancelled: 0, kept: 0 }),
      slippagePct: 1,
      maxSliceUsd: 1_000,
    });
    const r = await close({
      account: "0x00000000000000000000000000000000000000aa",
      pass: 1,
      mayProceed: () => (++asked > 3 ? "the engine is back" : null),
    });
    // asked once before the cancels, then before each order: two orders left, the third was refused
    expect(w.sent).toHaveLength(2);
    expect(r).toMatchObject({ flat: false, refusal: "held", detail: "the engine is back" });
    expect(r.remaining).toMatch(/^BTC 0\.23, ETH -2\.\d+$/);
  });

  test("no from the start: nothing leaves, not even the cancels", async () => {
    const w = world();
    let cancels = 0;
    const close = createCloseExecutor({
      info: w.info as never,
      exchange: w.exchange,
      cancelOpenOrders: async () => {
        cancels++;
        return { confirmed: true, cancelled: 0, kept: 0 };
      },
      slippagePct: 1,
      maxSliceUsd: 1_000,
    });
    const r = await close({
      account: "0x00000000000000000000000000000000000000aa",
      pass: 1,
      mayProceed: () => "no",
    });
    expect(r).toMatchObject({ flat: false, refusal: "held", orders: [] });
    expect(cancels).toBe(0);
    expect(w.sent).toEqual([]);
  });

  test("yes throughout: the pass goes on (20 steps at most) and says what is left", async () => {
    const w = world();
    const close = createCloseExecutor({
      info: w.info as never,
      exchange: w.exchange,
      cancelOpenOrders: undefined,
      slippagePct: 1,
      maxSliceUsd: 1_000,
    });
    const r = await close({
      account: "0x00000000000000000000000000000000000000aa",
      pass: 1,
      mayProceed: () => null,
    });
    expect(w.sent).toHaveLength(20);
    expect(r.refusal).toBe("more_to_close");
  });
});
