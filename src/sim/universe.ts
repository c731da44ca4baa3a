/**
 * The simulated perp universe: the first dex's assets (the real universe's first ones, in order), the
 * builder-deployed dexes and their coins (`dex:COIN`), the asset ids that name them, and each coin's size
 * decimals (the real values of these assets) and default maximum leverage.
 */
import { ArgumentError } from "../core/errors/argument.js";
import { decimal } from "./format.js";

/** The first assets of the real perp universe, in order (asset index = position); others are appended. */
export const SIM_UNIVERSE = Object.freeze(["BTC", "ETH", "ATOM", "MATIC", "DYDX", "SOL"]);

/** The maximum leverage a new position gets when its input names none (20 for a coin not listed). */
const DEFAULT_MAX_LEVERAGE: Record<string, number> = { BTC: 40, ETH: 25, SOL: 20 };

export function maxLeverageOf(coin: string): number {
  return DEFAULT_MAX_LEVERAGE[baseCoin(coin)] ?? 20;
}

/** `szDecimals` of the simulated universe (the real values of these assets); other coins get 4. */
const SIZE_DECIMALS: Record<string, number> = { BTC: 5, ETH: 4, ATOM: 2, MATIC: 1, DYDX: 1, SOL: 2 };
export const DEFAULT_SZ_DECIMALS = 4;

export function szDecimalsOf(coin: string): number {
  // a builder-deployed dex's coin is named `dex:COIN`; the simulator gives it the first dex's decimals of COIN
  return SIZE_DECIMALS[baseCoin(coin)] ?? DEFAULT_SZ_DECIMALS;
}

/** `xyz:ETH` → `ETH`; a first-dex coin as it is. */
export function baseCoin(coin: string): string {
  const i = coin.indexOf(":");
  return i < 0 ? coin : coin.slice(i + 1);
}

/**
 * A coin's name on `dex`: the first perp dex's coins are bare (`ETH`); a builder-deployed dex's are `dex:COIN`
 * (Hyperliquid docs, "Asset IDs": "builder-deployed perps always have name in the format {dex}:{coin}").
 */
export function coinOnDex(coin: string, dex: string): string {
  if (dex === "" || coin.startsWith(`${dex}:`)) return coin;
  return `${dex}:${baseCoin(coin)}`;
}

/** Builder-deployed perps' asset ids: 100000 + perp_dex_index × 10000 + index_in_meta (Hyperliquid docs, "Asset IDs"). */
export const BUILDER_ASSET_BASE = 100_000;
export const BUILDER_DEX_SPAN = 10_000;

export function sizeText(coin: string, sz: number): string {
  return decimal(sz, szDecimalsOf(coin));
}

/**
 * The perp dexes (`perpDexs` order, "" the first one first) and each one's universe (asset index = position);
 * a coin is appended to its dex's universe the first time it is named.
 */
export class SimUniverse {
  readonly #universe: string[] = [...SIM_UNIVERSE];
  readonly #dexes: string[] = [""];
  readonly #dexUniverse = new Map<string, string[]>();

  /** the first perp dex's universe */
  get universe(): ReadonlyArray<string> {
    return this.#universe;
  }

  get dexes(): ReadonlyArray<string> {
    return this.#dexes;
  }

  universeOf(dex: string): ReadonlyArray<string> {
    if (dex === "") return this.#universe;
    return this.#dexUniverse.get(dex) ?? [];
  }

  /** Registers a builder-deployed perp dex (appended to `perpDexs`); "" is always there. */
  addDex(dex: string): number {
    let i = this.#dexes.indexOf(dex);
    if (i < 0) {
      if (!/^[a-z0-9]{1,8}$/.test(dex))
        throw new ArgumentError(`dex must be 1-8 lower-case letters or digits, got ${JSON.stringify(dex)}`);
      i = this.#dexes.push(dex) - 1;
      this.#dexUniverse.set(dex, []);
    }
    return i;
  }

  /**
   * The asset id of a perp coin on `dex` (appended to that dex's universe when new): its index on the first dex,
   * 100000 + dex index × 10000 + its index on a builder-deployed dex.
   */
  assetIndex(coin: string, dex = ""): number {
    if (dex === "") {
      let i = this.#universe.indexOf(coin);
      if (i < 0) i = this.#universe.push(coin) - 1;
      return i;
    }
    const d = this.addDex(dex);
    const universe = this.#dexUniverse.get(dex)!;
    const name = coinOnDex(coin, dex);
    let i = universe.indexOf(name);
    if (i < 0) i = universe.push(name) - 1;
    return BUILDER_ASSET_BASE + d * BUILDER_DEX_SPAN + i;
  }

  /** The coin and dex an asset id names, or undefined. */
  assetOf(asset: number): { coin: string; dex: string } | undefined {
    if (asset < BUILDER_ASSET_BASE) {
      const coin = this.#universe[asset];
      return coin === undefined ? undefined : { coin, dex: "" };
    }
    const d = Math.floor((asset - BUILDER_ASSET_BASE) / BUILDER_DEX_SPAN);
    const dex = this.#dexes[d];
    if (dex === undefined || dex === "") return undefined;
    const coin = this.#dexUniverse.get(dex)?.[(asset - BUILDER_ASSET_BASE) % BUILDER_DEX_SPAN];
    return coin === undefined ? undefined : { coin, dex };
  }
}
