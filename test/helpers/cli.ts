/**
 * Runs the CLI in this process: `runCli(argv, deps)` with captured stdout/stderr, the given environment and
 * working directory, and an injectable clock. For every check that needs no real process (argument and config
 * errors, output formats, exit codes as returned values); ./process.ts is for signals and the built artefact.
 */
import { type Readable, Writable } from "node:stream";
import type { CliDeps } from "../../src/cli/deps.js";
import { runCli } from "../../src/cli/program.js";
import { type Clock, systemClock } from "../../src/core/clock.js";
import { ROOT } from "./process.js";

export type CliResult = { code: number; stdout: string; stderr: string };

/** A stream that collects what is written; `isTTY` makes the CLI take it for a terminal (pretty logs, colour). */
function sink(onData: (s: string) => void, tty: boolean): Writable {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      onData(chunk.toString());
      done();
    },
  });
  return Object.assign(stream, { isTTY: tty, columns: 80 });
}

/**
 * `hl-deadman ...args` in-process. `env` is the whole environment the command sees (nothing inherited); `tty`
 * makes stdout and stderr look like a terminal; `stdin` is what the command reads and asks `isTTY` (default: the
 * test process's own).
 */
export async function cli(
  args: string[],
  {
    env = {},
    cwd = ROOT,
    clock = systemClock,
    tty = false,
    stdin,
  }: { env?: NodeJS.ProcessEnv; cwd?: string; clock?: Clock; tty?: boolean; stdin?: Readable } = {},
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const deps: CliDeps = {
    stdout: sink((s) => (stdout += s), tty),
    stderr: sink((s) => (stderr += s), tty),
    env,
    clock,
    cwd,
    ...(stdin ? { stdin } : {}),
  };
  // runCli reads process.exitCode, which a command may set; keep the test process's own untouched.
  const saved = process.exitCode;
  process.exitCode = undefined;
  try {
    const code = await runCli(["node", "hl-deadman", ...args], deps);
    return { code, stdout, stderr };
  } finally {
    process.exitCode = saved;
  }
}
