/**
 * POST /explorer: the explorer API on its own path, as on the real host (`https://rpc.hyperliquid.xyz/explorer`).
 * `userDetails` lists the address's L1 transactions, newest first, each with `error: null` when accepted or
 * the refusal text (docs/exchange-record.md, "The record"). Anything else is refused like a bad body.
 */
import { z } from "zod";
import { DESERIALIZE_ERROR, type HandlerResult } from "./exchange.js";
import type { SimStore } from "./state.js";

/** IP weight of an explorer request (the rate-limit page: 40). */
export const EXPLORER_WEIGHT = 40;

const ExplorerRequest = z.object({
  type: z.literal("userDetails"),
  user: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
});

export function handleExplorer(store: SimStore, rawBody: string): HandlerResult {
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
  const txs = store.explorerTxs(parsed.data.user);
  return {
    status: 200,
    contentType: "application/json",
    body: JSON.stringify({ type: "userDetails", txs }),
  };
}
