/**
 * Fault matrix, issue 25: a wrong `Date` header in front of the exchange (a proxy, a CDN, a third-party host), with
 * the real CLI (`node dist/bin/hl-deadman.js run`) against the simulator (in this process) and its Date fault
 * (docs/simulator.md "Faults"). Each test is one case reproduced on main (5c9590d) and shows it no longer happens:
 * (a) 120 s behind on every answer, (b) 20 h ahead for 3 s across 00:00 UTC (libfaketime puts the daemon's clock
 * and the simulator's a few seconds before midnight), (c) 36 h ahead for 4 s, (d) the year 275760.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { offsetClock, systemClock, utcDay } from "../../src/core/clock.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import {
  assertBuilt,
  assertDeadlinesNeverMoveEarlier,
  eventually,
  libfaketime,
  processSetup,
  sleep,
} from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("date-process.test.ts");

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
beforeAll(() => assertBuilt());

/** One simulator (its clock `offsetMs` off the host's), one user with an order, one daemon with health on. */
async function setup(label: string, offsetMs = 0) {
  const clock = offsetMs === 0 ? systemClock : offsetClock(systemClock, offsetMs);
  const {
    user,
    sim,
    state,
    start: spawn,
    readyz,
  } = await processSetup(`hl-deadman reliability date: ${label}`, cleanups, {
    clock,
    orders: "one",
    health: true,
  });
  const start = (env: Record<string, string> = {}) => spawn([], env);
  const ledger = () =>
    ledgerOnDisk(state.dir) as {
      updatedAt: number;
      lastNonce: number | null;
      accounts: Record<string, { day: string; triggersToday: number }>;
    };
  return { user, sim, clock, start, ledger, readyz };
}

/** Refusals that would say the time used is wrong (a loaded machine may time out a push now and then: not these). */
const timeRefusals = (lines: { event?: unknown; reason?: unknown }[]) =>
  lines.filter(
    (l) => l.event === "heartbeat.failed" && ["expired", "too_early", "nonce"].includes(String(l.reason)),
  );

describe.concurrent("reliability: a wrong Date in front of the exchange (process)", {
  timeout: 90_000,
}, () => {
  test("behavior: Date 120 s behind on every answer: pushes accepted, nothing fires, ready only while armed", async () => {
    const { user, sim, start, readyz } = await setup("date-behind");
    sim.faults.set("exchange", { dateOffsetMs: -120_000 });
    const p = start();
    await p.waitForEvent("heartbeat.ok", 10_000);
    const refused = await p.waitForEvent("clock.date_refused", 10_000);
    expect(refused.reason).toBe("outside_window");
    // On main every push after the first was refused "Action already expired" and the simulator fired.
    await eventually(() => p.lines.filter((l) => l.event === "heartbeat.ok").length >= 6, {
      what: "six accepted pushes",
      timeoutMs: 15_000,
    });
    // Since issue 40 a refused Date is still a candidate while nothing is verified, and the pushes are planned on
    // the earliest candidate: at most one push is planned on this Date and refused too early, which rules it out
    // (docs/daemon.md, "What the switch believes about time"). No other time refusal, and that refused push's
    // cancel time, past on the later clock before its answer, is no lapse: the daemon counts nothing.
    const refusals = timeRefusals(p.lines);
    expect(refusals.filter((l) => l.reason !== "too_early")).toHaveLength(0);
    expect(refusals.length).toBeLessThanOrEqual(1);
    expect(p.lines.filter((l) => l.event === "trigger.counted")).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    // Every accepted push is a full deadline (10 s) ahead of the exchange's real clock, within the transit.
    const accepted = sim.state.actions.filter((a) => a.accepted && a.user === user);
    for (const a of accepted.slice(1)) {
      const lead = (a.action as { time: number }).time - a.receivedAt;
      expect(lead).toBeGreaterThan(8_000);
      expect(lead).toBeLessThanOrEqual(10_500);
    }
    assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    // The exchange holds a schedule well ahead, but nothing verified its time: the only Date is 120 s off and there
    // is no block witness here, and the local clock is never a witness (issue 40). /readyz says so: 503, the reason
    // named (docs/daemon.md, "Readiness"); ready again only once two witnesses agree.
    const r = await readyz();
    expect(r.status).toBe(503);
    expect(JSON.stringify(r.body)).toMatch(/not verified yet/);
    expect(sim.state.getSchedule(user)! - Date.now()).toBeGreaterThan(5_000);
    p.kill("SIGTERM");
    expect((await p.exitWithin(10_000)).code).toBe(0);
    proven("date-behind");
  });

  test("behavior: Date 20 h ahead for 3 s across 00:00 UTC: no early roll-over, the next day's fire is counted", async () => {
    const LIBFAKETIME = libfaketime();
    // The simulator's clock and the daemon's (libfaketime, whole seconds) both 15 s before 00:00 UTC: room for the
    // daemon's start and first push (a few seconds on a loaded machine) before the window; every second more is
    // only waited out.
    const nowS = Math.floor(Date.now() / 1000);
    const midnightS = Math.ceil(nowS / 86_400) * 86_400 + 86_400;
    const offsetS = midnightS - 15 - nowS;
    const { user, sim, clock, start, ledger } = await setup("date-midnight", offsetS * 1000);
    const p = start({
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME: `+${offsetS}`,
      FAKETIME_DONT_FAKE_MONOTONIC: "1",
      FAKETIME_NO_CACHE: "1",
    });
    await p.waitForEvent("heartbeat.ok", 10_000);
    const day1 = utcDay(clock.now());
    // The window: 20 h ahead for 3 s, starting ~1.5 s before 00:00 UTC.
    await sleep(midnightS * 1000 - 1_500 - clock.now());
    sim.faults.set("exchange", { dateOffsetMs: 72_000_000, dateForMs: 3_000 });
    await sleep(4_000);
    const day2 = utcDay(clock.now());
    expect(day2).not.toBe(day1);
    // Every Date of the window was refused; nothing was pushed 20 h ahead.
    expect(p.lines.filter((l) => l.event === "clock.date_refused").length).toBeGreaterThanOrEqual(1);
    for (const l of p.lines.filter((x) => x.event === "heartbeat.ok"))
      expect(Number(l.deadline) - Date.now() - offsetS * 1000).toBeLessThan(60_000);
    // Now the exchange stops answering for longer than the deadline: it fires on the new day.
    sim.faults.set("exchange", { blackhole: true });
    await eventually(() => sim.state.getTriggers(user).length === 1, {
      what: "the simulator to fire on the new day",
      timeoutMs: 20_000,
    });
    expect(sim.state.triggersOn(user, day2)).toBe(1);
    sim.faults.clear("exchange");
    const counted = await p.waitForEvent("trigger.counted", 15_000);
    expect(counted.triggersToday).toBe(1);
    await p.waitForEvent("heartbeat.recovered", 15_000);
    // On main the fire was logged trigger.skipped ("earlier UTC day") and the count stayed 0.
    expect(p.lines.filter((l) => l.event === "trigger.skipped")).toHaveLength(0);
    // (the switch and the ledger store each log the one roll-over: from day 1 to day 2, never to a later day)
    const rolls = p.lines.filter((l) => l.event === "ledger.rollover");
    for (const r of rolls) expect([r.from, r.to]).toEqual([day1, day2]);
    p.kill("SIGTERM");
    expect((await p.exitWithin(10_000)).code).toBe(0);
    expect(ledger().accounts[user]).toMatchObject({ day: day2, triggersToday: 1 });
    proven("date-midnight");
  });

  test("behavior: Date 36 h ahead for 4 s: no future nonce or updatedAt persisted, the removal and a restart work", async () => {
    const { user, sim, start, ledger } = await setup("date-future");
    const p = start();
    await p.waitForEvent("heartbeat.ok", 10_000);
    sim.faults.set("exchange", { dateOffsetMs: 129_600_000, dateForMs: 4_000 });
    await sleep(5_000);
    const oks = p.lines.filter((l) => l.event === "heartbeat.ok").length;
    await eventually(() => p.lines.filter((l) => l.event === "heartbeat.ok").length >= oks + 3, {
      what: "three more accepted pushes after the window",
      timeoutMs: 10_000,
    });
    expect(p.lines.filter((l) => l.event === "clock.date_refused").length).toBeGreaterThanOrEqual(1);
    expect(timeRefusals(p.lines)).toHaveLength(0);
    // On main the nonces and updatedAt of the window (a day and a half ahead) were persisted: every push and
    // the removal were refused "nonce too high", across restarts.
    const file = ledger();
    expect(file.updatedAt).toBeLessThan(Date.now() + 60_000);
    expect(file.lastNonce ?? 0).toBeLessThan(Date.now() + 60_000);
    p.kill("SIGTERM");
    const exit = await p.exitWithin(10_000);
    expect(exit.code).toBe(0);
    expect(p.lines.filter((l) => l.event === "shutdown.removed")).toHaveLength(1);
    expect(sim.state.getSchedule(user)).toBeNull();
    const again = start();
    await again.waitForEvent("heartbeat.ok", 10_000);
    expect(timeRefusals(again.lines)).toHaveLength(0);
    again.kill("SIGTERM");
    expect((await again.exitWithin(10_000)).code).toBe(0);
    proven("date-future");
  });

  test("behavior: Date in the year 275760: refused and logged, no crash, the pushes go on", async () => {
    const { user, sim, start } = await setup("date-absurd");
    sim.faults.set("exchange", { dateValue: "Sat, 13 Sep 275760 00:00:00 GMT" });
    const p = start();
    await p.waitForEvent("heartbeat.ok", 10_000);
    // not an IMF-fixdate (six digits of year): refused as not a date
    const refused = await p.waitForEvent("clock.date_refused", 10_000);
    expect(refused.reason).toBe("not_a_date");
    // On main: RangeError: Invalid time value in utcDay, an unhandled rejection, exit 1.
    await eventually(() => p.lines.filter((l) => l.event === "heartbeat.ok").length >= 5, {
      what: "five accepted pushes",
      timeoutMs: 10_000,
    });
    // a well-formed date outside any plausible year, then garbage
    sim.faults.set("exchange", { dateValue: "Mon, 01 Jan 1900 00:00:00 GMT" });
    await p.waitForEvent("clock.date_refused", 10_000, (l) => l.reason === "out_of_range");
    sim.faults.set("exchange", { dateValue: "not a date" });
    await sleep(1_500);
    const oks = p.lines.filter((l) => l.event === "heartbeat.ok").length;
    await eventually(() => p.lines.filter((l) => l.event === "heartbeat.ok").length >= oks + 2, {
      what: "two more accepted pushes",
      timeoutMs: 10_000,
    });
    expect(p.lines.filter((l) => l.event === "daemon.crash")).toHaveLength(0);
    expect(p.lines.filter((l) => l.event === "switch.event_refused")).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    p.kill("SIGTERM");
    expect((await p.exitWithin(10_000)).code).toBe(0);
    proven("date-absurd");
  });
});
