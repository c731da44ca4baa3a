/**
 * Fault matrix, the exchange's record, the agent watch and the `cancel` engine-down policy (docs/exchange-record.md):
 * the real daemon in-process on the simulator's ManualClock over real HTTP. Both sides are checked: the
 * simulator's orders, schedule, triggers and agents, and the daemon's status, readiness, logs and ledger.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { id, Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";
import { type InProcess, startInProcess, walletFor } from "./inprocess.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("record.test.ts");

let t: InProcess | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("reliability: the exchange's record, the agent watch, the cancel mode", () => {
  test("behavior: an agent removed mid-run is NOT PROTECTED within one check, and /readyz says so", async () => {
    // The signer is an API wallet of the master (the recommended set-up); the master is what is protected.
    const master = new Wallet(id("hl-deadman reliability: agent-removed master")).address.toLowerCase();
    const agent = walletFor("agent-removed").address.toLowerCase();
    t = await startInProcess({
      label: "agent-removed",
      register: false,
      sim: {
        users: [
          {
            address: master,
            agents: [agent],
            orders: [{ coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" }],
          },
        ],
      },
      config: { accounts: [master], agentCheckInterval: 60_000 },
    });
    const { sim, daemon } = t;
    await t.run(30_000, 5_000);
    expect(daemon.status()[0]!.state).toBe("armed");
    expect((await fetch(`${daemon.healthUrl}/readyz`)).status).toBe(200);
    expect(t.events("agent.ok").length).toBeGreaterThan(0);

    // The operator deregisters the agent (or approves another under the same name).
    const removed = await fetch(`${sim.apiUrl}/admin/agents/remove`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent }),
    });
    expect(removed.status).toBe(200);
    const pushesBefore = sim.state.actions.filter((a) => a.user === master).length;
    await t.run(60_000, 5_000); // one agentCheckInterval

    const status = daemon.status()[0]!;
    expect(status.state).toBe("not_protected");
    const missing = t.events("agent.missing");
    expect(missing).toHaveLength(1);
    const np = t.events("switch.not_protected").filter((l) => l.reason === "agent_missing");
    expect(np).toHaveLength(1);
    expect(String(np[0]!.message)).toContain("same name");
    const ready = await fetch(`${daemon.healthUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain("agent");
    // No pushes after the check said missing (a push signed by a removed agent is refused anyway).
    await t.run(30_000, 5_000);
    const missingAt = missing[0]!.time as number;
    const after = sim.state.actions.filter(
      (a) => a.user === master && a.accepted && a.receivedAt > missingAt + 1_000,
    );
    expect(after).toHaveLength(0);
    expect(sim.state.actions.filter((a) => a.user === master).length).toBeGreaterThanOrEqual(pushesBefore);
    proven("agent-removed");
  });

  async function cancelMode(label: string, cancelStops: boolean) {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-guard-"));
    dirs.push(dir);
    const guardFile = path.join(dir, "alive");
    writeFileSync(guardFile, "");
    const user = walletFor(label).address.toLowerCase();
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    utimesSync(guardFile, start / 1000, start / 1000);
    const run = await startInProcess({
      label,
      startAt: start,
      sim: {
        users: [
          {
            address: user,
            orders: [
              { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" },
              { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" },
              // a reduce-only stop-loss protecting a position: kept unless --cancel-stops
              {
                coin: "BTC",
                side: "A",
                limitPx: "40000",
                sz: "0.01",
                reduceOnly: true,
                orderType: "Stop Market",
                triggerPx: "40000",
              },
            ],
          },
        ],
      },
      config: {
        guardFile,
        guardMaxAge: 10_000,
        guardInterval: 2_000,
        onEngineDown: "cancel",
        cancelStops,
      },
    });
    t = run;
    // The engine touches the file for 20 s, then dies (the file goes stale).
    for (let i = 0; i < 4; i++) {
      await run.run(5_000, 1_000);
      const now = run.clock.now() / 1000;
      utimesSync(guardFile, now, now);
    }
    expect(run.daemon.status()[0]!.state).toBe("armed");
    expect(run.sim.state.getOpenOrders(user)).toHaveLength(3);
    // The engine stays dead for more than two deadlines (60 s): the cancel runs once, and the schedule that is
    // renewed after it never fires.
    await run.run(150_000, 1_000);
    return { run, user };
  }

  test("behavior: --on-engine-down cancel cancels open orders, keeps reduce-only stops, spends no trigger", async () => {
    const { run, user } = await cancelMode("cancel-mode", false);
    const left = run.sim.state.getOpenOrders(user);
    expect(left).toHaveLength(1);
    expect(left[0]!.reduceOnly).toBe(true);
    expect(left[0]!.isTrigger).toBe(true);
    // No trigger: the simulator's schedule did not fire, and the ledger counted nothing.
    expect(run.sim.state.getTriggers(user)).toHaveLength(0);
    expect(run.daemon.status()[0]!.triggersToday).toBe(0);
    // The scheduled cancel is still armed a deadline ahead (the backstop should the daemon die too).
    expect(run.sim.state.getSchedule(user)! - run.clock.now()).toBeGreaterThan(60_000 - 15_000);
    expect(run.events("engine.down")).toHaveLength(1);
    const report = run.events("orders.cancelled");
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ confirmed: true, cancelled: 2, kept: 1 });
    const metrics = await run.daemon.metrics.registry.metrics();
    expect(metrics).toMatch(/hl_deadman_orders_cancelled_total\{account="[^"]+"\} 2/);
    expect(metrics).toMatch(/hl_deadman_orders_kept_total\{account="[^"]+"\} 1/);
    proven("cancel-mode");
  });

  test("behavior: --cancel-stops also cancels the reduce-only stops, still without a trigger", async () => {
    const { run, user } = await cancelMode("cancel-stops", true);
    expect(run.sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(run.sim.state.getTriggers(user)).toHaveLength(0);
    expect(run.events("orders.cancelled")[0]).toMatchObject({ confirmed: true, cancelled: 3, kept: 0 });
    proven("cancel-stops");
  });

  test("behavior: the record host down is said once and changes nothing else", async () => {
    const label = "record-down";
    t = await startInProcess({
      label,
      record: true,
      sim: {
        users: [
          {
            address: walletFor(label).address.toLowerCase(),
            orders: [
              { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" },
              { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" },
            ],
          },
        ],
      },
      beforeStart: (s) => s.faults.set("explorer", { errorRate: 1, errorStatus: 500 }),
    });
    const { sim, daemon, user } = t;
    await t.run(30_000, 5_000);
    expect(daemon.status()[0]!.state).toBe("armed");
    // A lapse (exchange blackholed past the deadline) is counted as before and reconciled again: still down.
    sim.faults.set("exchange", { blackhole: true });
    await t.run(70_000, 1_000);
    sim.faults.clear("exchange");
    await t.run(30_000, 5_000);
    expect(sim.state.getTriggers(user)).toHaveLength(1);
    expect(daemon.status()[0]!.triggersToday).toBe(1);
    expect(daemon.ledger.get(user).triggersToday).toBe(1);
    expect(daemon.status()[0]!.state).toBe("armed");
    expect(sim.state.getSchedule(user)! - t.clock.now()).toBeGreaterThan(60_000 - 15_000);
    const unavailable = t.events("record.unavailable");
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0]!.reason).toBe("error");
    expect(t.events("ledger.reconciled")).toHaveLength(0);
    expect(utcDay(t.clock.now())).toBe(daemon.ledger.get(user).day);
    proven("record-down");
  });
});
