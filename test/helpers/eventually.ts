/**
 * The one polling helper of the suite: waits for a condition that something else (a child process, a server, a
 * timer) makes true. Bounded; on timeout it throws naming what it waited for and the last error seen.
 * Prefer awaiting the event itself (a promise, a log line via `spawnCli(...).waitForEvent`) where there is one.
 */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns a truthy value (returned) or `timeoutMs` passes (throws). */
export async function eventually<T>(
  check: () => T | Promise<T>,
  {
    timeoutMs = 10_000,
    everyMs = 25,
    what = "condition",
  }: { timeoutMs?: number; everyMs?: number; what?: string | (() => string) } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= deadline) break;
    await sleep(everyMs);
  }
  const name = typeof what === "function" ? what() : what;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${name}${last ? `: ${String(last)}` : ""}`);
}
