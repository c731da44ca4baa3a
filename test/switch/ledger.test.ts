import { createHook } from "node:async_hooks";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ManualTimers } from "../../src/core/runtime.js";
import { nonceFloor } from "../../src/protocol/hyperliquid/nonce.js";
import { Ledger, type LedgerEntry, readLedgerState } from "../../src/switch/ledger.js";
import {
  withConfirmedPush,
  withIntent,
  withLimitReached,
  withRemoval,
  withTrigger,
} from "../../src/switch/ledger-model.js";
import { captureLogger } from "../app/helpers.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { ledgerBus } from "../helpers/switch-bus.js";

const A = "0x1111111111111111111111111111111111111111";
const open = (stateDir: string, clock: ManualClock, log = captureLogger()) =>
  Ledger.open({ stateDir, clock, bus: ledgerBus(log.logger), triggerLimit: 10 });
/** Stores what a ledger-model function makes of the account's entry, as the switch does (`put`). */
const change = (l: Ledger, f: (e: LedgerEntry) => LedgerEntry) => {
  const e = f(l.get(A));
  l.put(e);
  return e;
};
const count = (l: Ledger, deadline: number, at: number) => {
  const r = withTrigger(l.get(A), { deadline, at }, l.historySize);
  l.put(r.entry);
  return r;
};

describe("Ledger", () => {
  test("durable: 'written' leaves no budget timer behind; a disk slower than the budget answers 'timeout'", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const timers = new ManualTimers(clock);
    let release: (() => void) | undefined;
    let slow = false;
    const l = await Ledger.open({
      stateDir: dir,
      clock,
      bus: ledgerBus(captureLogger().logger),
      triggerLimit: 10,
      beforeSync: () => (slow ? new Promise<void>((r) => (release = r)) : Promise.resolve()),
    });
    change(l, (e) => withConfirmedPush(e, clock.now() + 60_000, clock.now()));
    expect(await l.durable(5_000, timers)).toBe("written");
    expect(timers.pending).toBe(0);
    slow = true;
    change(l, (e) => withConfirmedPush(e, clock.now() + 75_000, clock.now()));
    const result = l.durable(5_000, timers);
    await new Promise((r) => setTimeout(r, 20));
    clock.advance(5_000);
    expect(await result).toBe("timeout");
    release?.();
    await l.flush();
    expect(ledgerOnDisk(dir).accounts[A].armedUntil).toBe(clock.now() - 5_000 + 75_000);
    timers.dispose();
  });

  test("durable: waits for the write that carries this account's change, never for the ledger to go quiet", async () => {
    // A fleet: while one account waits for its write-ahead record, other accounts change the ledger all the time.
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const timers = new ManualTimers(clock);
    const B = "0x2222222222222222222222222222222222222222";
    let others = 0;
    let fleet = false;
    const l: Ledger = await Ledger.open({
      stateDir: dir,
      clock,
      bus: ledgerBus(captureLogger().logger),
      triggerLimit: 10,
      // each fsync, another account's change arrives (a write in flight never carries it)
      beforeSync: async () => {
        if (!fleet) return;
        others++;
        l.put(withConfirmedPush(l.get(B), clock.now() + 60_000 + others, clock.now()));
      },
    });
    fleet = true;
    change(l, (e) => withConfirmedPush(e, clock.now() + 60_000, clock.now()));
    const result = l.durable(5_000, timers);
    const budget = setTimeout(() => clock.advance(5_000), 2_000);
    expect(await result).toBe("written");
    clearTimeout(budget);
    // at most two rounds: the one in flight when the change came (if any) and the one that carries it, each writing
    // A's file and B's (an fsync each)
    expect(others).toBeLessThanOrEqual(4);
    fleet = false;
    await l.close();
    expect((await readLedgerState(dir)).damaged).toEqual([]);
    timers.dispose();
  });

  test("a durable write takes four thread-pool trips: create, fsync, rename, fsync the directory (kept open)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const l = await open(dir, clock);
    const trips: string[] = [];
    const hook = createHook({
      init(_id, type) {
        if (type.startsWith("FSREQ")) trips.push(type);
      },
    });
    const fdsOnDir = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === join(dir, "ledger");
        } catch {
          return false;
        }
      }).length;
    try {
      change(l, (e) => withConfirmedPush(e, clock.now() + 60_000, clock.now()));
      await l.flush(); // the first write also opens the directory
      hook.enable();
      for (let i = 1; i <= 3; i++) {
        change(l, (e) => withConfirmedPush(e, clock.now() + 60_000 + i, clock.now()));
        expect(await l.durable(5_000)).toBe("written");
      }
      hook.disable();
      // each of these waits on the disk, off the event loop; nothing else goes to the pool
      expect(trips).toEqual(Array(3 * 4).fill("FSREQCALLBACK"));
      expect(fdsOnDir()).toBe(1);
      expect(readdirSync(dir)).toEqual(["ledger"]);
      expect(readdirSync(join(dir, "ledger")).sort()).toEqual([`${A}.json`, "meta.json"]);
      expect((await readLedgerState(dir)).damaged).toEqual([]);
      await l.close();
      expect(fdsOnDir()).toBe(0);
    } finally {
      hook.disable();
    }
  });

  test("default: changes are written atomically and read back at start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const l = await open(dir, clock);
    change(l, (e) => withConfirmedPush(e, clock.now() + 60_000, clock.now()));
    const r = count(l, clock.now() + 60_000, clock.now() + 61_000);
    expect(r).toMatchObject({ counted: true, reachedLimit: false });
    // Once per deadline.
    expect(count(l, clock.now() + 60_000, clock.now() + 62_000).counted).toBe(false);
    await l.flush();
    expect(readdirSync(dir)).toEqual(["ledger"]);
    const again = await open(dir, clock);
    expect(again.get(A)).toMatchObject({ triggersToday: 1, armedUntil: null, day: "2026-01-01" });
    expect(again.get(A).history.map((e) => e.type)).toEqual(["trigger"]);
  });

  test("behavior: the write-ahead record is on disk once durable resolves, and follows each outcome", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const l = await open(dir, clock);
    const onDisk = () => ledgerOnDisk(dir).accounts[A];
    const t0 = clock.now();

    change(l, (e) => withIntent(e, t0 + 60_000));
    await l.durable(1_000);
    expect(onDisk()).toMatchObject({ pendingUntil: t0 + 60_000, armedUntil: null });

    // Confirmed: promoted to armedUntil, nothing pending.
    change(l, (e) => withConfirmedPush(e, t0 + 60_000, t0));
    await l.flush();
    expect(onDisk()).toMatchObject({ pendingUntil: null, armedUntil: t0 + 60_000 });

    // Unknown outcome (no call): stays pending; a refused later push restores it rather than erasing it.
    change(l, (e) => withIntent(e, t0 + 75_000));
    await l.durable(1_000);
    change(l, (e) => withIntent(e, t0 + 90_000));
    await l.durable(1_000);
    // (the machine restores it: test/switch/step.test.ts "a refused later push keeps the pending deadline")
    change(l, (e) => ({ ...e, pendingUntil: t0 + 75_000 }));
    await l.flush();
    expect(onDisk()).toMatchObject({ pendingUntil: t0 + 75_000, armedUntil: t0 + 60_000 });

    // A trigger at (or after) the pending deadline clears it; so does a removal.
    count(l, t0 + 75_000, t0 + 76_000);
    await l.flush();
    expect(onDisk()).toMatchObject({ pendingUntil: null, armedUntil: null, triggersToday: 1 });
    change(l, (e) => withIntent(e, t0 + 200_000));
    await l.durable(1_000);
    change(l, (e) => withRemoval(e, t0 + 100_000, l.historySize));
    await l.flush();
    expect(onDisk()).toMatchObject({ pendingUntil: null, armedUntil: null });
  });

  test("behavior: a ledger written before pendingUntil existed still reads (the field defaults to null)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const old = {
      version: 1,
      updatedAt: clock.now(),
      accounts: {
        [A]: {
          account: A,
          day: "2026-01-01",
          triggersToday: 2,
          limit: 10,
          armedUntil: null,
          lastPushAt: null,
        },
      },
    };
    writeFileSync(join(dir, "ledger.json"), JSON.stringify(old));
    const l = await open(dir, clock);
    expect(l.get(A)).toMatchObject({ triggersToday: 2, pendingUntil: null, assumed: false });
  });

  test("behavior: a corrupt ledger is moved aside and the limit is assumed, never reset to zero", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    writeFileSync(join(dir, "ledger.json"), '{"version":1,"accounts":{"0x11');
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const log = captureLogger();
    const l = await open(dir, clock, log);
    expect(l.get(A)).toMatchObject({ triggersToday: 10, assumed: true });
    expect(log.events("ledger.corrupt")[0]).toMatchObject({ level: 50 });
    await l.flush();
    const files = readdirSync(dir).sort();
    expect(files[0]).toBe("ledger");
    expect(files[1]).toMatch(/^ledger\.json\.corrupt-\d+$/);
    expect(readFileSync(join(dir, files[1]!), "utf8")).toBe('{"version":1,"accounts":{"0x11');
    // The assumption ends with the UTC day.
    clock.set(Date.UTC(2026, 0, 2, 0, 0, 1));
    l.rollover();
    expect(l.get(A)).toMatchObject({ triggersToday: 0, assumed: false, day: "2026-01-02" });
  });

  test("behavior: a failed write is logged with the path and reason; memory stays authoritative; the old file is intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const log = captureLogger();
    const l = await open(join(dir, "state"), clock, log);
    change(l, (e) => withConfirmedPush(e, clock.now() + 60_000, clock.now()));
    await l.flush();
    const before = readFileSync(join(dir, "state", "ledger", `${A}.json`), "utf8");
    // Replace the directory by a file: every write now fails (ENOTDIR), even as root.
    rmSync(join(dir, "state"), { recursive: true });
    writeFileSync(join(dir, "state"), "not a directory");
    count(l, clock.now() + 60_000, clock.now() + 61_000);
    await l.flush();
    expect(l.get(A).triggersToday).toBe(1);
    const failed = log.events("ledger.write_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      level: 50,
      path: join(dir, "state", "ledger"),
      reason: "ENOTDIR",
    });
    expect(before).toContain('"armedUntil"');
  });

  test("behavior: reading rolls the view over without writing; rollover() stores it; the daily-limit error sets the count", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 23, 59));
    const l = await open(dir, clock);
    change(l, (e) =>
      withLimitReached(e, clock.now(), "Too many scheduled cancel triggers today", l.historySize),
    );
    expect(l.get(A).triggersToday).toBe(10);
    await l.flush();
    const writes = l.writes;
    clock.advance(120_000);
    expect(l.get(A)).toMatchObject({ day: "2026-01-02", triggersToday: 0 });
    await l.flush();
    expect(l.writes).toBe(writes); // reading never writes
    expect(l.rollover()).toEqual([A]);
    expect(l.rollover()).toEqual([]);
    const types = l.get(A).history.map((e) => e.type);
    expect(types).toEqual(["limit_error", "rollover"]);
    const file = await (async () => {
      await l.flush();
      return readLedgerState(dir);
    })();
    expect(file.file?.accounts[A]?.day).toBe("2026-01-02");
  });

  test("behavior: a deadline from an earlier UTC day is history, not today's count", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const clock = new ManualClock(Date.UTC(2026, 0, 2, 0, 5));
    const l = await open(dir, clock);
    const r = count(l, Date.UTC(2026, 0, 1, 23, 59), clock.now());
    expect(r.counted).toBe(false);
    expect(l.get(A).triggersToday).toBe(0);
  });

  test("issue 40: an updatedAt a wrong clock wrote 20 h ahead is set back to the verified time in every file, the nonce floor kept in lastNonce, logged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-ledger-"));
    const T = Date.UTC(2026, 0, 1, 12);
    const span = { requestTimeoutMs: 5_000, deadlineMs: 60_000 };
    const B = "0x2222222222222222222222222222222222222222";
    // a run on a clock 20 h ahead believed as verified (before issue 40) wrote updatedAt there
    const ahead = new ManualClock(T + 72_000_000);
    const first = await Ledger.open({
      stateDir: dir,
      clock: ahead,
      bus: ledgerBus(captureLogger().logger),
      triggerLimit: 10,
      verifiedNow: () => ahead.now(),
      nonceSpan: span,
    });
    first.put(withConfirmedPush(first.get(A), ahead.now() + 60_000, ahead.now()));
    first.put(withConfirmedPush(first.get(B), ahead.now() + 60_000, ahead.now()));
    await first.close();
    const before = await readLedgerState(dir);
    expect(before.file!.updatedAt).toBe(T + 72_000_000);
    const floorBefore = nonceFloor(before.file!.updatedAt, before.file!.lastNonce, span);
    // the next run: nothing verified yet, nothing repaired (the local clock alone never verifies)
    const clock = new ManualClock(T);
    let verified = 0;
    const log = captureLogger();
    const l = await Ledger.open({
      stateDir: dir,
      clock,
      bus: ledgerBus(log.logger),
      triggerLimit: 10,
      verifiedNow: () => verified,
      nonceSpan: span,
    });
    l.put(withConfirmedPush(l.get(A), T + 60_000, T));
    await l.flush();
    expect((await readLedgerState(dir)).file!.updatedAt).toBe(T + 72_000_000);
    expect(log.events("ledger.updated_at_repaired")).toEqual([]);
    // two witnesses verified T: set back in every file (a restart takes the highest), the nonce floor never lower
    verified = T;
    l.put(withConfirmedPush(l.get(A), T + 75_000, T));
    await l.close();
    const after = await readLedgerState(dir);
    expect(after.file!.updatedAt).toBe(T);
    expect(nonceFloor(after.file!.updatedAt, after.file!.lastNonce, span)).toBeGreaterThanOrEqual(
      floorBefore,
    );
    expect(log.events("ledger.updated_at_repaired")).toEqual([
      expect.objectContaining({ aheadMs: 72_000_000, to: new Date(T).toISOString() }),
    ]);
    // a restart believes the repaired time
    const again = await Ledger.open({
      stateDir: dir,
      clock,
      bus: ledgerBus(captureLogger().logger),
      triggerLimit: 10,
    });
    expect(again.loadedUpdatedAt).toBe(T);
    expect(nonceFloor(again.loadedUpdatedAt, again.loadedLastNonce, span)).toBeGreaterThanOrEqual(
      floorBefore,
    );
    await again.close();
  });
});
