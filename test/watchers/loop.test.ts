/**
 * A watcher's repetition on the bus (src/watchers/loop.ts `loopHooks`, src/core/events.ts `LoopEvent`): a late
 * wake-up and a tick that threw are published, and the watchers' subscriber (src/surface/watchers/loop.ts) says them
 * as the runtime did when the watchers were handed a logger: `loop.stalled` / `loop.tick_failed` on the watcher's
 * `module`, with the loop's name.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { DaemonEvent } from "../../src/core/events.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { createGuard } from "../../src/watchers/guard.js";
import { loopHooks } from "../../src/watchers/loop.js";
import { captureLogger, tick } from "../app/helpers.js";
import { watcherBus } from "../helpers/watcher-bus.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe("a watcher's loop on the bus", () => {
  test("behavior: the guard's loop woke up late: published, and said as loop.stalled on module guard", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    const file = join(mkdtempSync(join(tmpdir(), "hl-deadman-loop-")), "alive");
    writeFileSync(file, "");
    const log = captureLogger();
    const bus = watcherBus(log.logger);
    const events: DaemonEvent[] = [];
    bus.subscribe((e) => events.push(e));
    const guard = createGuard({
      file,
      maxAgeMs: 3_600_000,
      intervalMs: 1_000,
      runtime: createRuntime({ clock, timers }),
      bus,
      onChange: () => {},
    });
    if (!guard) throw new Error("no guard");
    cleanups.push(() => guard.stop());
    await guard.start();
    clock.advance(60_000);
    await tick();
    expect(events.filter((e) => e.module === "loop")).toMatchObject([
      { module: "loop", origin: "guard", loop: "guard", type: "loopStalled", intervalMs: 1_000 },
    ]);
    const stalled = log.events("loop.stalled");
    expect(stalled).toHaveLength(1);
    expect(stalled[0]).toMatchObject({ module: "guard", loop: "guard", level: 40, intervalMs: 1_000 });
    expect(stalled[0]!.gapMs).toBeGreaterThan(50_000);
  });

  test("behavior: a tick that throws or rejects is said as loop.tick_failed on the watcher's module, and the loop goes on", async () => {
    const clock = new ManualClock(0);
    const timers = new ManualTimers(clock);
    const log = captureLogger();
    const bus = watcherBus(log.logger);
    const runtime = createRuntime({ clock, timers });
    let k = 0;
    const rep = runtime.every(
      1_000,
      () => {
        k++;
        if (k === 1) throw new Error("thrown");
        if (k === 2) return Promise.reject(new Error("rejected"));
      },
      { ...loopHooks(bus, "exposure", "open orders", 1_000), immediate: false },
    );
    cleanups.push(() => rep.stop());
    clock.advance(1_000);
    clock.advance(1_000);
    await tick();
    clock.advance(1_000);
    expect(k).toBe(3);
    const failed = log.events("loop.tick_failed");
    expect(failed.map((l) => [l.module, l.loop, l.level, (l.err as { message: string }).message])).toEqual([
      ["exposure", "open orders", 50, "thrown"],
      ["exposure", "open orders", 50, "rejected"],
    ]);
  });
});
