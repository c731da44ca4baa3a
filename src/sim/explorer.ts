/**
 * POST /explorer: the explorer API on its own path, as on the real host (`https://rpc.hyperliquid.xyz/explorer`).
 * `userDetails` lists the address's L1 transactions, newest first, each with `error: null` when accepted or
 * the refusal text (docs/exchange-record.md, "The record"). Anything else is refused like a bad body.
 */
import { z } from "zod";
import { utcDay } from "../core/clock.js";
import { DESERIALIZE_ERROR, type HandlerResult } from "./exchange.js";
import type { FaultSpec } from "./faults.js";
import type { SimExplorerTx } from "./records.js";
import type { SimStore } from "./state.js";

/** IP weight of an explorer request (the rate-limit page: 40). */
export const EXPLORER_WEIGHT = 40;

const ExplorerRequest = z.object({
  type: z.literal("userDetails"),
  user: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
});

export function handleExplorer(
  store: SimStore,
  rawBody: string,
  fault: Pick<FaultSpec, "recordLagMs" | "recordFakeLapses"> = {},
): HandlerResult {
  let raw: unknown;
  try {
    raw = JSON.parse(rawBody);
  } catch {
    raw = undefined;
  }
  const parsed = ExplorerRequest.safeParse(raw);
  if (!parsed.success) {
    return { status: 422, contentType: "text/plain; charset=utf-8", body: DESERIALIZE_ERROR };
  }
  const now = store.clock.now();
  const lag = fault.recordLagMs ?? 0;
  let txs: SimExplorerTx[] = store.explorerTxs(parsed.data.user).filter((tx) => tx.time <= now - lag);
  const fakes = fault.recordFakeLapses ?? 0;
  if (fakes > 0)
    txs = [...txs, ...fakeLapses(parsed.data.user.toLowerCase(), now, fakes)].sort((a, b) => b.time - a.time);
  return {
    status: 200,
    contentType: "application/json",
    body: JSON.stringify({ type: "userDetails", txs }),
  };
}

/**
 * A lying record (fault `recordFakeLapses`): `count` accepted scheduleCancel transactions, from 00:00 UTC today
 * every 3 min, each with a cancel time 60 s later that nothing replaced (a lapse) and no order cancelled.
 */
function fakeLapses(user: string, now: number, count: number): SimExplorerTx[] {
  const dayStart = Date.parse(`${utcDay(now)}T00:00:00.000Z`);
  const out: SimExplorerTx[] = [];
  for (let k = 0; k < count; k++) {
    const time = dayStart + 60_000 + k * 180_000;
    if (time + 60_000 >= now) break;
    out.push({
      action: { type: "scheduleCancel", time: time + 60_000 },
      block: 1 + k,
      error: null,
      hash: `0x${"fa".repeat(31)}${k.toString(16).padStart(2, "0")}`,
      time,
      user,
    });
  }
  return out;
}
