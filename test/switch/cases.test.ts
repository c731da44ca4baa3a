/**
 * The five "ready while nothing is armed" cases of issue #11, each against the simulator (in-process, one
 * ManualClock for the exchange; the daemon's wall clock can be stepped on its own through the clock seam).
 * Each must be impossible in the machine (docs/daemon.md "The switch machine").
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { type Clock, ManualClock, utcDay } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createSwitch } from "../../src/switch/index.js";
import { Ledger } from "../../src/switch/ledger.js";
import { captureLogger, type Harness, harness, type LogLine } from "../app/helpers.js";
import { eventually } from "../helpers/eventually.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { ledgerBus, switchBus } from "../helpers/switch-bus.js";
import { FEATURES } from "./features.js";
import { SWITCH_CADENCE } from "./world.js";

let hs: Harness[] = [];
afterEach(async () => {
  for (const h of hs) await h.close().catch(() => undefined);
  hs = [];
});
const track = (h: Harness) => {
  hs.push(h);
  return h;
};

/**
 * A wall clock over the simulator's ManualClock (set `base.base` once the harness made it) that an "NTP step"
 * moves on its own, while the monotonic clock does not.
 */
function steppable(start: number) {
  let delta = 0;
  const base: { base?: ManualClock } = {};
  const clock: Clock = {
    now: () => (base.base?.now() ?? start) + delta,
    monotonic: () => base.base?.monotonic() ?? 0,
  };
  return {
    clock,
    base,
    /** sets the wall clock's offset from the exchange's to `ms` */
    step(ms: number) {
      delta = ms;
    },
  };
}

function ledgerFile(stateDir: string, account: string, entry: Record<string, unknown>) {
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(
    join(stateDir, "ledger.json"),
    JSON.stringify({
      version: 1,
      updatedAt: 0,
      assumeLimitOn: null,
      accounts: {
        [account]: {
          account,
          limit: 10,
          assumed: false,
          armedUntil: null,
          lastPushAt: null,
          pendingUntil: null,
          lastCountedDeadline: null,
          history: [],
          ...entry,
        },
      },
    }),
  );
}

/** Checks the one safety property after every step: ready implies the exchange holds a schedule ahead. */
function neverOverclaims(h: Harness) {
  const r = h.daemon.readiness();
  const held = h.sim.state.getSchedule(h.account);
  const reported = r.accounts[0]!.armedUntil;
  if (r.ready) {
    expect(held, "ready while the exchange holds nothing").not.toBeNull();
    expect(held!).toBeGreaterThan(h.clock.now());
  }
  if (reported !== null && held !== null && r.accounts[0]!.state === "armed") {
    expect(reported, "the reported deadline is later than the exchange's").toBeLessThanOrEqual(held);
  }
}

describe("issue #11: never ready while nothing is armed", () => {
  test("case 1a: a wall clock stepped back 10 min keeps pushing; readiness waits for a confirmed push", async () => {
    let readyAtStep: boolean | null = null;
    let h: Harness | undefined;
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    const { clock: local, step: setDelta, base: box } = steppable(start);
    h = track(
      await harness({
        start,
        startDaemonNow: false,
        localClock: local,
        onLine: (l: LogLine) => {
          if (l.event === "switch.clock_step") readyAtStep = h!.daemon.readiness().ready;
        },
      }),
    );
    box.base = h.clock;
    await h.boot();
    await h.advance(30_000);
    expect(h.daemon.readiness().ready).toBe(true);
    setDelta(-600_000); // NTP steps the wall clock back 10 minutes
    const pushesBefore = h.events("heartbeat.ok").length;
    for (let i = 0; i < 24; i++) {
      await h.advance(5_000);
      neverOverclaims(h);
    }
    const step = h.events("clock.step");
    expect(step).toHaveLength(1);
    expect(step[0]!.deltaMs).toBe(-600_000);
    expect(readyAtStep).toBe(false);
    expect((await h.daemon.metrics.clockSteps.get()).values[0]!.value).toBe(1);
    // pushes kept going on the monotonic clock, each one deadline ahead on the exchange's clock
    expect(h.events("heartbeat.ok").length - pushesBefore).toBeGreaterThanOrEqual(8);
    expect(h.sim.state.getTriggers(h.account)).toHaveLength(0);
    const s = h.daemon.status()[0]!;
    expect(s.armedUntil).toBe(h.sim.state.getSchedule(h.account));
    expect(s.armedUntil! - h.clock.now()).toBeLessThanOrEqual(60_000);
    // The local clock now disagrees with the exchange's (issue 25): clock.suspect, and not ready while it does;
    // the pushes go on, on the exchange's time (the later of the two).
    expect(h.events("clock.suspect")).toHaveLength(1);
    expect(h.daemon.readiness().ready).toBe(false);
    expect(h.daemon.readiness().reasons.join("\n")).toMatch(/clock\.suspect/);
    // and forward to 10 minutes ahead: the pushes go on, ahead of both clocks; the exchange never fires. The lapse
    // is judged on the later of the two, so the deadline armed before the step may be counted once (over, never
    // under), never more.
    setDelta(600_000);
    await h.advance(60_000, 5_000);
    expect(h.events("trigger.counted").length).toBeLessThanOrEqual(1);
    expect(h.events("clock.step")).toHaveLength(2);
    expect(h.sim.state.getTriggers(h.account)).toHaveLength(0);
    // issue 40: the exchange's time is verified, so the pushes are on it, not on the local clock 10 min ahead: the
    // exchange holds one deadline ahead of its own time, never the local clock's
    const later = h.events("heartbeat.ok").at(-1)!;
    expect(Number(later.deadline) - h.clock.now()).toBeLessThanOrEqual(60_000);
    expect(Number(later.deadline) - h.clock.now()).toBeGreaterThan(40_000);
  });

  test("case 1b: a backward step across 00:00 UTC never moves the day back nor resets its count", async () => {
    const start = Date.UTC(2026, 0, 2, 0, 5, 0);
    const stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-case1b-"));
    const wallet = Wallet.createRandom() as unknown as Wallet;
    const account = wallet.address.toLowerCase();
    ledgerFile(stateDir, account, {
      day: "2026-01-02",
      triggersToday: 3,
      lastCountedDeadline: start - 60_000,
    });
    const { clock: local, step: setDelta, base: box } = steppable(start);
    const h = track(await harness({ start, stateDir, wallet, startDaemonNow: false, localClock: local }));
    box.base = h.clock;
    await h.boot();
    await h.advance(15_000);
    setDelta(-600_000); // back to 23:55 on 2026-01-01
    await h.advance(60_000, 5_000);
    expect(h.daemon.status()[0]).toMatchObject({ day: "2026-01-02", triggersToday: 3 });
    // the cron job fires at the local midnight (10 minutes of wall clock later): nothing rolls back or resets
    setDelta(0);
    h.scheduler.fire("0 0 * * *");
    await h.advance(15_000);
    expect(h.daemon.status()[0]).toMatchObject({ day: "2026-01-02", triggersToday: 3 });
    await h.daemon.settle();
    expect(h.daemon.ledger.get(account)).toMatchObject({ day: "2026-01-02", triggersToday: 3 });
    expect(h.events("ledger.rollover")).toHaveLength(0);
  });

  test("the heartbeat's own answers keep the clock: with the exposure poll off, skew is measured and corrected", async () => {
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    const { clock: local, step: setDelta, base: box } = steppable(start);
    setDelta(5_000); // the local clock runs 5 s ahead of the exchange from the start
    const h = track(
      await harness({
        start,
        startDaemonNow: false,
        localClock: local,
        config: { exposureInterval: 0, clockSkewWarn: 2_000 },
      }),
    );
    box.base = h.clock;
    await h.boot();
    await h.advance(30_000);
    expect(h.events("clock.corrected")).toHaveLength(1);
    const skew = h.events("clock.skew");
    expect(skew).toHaveLength(1);
    expect(Math.abs((skew[0]!.skewMs as number) - 5_000)).toBeLessThanOrEqual(1_000);
    const gauge = (await h.daemon.metrics.clockSkew.get()).values[0]!.value;
    expect(Math.abs(gauge - 5)).toBeLessThanOrEqual(1);
    // deadlines are on the exchange's clock: one deadline ahead of it, not of the fast local clock
    const last = h.sim.state.actions.filter((a) => a.accepted).at(-1)!;
    expect(Math.abs((last.action as { time: number }).time - last.receivedAt - 60_000)).toBeLessThanOrEqual(
      1_000,
    );
  });

  test("case 2a: upgrade 10 min → 30 s: a confirmed push moves the deadline earlier, the lapse is counted", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-case2-"));
    const wallet = Wallet.createRandom() as unknown as Wallet;
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    const first = track(
      await harness({ start, stateDir, wallet, config: { deadline: 600_000, onShutdown: "keep" } }),
    );
    await first.advance(15_000);
    expect(first.daemon.status()[0]!.armedUntil).toBe(start + 15_000 + 600_000);
    await first.daemon.close({ mode: "keep" });
    const h = track(
      await harness({
        start: first.clock.now(),
        stateDir,
        wallet,
        config: { deadline: 30_000, interval: 10_000 },
      }),
    );
    const now = h.clock.now();
    expect(h.daemon.status()[0]!.armedUntil).toBe(now + 30_000); // earlier than the 10 min one: replaced
    h.sim.faults.set("exchange", { errorRate: 1, errorStatus: 503 }); // the exchange goes dark
    for (let i = 0; i < 40; i++) {
      await h.advance(1_000);
      neverOverclaims(h);
    }
    expect(h.sim.state.getTriggers(h.account)).toHaveLength(1);
    expect(h.events("trigger.counted")).toHaveLength(1);
    expect(h.events("trigger.counted")[0]!.deadline).toBe(now + 30_000);
    expect(h.daemon.readiness().ready).toBe(false);
  });

  test("case 2b: a ledger whose pending push is 3 h ahead is not armed; the next confirmed push is", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-case2b-"));
    const wallet = Wallet.createRandom() as unknown as Wallet;
    const account = wallet.address.toLowerCase();
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    ledgerFile(stateDir, account, {
      day: "2026-01-01",
      triggersToday: 0,
      pendingUntil: start + 3 * 3_600_000,
    });
    const h = track(await harness({ start, stateDir, wallet, startDaemonNow: false }));
    h.sim.faults.set("exchange", { errorRate: 1, errorStatus: 503 });
    await h.boot();
    for (let i = 0; i < 30; i++) {
      expect(h.daemon.readiness().ready).toBe(false);
      expect(h.daemon.status()[0]!.state).not.toBe("armed");
      await h.advance(1_000);
    }
    h.sim.faults.clear();
    await h.advance(16_000);
    const s = h.daemon.status()[0]!;
    expect(s.state).toBe("armed");
    expect(s.armedUntil).toBe(h.sim.state.getSchedule(h.account));
    expect(s.armedUntil! - h.clock.now()).toBeLessThanOrEqual(60_000);
  });

  test("case 3: a restart after a push that never got an answer is not ready until a push confirms", async () => {
    // The unanswered push is the first one: nothing confirmed is on disk, so its write-ahead record is written
    // (and only a pending push is left for the restart: the exchange may hold it, or nothing).
    const stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-case3-"));
    const wallet = Wallet.createRandom() as unknown as Wallet;
    // (a 2 s request timeout, not 5 s: the stop below waits, in real time, for the blackholed push to time out)
    const first = track(
      await harness({ stateDir, wallet, startDaemonNow: false, config: { requestTimeout: 2_000 } }),
    );
    first.sim.faults.set("exchange", { blackhole: true });
    const sent = first.sim.state.requestCount("exchange");
    await first.boot({ bounded: true });
    // The bounded steps give the push 15 ms of real time each; on a loaded machine its write-ahead fsync can take
    // longer, so wait (in real time) until the request has reached the exchange, i.e. until it has left.
    await eventually(() => first.sim.state.requestCount("exchange") > sent, {
      timeoutMs: 5_000,
      what: "the blackholed push to reach the simulator",
    });
    await Promise.all(first.daemon.switches.map((s) => s.dispatch({ type: "stop" }))); // SIGKILL: no removal
    const pending = first.daemon.ledger.get(first.account).pendingUntil;
    expect(pending).not.toBeNull();
    await first.daemon.ledger.flush();
    const h = track(await harness({ start: first.clock.now(), stateDir, wallet, startDaemonNow: false }));
    h.sim.faults.set("exchange", { errorRate: 1, errorStatus: 503 }); // nothing at this exchange is armed
    await h.boot();
    expect(h.events("ledger.pending")).toHaveLength(1);
    for (let i = 0; i < 30; i++) {
      expect(h.daemon.readiness().ready).toBe(false);
      neverOverclaims(h);
      await h.advance(1_000);
    }
  });

  test("case 3b: a later push that never got an answer needs no write-ahead; the restart counts the confirmed deadline once", async () => {
    // The file already held a confirmed deadline when the next push left, so no write-ahead was needed
    // (src/switch/write-ahead.ts): the exchange holds that deadline or the later one, and fires one of them.
    const stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-case3b-"));
    const wallet = Wallet.createRandom() as unknown as Wallet;
    // (a 2 s request timeout, not 5 s: the stop below waits, in real time, for the blackholed push to time out)
    const first = track(await harness({ stateDir, wallet, config: { requestTimeout: 2_000 } }));
    await first.advance(15_000);
    const confirmed = first.daemon.ledger.get(first.account).armedUntil!;
    const sent = first.sim.state.requestCount("exchange");
    first.sim.faults.set("exchange", { blackhole: true });
    await first.advance(15_000, 1_000, { bounded: true }); // the next push leaves and is never answered
    await eventually(() => first.sim.state.requestCount("exchange") > sent, {
      timeoutMs: 5_000,
      what: "the blackholed push to reach the simulator",
    });
    expect(first.daemon.switches[0]!.testSeams.model.disk.covered).toBeGreaterThanOrEqual(2);
    await Promise.all(first.daemon.switches.map((s) => s.dispatch({ type: "stop" }))); // SIGKILL: no removal
    const onDisk = ledgerOnDisk(stateDir).accounts[first.account];
    expect(onDisk).toMatchObject({ armedUntil: confirmed, pendingUntil: null, triggersToday: 0 });
    const h = track(await harness({ start: first.clock.now(), stateDir, wallet, startDaemonNow: false }));
    // The new simulator holds the confirmed deadline, as the real exchange would (the blackholed push never
    // reached it); every push is refused from now on.
    h.sim.state.setSchedule(h.account, confirmed);
    h.sim.faults.set("exchange", { errorRate: 1, errorStatus: 503 });
    await h.boot();
    expect(h.events("ledger.pending")).toHaveLength(0);
    for (let i = 0; i < 45; i++) {
      neverOverclaims(h);
      await h.advance(1_000);
    }
    // past the confirmed deadline: the exchange fired it, the ledger counted it, once
    expect(h.sim.state.getTriggers(h.account)).toHaveLength(1);
    expect(h.events("trigger.counted")).toHaveLength(1);
    expect(h.events("trigger.counted")[0]).toMatchObject({ deadline: confirmed, triggersToday: 1 });
    expect(h.daemon.readiness().ready).toBe(false);
  });

  test("case 4: an ok answer whose statuses carry an error is not a confirmation", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            status: "ok",
            response: { type: "default", data: { statuses: [{ error: "Scheduled cancel time too early" }] } },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const timers = new ManualTimers(clock);
    const wallet = Wallet.createRandom() as unknown as Wallet;
    const client = new ExchangeClient({
      apiUrl: `http://127.0.0.1:${port}`,
      signer: wallet,
      isMainnet: true,
      clock,
    });
    const log = captureLogger();
    const ledger = await Ledger.open({
      stateDir: mkdtempSync(join(tmpdir(), "hl-deadman-case4-")),
      clock,
      bus: ledgerBus(log.logger),
      triggerLimit: 10,
    });
    const sw = createSwitch({
      account: { address: wallet.address.toLowerCase() },
      features: FEATURES,
      policy: SWITCH_CADENCE,
      io: {
        client,
        ledger,
      },
      runtime: createRuntime({ clock, timers }),
      bus: switchBus(log.logger, createMetrics({ defaultMetrics: false })),
    });
    try {
      sw.dispatch({ type: "start" });
      for (let i = 0; i < 5; i++) await sw.settle();
      expect(log.events("heartbeat.ok")).toHaveLength(0);
      const failed = log.events("heartbeat.failed");
      expect(failed.length).toBeGreaterThanOrEqual(1);
      expect(failed[0]).toMatchObject({ reason: "too_early", message: "Scheduled cancel time too early" });
      expect(sw.status()).toMatchObject({ state: "retrying", armedUntil: null });
    } finally {
      await sw.dispatch({ type: "stop" });
      timers.dispose();
      client.close();
      await new Promise((r) => server.close(r));
    }
  });

  test("case 5: an intent that is not durable within the push's budget is not sent (slow fsync)", async () => {
    let slow: Promise<void> | null = null;
    let release = () => {};
    const h = track(await harness({ beforeLedgerSync: async () => slow ?? undefined }));
    await h.advance(15_000);
    slow = new Promise<void>((r) => {
      release = r;
    });
    // The push at 30 s needs no write-ahead (the file holds the confirmed deadline it only moves later) and
    // leaves; its confirmation's write hangs on the slow disk. The push at 45 s must be written ahead (the file
    // is not as the push expects while a write is running), and is not sent.
    await h.advance(15_000, 1_000, { bounded: true });
    const sent = h.sim.state.requestCount("exchange");
    expect(h.daemon.switches[0]!.testSeams.model.disk.covered).toBe(2); // the pushes at 15 s and 30 s
    await h.advance(21_000, 1_000, { bounded: true });
    // the push's intent never became durable: no request left, the failure is logged
    expect(h.sim.state.requestCount("exchange")).toBe(sent);
    const failed = h.events("heartbeat.failed").filter((l) => l.reason === "ledger_slow");
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(h.daemon.status()[0]!.state).toBe("retrying");
    slow = null;
    release();
    await h.advance(15_000);
    expect(h.sim.state.requestCount("exchange")).toBeGreaterThan(sent);
    expect(h.daemon.status()[0]!.state).toBe("armed");
    expect(h.events("heartbeat.recovered")).toHaveLength(1);
    expect(h.events("heartbeat.recovered")[0]!.outageMs).toBeGreaterThan(0);
    // no temp file is left behind
    await h.daemon.settle();
    expect(readdirSync(h.stateDir).filter((n) => n.includes(".tmp-"))).toEqual([]);
    expect(utcDay(h.clock.now())).toBe("2026-01-01");
  });
});
