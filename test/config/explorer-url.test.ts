import { describe, expect, test } from "vitest";
import { effectiveExplorerUrl, loadConfig } from "../../src/config/load.js";

const load = (options: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
  loadConfig({ options, env, cwd: process.cwd() }).config;

describe("explorerUrl", () => {
  test("default: derived from the network", () => {
    expect(effectiveExplorerUrl(load({}))).toBe("https://rpc.hyperliquid.xyz/explorer");
    expect(effectiveExplorerUrl(load({ network: "testnet" }))).toBe(
      "https://rpc.hyperliquid-testnet.xyz/explorer",
    );
    expect(effectiveExplorerUrl(load({ apiUrl: "https://api.hyperliquid.xyz/" }))).toBe(
      "https://rpc.hyperliquid.xyz/explorer",
    );
  });

  test("a third-party API host without an explicit explorer URL has no record", () => {
    expect(effectiveExplorerUrl(load({ apiUrl: "https://hl.provider.example/KEY" }))).toBeNull();
  });

  test("--explorer-url, then HL_EXPLORER_URL, win", () => {
    expect(effectiveExplorerUrl(load({ explorerUrl: "http://127.0.0.1:9/explorer" }))).toBe(
      "http://127.0.0.1:9/explorer",
    );
    expect(effectiveExplorerUrl(load({}, { HL_EXPLORER_URL: "http://127.0.0.1:8/explorer" }))).toBe(
      "http://127.0.0.1:8/explorer",
    );
  });

  test("error: not an http(s) URL is refused with the key named", () => {
    expect(() => load({ explorerUrl: "ftp://x/explorer" })).toThrow(/explorerUrl/);
  });

  test("agentWarnDays / agentCheckInterval: defaults and durations", () => {
    const c = load({ agentCheckInterval: "30m", agentWarnDays: "3" });
    expect([c.agentCheckInterval, c.agentWarnDays]).toEqual([1_800_000, 3]);
    const d = load({});
    expect([d.agentCheckInterval, d.agentWarnDays]).toEqual([3_600_000, 7]);
  });
});
