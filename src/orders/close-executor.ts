/**
 * The escalation's close pass (step 2, docs/operations.md "When cancelling is not enough"; the orders' rules in
 * docs/close-orders.md): cancel every open order first (reduce-only orders are refused with 1,000 or more open
 * orders, and a stop left resting could re-open what is being closed), then, step by step, read the positions and
 * the marks afresh, plan the next reduce-only IOC slices (close-plan.ts, pure) and send them, until nothing but
 * dust is left, the exchange refuses, or the pass's step budget is spent. It decides nothing the machine has not
 * asked for: it carries out one pass and reports it; the machine decides whether to try again. Every listed dex
 * (`--dex`) is read and closed in each step; the pass is flat only when each of them is.
 */
import type { CancelOpenOrders, CloseOrderReport, ClosePositions } from "../core/orders-port.js";
import { createDexOffsets } from "../protocol/hyperliquid/asset-ids.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";
import { classifyOrderRefusal, type OrderRequest } from "../protocol/hyperliquid/order.js";
import { planCloseStep } from "./close-plan.js";

/**
 * Steps of one pass at most: each reads the positions (weight 2) and the marks (weight 20) and sends one order
 * action (weight 1): 20 steps stay under 500 of the IP's 1,200 a minute. A larger position is closed over the next
 * passes (each after `closeRetryInterval`).
 */
export const CLOSE_STEPS_PER_PASS = 20;

type OrderClient = {
  order(
    orders: ReadonlyArray<OrderRequest>,
    params?: { vaultAddress?: string | undefined },
  ): Promise<{
    statuses: (
      | { kind: "filled"; oid: number; totalSz: string; avgPx: string }
      | { kind: "resting"; oid: number }
      | { kind: "error"; error: string }
    )[];
  }>;
};

export function createCloseExecutor(deps: {
  info: Pick<InfoClient, "positions" | "metaAndMarks"> & Partial<Pick<InfoClient, "perpDexs">>;
  /**
   * The perp dexes whose positions are closed ("" is the first; default [""]): the exposure poll's list (`--dex`).
   * Flat means flat (or dust) on every one of them.
   */
  dexes?: readonly string[] | undefined;
  exchange: OrderClient;
  cancelOpenOrders: CancelOpenOrders | undefined;
  /** the slippage cap (percent, 1 = 1 %) and the largest slice (USD) */
  slippagePct: number;
  maxSliceUsd: number;
}): ClosePositions {
  const capBps = Math.max(1, Math.round(deps.slippagePct * 100));
  const maxSliceUsd = String(deps.maxSliceUsd);
  const dexes = [...new Set(deps.dexes ?? [""])];
  const offsets = createDexOffsets({
    perpDexs: (p) => {
      if (!deps.info.perpDexs)
        throw new Error("this info client cannot read perpDexs: builder-dex asset ids unknown");
      return deps.info.perpDexs(p);
    },
  });
  /**
   * One step's plan over every listed dex: each dex's positions, meta and marks read afresh, planned with its own
   * asset ids (asset-ids.ts), then put together (a builder dex's coins are named `dex:COIN`, so no two dexes share
   * a coin). Done only when every dex is done: a position left on any listed dex is not "closed".
   */
  const planAll = async (
    user: string,
  ): Promise<{ plan: ReturnType<typeof planCloseStep>; remaining: string }> => {
    const plans = await Promise.all(
      dexes.map(async (dex) => {
        const [{ positions }, { meta, marks }, assetOffset] = await Promise.all([
          deps.info.positions(dex === "" ? { user } : { user, dex }),
          dex === "" ? deps.info.metaAndMarks() : deps.info.metaAndMarks({ dex }),
          offsets.offset(dex),
        ]);
        const plan = planCloseStep({
          positions: positions.map((p) => ({ coin: p.coin, szi: p.szi, marginType: p.marginType })),
          universe: meta.universe,
          assetOffset,
          marks,
          capBps,
          maxSliceUsd,
        });
        return { plan, left: positionsLeft(positions) };
      }),
    );
    return {
      plan: {
        orders: plans.flatMap((p) => p.plan.orders),
        dust: plans.flatMap((p) => p.plan.dust),
        blocked: plans.flatMap((p) => p.plan.blocked),
        done: plans.every((p) => p.plan.done),
      },
      remaining: plans
        .map((p) => p.left)
        .filter((l) => l !== "")
        .join(", ")
        .slice(0, 500),
    };
  };
  return async ({ account, vaultAddress, mayProceed }) => {
    const user = vaultAddress ?? account;
    const orders: CloseOrderReport[] = [];
    let filledUsd = 0;
    /** the positions as the last read left them */
    let remaining: string | undefined;
    const result = (flat: boolean, dust: number, refusal: string | null, detail?: string) => ({
      flat,
      orders,
      filledUsd: Math.round(filledUsd * 100) / 100,
      dust,
      refusal,
      ...(detail ? { detail } : {}),
      ...(remaining !== undefined ? { remaining: flat ? "" : remaining } : {}),
    });
    // The machine's evidence, asked before every order this pass sends: the engine back (or the latch released,
    // the daemon stopping) ends the pass here, and nothing more leaves.
    const held = () => mayProceed?.() ?? null;
    const stopped = held();
    if (stopped !== null) return result(false, 0, "held", stopped);
    if (deps.cancelOpenOrders) {
      const c = await deps.cancelOpenOrders({
        account,
        ...(vaultAddress ? { vaultAddress } : {}),
        cancelStops: true,
      });
      if (!c.confirmed)
        return result(
          false,
          0,
          "unavailable",
          `the open orders could not be cancelled first: ${c.detail ?? "not confirmed"}`,
        );
    }
    let openOrdersRetried = false;
    for (let step = 0; step < CLOSE_STEPS_PER_PASS; step++) {
      let plan: ReturnType<typeof planCloseStep>;
      try {
        const read = await planAll(user);
        plan = read.plan;
        remaining = read.remaining;
      } catch (error) {
        return result(false, 0, "unavailable", `reading the positions failed: ${messageOf(error)}`);
      }
      if (plan.blocked.length > 0)
        return result(
          false,
          plan.dust.length,
          "blocked",
          plan.blocked.map((b) => `${b.coin} ${b.szi}: ${b.reason}`).join("; "),
        );
      if (plan.done) return result(true, plan.dust.length, null);
      const hold = held();
      if (hold !== null) return result(false, plan.dust.length, "held", hold);
      let answer: Awaited<ReturnType<OrderClient["order"]>>;
      try {
        answer = await deps.exchange.order(
          plan.orders.map((o) => o.order),
          vaultAddress ? { vaultAddress } : {},
        );
      } catch (error) {
        return result(false, plan.dust.length, "refused", `the close order was refused: ${messageOf(error)}`);
      }
      let stop: { refusal: string; detail: string } | null = null;
      answer.statuses.forEach((st, i) => {
        const planned = plan.orders[i]!;
        const o = planned.order;
        const report: CloseOrderReport = {
          coin: planned.coin,
          side: o.isBuy ? "buy" : "sell",
          size: o.size,
          price: o.price,
          status: st.kind === "filled" ? "filled" : st.kind === "resting" ? "resting" : "refused",
          filledSize: st.kind === "filled" ? st.totalSz : "0",
          avgPrice: st.kind === "filled" ? st.avgPx : null,
          oid: st.kind === "error" ? null : st.oid,
          error: st.kind === "error" ? st.error.slice(0, 300) : null,
        };
        orders.push(report);
        if (st.kind === "filled") filledUsd += Number(st.totalSz) * Number(st.avgPx);
        if (st.kind !== "error") return;
        const kind = classifyOrderRefusal(st.error);
        // nothing inside the cap, or the position already gone: the next step's fresh read decides
        if (kind === "no_match" || kind === "reduce_only") return;
        if (kind === "open_orders" && !openOrdersRetried) return;
        stop ??= { refusal: kind, detail: `${planned.coin}: ${st.error.slice(0, 300)}` };
      });
      if (
        answer.statuses.some((s) => s.kind === "error" && classifyOrderRefusal(s.error) === "open_orders")
      ) {
        if (openOrdersRetried)
          stop ??= { refusal: "open_orders", detail: "still 1,000 open orders after a cancel" };
        else if (held() === null) {
          openOrdersRetried = true;
          await deps.cancelOpenOrders?.({
            account,
            ...(vaultAddress ? { vaultAddress } : {}),
            cancelStops: true,
          });
        }
      }
      if (stop)
        return result(
          false,
          plan.dust.length,
          (stop as { refusal: string }).refusal,
          (stop as { detail: string }).detail,
        );
      // only refusals that the next read settles (nothing matched inside the cap): one more step, not a loop
      if (answer.statuses.every((s) => s.kind === "error")) {
        const all = answer.statuses.map((s) => (s.kind === "error" ? classifyOrderRefusal(s.error) : ""));
        if (all.every((k) => k === "no_match"))
          return result(false, plan.dust.length, "no_match", "nothing to trade inside the slippage cap");
      }
    }
    return result(
      false,
      0,
      "more_to_close",
      `${CLOSE_STEPS_PER_PASS} steps in this pass; the next pass goes on`,
    );
  };
}

/** The open positions as people read them ("BTC 0.25, ETH -3"), bounded. */
function positionsLeft(positions: ReadonlyArray<{ coin: string; szi: string }>): string {
  return positions
    .filter((p) => !/^-?0*(\.0*)?$/.test(p.szi))
    .map((p) => `${p.coin} ${p.szi}`)
    .join(", ")
    .slice(0, 500);
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
