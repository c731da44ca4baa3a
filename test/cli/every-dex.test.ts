/**
 * Issue 39, finding 3, end to end through the real CLI against the simulator: with `--dex "" --dex xyz`, the
 * engine-down cancel, the escalation's closes and the check after a fire cover the builder-deployed dex `xyz`
 * too, each with its asset ids resolved from its own `meta` (100000 + dex index × 10000 + index).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { connectEngine as engine } from "../helpers/engine.js";
import { assertBuilt, runCliProcess, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());

const FAST = ["--interval", "1s", "--deadline", "15s", "--request-timeout", "1s"];

/** The book on `xyz`: an isolated ETH short at 20x about 2.9 % from liquidation, one resting order. */
async function plantXyz(adminUrl: string, account: string): Promise<void> {
  const r = await fetch(`${adminUrl}/users`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      address: account,
      volumeUsd: 5_000_000,
      balanceUsd: 25_000,
      positions: [
        {
          coin: "ETH",
          dex: "xyz",
          szi: -2,
          entryPx: 3_400,
          leverage: 20,
          maxLeverage: 25,
          marginMode: "isolated",
        },
      ],
      orders: [{ coin: "ETH", dex: "xyz", side: "B", limitPx: 3_000, sz: 1 }],
    }),
  });
  expect(r.status).toBe(200);
}

describe.concurrent("every listed dex (process)", () => {
  test("behavior: engine gone → the xyz order is cancelled, the xyz short is closed; closed only when both dexes are flat", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-dexes-"));
    const stateDir = path.join(dir, "s");
    const guard = path.join(dir, "guard.sock");
    const d = spawnCli([
      "run",
      "--sim",
      "--state-dir",
      stateDir,
      ...FAST,
      "--exposure-interval",
      "1s",
      "--dex",
      "",
      "--dex",
      "xyz",
      "--guard-socket",
      guard,
      "--on-engine-down",
      "cancel",
      "--escalate-account",
      "0xf06981fcd61e2cfe5f209a4267a60c7316cf2705",
      "--escalate-after",
      "1s",
    ]);
    try {
      const sim = await d.waitForEvent("sim.start", 15_000);
      const account = String(sim.account);
      const apiUrl = String(sim.apiUrl);
      const info = new InfoClient({ apiUrl, timeoutMs: 5_000 });
      await plantXyz(`${apiUrl}/admin`, account);
      await d.waitForEvent("guard.listening", 15_000);
      const e = await engine(guard, account);
      await d.waitForEvent("heartbeat.ok", 10_000);
      expect((await info.positions({ user: account, dex: "xyz" })).positions).toHaveLength(1);
      expect(await info.frontendOpenOrders({ user: account, dex: "xyz" })).toHaveLength(1);
      e.destroy();
      // the engine-down cancel: the xyz order went, named by its builder-dex asset id
      const xyzCancel = await d.waitForEvent("orders.cancelled", 10_000, (l) => l.dex === "xyz");
      expect(xyzCancel).toMatchObject({ confirmed: true, cancelled: 1 });
      expect(await info.frontendOpenOrders({ user: account, dex: "xyz" })).toEqual([]);
      const closed = await d.waitForEvent("escalation.closed", 20_000);
      expect(closed.orders).toBeGreaterThanOrEqual(4);
      // "closed" means flat on both dexes
      expect((await info.positions({ user: account })).positions).toEqual([]);
      expect((await info.positions({ user: account, dex: "xyz" })).positions).toEqual([]);
      const sent = d.lines.find((l) => l.event === "escalation.close_orders")!.orders as {
        coin: string;
        status: string;
      }[];
      expect(sent.find((o) => o.coin === "xyz:ETH")).toMatchObject({ status: "filled" });
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);
  }, 60_000);

  test("behavior: a fire that misses the builder dex (simulator fault) → the check after it finds the xyz order and the daemon's own cancel takes it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-dexes-fire-"));
    const guard = path.join(dir, "guard.sock");
    const d = spawnCli([
      "run",
      "--sim",
      "--state-dir",
      path.join(dir, "s"),
      ...FAST,
      "--dex",
      "xyz",
      "--guard-socket",
      guard,
    ]);
    try {
      const sim = await d.waitForEvent("sim.start", 15_000);
      const account = String(sim.account);
      const apiUrl = String(sim.apiUrl);
      const info = new InfoClient({ apiUrl, timeoutMs: 5_000 });
      await plantXyz(`${apiUrl}/admin`, account);
      const fault = await fetch(`${apiUrl}/admin/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ endpoint: "exchange", fault: { fireMissesBuilderDexes: true } }),
      });
      expect(fault.status).toBe(200);
      await d.waitForEvent("guard.listening", 15_000);
      const e = await engine(guard, account);
      await d.waitForEvent("heartbeat.ok", 10_000);
      e.destroy();
      // the expedited schedule fires: the first dex's orders go, the xyz order stays (the fault)...
      const survivors = await d.waitForEvent("fire.survivors", 25_000);
      expect(survivors).toMatchObject({ engineUp: false });
      expect((survivors.survivors as Record<string, number[]>).xyz).toHaveLength(1);
      expect((survivors.survivors as Record<string, number[]>)[""]).toBeUndefined();
      // ...and the daemon's own cancel covers the dex the fire missed
      const covered = await d.waitForEvent("fire.covered", 10_000);
      expect(covered).toMatchObject({ dexes: ["xyz"], confirmed: true, cancelled: 1 });
      expect(await info.frontendOpenOrders({ user: account, dex: "xyz" })).toEqual([]);
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);
  }, 60_000);

  test("behavior: kill --close with the engine connected → every resting order on both dexes cancelled, both dexes flat", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-dexes-kill-"));
    const stateDir = path.join(dir, "s");
    const guard = path.join(dir, "guard.sock");
    const d = spawnCli([
      "run",
      "--sim",
      "--state-dir",
      stateDir,
      ...FAST,
      "--dex",
      "",
      "--dex",
      "xyz",
      "--guard-socket",
      guard,
    ]);
    try {
      const sim = await d.waitForEvent("sim.start", 15_000);
      const account = String(sim.account);
      const info = new InfoClient({ apiUrl: String(sim.apiUrl), timeoutMs: 5_000 });
      await plantXyz(`${String(sim.apiUrl)}/admin`, account);
      await d.waitForEvent("guard.listening", 15_000);
      const e = await engine(guard, account);
      await d.waitForEvent("heartbeat.ok", 10_000);
      expect(await info.frontendOpenOrders({ user: account })).not.toEqual([]);
      expect(await info.frontendOpenOrders({ user: account, dex: "xyz" })).toHaveLength(1);
      const k = await runCliProcess(
        ["kill", "--account", account, "--close", "--state-dir", stateDir, "--yes", "--json"],
        {},
        { timeoutMs: 30_000 },
      );
      expect(k.code, k.stderr).toBe(0);
      const answer = JSON.parse(k.stdout) as {
        accounts: { cancel: { cancelled: number }; close: { flat: boolean } }[];
      };
      expect(answer.accounts[0]!.close.flat).toBe(true);
      // the builder dex's order and position are gone too: the command named the account, on every listed dex
      expect(await info.frontendOpenOrders({ user: account })).toEqual([]);
      expect(await info.frontendOpenOrders({ user: account, dex: "xyz" })).toEqual([]);
      expect((await info.positions({ user: account })).positions).toEqual([]);
      expect((await info.positions({ user: account, dex: "xyz" })).positions).toEqual([]);
      e.destroy();
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);
  }, 60_000);
});
