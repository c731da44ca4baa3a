/**
 * The one process-spawning helper of the suite: runs `node ...` (normally the built CLI, dist/bin/hl-deadman.js)
 * with a clean environment, collects stdout/stderr, parses stdout's JSON log lines as they arrive, and lets a
 * test wait for a log line or for the exit. Every wait is bounded. Process tests are for what only a real process
 * shows (exit codes through the OS, signals, the built artefact); pure CLI checks run in-process (./cli.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { jsonLineSplitter, type LogLine } from "./json-lines.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = path.join(ROOT, "dist/bin/hl-deadman.js");
/** The process tests' compile cache, preloaded into the CLI spawned without node flags (its header says why). */
export const CODE_CACHE = path.join(ROOT, "test/helpers/code-cache.cjs");

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does).`);
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null; at: number };

export type SpawnedProcess = {
  child: ChildProcess;
  /** every stdout line that is a JSON object, in order */
  lines: LogLine[];
  stdout(): string;
  stderr(): string;
  /** resolves with the first line (already seen or future) matching `match`; rejects after `timeoutMs` or on exit */
  waitFor(match: (l: LogLine) => boolean, timeoutMs?: number, what?: string): Promise<LogLine>;
  waitForEvent(event: string, timeoutMs?: number, extra?: (l: LogLine) => boolean): Promise<LogLine>;
  /** resolves when the process has exited and its output is read: code, signal, and the time of the exit */
  exited: Promise<Exit>;
  /** `exited`, but rejects if the process has not exited within `timeoutMs` (it is then killed) */
  exitWithin(timeoutMs: number): Promise<Exit>;
  kill(signal?: NodeJS.Signals): void;
};

export type SpawnOptions = {
  /** the whole environment of the child (nothing is inherited) */
  env?: Record<string, string | undefined>;
  cwd?: string;
  user?: { uid: number; gid: number } | undefined;
  /** a command that sets something up and then execs node in its place: `[...via, node, ...argv]` */
  via?: string[];
  /**
   * The CLI started without node flags (`argv[0]` is the CLI) loads its bundle through ./code-cache.cjs unless this
   * is false. A spawn with flags of its own (a deployment's, a preload) never does.
   */
  codeCache?: boolean;
};

/** Spawns `node ...argv` with exactly `env`. */
export function spawnNode(
  argv: string[],
  { env = {}, cwd = ROOT, user, via = [], codeCache = true }: SpawnOptions = {},
): SpawnedProcess {
  const cached = codeCache && argv[0] === CLI ? ["--require", CODE_CACHE, ...argv] : argv;
  const [command, ...args] = [...via, process.execPath, ...cached] as [string, ...string[]];
  const child = spawn(command, args, {
    cwd,
    env: env as NodeJS.ProcessEnv,
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
  const exited = new Promise<Exit>((resolve) => {
    // 'exit' can fire before the child's stdout is drained; resolve on 'close' (every line read) but keep the
    // exit time for time-to-exit figures.
    let at = 0;
    child.once("exit", () => {
      at = Date.now();
    });
    child.once("close", (code, signal) => resolve({ code, signal, at: at || Date.now() }));
  });
  const tails = () => `\n--- stdout (tail)\n${out.slice(-3000)}\n--- stderr (tail)\n${err.slice(-2000)}`;
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
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${tails()}`));
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
        reject(new Error(`process exited (${code ?? signal}) while waiting for ${what}${tails()}`));
      });
    });
  const kill = (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  return {
    child,
    lines,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    waitForEvent: (event, timeoutMs, extra) =>
      waitFor((l) => l.event === event && (extra ? extra(l) : true), timeoutMs, `event ${event}`),
    exited,
    exitWithin: (timeoutMs) =>
      new Promise<Exit>((resolve, reject) => {
        const timer = setTimeout(() => {
          kill("SIGKILL");
          reject(new Error(`no exit within ${timeoutMs} ms${tails()}`));
        }, timeoutMs);
        void exited.then((e) => {
          clearTimeout(timer);
          resolve(e);
        });
      }),
    kill,
  };
}

/** The environment every spawned CLI starts from: PATH and a throw-away HOME, nothing else of ours. */
export function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir() };
}

/** Spawns `node dist/bin/hl-deadman.js ...args` with `baseEnv()` plus `env`. */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  { cwd = ROOT, user }: Omit<SpawnOptions, "env"> = {},
): SpawnedProcess {
  return spawnNode([CLI, ...args], { env: { ...baseEnv(), ...env }, cwd, user });
}

/** Runs the built CLI to completion (killed after `timeoutMs`) and returns code, signal, stdout, stderr. */
export async function runCliProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
  {
    timeoutMs = 10_000,
    cwd,
    user,
  }: { timeoutMs?: number; cwd?: string; user?: { uid: number; gid: number } | undefined } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const p = spawnCli(args, env, { ...(cwd ? { cwd } : {}), user });
  const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
  const { code, signal } = await p.exited;
  clearTimeout(timer);
  return { code, signal, stdout: p.stdout(), stderr: p.stderr() };
}

/**
 * Short cadence permitted by config validation: deadline ≥ max(10 s, interval + 2 × requestTimeout + 5 s); the
 * exposure poll off unless a test asks for it.
 */
export const fastCadence = (exposureInterval = "0"): string[] => [
  "--interval",
  "1s",
  "--deadline",
  "10s",
  "--request-timeout",
  "1s",
  "--exposure-interval",
  exposureInterval,
];

export const FAST_CADENCE = fastCadence();
