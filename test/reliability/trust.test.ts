/**
 * Only the exchange can disarm the switch (issue 25), with the real CLI against the simulator (real clock, in this
 * process) and real signals: a guessed trigger, a record that lies or lags, and the cancel mode. Both sides are
 * checked: the simulator's schedule, triggers and orders, and the daemon's logs, ledger file and `status --json`.
 */
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { assertBuilt, eventually, processSetup, runCli } from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("trust.test.ts");

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

beforeAll(() => {
  assertBuilt();
});

const setup = (label: string, explorer = true) =>
  processSetup(`hl-deadman reliability trust: ${label}`, cleanups, { explorer });

const readLedger = (dir: string, user: string) => {
  try {
    return ledgerOnDisk(dir).accounts[user];
  } catch {
    return undefined;
  }
};

describe.concurrent("reliability: only the exchange can disarm the switch (process)", () => {
  test("behavior: pushes applied but unanswered past the deadline are guesses: no exhaustion, pushes go on, the record withdraws them", async () => {
    const { sim, user, state, start } = await setup("guess-withdrawn");
    // Nine such stretches earlier today, as the daemon writes them (guesses the exchange never fired).
    const now = Date.now();
    const guesses = Array.from({ length: 9 }, (_, i) => ({
      deadline: now - 600_000 + i * 30_000,
      proof: "guess",
      at: now - 600_000 + i * 30_000,
    }));
    writeFileSync(
      path.join(state.dir, "ledger.json"),
      JSON.stringify({
        version: 1,
        updatedAt: now - 60_000,
        assumeLimitOn: null,
        lastNonce: null,
        accounts: {
          [user]: {
            account: user,
            day: utcDay(now),
            triggersToday: 9,
            limit: 10,
            assumed: false,
            armedUntil: null,
            lastPushAt: null,
            pendingUntil: null,
            pendingLatest: null,
            lastCountedDeadline: null,
            history: [],
            triggers: guesses,
          },
        },
      }),
    );
    // The record cannot be read at first: nothing can withdraw a guess.
    sim.faults.set("explorer", { errorRate: 1 });
    const p = start();
    await p.waitForEvent("heartbeat.ok", 10_000);
    const count = (event: string) => p.lines.filter((l) => l.event === event).length;
    /** One stretch: the exchange applies every push and drops the answer, longer than the deadline. */
    const stretch = async (n: number) => {
      sim.faults.set("exchange", { dropAnswer: true });
      const before = count("trigger.counted");
      await p.waitFor(() => count("trigger.counted") > before, 20_000, `guess ${n}`);
      sim.faults.clear("exchange");
      // the pushes go on: confirmed again, whatever the count
      const oks = count("heartbeat.ok");
      await p.waitFor(() => count("heartbeat.ok") >= oks + 2, 10_000, `pushes confirmed after stretch ${n}`);
    };
    await stretch(10);
    await stretch(11);
    // Eleven guesses: the count is past the limit, suspected, never exhausted; the exchange fired nothing.
    expect(readLedger(state.dir, user)?.triggersToday).toBe(11);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    expect(p.lines.filter((l) => l.event === "trigger.counted").every((l) => l.proof === "guess")).toBe(true);
    expect(count("trigger.limit_suspected")).toBe(1);
    expect(count("trigger.exhausted")).toBe(0);
    const suspected = JSON.parse((await runCli(["status", "--state-dir", state.dir, "--json"])).stdout)
      .accounts[0];
    expect(suspected).toMatchObject({ triggersToday: 11, exhausted: false, limitSuspected: true });
    // The record comes back; the next guess has it read: it lists every push of this run accepted in time, and
    // this run's guesses are withdrawn (the nine from before this run's record are not its to settle and stay).
    sim.faults.clear("explorer");
    await stretch(12);
    await eventually(() => readLedger(state.dir, user)?.triggersToday === 9, {
      timeoutMs: 10_000,
      what: "the ledger to withdraw this run's guesses",
    });
    const reconciled = p.lines.filter((l) => l.event === "ledger.reconciled");
    expect(JSON.stringify(reconciled)).toContain("replaced in time");
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    expect(count("trigger.exhausted")).toBe(0);
    const st = await runCli(["status", "--state-dir", state.dir, "--json"]);
    expect(st.code).toBe(0);
    const shown = JSON.parse(st.stdout).accounts[0];
    expect(shown).toMatchObject({ triggersToday: 9, exhausted: false, limitRefused: false });
    expect(shown.proofs).toMatchObject({ guess: 9, orders: 0, record: 0 });
    expect(sim.state.getSchedule(user)).toBeGreaterThan(Date.now());
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("guess-withdrawn");
  }, 90_000);

  test("behavior: a record of ten accepted lapsed schedules without orders is not exhaustion: pushes go on", async () => {
    const { sim, user, state, start } = await setup("record-lies");
    // Eleven: the newest one's lapse is not the record's to prove yet (its newest entry is that schedule's push),
    // so ten count, the daily limit.
    sim.faults.set("explorer", { recordFakeLapses: 11 });
    const p = start();
    const reconciled = await p.waitForEvent("ledger.reconciled", 10_000);
    expect(reconciled.account).toBe(user);
    await p.waitForEvent("trigger.limit_suspected", 10_000);
    const oks = p.lines.filter((l) => l.event === "heartbeat.ok").length;
    await p.waitFor(
      () => p.lines.filter((l) => l.event === "heartbeat.ok").length >= oks + 3,
      10_000,
      "three more confirmed pushes",
    );
    expect(p.lines.filter((l) => l.event === "trigger.exhausted")).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    const st = await runCli(["status", "--state-dir", state.dir, "--json"]);
    const shown = JSON.parse(st.stdout).accounts[0];
    expect(shown.exhausted).toBe(false);
    expect(shown.limitSuspected).toBe(true);
    expect(shown.proofs.record).toBe(10);
    expect(shown.triggersToday).toBe(10);
    expect(shown.triggers.every((t: { proof: string }) => t.proof === "record")).toBe(true);
    const text = await runCli(["status", "--state-dir", state.dir]);
    expect(text.stdout).toContain("LIMIT SUSPECTED");
    expect(text.stdout).toContain("a lapse the exchange's fresh record proves");
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("record-lies");
  });

  test("behavior: a record lagging 20 s (twice the deadline) never counts the schedule removed at a graceful stop as a fire", async () => {
    const { sim, user, state, start } = await setup("record-lags");
    // Twice the 10 s deadline (FAST_CADENCE): the record's last listed push then seems to have lapsed at the
    // restart. A longer lag proves the same and only makes the test wait longer for the record to list this run.
    const LAG_MS = 20_000;
    sim.faults.set("explorer", { recordLagMs: LAG_MS });
    const first = start();
    await first.waitForEvent("heartbeat.ok", 10_000);
    // long enough that the restart's record (LAG_MS behind) ends in the middle of this run, whatever the start-up
    // time: its last listed push seems to have lapsed, and the removal is not listed
    await new Promise((r) => setTimeout(r, 15_000));
    first.kill("SIGTERM");
    await first.waitForEvent("shutdown.removed", 10_000);
    expect((await first.exited).code).toBe(0);
    expect(sim.state.getSchedule(user)).toBeNull();
    // The record lists the first run's pushes once they are LAG_MS old, not yet the later ones nor the removal:
    // its last listed push seems to have lapsed (it is not fresh for that deadline: not counted).
    await eventually(() => sim.state.explorerTxs(user).some((tx) => tx.time <= Date.now() - LAG_MS - 1_000), {
      timeoutMs: LAG_MS + 10_000,
      everyMs: 500,
      what: "the record to list the first run's pushes",
    });
    const second = start();
    await second.waitForEvent("heartbeat.ok", 10_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(second.lines.filter((l) => l.event === "trigger.counted")).toHaveLength(0);
    expect(readLedger(state.dir, user)?.triggersToday).toBe(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    second.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
    proven("record-lags");
  }, 120_000);

  test("behavior: --on-engine-down cancel cancels again each interval: an order placed after the first cancel is cancelled", async () => {
    const { sim, user, start } = await setup("cancel-repeat", false);
    const dir = mkdtempSync(path.join(tmpdir(), "hl-guard-"));
    const guard = path.join(dir, "alive");
    writeFileSync(guard, "");
    const old = (Date.now() - 600_000) / 1000;
    utimesSync(guard, old, old);
    const p = start([
      "--guard-file",
      guard,
      "--guard-max-age",
      "2s",
      "--guard-interval",
      "500ms",
      "--on-engine-down",
      "cancel",
    ]);
    const first = await p.waitForEvent("engine.orders_cancelled", 10_000);
    expect(first).toMatchObject({ pass: 1, cancelled: 2 });
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    // The engine is still down; an order appears (placed by hand, or by a part of the engine still alive).
    sim.state.addOrder(user, { coin: "BTC", side: "B", limitPx: "49000", sz: "0.01" });
    expect(sim.state.getOpenOrders(user)).toHaveLength(1);
    const again = await p.waitFor(
      (l) => l.event === "engine.orders_cancelled" && (l.cancelled as number) === 1,
      10_000,
      "the next pass to cancel the new order",
    );
    expect(again.pass as number).toBeGreaterThan(1);
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    // each pass is one fast cancel (resting orders only here): the new order went in a second fast action
    const cancels = sim.state.actions.filter((a) => (a.action as { type?: string }).type === "cancel");
    expect(cancels.length).toBe(2);
    expect(cancels.every((a) => a.accepted && (a.action as { f?: boolean }).f === true)).toBe(true);
    // no trigger spent; the schedule is renewed as the backstop
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    expect(sim.state.getSchedule(user)).toBeGreaterThan(Date.now());
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("cancel-repeat");
  });
});
