/**
 * Fault matrix, signals: the real CLI (`node dist/bin/hl-deadman.js run`) against the simulator (real clock, in
 * this process), real signals. Asserts both sides: the simulator's schedule, triggers and open orders, and the
 * daemon's logs, exit code, time to exit and ledger file.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { SimulatorHandle } from "../../src/sim/server.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import {
  assertBuilt,
  assertDeadlinesNeverMoveEarlier,
  type DaemonProcess,
  eventually,
  processSetup,
} from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("signals.test.ts");

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

beforeAll(() => {
  assertBuilt();
});

/** One simulator, one user with two open orders, one key, one state dir: per test, no sharing. */
const setup = (label: string) => processSetup(`hl-deadman reliability: ${label}`, cleanups);

/** Waits for the first confirmed push and checks the simulator holds exactly that deadline. */
async function armed(p: DaemonProcess, sim: SimulatorHandle, user: string) {
  const hb = await p.waitForEvent("heartbeat.ok", 10_000);
  expect(hb.account).toBe(user);
  expect(typeof hb.deadline).toBe("number");
  await eventually(() => sim.state.getSchedule(user) !== null, { what: "the schedule in the simulator" });
  const schedule = sim.state.getSchedule(user)!;
  expect(schedule).toBeGreaterThanOrEqual(hb.deadline as number);
  return hb;
}

async function gracefulStop(signal: NodeJS.Signals, row: string) {
  const { sim, user, start } = await setup(row);
  const p = start();
  await armed(p, sim, user);
  const sentAt = Date.now();
  p.kill(signal);
  const exit = await p.exited;
  const tookMs = exit.at - sentAt;
  expect(exit.code).toBe(0);
  expect(tookMs).toBeLessThan(5_000); // the default shutdown bound
  expect(sim.state.getSchedule(user)).toBeNull();
  const removed = p.lines.find((l) => l.event === "shutdown.removed");
  expect(removed?.account).toBe(user);
  // The last accepted action is the removal (no time), and nothing before it moved the deadline earlier.
  const mine = sim.state.actions.filter((a) => a.user === user && a.accepted);
  const last = mine.at(-1);
  expect(last).toBeDefined();
  expect((last!.action as { type: string; time?: number }).type).toBe("scheduleCancel");
  expect((last!.action as { time?: number }).time).toBeUndefined();
  assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
  // Orders are untouched: a graceful stop removes the switch, it does not cancel.
  expect(sim.state.getOpenOrders(user)).toHaveLength(2);
  expect(sim.state.getTriggers(user)).toHaveLength(0);
  console.log(`reliability: ${signal} → exit ${exit.code} in ${tookMs} ms, schedule removed`);
}

describe.concurrent("reliability: signals", () => {
  test("behavior: SIGKILL while armed → sim fires, restart counts it and re-arms", async () => {
    const { sim, user, state, start } = await setup("sigkill");
    const first = start();
    const hb = await armed(first, sim, user);
    // Kill at once: the ledger wrote the deadline ahead of the request (write-ahead `pendingUntil`), so even a
    // kill right after the first confirmed push leaves it on disk.
    const onDiskAtKill = () => {
      const entry = ledgerOnDisk(state.dir).accounts[user];
      return Math.max(entry.armedUntil ?? 0, entry.pendingUntil ?? 0);
    };
    const lastDeadline = () => {
      const times = assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
      return times.at(-1)!;
    };
    first.kill("SIGKILL");
    const killed = await first.exited;
    expect(onDiskAtKill()).toBeGreaterThanOrEqual(hb.deadline as number);
    expect(killed.signal).toBe("SIGKILL");
    const deadline = lastDeadline();
    expect(deadline).toBeGreaterThanOrEqual(hb.deadline as number);

    // The exchange side: the switch fires at the deadline and cancels the orders (the SIGKILLed daemon could
    // not disarm it, which is the point of a dead man's switch).
    await eventually(() => sim.state.getTriggers(user).length === 1, {
      timeoutMs: deadline - Date.now() + 3_000,
      what: "the simulator to fire the schedule",
    });
    const [trigger] = sim.state.getTriggers(user);
    expect(trigger!.time).toBeGreaterThanOrEqual(deadline);
    expect(trigger!.cancelledOrders).toBe(2);
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(sim.state.getSchedule(user)).toBeNull();

    // The daemon side: a restart finds the passed deadline in its ledger, counts it, and arms again.
    expect(onDiskAtKill()).toBeLessThanOrEqual(deadline);
    const second = start();
    const counted = await second.waitForEvent("trigger.counted", 10_000);
    expect(counted.account).toBe(user);
    expect(counted.triggersToday).toBe(1);
    await armed(second, sim, user);
    expect(sim.state.getSchedule(user)!).toBeGreaterThan(Date.now());
    second.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
    const ledger = ledgerOnDisk(state.dir);
    const entry = ledger.accounts[user];
    expect(entry.triggersToday).toBe(sim.state.getTriggers(user).length);
    assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    proven("sigkill");
  }, 30_000);

  test("behavior: SIGTERM removes the schedule and exits 0", async () => {
    await gracefulStop("SIGTERM", "sigterm");
    proven("sigterm");
  });

  test("behavior: SIGINT removes the schedule and exits 0", async () => {
    await gracefulStop("SIGINT", "sigint");
    proven("sigint");
  });

  test("behavior: a second signal exits at once", async () => {
    const { sim, user, start } = await setup("double-signal");
    // A long shutdown bound, so an exit before it can only come from the second signal.
    const p = start(["--shutdown-timeout", "20s"]);
    await armed(p, sim, user);
    const armedUntil = sim.state.getSchedule(user);
    sim.faults.set("exchange", { blackhole: true }); // the removal can never complete
    p.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    expect(p.child.exitCode).toBeNull(); // still trying to remove
    const secondAt = Date.now();
    p.kill("SIGTERM");
    const exit = await p.exited;
    expect(exit.at - secondAt).toBeLessThan(1_500);
    expect(exit.code).toBe(143); // 128 + SIGTERM
    // Fail safe: the removal never landed, so the exchange still holds the armed schedule and will fire.
    expect(sim.state.getSchedule(user)).toBe(armedUntil);
    sim.faults.clear();
    proven("double-signal");
  });

  test("behavior: --on-shutdown keep leaves the schedule armed", async () => {
    const { sim, user, start } = await setup("shutdown-keep");
    const p = start(["--on-shutdown", "keep"]);
    await armed(p, sim, user);
    p.kill("SIGTERM");
    const exit = await p.exited;
    expect(exit.code).toBe(0);
    const times = assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    expect(sim.state.getSchedule(user)).toBe(times.at(-1));
    expect(sim.state.getSchedule(user)!).toBeGreaterThan(Date.now());
    expect(p.lines.some((l) => l.event === "shutdown.kept" && l.account === user)).toBe(true);
    expect(p.lines.some((l) => l.event === "shutdown.removed")).toBe(false);
    proven("shutdown-keep");
  });
});
