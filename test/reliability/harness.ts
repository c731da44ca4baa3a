/**
 * Shared helpers of the reliability suite: spawn the built CLI and read its JSON log lines, check the
 * simulator's record of accepted actions, query /readyz. Loopback only; every wait is bounded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ReceivedAction } from "../../src/sim/state.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = path.join(ROOT, "dist/bin/hl-deadman.js");

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does).`);
}

export type LogLine = Record<string, unknown> & { event?: string; level?: number; msg?: string };

/** Splits a stream of text into lines and hands each JSON-object line to `onLine` (other lines are ignored). */
export function jsonLineSplitter(onLine: (line: LogLine) => void): (chunk: string) => void {
  let partial = "";
  return (chunk) => {
    partial += chunk;
    let nl = partial.indexOf("\n");
    while (nl >= 0) {
      const text = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      nl = partial.indexOf("\n");
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed && typeof parsed === "object") onLine(parsed as LogLine);
      } catch {
        // not JSON: ignored
      }
    }
  };
}

export type DaemonProcess = {
  child: ChildProcess;
  /** every stdout line parsed as JSON (non-JSON lines are kept in `raw` only) */
  lines: LogLine[];
  stdout(): string;
  stderr(): string;
  /** resolves with the first line (already seen or future) matching `match`; rejects after `timeoutMs` */
  waitFor(match: (l: LogLine) => boolean, timeoutMs?: number, what?: string): Promise<LogLine>;
  waitForEvent(event: string, timeoutMs?: number, extra?: (l: LogLine) => boolean): Promise<LogLine>;
  /** resolves when the process exits: code, signal, and ms since `since` (default: spawn) */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  kill(signal?: NodeJS.Signals): void;
};

/** Spawns `node dist/bin/hl-deadman.js ...args` with a clean environment plus `env`. */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  { cwd = ROOT, user }: { cwd?: string; user?: { uid: number; gid: number } | undefined } = {},
): DaemonProcess {
  const baseEnv: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir() };
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...baseEnv, ...env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    ...(user ?? {}),
  });
  let out = "";
  let err = "";
  const lines: LogLine[] = [];
  const waiters: Array<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  const feed = jsonLineSplitter((line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stdout?.on("data", (chunk: string) => {
    out += chunk;
    feed(chunk);
  });
  child.stderr?.on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve) => {
      // 'exit' can fire before the child's stdout is drained; resolve on 'close' (every line read) but keep
      // the exit time for time-to-exit figures.
      let at = 0;
      child.once("exit", () => {
        at = Date.now();
      });
      child.once("close", (code, signal) => resolve({ code, signal, at: at || Date.now() }));
    },
  );
  const waitFor = (match: (l: LogLine) => boolean, timeoutMs = 10_000, what = "a matching log line") =>
    new Promise<LogLine>((resolve, reject) => {
      const seen = lines.find(match);
      if (seen) {
        resolve(seen);
        return;
      }
      const timer = setTimeout(() => {
        const i = waiters.findIndex((w) => w.resolve === done);
        if (i >= 0) waiters.splice(i, 1);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}\n--- stdout (tail)\n${out.slice(-3000)}\n--- stderr (tail)\n${err.slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      const done = (l: LogLine) => {
        clearTimeout(timer);
        resolve(l);
      };
      waiters.push({ match, resolve: done });
      void exited.then(({ code, signal }) => {
        const i = waiters.findIndex((w) => w.resolve === done);
        if (i < 0) return;
        waiters.splice(i, 1);
        clearTimeout(timer);
        reject(
          new Error(
            `process exited (${code ?? signal}) while waiting for ${what}\n--- stdout (tail)\n${out.slice(-3000)}\n--- stderr (tail)\n${err.slice(-2000)}`,
          ),
        );
      });
    });
  return {
    child,
    lines,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    waitForEvent: (event, timeoutMs, extra) =>
      waitFor((l) => l.event === event && (extra ? extra(l) : true), timeoutMs, `event ${event}`),
    exited,
    kill(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** Runs the CLI to completion (bounded) and returns code, stdout, stderr. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 10_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnCli(args, env);
  const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

/** A fresh temporary directory, removed by the returned cleanup (chmod'ed dirs are restored first). */
export function tempDir(prefix = "hl-rel-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    dir,
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The core safety property: across every accepted scheduleCancel that set a time, in arrival order, the
 * deadline never moves earlier than the one confirmed before it. A removal (no time) starts a new sequence.
 * Returns the accepted times (for further assertions).
 */
export function assertDeadlinesNeverMoveEarlier(
  actions: ReadonlyArray<ReceivedAction>,
  user: string,
): number[] {
  const times: number[] = [];
  let previous: number | null = null;
  for (const a of actions) {
    if (!a.accepted || a.user !== user) continue;
    const action = a.action as { type?: string; time?: number };
    if (action?.type !== "scheduleCancel") continue;
    if (typeof action.time !== "number") {
      previous = null;
      continue;
    }
    if (previous !== null && action.time < previous) {
      throw new Error(
        `deadline moved earlier for ${user}: accepted time ${action.time} after ${previous} (nonce ${a.nonce}, received ${a.receivedAt})`,
      );
    }
    previous = action.time;
    times.push(action.time);
  }
  return times;
}

/** GET a URL on loopback, returning status and parsed JSON (or text). */
export async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/**
 * File permissions do not stop root. When the suite runs as root, processes that must feel a chmod run as
 * `nobody` (65534) instead; otherwise as the current user (undefined).
 */
export function unprivilegedUser(): { uid: number; gid: number } | undefined {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
}

/** A TCP port that was free a moment ago on 127.0.0.1 (never 9464). */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns a truthy value or `timeoutMs` passes (then throws `what`). */
export async function eventually<T>(
  check: () => T | Promise<T>,
  {
    timeoutMs = 10_000,
    everyMs = 25,
    what = "condition",
  }: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}
