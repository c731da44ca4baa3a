/**
 * Issue 29 end to end, through the real CLI and real sockets: the escalation closes the demo account's positions
 * reduce-only after its engine's connection drops, latches HALTED (readiness, metrics, audit trail), and only
 * `hl-deadman reset` releases it; `hl-deadman drill` proves the switch against the simulator and writes its report.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { connectEngine as engine } from "../helpers/engine.js";
import { assertBuilt, runCliProcess, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());

const FAST = ["--interval", "1s", "--deadline", "15s", "--request-timeout", "1s"];

describe.concurrent("escalation, HALTED and reset (process)", () => {
  test("behavior: engine gone → orders cancelled, positions closed reduce-only, HALTED until reset", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-escalate-"));
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
      "--guard-socket",
      guard,
      "--on-engine-down",
      "cancel",
      "--escalate-account",
      "0xf06981fcd61e2cfe5f209a4267a60c7316cf2705",
      "--escalate-after",
      "1s",
      "--health",
      "127.0.0.1:0",
    ]);
    try {
      const sim = await d.waitForEvent("sim.start", 15_000);
      const account = String(sim.account);
      const info = new InfoClient({ apiUrl: String(sim.apiUrl), timeoutMs: 5_000 });
      const health = String((await d.waitForEvent("health.listening", 15_000)).url);
      await d.waitForEvent("guard.listening", 15_000);
      const e = await engine(guard, account);
      await d.waitForEvent("heartbeat.ok", 10_000);
      expect((await info.positions({ user: account })).positions.length).toBe(3);
      e.destroy();
      const halted = await d.waitForEvent("escalation.halted", 10_000);
      expect(String(halted.reason)).toContain("the engine has been down");
      const closed = await d.waitForEvent("escalation.closed", 15_000);
      expect(closed.orders).toBeGreaterThanOrEqual(3);
      // flat on the exchange: every position closed by reduce-only IOC orders
      expect((await info.positions({ user: account })).positions).toEqual([]);
      const orders = d.lines.find((l) => l.event === "escalation.close_orders")!.orders as {
        status: string;
      }[];
      expect(orders.every((o) => o.status === "filled")).toBe(true);
      // HALTED: the pushes go on (the backstop), readiness and metrics say so
      const before = d.lines.filter((l) => l.event === "heartbeat.ok").length;
      await d.waitForEvent(
        "heartbeat.ok",
        5_000,
        () => d.lines.filter((x) => x.event === "heartbeat.ok").length > before,
      );
      const ready = await fetch(`${health}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.text()).toContain(`account ${account}: HALTED since`);
      const page = (await (await fetch(`${health}/status.json`)).json()) as {
        accounts: { halted: unknown }[];
      };
      expect(page.accounts[0]!.halted).toMatchObject({
        reason: expect.stringContaining("engine has been down"),
      });
      expect(await (await fetch(`${health}/metrics`)).text()).toMatch(
        new RegExp(`hl_deadman_halted\\{account="${account}"\\} 1`),
      );

      // reset: refused without --yes off a terminal; released with it, through the control channel
      const noYes = await runCliProcess(["reset", "--account", account, "--state-dir", stateDir]);
      expect(noYes.code).toBe(2);
      expect(noYes.stderr).toContain("Pass --yes");
      await engine(guard, account); // the engine back, or the time rule would latch again
      const reset = await runCliProcess([
        "reset",
        "--account",
        account,
        "--state-dir",
        stateDir,
        "--yes",
        "--json",
      ]);
      expect(reset.code, reset.stderr).toBe(0);
      expect(JSON.parse(reset.stdout)).toMatchObject({ ok: true, account, released: true });
      await d.waitForEvent("escalation.reset", 5_000);
      const again = await runCliProcess(["reset", "--account", account, "--state-dir", stateDir, "--yes"]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("the account is not HALTED");
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);
    // the audit trail holds the story and verifies
    const audit = readFileSync(path.join(stateDir, "audit", "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).type.replace("xyz.hl-deadman.", ""));
    for (const t of [
      "engine.down",
      "cancel.done",
      "escalation.halted",
      "escalation.close-orders",
      "escalation.closed",
      "control.command",
      "escalation.reset",
    ])
      expect(audit, t).toContain(t);
    expect((await runCliProcess(["audit", "verify", "--state-dir", stateDir])).code).toBe(0);
    // no daemon: reset says so (69), naming the socket
    const gone = await runCliProcess([
      "reset",
      "--account",
      "0xf06981fcd61e2cfe5f209a4267a60c7316cf2705",
      "--state-dir",
      stateDir,
      "--yes",
    ]);
    expect(gone.code).toBe(69);
    expect(gone.stderr).toContain(`No running daemon answers on ${path.join(stateDir, "control.sock")}`);
  }, 60_000);
});

describe.concurrent("drill (process)", () => {
  test("behavior: the drill against the simulator passes, spends one trigger, writes its report; pushes resume", async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "hl-drill-"));
    const d = spawnCli(["run", "--sim", "--state-dir", stateDir, ...FAST]);
    try {
      const account = String((await d.waitForEvent("sim.start", 15_000)).account);
      await d.waitForEvent("heartbeat.ok", 10_000);
      const noYes = await runCliProcess([
        "drill",
        "--account",
        account,
        "--state-dir",
        stateDir,
        "--cancel-stops",
      ]);
      expect(noYes.code).toBe(2);
      expect(noYes.stderr).toContain("spends 1 of the 10 trigger(s) left today");
      const r = await runCliProcess(
        ["drill", "--account", account, "--state-dir", stateDir, "--yes", "--cancel-stops", "--json"],
        {},
        { timeoutMs: 40_000 },
      );
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report).toMatchObject({
        passed: true,
        status: "scheduledCancel",
        account,
        triggersLeftBefore: 10,
      });
      expect(report.record.seen).toBe(true);
      for (const f of report.reportFiles) expect(existsSync(f)).toBe(true);
      expect(readFileSync(report.reportFiles[1], "utf8")).toContain("PASSED");
      const status = await runCliProcess(["status", "--state-dir", stateDir, "--json"]);
      expect(JSON.parse(status.stdout).accounts[0]).toMatchObject({ triggersToday: 1 });
      const after = d.lines.filter((l) => l.event === "heartbeat.ok").length;
      await d.waitForEvent(
        "heartbeat.ok",
        5_000,
        () => d.lines.filter((x) => x.event === "heartbeat.ok").length > after,
      );
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);
  }, 60_000);
});
