import cron from "node-cron";
import { describe, expect, test } from "vitest";
import { cronScheduler } from "../../src/core/scheduler.js";

// The real scheduler (node-cron). The daemon's roll-over job is scheduled in the start order but must not load
// node-cron or compute a date (ICU's data, ~5-10 ms of CPU) before its first pushes settled (docs/daemon.md,
// "Start order and exit").
const named = (name: string) => [...cron.getTasks().values()].filter((t) => t.name === name);

async function eventually(check: () => boolean, ms = 2_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("cronScheduler", () => {
  test("behavior: a job given `after` starts only once that settles, and stop() before then starts nothing", async () => {
    let release: () => void = () => {};
    const after = new Promise<void>((resolve) => {
      release = resolve;
    });
    const job = cronScheduler.schedule("0 0 * * *", () => {}, { name: "test-after", after });
    await new Promise((r) => setTimeout(r, 50));
    expect(named("test-after")).toHaveLength(0);
    release();
    await eventually(() => named("test-after").length === 1);
    job.stop();
    await eventually(() => named("test-after").length === 0);

    // stopped while waiting: nothing ever starts
    let releaseLate: () => void = () => {};
    const late = new Promise<void>((resolve) => {
      releaseLate = resolve;
    });
    const never = cronScheduler.schedule("0 0 * * *", () => {}, { name: "test-stopped", after: late });
    never.stop();
    releaseLate();
    await new Promise((r) => setTimeout(r, 50));
    expect(named("test-stopped")).toHaveLength(0);
  });

  test("behavior: without `after` the job starts at once (a rejected `after` starts it too)", async () => {
    const job = cronScheduler.schedule("0 0 * * *", () => {}, { name: "test-now" });
    await eventually(() => named("test-now").length === 1);
    job.stop();
    const rejected = cronScheduler.schedule("0 0 * * *", () => {}, {
      name: "test-rejected",
      after: Promise.reject(new Error("first push failed")),
    });
    await eventually(() => named("test-rejected").length === 1);
    rejected.stop();
    await eventually(() => named("test-now").length === 0 && named("test-rejected").length === 0);
  });
});
