/** The official endpoints of each network, and the effective URLs of a configuration. */
import { isAbsolute, join, resolve } from "node:path";
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

/** The state directory of releases before 0.2: `./.hl-deadman` under the working directory (docs/operations.md). */
export const LEGACY_STATE_DIR = ".hl-deadman";

/**
 * The default state directory, the same from any working directory so that `status`, `drill`, `reset` and `audit`
 * find the running daemon's: `$XDG_STATE_HOME/hl-deadman`, else `~/.local/state/hl-deadman` (the XDG base
 * directory rule for state that should persist across restarts), else `./.hl-deadman` when no home is known.
 * ($HL_STATE_DIR and systemd's $STATE_DIRECTORY come first: they are the option's own sources.)
 */
export function defaultStateDir(env: NodeJS.ProcessEnv, cwd: string): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "hl-deadman");
  if (env.HOME && isAbsolute(env.HOME)) return join(env.HOME, ".local", "state", "hl-deadman");
  return resolve(cwd, LEGACY_STATE_DIR);
}

/** The state directory: the configured one (flag, $HL_STATE_DIR, $STATE_DIRECTORY, file), else the default. */
export function effectiveStateDir(config: Config, cwd: string, env: NodeJS.ProcessEnv = {}): string {
  return config.stateDir ?? defaultStateDir(env, cwd);
}

/**
 * Where the HyperEVM block time (the second witness of the exchange's time) is read: `--rpc-url`, else the
 * network's official RPC when the API is the official one; with a third-party API host and no `--rpc-url`, none
 * (as for the explorer: a witness of another network's time would be worse than none).
 */
export function effectiveBlockTimeUrl(config: Config): string | null {
  if (config.rpcUrl) return config.rpcUrl;
  const official = NETWORK_URLS[config.network].apiUrl;
  if (config.apiUrl && config.apiUrl.replace(/\/+$/, "") !== official) return null;
  return NETWORK_URLS[config.network].rpcUrl;
}
