/**
 * The state directory a command other than `run` reads (`status`, `audit`, `drill`, `reset`, `doctor`, `config`):
 * the same rule as `run`'s (src/app/state-dir.ts), so each finds the running daemon's from any working directory;
 * an old `./.hl-deadman` not yet moved by `run` is read where it is.
 */
import { chooseStateDir } from "../app/state-dir.js";
import type { Config } from "../config/options.js";
import type { CliDeps } from "./deps.js";

export function stateDirOf(config: Config, deps: Pick<CliDeps, "cwd" | "env">): string {
  return chooseStateDir({ configured: config.stateDir, cwd: deps.cwd, env: deps.env, move: false }).dir;
}
