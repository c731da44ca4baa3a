import { cpSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { type ManualClock, utcDay } from "../../src/core/clock.js";
import { EXPEDITE_LEAD_MS } from "../../src/switch/index.js";
import { type LedgerFile, readLedgerState } from "../../src/switch/ledger.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { type Harness, harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const acceptedTimes = (x: Harness) =>
  x.sim.state.actions
    .filter((a) => a.accepted && typeof (a.action as { time?: unknown }).time === "number")
    .map((a) => (a.action as { time: number }).time);

/** Crash: stop pushing without removing anything; the exchange fires at the deadline while the daemon is down. */
async function crashPastDeadline(h: Harness, downMs: number): Promise<void> {
  await Promise.all(h.daemon.switches.map((s) => s.dispatch({ type: "stop" })));
  await h.daemon.settle();
  await h.advance(downMs, 10_000);
  expect(h.sim.state.getTriggers(h.account)).toHaveLength(1);
}

/** A restart on `stateDir` counts exactly one trigger, for `deadline`, and arms again. */
async function expectRestartCounts(h: Harness, stateDir: string, deadline: number): Promise<void> {
  const again = await harness({ start: h.clock.now(), stateDir, wallet: h.wallet });
  try {
    const counted = again.events("trigger.counted");
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({ deadline, triggersToday: 1 });
    expect(again.daemon.status()[0]).toMatchObject({ triggersToday: 1, state: "armed" });
  } finally {
    await again.close();
  }
}

describe("daemon against the simulator (ManualClock)", () => {
  test("default: pushes keep the schedule alive across many intervals with no trigger", async () => {
    h = await harness();
    const start = h.clock.now();
    await h.advance(20 * 15_000);
    expect(h.sim.state.getTriggers(h.account)).toHaveLength(0);
    expect(h.sim.state.getOpenOrders(h.account)).toHaveLength(1);
    const schedule = h.sim.state.getSchedule(h.account)!;
    // The last push was at the last 15 s tick, so the cancel is 45-60 s ahead.
    expect(schedule - h.clock.now()).toBeGreaterThan(45_000);
    expect(schedule - h.clock.now()).toBeLessThanOrEqual(60_000);
    const oks = h.events("heartbeat.ok");
    expect(oks).toHaveLength(21);
    // Drift-free: one push per 15 s slot, each deadline exactly now + 60 s at its slot.
    expect(oks.map((l) => l.deadline)).toEqual(
      Array.from({ length: 21 }, (_, k) => start + k * 15_000 + 60_000),
    );
    expect(h.events("trigger.counted")).toHaveLength(0);
    const s = h.daemon.status()[0]!;
    expect(s).toMatchObject({ state: "armed", triggersToday: 0, exhausted: false, consecutiveFailures: 0 });
    expect(s.armedUntil).toBe(schedule);
    // Every switch line carries event and account.
    for (const l of h.lines.filter((l) => l.module === "switch")) {
      expect(l.event).toBeTypeOf("string");
      expect(l.account).toBe(h.account);
    }
    await h.daemon.settle();
    const file = await readLedgerState(h.stateDir);
    expect(file.file?.accounts[h.account]?.armedUntil).toBe(schedule);
  });

  test("behavior: a blackhole longer than the deadline yields exactly one trigger, in the ledger and the simulator", async () => {
    h = await harness();
    await h.advance(15_000);
    const armed = h.daemon.status()[0]!.armedUntil!;
    h.sim.faults.set("exchange", { blackhole: true });
    await h.advance(90_000, 1_000, { bounded: true });
    expect(h.clock.now()).toBeGreaterThan(armed);
    h.sim.faults.clear();
    await h.advance(7_000, 1_000, { bounded: true });
    await h.advance(53_000);
    const simTriggers = h.sim.state.getTriggers(h.account);
    expect(simTriggers).toHaveLength(1);
    expect(simTriggers[0]!.time).toBe(armed);
    expect(h.sim.state.getOpenOrders(h.account)).toHaveLength(0);
    const counted = h.events("trigger.counted");
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({ account: h.account, triggersToday: 1, deadline: armed });
    expect(h.daemon.ledger.get(h.account).triggersToday).toBe(1);
    expect(h.sim.state.triggersOn(h.account, utcDay(h.clock.now()))).toBe(1);
    // Failures were logged with the kind; the switch re-armed after the blackhole.
    const failed = h.events("heartbeat.failed");
    expect(failed.length).toBeGreaterThan(3);
    expect(failed.every((l) => l.reason === "transport")).toBe(true);
    expect(h.daemon.status()[0]!.state).toBe("armed");
    expect(h.sim.state.getSchedule(h.account)).toBeGreaterThan(h.clock.now());
    // Retries never overlapped and each one waited for the previous request's expiresAfter (+ margin).
    const sent = h.sim.state.requestCount("exchange");
    expect(sent).toBeLessThan(40);
  });

  test("behavior: a late response never moves the simulator's deadline earlier", async () => {
    h = await harness({ config: { requestTimeout: 5_000, interval: 5_000, deadline: 30_000 } });
    // Phase 1: answers take 150 ms of real time while the clock runs 1 s per 50 ms: pushes land ~3 s late.
    // Phase 2: 350 ms (~7 s of clock): every push outlives its expiresAfter and is abandoned (12 s, well
    // inside the 30 s deadline, so nothing fires).
    for (const [latencyMs, steps] of [
      [150, 30],
      [350, 12],
    ] as const) {
      h.sim.faults.set("exchange", { latencyMs });
      for (let i = 0; i < steps; i++) {
        h.clock.advance(1_000);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    h.sim.faults.clear();
    await h.advance(10_000, 1_000, { bounded: true });
    await h.advance(10_000);
    const late = h.events("heartbeat.ok").filter((l) => (l.latencyMs as number) >= 120);
    expect(late.length).toBeGreaterThan(0);
    expect(h.events("heartbeat.failed").length).toBeGreaterThan(0);
    const times = acceptedTimes(h);
    expect(times.length).toBeGreaterThan(5);
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!);
    expect(h.sim.state.getSchedule(h.account)).toBe(Math.max(...times));
    expect(h.daemon.status()[0]!.armedUntil).toBe(Math.max(...times));
    // No trigger: the confirmed deadline always left room.
    expect(h.sim.state.getTriggers(h.account)).toHaveLength(0);
  });

  test("behavior: the UTC roll-over resets the count", async () => {
    h = await harness({ start: Date.UTC(2026, 0, 1, 23, 56, 0) });
    await h.advance(15_000);
    h.sim.faults.set("exchange", { blackhole: true });
    await h.advance(75_000, 1_000, { bounded: true });
    h.sim.faults.clear();
    await h.advance(7_000, 1_000, { bounded: true });
    await h.advance(8_000);
    expect(h.daemon.ledger.get(h.account)).toMatchObject({ day: "2026-01-01", triggersToday: 1 });
    await h.advance(Date.UTC(2026, 0, 2) - h.clock.now() + 1_000);
    h.scheduler.fire("0 0 * * *");
    const s = h.daemon.status()[0]!;
    expect(s).toMatchObject({ day: "2026-01-02", triggersToday: 0, exhausted: false, state: "armed" });
    expect(h.events("ledger.rollover")).toHaveLength(1);
    expect(h.sim.state.triggersOn(h.account, "2026-01-01")).toBe(1);
    expect(h.sim.state.triggersOn(h.account, "2026-01-02")).toBe(0);
  });

  test("behavior: the exchange's daily-limit error marks exhaustion until 00:00 UTC, then the switch re-arms", async () => {
    h = await harness({ start: Date.UTC(2026, 0, 1, 23, 50, 0), sim: { dailyTriggerLimit: 1 } });
    await h.advance(15_000);
    h.sim.faults.set("exchange", { blackhole: true });
    await h.advance(75_000, 1_000, { bounded: true });
    h.sim.faults.clear();
    await h.advance(7_000, 1_000, { bounded: true });
    await h.advance(8_000);
    expect(h.events("trigger.exhausted")).toHaveLength(1);
    expect(h.events("trigger.exhausted")[0]).toMatchObject({ account: h.account, triggersToday: 10 });
    const s = h.daemon.status()[0]!;
    expect(s).toMatchObject({ state: "exhausted", exhausted: true, triggersToday: 10 });
    expect(h.daemon.readiness().ready).toBe(false);
    // No pushes while exhausted.
    const before = h.sim.state.requestCount("exchange");
    await h.advance(120_000, 5_000);
    expect(h.sim.state.requestCount("exchange")).toBe(before);
    // After midnight: re-armed.
    await h.advance(Date.UTC(2026, 0, 2) - h.clock.now() + 15_000, 5_000);
    expect(h.daemon.status()[0]).toMatchObject({ state: "armed", exhausted: false, triggersToday: 0 });
    expect(h.sim.state.getSchedule(h.account)).toBeGreaterThan(h.clock.now());
  });

  test("behavior: the guard stops pushes (expedite once) and resumes them", async () => {
    const file = join(
      (await import("node:fs")).mkdtempSync(join((await import("node:os")).tmpdir(), "hl-guard-")),
      "alive",
    );
    writeFileSync(file, "");
    const touch = (at: number) => utimesSync(file, at / 1000, at / 1000);
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    touch(start);
    h = await harness({ start, config: { guardFile: file, guardMaxAge: 10_000, guardInterval: 1_000 } });
    for (let i = 0; i < 30; i++) {
      touch(h.clock.now());
      await h.advance(1_000);
    }
    const armedBefore = h.daemon.status()[0]!.armedUntil!;
    expect(armedBefore).toBeGreaterThan(h.clock.now() + 40_000);
    // The engine stops touching the file.
    const downAt = h.clock.now();
    await h.advance(12_000);
    expect(h.events("engine.down")).toHaveLength(1);
    expect(h.events("engine.down")[0]).toMatchObject({ account: h.account, action: "expedite" });
    const expedite = h.events("heartbeat.ok").at(-1)!;
    expect(expedite.expedited).toBe(true);
    const t = expedite.deadline as number;
    expect(t).toBeLessThan(armedBefore);
    expect(t - downAt).toBeLessThanOrEqual(10_000 + 2_000 + EXPEDITE_LEAD_MS);
    expect(h.sim.state.getSchedule(h.account)).toBe(t);
    const pushesWhileDown = h.sim.state.requestCount("exchange");
    await h.advance(30_000);
    // No more pushes; the expedited cancel fired and was counted once.
    expect(h.sim.state.requestCount("exchange")).toBe(pushesWhileDown);
    expect(h.sim.state.getTriggers(h.account)).toHaveLength(1);
    expect(h.events("trigger.counted")).toHaveLength(1);
    // The engine is back: pushing resumes.
    touch(h.clock.now());
    await h.advance(2_000);
    expect(h.events("engine.up")).toHaveLength(1);
    expect(h.sim.state.getSchedule(h.account)).toBeGreaterThan(h.clock.now() + 50_000);
    expect(h.daemon.status()[0]!.state).toBe("armed");
  });

  test("behavior: lapse mode stops pushing without expediting", async () => {
    const fs = await import("node:fs");
    const dir = fs.mkdtempSync(join((await import("node:os")).tmpdir(), "hl-guard-"));
    const file = join(dir, "alive");
    writeFileSync(file, "");
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    utimesSync(file, start / 1000, start / 1000);
    h = await harness({
      start,
      config: { guardFile: file, guardMaxAge: 10_000, guardInterval: 1_000, onEngineDown: "lapse" },
    });
    const armed = h.daemon.status()[0]!.armedUntil!;
    await h.advance(12_000);
    expect(h.events("engine.down")[0]).toMatchObject({ action: "lapse" });
    expect(h.sim.state.getSchedule(h.account)).toBe(armed);
    expect(h.events("heartbeat.ok")).toHaveLength(1);
  });

  test("error: a permanent refusal reports NOT PROTECTED with no retry storm", async () => {
    h = await harness({ user: { volumeUsd: 1_000 }, config: { permanentRecheckInterval: 60_000 } });
    await h.advance(5 * 60_000, 5_000);
    const s = h.daemon.status()[0]!;
    expect(s).toMatchObject({ state: "not_protected", notProtectedReason: "volume_gate", armedUntil: null });
    // First attempt + one re-check per minute over 5 minutes.
    expect(h.sim.state.requestCount("exchange")).toBeLessThanOrEqual(6);
    expect(h.sim.state.requestCount("exchange")).toBeGreaterThanOrEqual(5);
    const np = h.events("switch.not_protected");
    expect(np).toHaveLength(1);
    expect(np[0]).toMatchObject({ account: h.account, reason: "volume_gate", level: 50 });
    expect(String(np[0]!.message)).toContain("Cannot set scheduled cancel time until enough volume traded");
    const metric = await h.daemon.metrics.notProtected.get();
    expect(metric.values.find((v) => v.labels.reason === "volume_gate")?.value).toBe(1);
    expect(h.daemon.readiness().reasons.join("\n")).toContain("refused permanently");
  });

  test("behavior: a daemon down past the deadline counts the trigger at the next start", async () => {
    h = await harness();
    await h.advance(15_000);
    const armed = h.daemon.status()[0]!.armedUntil!;
    await crashPastDeadline(h, 80_000);
    await expectRestartCounts(h, h.stateDir, armed);
  });

  test("behavior: a crash right after the first confirmed push still counts the trigger (write-ahead ledger)", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-test-"));
    // What a SIGKILL at the instant the push is acknowledged would leave on disk: the ledger's files, copied then.
    const crashDir = mkdtempSync(join(tmpdir(), "hl-deadman-test-"));
    let copied = false;
    let ackedDeadline = 0;
    h = await harness({
      stateDir,
      onLine: (line) => {
        if (line.event !== "heartbeat.ok" || copied) return;
        cpSync(join(stateDir, "ledger"), join(crashDir, "ledger"), { recursive: true });
        copied = true;
        ackedDeadline = line.deadline as number;
      },
    });
    expect(copied).toBe(true);
    const entry = ledgerOnDisk(crashDir).accounts[h.account];
    expect(Math.max(entry.armedUntil ?? 0, entry.pendingUntil ?? 0)).toBe(ackedDeadline);

    await crashPastDeadline(h, 70_000);
    // Restart from exactly those files.
    await expectRestartCounts(h, crashDir, ackedDeadline);
  });

  test("behavior: an explicit refusal clears the write-ahead record", async () => {
    h = await harness({ user: { volumeUsd: 10 } });
    await h.daemon.ledger.flush();
    expect(h.events("switch.not_protected")).toHaveLength(1);
    const entry = (await readLedgerState(h.stateDir)) as { file: LedgerFile };
    expect(entry.file.accounts[h.account]).toMatchObject({ armedUntil: null, pendingUntil: null });
  });

  test("behavior: a push with an unknown outcome stays pending in the ledger", async () => {
    h = await harness({ config: { requestTimeout: 250 } });
    const armed = h.daemon.status()[0]!.armedUntil!;
    h.sim.faults.set("exchange", { blackhole: true });
    const sentAt = h.clock.now() + 15_000;
    await h.advance(15_000, 15_000, { bounded: true });
    await new Promise((r) => setTimeout(r, 400)); // the client's real 250 ms time-out
    await h.settle({ bounded: true });
    await h.daemon.ledger.flush();
    // In the switch's model: the exchange holds the confirmed deadline or this push's.
    expect(h.daemon.switches[0]!.testSeams.model.entry).toMatchObject({
      armedUntil: armed,
      pendingUntil: sentAt + 60_000,
    });
    // On disk: the confirmed deadline, which this later push on the same day needed no write-ahead record beside
    // (docs/daemon.md, "The ledger"): a restart counts the same trigger either way.
    expect(h.daemon.switches[0]!.testSeams.model.disk.covered).toBe(1);
    const read = (await readLedgerState(h.stateDir)) as { file: LedgerFile };
    expect(read.file.accounts[h.account]).toMatchObject({ armedUntil: armed, pendingUntil: null });
    // The next confirmed push is what the file holds next.
    h.sim.faults.clear();
    await h.advance(15_000);
    const now = (await readLedgerState(h.stateDir)) as { file: LedgerFile };
    expect(h.daemon.status()[0]!.state).toBe("armed");
    expect(now.file.accounts[h.account]).toMatchObject({
      armedUntil: h.daemon.status()[0]!.armedUntil,
      pendingUntil: null,
    });
  });

  test("behavior: the once-per-interval work (onInterval, the clock watch) runs on the push loop's slots, in its wake-up, before its push", async () => {
    const seen: { at: number; sentBefore: number; pushing: boolean }[] = [];
    let hook: () => void = () => {};
    h = await harness({ onInterval: () => hook(), startDaemonNow: false });
    // every timer callback the daemon's runtime fires, by the monotonic time it fires at
    const fired = new Map<number, number>();
    const after = h.timers.after.bind(h.timers);
    h.timers.after = (ms, fn) =>
      after(ms, () => {
        fired.set(h!.clock.monotonic(), (fired.get(h!.clock.monotonic()) ?? 0) + 1);
        fn();
      });
    await h.boot();
    hook = () =>
      seen.push({
        at: h!.clock.monotonic(),
        sentBefore: h!.sim.state.requestCount("exchange"),
        pushing: h!.daemon.ledger.get(h!.account).pendingUntil !== null,
      });
    const sent = h.sim.state.requestCount("exchange");
    await h.advance(45_000);
    // once per interval, at the push loop's slots (15, 30, 45 s), each before that slot's push left
    expect(seen.map((s) => s.at)).toEqual([15_000, 30_000, 45_000]);
    expect(seen.map((s) => s.sentBefore)).toEqual([sent, sent + 1, sent + 2]);
    // and before that slot's tick started its push
    expect(seen.map((s) => s.pushing)).toEqual([false, false, false]);
    expect(h.sim.state.requestCount("exchange")).toBe(sent + 3);
    // The clock watch is a repetition of its own on the push loop's grid (same timers, origin and interval): one
    // timer wakes both at each slot, and nothing wakes at any other time (a timer of its own was one more wake-up
    // per interval, even due in the same slot: CPU per hour, BENCHMARKS.md).
    expect([...fired.keys()].filter((t) => t > 0 && t <= 45_000)).toEqual([15_000, 30_000, 45_000]);
    expect([15_000, 30_000, 45_000].map((t) => fired.get(t))).toEqual([1, 1, 1]);
    // a hook that throws is logged and changes nothing else
    hook = () => {
      throw new Error("boom");
    };
    await h.advance(15_000);
    expect(h.events("daemon.interval_failed")).toHaveLength(1);
    expect(h.sim.state.requestCount("exchange")).toBe(sent + 4);
  });

  test("behavior: a stall is reported once, by the push loop, though the clock watch wakes with it", async () => {
    h = await harness();
    await h.advance(15_000);
    expect(h.events("loop.stalled")).toHaveLength(0);
    // the host is suspended for a minute: both repetitions wake up 45 s late
    await h.advance(60_000, 60_000);
    expect(h.events("loop.stalled").map((l) => l.loop)).toEqual(["push"]);
    expect((await h.daemon.metrics.eventLoopStalls.get()).values[0]!.value).toBe(1);
  });

  test("behavior: a push sets the armed-deadline gauge once and the unchanged trigger gauges not at all", async () => {
    h = await harness();
    const m = h.daemon.metrics;
    const sets = new Map<string, number>();
    for (const name of ["armedDeadline", "triggersToday", "triggersLeft", "exhausted"] as const) {
      const gauge = m[name];
      const set = gauge.set.bind(gauge);
      gauge.set = ((...args: Parameters<typeof set>) => {
        sets.set(name, (sets.get(name) ?? 0) + 1);
        return set(...args);
      }) as typeof set;
    }
    await h.advance(45_000);
    expect(h.events("heartbeat.ok")).toHaveLength(4);
    expect(Object.fromEntries(sets)).toEqual({ armedDeadline: 3 });
    const left = (await m.protectionLeft.get()).values[0]!.value;
    expect(left).toBe((h.daemon.status()[0]!.armedUntil! - h.clock.now()) / 1000);
  });

  test("behavior: the exposure poll falls on the push loop's slots even when the pollers start late", async () => {
    // The first push gets no answer: the pollers start at its bound (requestTimeout, 5 s), not at 0; their
    // interval polls still fall on the push loop's grid (30 s, 60 s), in the wake-up that pushes.
    const at: { event: string; mono: number; reason?: unknown }[] = [];
    let clock: ManualClock | undefined;
    h = await harness({
      config: { exposureInterval: 30_000 },
      startDaemonNow: false,
      onLine: (l) => {
        if (l.event === "exposure" || l.event === "heartbeat.ok")
          at.push({ event: l.event, mono: clock!.monotonic(), reason: l.reason });
      },
    });
    clock = h.clock;
    h.sim.faults.set("exchange", { blackhole: true });
    await h.boot({ bounded: true });
    await h.advance(6_000, 1_000, { bounded: true });
    h.sim.faults.clear();
    await h.advance(55_000);
    const polls = at.filter((e) => e.event === "exposure");
    expect(polls[0]!.reason).toBe("start");
    expect(polls[0]!.mono).toBeGreaterThanOrEqual(5_000); // sent at 5 s; logged when its answer came
    expect(polls.slice(1).map((p) => [p.reason, p.mono])).toEqual([
      ["interval", 30_000],
      ["interval", 60_000],
    ]);
    // pushes at those slots too
    expect(at.filter((e) => e.event === "heartbeat.ok").map((e) => e.mono)).toEqual(
      expect.arrayContaining([30_000, 60_000]),
    );
  });

  test("behavior: close() removes the schedule (remove) or leaves it (keep)", async () => {
    h = await harness();
    await h.advance(15_000);
    expect(h.sim.state.getSchedule(h.account)).not.toBeNull();
    const result = await h.daemon.close({ mode: "remove" });
    expect(result.ok).toBe(true);
    expect(result.results).toEqual([{ account: h.account, outcome: "removed" }]);
    expect(h.sim.state.getSchedule(h.account)).toBeNull();
    expect(h.events("shutdown.removed")).toHaveLength(1);
    expect(h.daemon.ledger.get(h.account).armedUntil).toBeNull();
    const h2 = await harness();
    try {
      const armed = h2.sim.state.getSchedule(h2.account);
      const r = await h2.daemon.close({ mode: "keep" });
      expect(r.results[0]!.outcome).toBe("kept");
      expect(h2.sim.state.getSchedule(h2.account)).toBe(armed);
      expect(h2.events("shutdown.kept")).toHaveLength(1);
    } finally {
      await h2.close();
    }
  });

  test("behavior: vault mode pushes with vaultAddress for the vault account", async () => {
    const vault = "0x1111111111111111111111111111111111111111";
    h = await harness({ user: { vaults: [vault] }, config: { vault } });
    const last = h.sim.state.actions.at(-1)!;
    expect(last.accepted).toBe(true);
    expect(last.vaultAddress).toBe(vault);
    expect(h.daemon.accounts).toEqual([vault]);
    expect(h.sim.state.getSchedule(vault)).toBeGreaterThan(h.clock.now());
  });
});
