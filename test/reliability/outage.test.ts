/**
 * Fault matrix, outages: the daemon in-process on the simulator's ManualClock (interval 15 s, deadline 60 s),
 * the exchange blackholed for a while. Both sides are checked: the simulator's schedule and triggers, and the
 * daemon's ledger, logs and readiness.
 */
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { assertDeadlinesNeverMoveEarlier } from "./harness.js";
import { type InProcess, simArmed, startInProcess } from "./inprocess.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("outage.test.ts");

let t: InProcess | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("reliability: outages", () => {
  test("behavior: outage shorter than deadline − interval leaves the switch armed", async () => {
    t = await startInProcess({ label: "outage-short" });
    const { sim, daemon, user } = t;
    expect(daemon.status()[0]!.state).toBe("armed");
    await t.run(30_000, 5_000); // steady state first

    // Outage of 40 s < deadline (60 s) − interval (15 s): the exchange must never reach its deadline.
    sim.faults.set("exchange", { blackhole: true });
    let lapsedAt: number | null = null;
    await t.run(40_000, 1_000, () => {
      if (!simArmed(t!) && lapsedAt === null) lapsedAt = t!.clock.now();
    });
    expect(t.events("heartbeat.failed").length).toBeGreaterThan(0);
    expect(t.events("heartbeat.failed").every((l) => l.reason === "transport")).toBe(true);
    sim.faults.clear("exchange");
    await t.run(30_000, 1_000, () => {
      if (!simArmed(t!) && lapsedAt === null) lapsedAt = t!.clock.now();
    });

    expect(lapsedAt).toBeNull();
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    expect(sim.state.getOpenOrders(user)).toHaveLength(2);
    const status = daemon.status()[0]!;
    expect(status.state).toBe("armed");
    expect(status.triggersToday).toBe(0);
    expect(t.events("trigger.counted")).toHaveLength(0);
    // After the outage the schedule is a full deadline ahead again, and never moved earlier.
    expect(sim.state.getSchedule(user)! - t.clock.now()).toBeGreaterThan(60_000 - 15_000);
    assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    expect(t.maxInFlight()).toBe(1);
    const ready = await fetch(`${daemon.healthUrl}/readyz`);
    expect(ready.status).toBe(200);
    proven("outage-short");
  });

  test("behavior: outage longer than the deadline counts exactly one trigger", async () => {
    t = await startInProcess({ label: "outage-long", config: { exposureInterval: 30_000 } });
    const { sim, daemon, user } = t;
    await t.run(20_000, 5_000);
    const confirmedBefore = daemon.status()[0]!.armedUntil!;
    expect(sim.state.getSchedule(user)).toBe(confirmedBefore);

    sim.faults.set("exchange", { blackhole: true });
    await t.run(80_000, 1_000); // past the confirmed deadline
    // The exchange side: fired once at the confirmed deadline, orders cancelled.
    const triggers = sim.state.getTriggers(user);
    expect(triggers).toHaveLength(1);
    expect(triggers[0]!.time).toBeGreaterThanOrEqual(confirmedBefore);
    expect(triggers[0]!.cancelledOrders).toBe(2);
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    // The daemon side: exactly one trigger counted, for that deadline; not ready while unprotected.
    const counted = t.events("trigger.counted");
    expect(counted).toHaveLength(1);
    expect(counted[0]!.deadline).toBe(confirmedBefore);
    expect(counted[0]!.triggersToday).toBe(1);
    expect((await fetch(`${daemon.healthUrl}/readyz`)).status).toBe(503);
    // An exposure poll follows the trigger at once (reason "trigger"), not at the next 30 s tick.
    const afterTrigger = t.logs.filter((l) => l.event === "exposure" && l.reason === "trigger");
    expect(afterTrigger.length).toBeGreaterThan(0);
    expect((afterTrigger[0]!.time as number) - confirmedBefore).toBeLessThan(2_000);

    sim.faults.clear("exchange");
    await t.run(20_000, 1_000);
    // Ledger and simulator agree; the switch is armed again; still exactly one trigger.
    const day = utcDay(t.clock.now());
    await daemon.settle();
    expect(daemon.ledger.get(user).triggersToday).toBe(sim.state.triggersOn(user, day));
    expect(sim.state.getTriggers(user)).toHaveLength(1);
    expect(t.events("trigger.counted")).toHaveLength(1);
    expect(daemon.status()[0]!.state).toBe("armed");
    expect(simArmed(t)).toBe(true);
    assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    // The ledger file on disk says the same.
    const file = ledgerOnDisk(path.dirname(daemon.ledger.path));
    expect(file.accounts[user].triggersToday).toBe(1);
    expect(file.accounts[user].history.filter((h: { type: string }) => h.type === "trigger")).toHaveLength(1);
    proven("outage-long");
  });
});
