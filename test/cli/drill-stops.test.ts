/**
 * Issue 39, finding 4, end to end through the real CLI against the simulator, with the engine connected: the drill
 * says what it will take (per dex, by count and kind) before it asks; with reduce-only stops resting, `--yes` alone
 * is refused (exit 77, nothing taken) and `--cancel-stops` is needed; the drill's trigger is counted with its own
 * order as proof and the record pairs the cancelled orders with the drill's own fire; the report's path is printed.
 * The connected engine (guard protocol version 2, `hl-deadman/engine`) is told first: its `drill` notice arrives
 * while its orders still rest, before the fire that takes them.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { GuardNotice } from "../../src/core/guard-protocol.js";
import { holdSwitch } from "../../src/engine/index.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { eventually } from "../helpers/eventually.js";
import { assertBuilt, runCliProcess, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());

const FAST = ["--interval", "1s", "--deadline", "15s", "--request-timeout", "1s"];

describe("the drill takes only what it names (process)", () => {
  test("behavior: stops resting → --yes alone exits 77 naming them; --cancel-stops drills, proves its own trigger, prints the report's path", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-drill-stops-"));
    const stateDir = path.join(dir, "s");
    const guard = path.join(dir, "guard.sock");
    const d = spawnCli(["run", "--sim", "--state-dir", stateDir, ...FAST, "--guard-socket", guard]);
    try {
      const sim = await d.waitForEvent("sim.start", 15_000);
      const account = String(sim.account);
      const apiUrl = String(sim.apiUrl);
      const info = new InfoClient({ apiUrl, timeoutMs: 5_000 });
      await d.waitForEvent("guard.listening", 15_000);
      // the engine's view of the drill: the notice, and what still rested on the exchange when it came
      const heard: GuardNotice[] = [];
      let restingAtNotice: Promise<number> | null = null;
      const e = holdSwitch({
        socket: guard,
        accounts: [account],
        onNotice: (n) => {
          heard.push(n);
          if (n.type === "drill")
            restingAtNotice ??= info.frontendOpenOrders({ user: account }).then((o) => o.length);
        },
      });
      await eventually(() => e.connected, { what: "the engine connected" });
      await d.waitForEvent("heartbeat.ok", 10_000);
      expect(await info.frontendOpenOrders({ user: account })).toHaveLength(6);

      // --yes alone: refused before anything is asked of the exchange, naming what rests by kind
      const refused = await runCliProcess(["drill", "--account", account, "--state-dir", stateDir, "--yes"]);
      expect(refused.code, refused.stderr).toBe(77);
      expect(refused.stderr).toContain("the first perp dex: 6 order(s)");
      expect(refused.stderr).toContain("1 Stop Market");
      expect(refused.stderr).toContain("1 Take Profit Market");
      expect(refused.stderr).toContain("2 reduce-only stop(s) rest");
      expect(refused.stderr).toContain("--cancel-stops");
      expect(refused.stderr).toContain("cancels whatever rests at fire time");
      expect(await info.frontendOpenOrders({ user: account })).toHaveLength(6);
      expect(heard).toEqual([]);

      const r = await runCliProcess(
        ["drill", "--account", account, "--state-dir", stateDir, "--yes", "--cancel-stops"],
        {},
        { timeoutMs: 40_000 },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("PASSED");
      const printed = /Report: (\S+\.json), (\S+\.txt)/.exec(r.stdout);
      expect(printed, r.stdout).not.toBeNull();
      expect(existsSync(printed![1]!)).toBe(true);
      expect(existsSync(printed![2]!)).toBe(true);
      // told first: one `drill` notice for the account, heard while the engine's 6 orders still rested (the fire,
      // which took them, came after it)
      expect(heard.filter((n) => n.type === "drill")).toEqual([
        { type: "drill", account, until: expect.any(Number) },
      ]);
      expect(restingAtNotice).not.toBeNull();
      expect(await restingAtNotice!).toBeGreaterThanOrEqual(6);
      expect(await info.frontendOpenOrders({ user: account })).toHaveLength(0);
      // the check after every fire ran after the drill's: nothing left on the listed dex
      expect(await d.waitForEvent("fire.checked", 10_000)).toMatchObject({ account, survived: 0 });

      // the drill's trigger: proven by its own order, not a guess
      const status = JSON.parse((await runCliProcess(["status", "--state-dir", stateDir, "--json"])).stdout);
      expect(status.accounts[0].triggersToday).toBe(1);
      expect(status.accounts[0].triggers).toEqual([expect.objectContaining({ proof: "orders" })]);
      const deadline = status.accounts[0].triggers[0].deadline as number;
      // the record pairs the 7 cancelled orders (the engine's 6 and the drill's) with the drill's own fire
      const rec = await runCliProcess([
        "status",
        "--state-dir",
        stateDir,
        "--reconcile",
        "--json",
        "--api-url",
        apiUrl,
        "--explorer-url",
        `${apiUrl}/explorer`,
      ]);
      expect(rec.code, rec.stderr).toBe(0);
      const fires = JSON.parse(rec.stdout).accounts[0].record.fires as {
        deadline: number;
        cancelledOrders: number;
        proof: string;
      }[];
      expect(fires).toContainEqual({
        deadline,
        day: expect.any(String),
        cancelledOrders: 7,
        proof: "orders",
      });
      e.close();
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);
  }, 60_000);
});
