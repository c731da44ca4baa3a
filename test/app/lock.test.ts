/**
 * The state-directory lock's refresh (src/app/lock.ts): the mtime that tells another host the holder is alive
 * is refreshed by `touch` on wake-ups the daemon has anyway, and by the lock's own timer only when those are
 * further apart than the refresh period. Timings are shortened here (the defaults: 15 s, 10 s, stale at 30 s).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import {
  acquireStateLock,
  FOREIGN_LOCK_STALE_MS,
  LOCK_FILE,
  LOCK_REFRESH_MS,
  LOCK_TOUCH_MIN_MS,
  LockFileError,
  type LockTiming,
  type StateLock,
} from "../../src/app/lock.js";
import { ManualClock } from "../../src/core/clock.js";
import { ManualTimers } from "../../src/core/runtime.js";

const dir = mkdtempSync(path.join(tmpdir(), "hl-lock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const past = new Date(Date.UTC(2020, 0, 1));
const mtime = (p: string) => statSync(p).mtimeMs;

/** Takes a lock in its own directory under `dir` with these timings, runs `body`, and releases it. */
async function withLock(name: string, timing: LockTiming, body: (lock: StateLock) => Promise<void>) {
  const lock = acquireStateLock(path.join(dir, name), timing);
  try {
    await body(lock);
  } finally {
    lock.release();
  }
}

describe("acquireStateLock: the refresh", () => {
  test("default: the longest gap between two writes leaves 10 s before a lock is judged stale", () => {
    expect(FOREIGN_LOCK_STALE_MS - (LOCK_TOUCH_MIN_MS + LOCK_REFRESH_MS)).toBeGreaterThanOrEqual(10_000);
    expect(LOCK_TOUCH_MIN_MS).toBeLessThan(LOCK_REFRESH_MS);
    // a push every 15 s (the default interval) touches at every push
    expect(15_000).toBeGreaterThanOrEqual(LOCK_TOUCH_MIN_MS);
  });

  test("behavior: touched on every wake-up, the lock's own timer never fires; the mtime still moves", async () => {
    await withLock("touched", { refreshMs: 150, touchMinMs: 40 }, async (lock) => {
      utimesSync(lock.path, past, past);
      // a push loop waking every 50 ms: each wake-up touches, the 150 ms timer is pushed back each time
      for (let i = 0; i < 12; i++) {
        await sleep(50);
        lock.touch();
      }
      expect(lock.refreshes.timer).toBe(0);
      expect(lock.refreshes.touched).toBeGreaterThanOrEqual(8);
      expect(mtime(lock.path)).toBeGreaterThan(past.getTime());
    });
  });

  test("behavior: once the timer fired just before a wake-up, the touches take over again (no timer on that phase)", async () => {
    // The first wake-up comes after the timer fired (as the daemon's first push tick comes after the lock was
    // taken at start); each later one comes a period after it. A touch that finds the mtime just written must
    // still move the timer, or the timer keeps firing just before every wake-up.
    await withLock("phase", { refreshMs: 200, touchMinMs: 120 }, async (lock) => {
      await sleep(250);
      expect(lock.refreshes.timer).toBe(1);
      lock.touch(); // 50 ms after the timer wrote: too soon to write, but the timer moves
      for (let i = 0; i < 6; i++) {
        await sleep(150);
        lock.touch();
      }
      expect(lock.refreshes.timer).toBe(1);
      expect(lock.refreshes.touched).toBeGreaterThanOrEqual(5);
    });
  });

  test("behavior: touches closer together than the minimum write nothing more", async () => {
    // On the lock's own clock and timers: the spacing is exact whatever the machine's load.
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    await withLock("rate", { refreshMs: 10_000, touchMinMs: 200, clock, timers }, async (lock) => {
      for (let i = 0; i < 20; i++) {
        lock.touch();
        clock.advance(5);
      }
      expect(lock.refreshes.touched).toBe(0);
      clock.advance(200);
      lock.touch();
      lock.touch();
      expect(lock.refreshes).toEqual({ touched: 1, timer: 0 });
      // every touch moved the lock's own timer: it has not fired in the 300 ms since
      clock.advance(9_999);
      expect(lock.refreshes.timer).toBe(0);
      clock.advance(1);
      expect(lock.refreshes.timer).toBe(1);
    });
    timers.dispose();
  });

  test("behavior: without touches the lock's own timer keeps the mtime fresh", async () => {
    await withLock("timer", { refreshMs: 60, touchMinMs: 30 }, async (lock) => {
      utimesSync(lock.path, past, past);
      await sleep(400);
      expect(lock.refreshes.timer).toBeGreaterThanOrEqual(3);
      expect(lock.refreshes.touched).toBe(0);
      expect(mtime(lock.path)).toBeGreaterThan(past.getTime());
    });
  });

  test("behavior: after release nothing is refreshed or touched", async () => {
    const lock = acquireStateLock(path.join(dir, "released"), { refreshMs: 40, touchMinMs: 10 });
    lock.release();
    await sleep(150);
    lock.touch();
    expect(lock.refreshes).toEqual({ touched: 0, timer: 0 });
  });
});

describe("a lock path that is no file (issue 31, hostile review)", () => {
  test("error: a FIFO is refused by name, exit 78, no raw ESPIPE", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-lock-fifo-"));
    execFileSync("mkfifo", [path.join(dir, LOCK_FILE)]);
    let caught: unknown;
    try {
      acquireStateLock(dir);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LockFileError);
    expect((caught as LockFileError).exitCode).toBe(78);
    expect((caught as Error).message).toContain(`${path.join(dir, LOCK_FILE)} is not a regular file`);
    expect((caught as Error).message).not.toContain("ESPIPE");
  });

  test("error: a symbolic link is refused as such, not as another daemon taking the lock", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-lock-link-"));
    const target = path.join(dir, "elsewhere");
    writeFileSync(target, "x");
    symlinkSync(target, path.join(dir, LOCK_FILE));
    let caught: unknown;
    try {
      acquireStateLock(dir);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LockFileError);
    expect((caught as Error).message).toContain(`${path.join(dir, LOCK_FILE)} is a symbolic link`);
    expect((caught as Error).message).not.toContain("Another hl-deadman");
    expect(readFileSync(target, "utf8")).toBe("x");
  });
});
