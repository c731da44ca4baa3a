/**
 * Asset ids across perp dexes (Hyperliquid docs, "Asset IDs"): a perp of the first perp dex is its index in
 * `meta.universe`; a builder-deployed perp (HIP-3) is `100000 + perp_dex_index * 10000 + index_in_meta`, where
 * `perp_dex_index` is the dex's place in `perpDexs` (the first perp dex, null there, is 0) and `index_in_meta` its
 * index in that dex's `meta` (asked with `dex`). Its coin is named `dex:COIN`. The docs' example: `test:ABC` on
 * testnet, dex index 1, meta index 0, asset 110000.
 */
import type { InfoClient } from "./info.js";

export const BUILDER_ASSET_BASE = 100_000;
export const BUILDER_DEX_SPAN = 10_000;

/** What an asset id on `dex` adds to the coin's index in that dex's `meta`: 0 on the first perp dex. */
export function assetOffset(dexIndex: number): number {
  return dexIndex === 0 ? 0 : BUILDER_ASSET_BASE + dexIndex * BUILDER_DEX_SPAN;
}

/** The dex's place in a `perpDexs` answer ("" is 0), or null when the exchange does not list it. */
export function dexIndexOf(perpDexs: ReadonlyArray<{ name: string } | null>, dex: string): number | null {
  if (dex === "") return 0;
  const i = perpDexs.findIndex((d) => d?.name === dex);
  return i > 0 ? i : null;
}

/**
 * Each listed dex's asset-id offset: `perpDexs` is read once, when a builder-deployed dex is first asked for (a
 * dex's index never changes once deployed), and again only while a dex is not found in it. The first perp dex
 * needs no read.
 */
export type DexOffsets = { offset(dex: string, signal?: AbortSignal): Promise<number> };

export function createDexOffsets(info: Pick<InfoClient, "perpDexs">): DexOffsets {
  let known: ReadonlyArray<{ name: string } | null> | null = null;
  return {
    async offset(dex, signal) {
      if (dex === "") return 0;
      let i = known === null ? null : dexIndexOf(known, dex);
      if (i === null) {
        known = await info.perpDexs(signal ? { signal } : {});
        i = dexIndexOf(known, dex);
      }
      if (i === null)
        throw new Error(`the exchange lists no perp dex named ${JSON.stringify(dex)} (perpDexs)`);
      return assetOffset(i);
    },
  };
}
