import type { Readable, Writable } from "node:stream";
import { type Clock, systemClock } from "../core/clock.js";

/** What a command needs from the outside world; tests pass their own. Only bin/ passes the real process. */
export type CliDeps = {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  clock: Clock;
  cwd: string;
  /** what `logs` reads; default process.stdin */
  stdin?: Readable;
};

export function processDeps(): CliDeps {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    clock: systemClock,
    cwd: process.cwd(),
  };
}
