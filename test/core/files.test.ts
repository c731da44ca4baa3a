/** checkStateFile (issue 16, item 2): only a regular file of sane size is read; everything else is named. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { acquireStateLock, StateLockedError } from "../../src/app/lock.js";
import { checkStateFile } from "../../src/core/files.js";

const dir = mkdtempSync(path.join(tmpdir(), "hl-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("checkStateFile", () => {
  test("default: a missing file, then a regular one, is read", async () => {
    const p = path.join(dir, "a.json");
    expect(await checkStateFile(p)).toEqual({ ok: true, exists: false });
    writeFileSync(p, '{"x":1}');
    expect(await checkStateFile(p)).toEqual({ ok: true, exists: true, text: '{"x":1}' });
  });

  test("error: symlink, FIFO, directory and an oversized file are refused by name", async () => {
    const link = path.join(dir, "link.json");
    symlinkSync("/dev/zero", link);
    expect(await checkStateFile(link)).toMatchObject({
      ok: false,
      code: "not_regular",
      reason: expect.stringMatching(/symbolic link/),
    });
    const fifo = path.join(dir, "fifo.json");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    expect(await checkStateFile(fifo)).toMatchObject({
      ok: false,
      code: "not_regular",
      reason: expect.stringMatching(/FIFO/),
    });
    const sub = path.join(dir, "dir.json");
    mkdirSync(sub);
    expect(await checkStateFile(sub)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/directory/),
    });
    const big = path.join(dir, "big.json");
    writeFileSync(big, "x".repeat(2048));
    expect(await checkStateFile(big, 1024)).toMatchObject({ ok: false, code: "too_large" });
    expect(await checkStateFile(big, 4096)).toMatchObject({ ok: true, exists: true });
  });
});

describe("acquireStateLock (in process)", () => {
  test("behavior: a lock held by a live process refuses with exit 75; release removes only our own", () => {
    const d = path.join(dir, "state");
    const lock = acquireStateLock(d);
    expect(lock.held).toBe(true);
    // A live holder other than us: our parent process.
    writeFileSync(lock.path, `${JSON.stringify({ pid: process.ppid })}\n`);
    let error: unknown;
    try {
      acquireStateLock(d);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StateLockedError);
    expect((error as StateLockedError).exitCode).toBe(75);
    expect((error as Error).message).toContain(`pid ${process.ppid}`);
    lock.release(); // not ours any more: left in place
    expect(() => acquireStateLock(d)).toThrow(StateLockedError);
  });

  test("behavior: a lock from another host (a container sharing the volume) is judged by its refreshed mtime", () => {
    const d = path.join(dir, "shared");
    mkdirSync(d, { recursive: true });
    const lockPath = path.join(d, "daemon.lock");
    // Same pid as ours (PID 1 in both containers), another host name: not ours to check by pid.
    writeFileSync(lockPath, `${JSON.stringify({ pid: process.pid, host: "other-container" })}\n`);
    expect(() => acquireStateLock(d)).toThrow(/pid \d+ on other-container/);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath, old, old); // not refreshed for a minute: gone
    const lock = acquireStateLock(d);
    expect(lock.held).toBe(true);
    expect(lock.warning).toContain("stale lock");
    lock.release();
  });
});
