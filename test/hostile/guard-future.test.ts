/** The guard file's mtime in the future (issue 16, item 4): stale beyond a small tolerance, one warning naming the file. */
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createLogger } from "../../src/core/logger.js";
import { createRuntime, systemTimers } from "../../src/core/runtime.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createGuard, FUTURE_MTIME_TOLERANCE_MS } from "../../src/watchers/guard.js";
import { watcherBus } from "../helpers/watcher-bus.js";

test("behavior: an mtime 5 minutes ahead is stale, warned once by name; small skew and a fixed touch are alive", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "hl-guard-")), "engine.alive");
  writeFileSync(file, "");
  const now = 1_800_000_000_000;
  const clock = new ManualClock(now);
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    destination: new Writable({
      write(c, _e, cb) {
        lines.push(JSON.parse(String(c)) as Record<string, unknown>);
        cb();
      },
    }),
  });
  const changes: boolean[] = [];
  const guard = createGuard({
    file,
    maxAgeMs: 10_000,
    intervalMs: 1_000,
    runtime: createRuntime({ clock, timers: systemTimers(clock) }),
    bus: watcherBus(logger, createMetrics({ defaultMetrics: false })),
    onChange: (up) => changes.push(up),
  })!;
  const touch = (ms: number) => utimesSync(file, ms / 1000, ms / 1000);

  touch(now + FUTURE_MTIME_TOLERANCE_MS - 500); // within the tolerance: alive
  expect(await guard.check()).toBe(true);

  touch(now + 5 * 60_000); // touch -d '+5 min'
  expect(await guard.check()).toBe(false);
  expect(await guard.check()).toBe(false);
  const warned = lines.filter((l) => l.event === "guard.future_mtime");
  expect(warned).toHaveLength(1);
  expect(warned[0]).toMatchObject({ file, aheadMs: 300_000 });
  expect(guard.status().detail).toContain("in the future");

  clock.set(now + 1000);
  touch(now + 500); // the engine touches it with the right time again
  expect(await guard.check()).toBe(true);
  expect(changes).toEqual([false, true]);
  guard.stop();
});
