/**
 * When the pollers begin (src/app/parts/pollers.ts): once the first pushes have settled (confirmed, refused or
 * failed), at most one request time-out after the switches started, and after a fleet's spread first pass, so that
 * their first reads share neither the event loop, the exchange, the ledger's write nor the IP's weight of the same
 * minute with every account's first push. Never after the daemon began to stop.
 */
import type { Runtime, TimerHandle } from "../../core/runtime.js";
import type { Switch } from "../../switch/index.js";

export function firstPushesGate({
  runtime,
  switches,
  requestTimeoutMs,
  begin: beginPolls,
}: {
  runtime: Runtime;
  switches: readonly Switch[];
  requestTimeoutMs: number;
  /** starts the polls, once */
  begin: () => void;
}): {
  /** resolves when the polls begin (the roll-over job computes its first date only then) */
  afterFirstPushes: Promise<void>;
  /** cancels the bound's timer (the pollers closing) */
  cancel(): void;
  /** Waits for the first pushes after `firstPassMs`; returns that wait's timer, if any (cancelled on close). */
  arm(firstPassMs: number): TimerHandle | null;
} {
  let begun = false;
  let bound: TimerHandle | undefined;
  let firstPushesSettled: () => void = () => {};
  const afterFirstPushes = new Promise<void>((resolve) => {
    firstPushesSettled = resolve;
  });
  const begin = () => {
    bound?.cancel();
    if (begun || runtime.signal.aborted) return;
    begun = true;
    firstPushesSettled();
    beginPolls();
  };
  // A fleet's first pass of pushes is spread over `firstPassMs`: the polls begin after it, so that their first
  // reads do not spend the IP's weight in the same minute as every account's first push.
  const afterFirstPass = () => {
    if (runtime.signal.aborted) return;
    bound = runtime.timers.after(requestTimeoutMs, begin);
    void Promise.all(switches.map((s) => s.settle())).then(begin, begin);
  };
  return {
    afterFirstPushes,
    cancel: () => bound?.cancel(),
    arm(firstPassMs) {
      if (firstPassMs > 0) return runtime.timers.after(firstPassMs, afterFirstPass);
      afterFirstPass();
      return null;
    },
  };
}
