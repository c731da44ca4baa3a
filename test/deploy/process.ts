import type { ChildProcess } from "node:child_process";

/** Polls `check` every 50 ms until it holds; throws `message()` after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs: number, message: () => string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(message());
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves to the child's exit code; rejects if it has not exited within `timeoutMs`. */
export function exitCode(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  return new Promise((ok, fail) => {
    // 'close', not 'exit': 'exit' can fire before the child's stdout is drained into capture().
    if (child.exitCode !== null && (child.stdout?.destroyed ?? true)) return ok(child.exitCode);
    const timer = setTimeout(() => fail(new Error(`no exit within ${timeoutMs} ms`)), timeoutMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      ok(code);
    });
  });
}

/** Collects a child's stdout and stderr as text. */
export function capture(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return { stdout: () => out, stderr: () => err };
}

/** The `event` fields of pino JSON lines; throws on a line that is not JSON. */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
