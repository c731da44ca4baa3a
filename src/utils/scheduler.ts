/**
 * Cron-style jobs (the 00:00 UTC ledger roll-over) go through this small interface so tests can fire them
 * by hand. node-cron is touched only here. The heartbeat itself is NOT a cron job: it is the drift-free
 * loop in daemon/loop.ts.
 */
import cron from "node-cron";

export type ScheduledJob = { stop(): void };

export interface Scheduler {
  /** Runs `fn` on the cron expression `expr` in `timezone` (default UTC). */
  schedule(expr: string, fn: () => void, options?: { timezone?: string; name?: string }): ScheduledJob;
}

/** The real scheduler (node-cron). Jobs are unref'd so they never keep the process alive on their own. */
export const cronScheduler: Scheduler = Object.freeze({
  schedule(
    expr: string,
    fn: () => void,
    { timezone = "UTC", name }: { timezone?: string; name?: string } = {},
  ) {
    const task = cron.schedule(expr, () => fn(), { timezone, ...(name ? { name } : {}) });
    task.unref();
    return {
      stop: () => {
        void task.destroy();
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
