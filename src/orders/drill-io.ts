/**
 * The drill's three requests (src/drill/machine.ts decides when; the port: src/core/orders-port.ts `DrillIo`): place
 * its resting order, read its status after the drill's deadline, cancel it when the drill ends without the exchange
 * having done so. Never throws: a failure is an answer with its reason.
 */
import type { DrillIo } from "../core/orders-port.js";
import type { ExchangeClient } from "../protocol/hyperliquid/exchange.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";
import { drillOrder } from "../protocol/hyperliquid/order.js";

/** The drill's order is worth a little above the exchange's $10 minimum (rounding never takes it below). */
export const DRILL_ORDER_USD = 11;

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 300);

export function createDrillIo(deps: {
  info: Pick<InfoClient, "metaAndMarks" | "historicalOrders">;
  exchange: Pick<ExchangeClient, "order" | "cancel">;
  /** the coin the drill's order is placed on (default BTC) */
  coin: string;
}): DrillIo {
  const assetOf = async () => {
    const { meta, marks } = await deps.info.metaAndMarks();
    const asset = meta.universe.findIndex((a) => a.name === deps.coin);
    const mark = marks[deps.coin];
    if (asset < 0 || mark === undefined)
      throw new Error(`${deps.coin} is not traded here (no such perp or no mark)`);
    return { asset, mark, szDecimals: meta.universe[asset]!.szDecimals };
  };
  return {
    async place({ vaultAddress }) {
      try {
        const { asset, mark, szDecimals } = await assetOf();
        const order = drillOrder({ asset, mark, szDecimals, valueUsd: DRILL_ORDER_USD });
        const r = await deps.exchange.order([order], vaultAddress ? { vaultAddress } : {});
        const st = r.statuses[0];
        if (st?.kind === "resting")
          return { oid: st.oid, coin: deps.coin, price: order.price, size: order.size };
        if (st?.kind === "filled")
          return {
            error: `the drill's order filled at once (oid ${st.oid}): the market moved through half its mark`,
          };
        return { error: st?.kind === "error" ? st.error : "no status for the drill's order" };
      } catch (error) {
        return { error: messageOf(error) };
      }
    },
    async status({ account, vaultAddress, oid }) {
      try {
        const orders = await deps.info.historicalOrders({ user: vaultAddress ?? account });
        const o = orders.find((h) => h.order.oid === oid);
        if (!o)
          return { status: null, statusTimestamp: null, detail: `order ${oid} is not in historicalOrders` };
        return { status: o.status, statusTimestamp: o.statusTimestamp };
      } catch (error) {
        return {
          status: null,
          statusTimestamp: null,
          detail: `historicalOrders failed: ${messageOf(error)}`,
        };
      }
    },
    async cancel({ vaultAddress, oid }) {
      try {
        const { asset } = await assetOf();
        await deps.exchange.cancel([{ asset, oid }], vaultAddress ? { vaultAddress } : {});
      } catch {
        // the drill's report says its order may rest; the next cancel pass or a person removes it
      }
    },
  };
}
