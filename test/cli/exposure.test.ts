import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { formatExposure } from "../../src/cli/commands/exposure.js";
import type { ClearinghouseState } from "../../src/protocol/hyperliquid/schemas.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { deriveFigures } from "../../src/watchers/figures.js";
import { cli as runInProcess } from "../helpers/cli.js";
import { assertBuilt, runCliProcess } from "../helpers/process.js";

const A = `0x${"a".repeat(40)}`;
const B = `0x${"B".repeat(40)}`; // upper-case input: sent and shown lower-case
const C = `0x${"c".repeat(40)}`;

let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({
    ipWeightPerMinute: null,
    users: [
      {
        address: A,
        positions: [
          { coin: "BTC", szi: 0.5, entryPx: 60000, leverage: 10, marginMode: "cross" },
          { coin: "ETH", szi: -2, entryPx: 3000, leverage: 5, marginMode: "isolated" },
        ],
      },
      { address: B, balanceUsd: 1_000_000, positions: [{ coin: "SOL", szi: 1, entryPx: 100 }] },
    ],
  });
  sim.state.setMark("BTC", 61_000);
  sim.state.setMark("ETH", 2_900);
});
afterAll(async () => {
  await sim?.close();
});

async function rawStates(who: string[]): Promise<ClearinghouseState[]> {
  const res = await fetch(`${sim.apiUrl}/info`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "batchClearinghouseStates", users: who }),
  });
  return (await res.json()) as ClearinghouseState[];
}

/** `hl-deadman exposure ...args` in-process (test/helpers/cli.ts). */
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runInProcess(["exposure", ...args], { env });

/** `hl-deadman exposure ...args` as a process (the built CLI). */
const spawnCli = (args: string[]) => runCliProcess(["exposure", ...args], {}, { timeoutMs: 10_000 });

describe("hl-deadman exposure", () => {
  test("default", async () => {
    const { code, stdout, stderr } = await cli([A, B, C, "--api-url", sim.apiUrl]);
    expect([code, stderr]).toEqual([0, ""]);
    const [sa, sb] = await rawStates([A, B.toLowerCase()]);
    const blocks = stdout.trimEnd().split("\n\n");
    expect(blocks).toHaveLength(3);
    expect(blocks[0]!.split("\n")[0]).toBe(A);
    expect(blocks[1]!.split("\n")[0]).toBe(B.toLowerCase());
    expect(blocks[0]).toContain(`account value   ${sa!.marginSummary.accountValue} USD`);
    const leverage = Number(sa!.marginSummary.totalNtlPos) / Number(sa!.marginSummary.accountValue);
    expect(blocks[0]).toContain(`leverage        ${leverage.toFixed(2)}x`);
    const btcLiq = Number(sa!.assetPositions[0]!.position.liquidationPx);
    const btcRow = blocks[0]!.split("\n").find((l) => l.trim().startsWith("BTC"))!;
    expect(btcRow.trim().split(/\s+/)).toEqual([
      "BTC",
      "long",
      "0.5",
      "60000.0",
      "61000",
      sa!.assetPositions[0]!.position.positionValue,
      sa!.assetPositions[0]!.position.unrealizedPnl,
      sa!.assetPositions[0]!.position.liquidationPx!,
      (((61_000 - btcLiq) / 61_000) * 100).toFixed(2),
      "%",
      "10x",
      "cross",
    ]);
    const ethRow = blocks[0]!.split("\n").find((l) => l.trim().startsWith("ETH"))!;
    expect(ethRow.trim().split(/\s+/).slice(0, 5)).toEqual(["ETH", "short", "2.0", "3000.0", "2900"]);
    expect(ethRow).toContain("5x isolated");
    const solRow = blocks[1]!.split("\n").find((l) => l.trim().startsWith("SOL"))!;
    expect(sb!.assetPositions[0]!.position.liquidationPx).toBeNull();
    expect(solRow.trim().split(/\s+/).slice(7, 9)).toEqual(["-", "-"]); // no liquidation price, no distance
    expect(blocks[2]).toContain("no open positions");
    expect(blocks[2]).toContain("leverage        -");
  });

  test("behavior: --json prints one entry per address in the order given, state as received plus figures", async () => {
    const { code, stdout } = await cli([C, A, "--api-url", sim.apiUrl, "--json"]);
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(parsed.map((e) => [e.address, e.dex])).toEqual([
      [C, ""],
      [A, ""],
    ]);
    const [sc, sa] = await rawStates([C, A]);
    // the state as received (the simulator's time moves between the two queries)
    expect({ ...(parsed[1]!.state as object), time: 0 }).toEqual({ ...sa!, time: 0 });
    expect({ ...(parsed[0]!.state as object), time: 0 }).toEqual({ ...sc!, time: 0 });
    expect(parsed[1]!.derived).toEqual(deriveFigures(parsed[1]!.state as ClearinghouseState));
    const derived = parsed[1]!.derived as { positions: Array<Record<string, unknown>>; leverage: number };
    expect(derived.positions[0]!.markPx).toBeCloseTo(61_000, 6);
    expect(derived.leverage).toBeCloseTo(
      Number(sa!.marginSummary.totalNtlPos) / Number(sa!.marginSummary.accountValue),
      12,
    );
  });

  test("behavior: --dex queries that perp dex and says so", async () => {
    const { code, stdout } = await cli([A, "--api-url", sim.apiUrl, "--json", "--dex", "xyz"]);
    expect(code).toBe(0);
    const [entry] = JSON.parse(stdout) as Array<{ dex: string; state: ClearinghouseState }>;
    expect(entry!.dex).toBe("xyz");
    expect(entry!.state.assetPositions).toEqual([]); // the simulator's positions are on the first dex
    const table = await cli([A, "--api-url", sim.apiUrl, "--dex", "xyz"]);
    expect(table.stdout.split("\n")[0]).toBe(`${A}  dex xyz`);
  });

  test("error: invalid addresses are named, exit 2, nothing sent", async () => {
    const before = sim.state.requestCount("info");
    const { code, stdout, stderr } = await cli(["0x12", A, "zz", "--api-url", sim.apiUrl]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      'hl-deadman: invalid addresses "0x12" (argument 1), "zz" (argument 3): an address is 0x followed by 40 hexadecimal digits\n',
    );
    expect(sim.state.requestCount("info")).toBe(before);
    expect((await cli(["--api-url", sim.apiUrl])).code).toBe(2); // no address at all
  });

  test("error: an unreachable API exits 69", async () => {
    const dead = await startSimulator({});
    const url = dead.apiUrl;
    await dead.close();
    const { code, stderr } = await cli([A, "--api-url", url]);
    expect(code).toBe(69);
    expect(stderr).toMatch(
      /^hl-deadman: exposure: the API at http:\/\/127\.0\.0\.1:\d+ could not answer \(transport\)/,
    );
  });

  test("error: a bad configuration value exits 78", async () => {
    const { code, stderr } = await cli([A], { HL_API_URL: "ftp://nope" });
    expect(code).toBe(78);
    expect(stderr).toMatch(/apiUrl/);
  });

  test("behavior: the built CLI, spawned, prints the table and the JSON", async () => {
    assertBuilt();
    const table = await spawnCli([A, "--api-url", sim.apiUrl]);
    expect([table.code, table.stderr]).toEqual([0, ""]);
    expect(table.stdout).toMatch(/^0xa{40}\n {2}account value {3}\d+(\.\d+)? USD\n/);
    expect(table.stdout).toMatch(/\n {4}BTC +long +0\.5 +60000\.0 +61000 /);
    const json = await spawnCli([A, B, "--api-url", sim.apiUrl, "--json"]);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as Array<{ address: string }>).map((e) => e.address)).toEqual([
      A,
      B.toLowerCase(),
    ]);
    const bad = await spawnCli(["0xnope", "--api-url", sim.apiUrl]);
    expect([bad.code, bad.stdout]).toEqual([2, ""]);
    expect(bad.stderr).toContain('"0xnope" (argument 1)');
  });
});

describe("formatExposure", () => {
  test("behavior: tiny ratios keep two significant digits", () => {
    const state = {
      assetPositions: [],
      crossMaintenanceMarginUsed: "0.0",
      crossMarginSummary: {
        accountValue: "1000000.0",
        totalMarginUsed: "0",
        totalNtlPos: "0",
        totalRawUsd: "0",
      },
      marginSummary: {
        accountValue: "1000000.0",
        totalMarginUsed: "10.0",
        totalNtlPos: "100.0",
        totalRawUsd: "0",
      },
      time: 1,
      withdrawable: "999990.0",
    } as ClearinghouseState;
    const text = formatExposure({ address: A, dex: "", state, derived: deriveFigures(state) });
    expect(text).toContain("leverage        0.00010x");
    expect(text).toContain("margin used     10.0 USD (0.0010 %)");
  });
});
