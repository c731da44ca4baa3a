import { Command, CommanderError } from "commander";
import { ExitCode } from "../utils/exit-codes.js";
import { VERSION } from "../version.js";
import { registerConfig } from "./commands/config.js";
import { registerEvm } from "./commands/evm.js";
import { registerExposure } from "./commands/exposure.js";
import { registerRun } from "./commands/run.js";
import { registerSchedule } from "./commands/schedule.js";
import { registerSim } from "./commands/sim.js";
import { registerStatus } from "./commands/status.js";
import type { CliDeps } from "./deps.js";
import { CliError, exitCodeFor } from "./errors.js";

/** Builds the whole CLI; used by bin/ and by tests (which pass their own deps). */
export function createProgram(deps: CliDeps): Command {
  const program = new Command("hl-deadman")
    .description(
      "A dead man's switch for Hyperliquid: keeps scheduleCancel armed while everything is healthy.",
    )
    .version(VERSION)
    .showHelpAfterError()
    .configureOutput({
      writeOut: (s) => deps.stdout.write(s),
      writeErr: (s) => deps.stderr.write(s),
    });
  registerRun(program, deps);
  registerSchedule(program, deps);
  registerStatus(program, deps);
  registerExposure(program, deps);
  registerEvm(program, deps);
  registerSim(program, deps);
  registerConfig(program, deps);
  // Usage errors (unknown option, missing argument, bad choice) exit 2, as the contract says.
  const exitOverride = (cmd: Command) => {
    cmd.exitOverride((err) => {
      throw err;
    });
    for (const sub of cmd.commands) exitOverride(sub);
  };
  exitOverride(program);
  return program;
}

/** Runs the CLI and resolves to the exit code; never calls process.exit itself. */
export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  const program = createProgram(deps);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version come through here with exit code 0.
      if (error.exitCode === 0) return ExitCode.ok;
      return ExitCode.usage;
    }
    const code = exitCodeFor(error);
    const message = error instanceof Error ? error.message : String(error);
    deps.stderr.write(`hl-deadman: ${message}\n`);
    if (!(error instanceof CliError) && code === ExitCode.runtime && error instanceof Error && error.stack) {
      deps.stderr.write(`${error.stack.split("\n").slice(1, 4).join("\n")}\n`);
    }
    return code;
  }
}
