/**
 * Fault matrix, the exchange's record and the removal gate with the real CLI (`node dist/bin/hl-deadman.js run`)
 * against the simulator (real clock, in this process), real signals (docs/exchange-record.md). Both sides are
 * checked: the simulator's schedule and triggers, and the daemon's logs, exit code and ledger file.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { assertBuilt, eventually, processSetup } from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("record-process.test.ts");

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

beforeAll(() => {
  assertBuilt();
});

const setup = (label: string, volumeUsd?: number) =>
  processSetup(`hl-deadman reliability record: ${label}`, cleanups, {
    ...(volumeUsd !== undefined ? { volumeUsd } : {}),
    explorer: true,
  });

describe.concurrent("reliability: the exchange's record (process)", () => {
  test("behavior: SIGKILL, a fire and a deleted ledger: the restart recovers the count from the record", async () => {
    const { sim, user, state, start } = await setup("record-recover");
    const first = start();
    await first.waitForEvent("heartbeat.ok", 10_000);
    first.kill("SIGKILL");
    const killed = await first.exited;
    expect(killed.signal).toBe("SIGKILL");
    const schedule = sim.state.getSchedule(user);
    expect(schedule).not.toBeNull();

    // The exchange fires the schedule the killed daemon could not renew.
    await eventually(() => sim.state.getTriggers(user).length === 1, {
      timeoutMs: schedule! - Date.now() + 3_000,
      what: "the simulator to fire the schedule",
    });
    expect(sim.state.getTriggers(user)[0]!.cancelledOrders).toBe(2);

    // The ledger is lost: without the record the restart would start from 0 triggers.
    rmSync(path.join(state.dir, "ledger"), { recursive: true });
    const second = start();
    const reconciled = await second.waitForEvent("ledger.reconciled", 10_000);
    expect(reconciled.account).toBe(user);
    expect(reconciled.changes).toContainEqual(
      expect.objectContaining({ field: "triggersToday", from: 0, to: 1 }),
    );
    await second.waitForEvent("heartbeat.ok", 10_000);
    await eventually(
      () => {
        try {
          return ledgerOnDisk(state.dir).accounts[user]?.triggersToday === 1;
        } catch {
          return false;
        }
      },
      { what: "the ledger on disk to count the fire" },
    );
    // Counted once: the fire the record proved is not counted again as a lapse.
    expect(second.lines.filter((l) => l.event === "trigger.counted")).toHaveLength(0);
    second.kill("SIGTERM");
    const exit = await second.exited;
    expect(exit.code).toBe(0);
    expect(ledgerOnDisk(state.dir).accounts[user].triggersToday).toBe(1);
    expect(sim.state.getTriggers(user)).toHaveLength(1);
    proven("record-recover");
  });

  test("behavior: SIGTERM under the volume gate logs shutdown.nothing_armed and exits 0", async () => {
    const { sim, user, start } = await setup("removal-gate", 373.47);
    const p = start();
    const np = await p.waitForEvent("switch.not_protected", 10_000);
    expect(np.reason).toBe("volume_gate");
    p.kill("SIGTERM");
    const exit = await p.exited;
    expect(exit.code).toBe(0);
    const nothing = p.lines.filter((l) => l.event === "shutdown.nothing_armed");
    expect(nothing).toHaveLength(1);
    expect(nothing[0]!.account).toBe(user);
    expect(p.lines.filter((l) => l.event === "shutdown.remove_failed")).toHaveLength(0);
    expect(sim.state.getSchedule(user)).toBeNull();
    proven("removal-gate");
  });
});
