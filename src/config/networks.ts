/** The official endpoints of each network, and the effective URLs of a configuration. */
import { resolve } from "node:path";
import type { Config } from "./options.js";

export const NETWORK_URLS = Object.freeze({
  mainnet: { apiUrl: "https://api.hyperliquid.xyz", rpcUrl: "https://rpc.hyperliquid.xyz/evm" },
  testnet: {
    apiUrl: "https://api.hyperliquid-testnet.xyz",
    rpcUrl: "https://rpc.hyperliquid-testnet.xyz/evm",
  },
});

/** The explorer endpoints (docs/exchange-record.md, "The record"): their own host and path. */
export const EXPLORER_URLS = Object.freeze({
  mainnet: "https://rpc.hyperliquid.xyz/explorer",
  testnet: "https://rpc.hyperliquid-testnet.xyz/explorer",
});

/**
 * The effective explorer URL: explicit, else the network's official one when the API is the official one;
 * with a third-party API host and no explicit explorer URL there is no record (null).
 */
export function effectiveExplorerUrl(config: Config): string | null {
  if (config.explorerUrl) return config.explorerUrl;
  const official = NETWORK_URLS[config.network].apiUrl;
  if (config.apiUrl && config.apiUrl.replace(/\/+$/, "") !== official) return null;
  return EXPLORER_URLS[config.network];
}

/** The effective API and RPC URLs (explicit, else the network's). */
export function effectiveUrls(config: Config): { apiUrl: string; rpcUrl: string } {
  return {
    apiUrl: config.apiUrl ?? NETWORK_URLS[config.network].apiUrl,
    rpcUrl: config.rpcUrl ?? NETWORK_URLS[config.network].rpcUrl,
  };
}

/** The state directory: the configured one, else ./.hl-deadman under `cwd`. */
export function effectiveStateDir(config: Config, cwd: string): string {
  return config.stateDir ?? resolve(cwd, ".hl-deadman");
}
