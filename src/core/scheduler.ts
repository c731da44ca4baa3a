/**
 * Cron-style jobs (the 00:00 UTC ledger roll-over) go through this small interface so tests can fire them
 * by hand. node-cron is touched only here. The heartbeat itself is NOT a cron job: it is the drift-free
 * repetition, `every` in core/runtime.ts.
 */
import type { ScheduledTask } from "node-cron";

export type ScheduledJob = { stop(): void };

export type ScheduleOptions = {
  /** Time zone of the expression (default UTC). */
  timezone?: string;
  name?: string;
  /** Start the job only once this settles (the daemon: its first pushes); until then nothing is loaded or timed. */
  after?: Promise<unknown>;
};

export interface Scheduler {
  /** Runs `fn` on the cron expression `expr` in `timezone` (default UTC). */
  schedule(expr: string, fn: () => void, options?: ScheduleOptions): ScheduledJob;
}

/**
 * node-cron, loaded when the first job starts (the daemon's only job is the 00:00 UTC roll-over, started after
 * the first pushes): `run` neither parses nor evaluates it on the way to the first push (BENCHMARKS.md, cold
 * start). A failed import is not swallowed: it rejects unhandled, which the daemon logs and exits on.
 */
let cronModule: Promise<typeof import("node-cron")> | undefined;
const noop = () => {};

/** The real scheduler (node-cron). Jobs are unref'd so they never keep the process alive on their own. */
export const cronScheduler: Scheduler = Object.freeze({
  schedule(expr: string, fn: () => void, { timezone = "UTC", name, after }: ScheduleOptions = {}) {
    let task: ScheduledTask | undefined;
    let stopped = false;
    const settled = after ? after.then(noop, noop) : Promise.resolve();
    void settled.then(async () => {
      if (stopped) return;
      cronModule ??= import("node-cron");
      const { default: cron } = await cronModule;
      if (stopped) return;
      task = cron.schedule(expr, () => fn(), { timezone, ...(name ? { name } : {}) });
      task.unref();
    });
    return {
      stop: () => {
        stopped = true;
        if (task) void task.destroy();
      },
    };
  },
});

/** A scheduler whose jobs run only when a test calls `fire(expr)`. */
export class ManualScheduler implements Scheduler {
  readonly jobs: { expr: string; fn: () => void; stopped: boolean }[] = [];

  schedule(expr: string, fn: () => void): ScheduledJob {
    const job = { expr, fn, stopped: false };
    this.jobs.push(job);
    return {
      stop: () => {
        job.stopped = true;
      },
    };
  }

  /** Runs every live job with this expression (every live job when omitted); returns how many ran. */
  fire(expr?: string): number {
    let n = 0;
    for (const job of this.jobs) {
      if (job.stopped || (expr !== undefined && job.expr !== expr)) continue;
      job.fn();
      n++;
    }
    return n;
  }
}
