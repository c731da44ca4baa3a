/**
 * The file and URL guard (src/watchers/guard.ts) after a stall of the daemon (issue 38): a look that ran late (its
 * tick woke late, or the request took longer than its time-out allows: the time-out fired late) is taken again at
 * once, and only an on-time look's failure counts. On a ManualClock; the URL's answers come from a scripted
 * transport that can move the clock while a request is out (the daemon stopped meanwhile).
 */
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import type { HttpTransport } from "../../src/protocol/http/http.js";
import { createGuard, type Guard } from "../../src/watchers/guard.js";

const cleanups: Array<() => unknown> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const turn = () => new Promise((r) => setImmediate(r));

/** One scripted answer: the status, and how long the daemon was stopped while the request was out (ms). */
type Scripted = { status: number; stalledMs?: number };

function guardWith(opts: { answers?: Scripted[]; file?: string; intervalMs?: number }) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const timers = new ManualTimers(clock);
  const changes: boolean[] = [];
  const asked: number[] = [];
  const answers = [...(opts.answers ?? [])];
  const transport = {
    request: async () => {
      const a = answers.shift() ?? { status: 200 };
      asked.push(a.status);
      if (a.stalledMs) clock.advance(a.stalledMs);
      return { status: a.status, headers: {}, body: "" };
    },
    close: () => undefined,
  } as unknown as HttpTransport;
  const guard: Guard | null = createGuard({
    ...(opts.file ? { file: opts.file, maxAgeMs: 5_000 } : { url: "http://127.0.0.1:1/health", transport }),
    intervalMs: opts.intervalMs ?? 1_000,
    runtime: createRuntime({ clock, timers }),
    onChange: (up) => changes.push(up),
  });
  if (!guard) throw new Error("no guard");
  cleanups.push(
    () => guard.stop(),
    () => timers.dispose(),
  );
  return { guard, clock, changes, asked };
}

describe("guard: a look that ran late is taken again before it counts", () => {
  test("behavior: a URL request whose time-out fired late (the daemon stopped) is re-taken; only the on-time answer counts", async () => {
    // an on-time failure (one of the two needed), then a request out while the daemon stopped 5 s: its failure is
    // not counted, the re-take answers 200; then another on-time failure: still one in a row, still up
    const { guard, changes, asked } = guardWith({
      answers: [
        { status: 503 },
        { status: 503, stalledMs: 5_000 },
        { status: 200 },
        { status: 503 },
        { status: 503 },
      ],
    });
    expect(await guard.check()).toBe(true);
    expect(await guard.check()).toBe(true);
    expect(asked).toEqual([503, 503, 200]);
    expect(await guard.check()).toBe(true);
    expect(changes).toEqual([]);
    // two on-time failures in a row are still down
    expect(await guard.check()).toBe(false);
    expect(changes).toEqual([false]);
  });

  test("behavior: a late tick's failure is re-taken at once; the on-time re-take's verdict is the one that counts", async () => {
    const { guard, clock, changes, asked } = guardWith({
      answers: [{ status: 200 }, { status: 503 }, { status: 200 }, { status: 503 }, { status: 503 }],
    });
    await guard.start();
    await turn(); // the loop's first tick (the start's check was its look)
    // the daemon stopped 4 s: the tick due at 1 s runs at 4 s, 3 s late; its failure is re-taken (200)
    clock.advance(4_000);
    await guard.idle();
    expect(asked).toEqual([200, 503, 200]);
    // on time now: two failures in a row are down
    clock.advance(1_000);
    await guard.idle();
    clock.advance(1_000);
    await guard.idle();
    expect(changes).toEqual([false]);
  });

  test("behavior: a stale file seen by a late tick is looked at again; stale on time, it counts", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "hl-guard-late-")), "alive");
    writeFileSync(file, "");
    const { guard, clock, changes } = guardWith({ file });
    const touch = (at: number) => utimesSync(file, at / 1000, at / 1000);
    touch(clock.now());
    expect(await guard.start()).toBe(true);
    await turn();
    // stale (8 s) and judged by a tick 7 s late: re-taken, stale on time too: down
    clock.advance(8_000);
    await guard.idle();
    expect(changes).toEqual([false]);
    touch(clock.now());
    clock.advance(1_000);
    await guard.idle();
    expect(changes).toEqual([false, true]);
  });
});
