import { Command, CommanderError } from "commander";
import { ExitCode } from "../core/exit-codes.js";
import { maskSecrets } from "../core/redact.js";
import { versionText } from "../core/version.js";
import { registerAudit } from "./commands/audit.js";
import { registerConfig } from "./commands/config.js";
import { registerDrill, registerKill, registerReset } from "./commands/control.js";
import { registerDoctor } from "./commands/doctor.js";
import { registerEvm } from "./commands/evm.js";
import { registerExposure } from "./commands/exposure.js";
import { registerLogs } from "./commands/logs.js";
import { registerReplicas } from "./commands/replicas.js";
import { registerRun } from "./commands/run.js";
import { registerSchedule } from "./commands/schedule.js";
import { registerSim } from "./commands/sim.js";
import { registerStatus } from "./commands/status.js";
import type { CliDeps } from "./deps.js";
import { CliError, exitCodeFor } from "./errors.js";

/**
 * Builds the whole CLI; used by bin/ and by tests (which pass their own deps).
 *
 * Loaded on use: every command is registered (its flags, its help), but what only its action needs (the daemon,
 * the HTTP and RPC clients, the keys and signing, doctor's checks, the simulator) is imported by the action
 * (`await import(...)`). Every process starts by loading the CLI, and most are not `run`: `--version` took 0.24 s
 * of CPU when the whole daemon was loaded for it, 0.16 s now (test/cli/loaded-on-use.test.ts checks what they load).
 */
export function createProgram(deps: CliDeps): Command {
  const program = new Command("hl-deadman")
    .description(
      "A dead man's switch for Hyperliquid: keeps scheduleCancel armed while everything is healthy.",
    )
    // -v and -V both print it: -v is what most CLIs take, -V commander's default.
    .version(versionText(), "-v, --version", "print the version, the commit and the build date")
    // Usage errors: one line plus a pointer to --help, never the whole help (runCli writes them).
    .showHelpAfterError(false)
    .configureHelp({ minWidthToWrap: 24 })
    .configureOutput({
      writeOut: (s) => deps.stdout.write(s),
      writeErr: (s) => deps.stderr.write(maskSecrets(s)),
      outputError: () => {},
      getOutHelpWidth: () => Math.min(deps.stdout.columns ?? 80, 120),
      getErrHelpWidth: () => Math.min(deps.stderr.columns ?? 80, 120),
    });
  registerRun(program, deps);
  registerSchedule(program, deps);
  registerStatus(program, deps);
  registerExposure(program, deps);
  registerEvm(program, deps);
  registerSim(program, deps);
  registerConfig(program, deps);
  registerDoctor(program, deps);
  registerLogs(program, deps, () => deps.stdin ?? process.stdin);
  registerAudit(program, deps);
  registerReset(program, deps);
  registerDrill(program, deps);
  registerReplicas(program, deps);
  registerKill(program, deps);
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

/** Exit code -> the `code` of a `--json` error document (docs/cli.md, "Exit codes"). */
export const ERROR_CODE_NAMES: Readonly<Record<number, string>> = Object.freeze({
  [ExitCode.runtime]: "runtime",
  [ExitCode.usage]: "usage",
  [ExitCode.dataErr]: "data",
  [ExitCode.noInput]: "no_input",
  [ExitCode.unavailable]: "unavailable",
  [ExitCode.tempFail]: "locked",
  [ExitCode.config]: "config",
});

/** The command word of argv (`run`, `config`, ...), or undefined. */
function commandOf(argv: string[], program: Command): string | undefined {
  const names = new Set(program.commands.map((c) => c.name()));
  return argv.slice(2).find((a) => names.has(a));
}

/**
 * Whether errors are written as a JSON log line: for `run` (the only command that logs) whenever its logs are
 * JSON, i.e. stdout is not a terminal (a service manager, a pipe) or `--json` was given; text otherwise.
 */
function errorsAsLogLines(command: string | undefined, argv: string[], deps: CliDeps): boolean {
  return command === "run" && (argv.includes("--json") || deps.stdout.isTTY !== true);
}

/** Runs the CLI and resolves to the exit code; never calls process.exit itself. */
export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  const program = createProgram(deps);
  const command = commandOf(argv, program);
  const json = argv.slice(2).includes("--json");
  const report = (code: ExitCode, message: string, extra?: string) => {
    const masked = maskSecrets(message);
    // --json: one JSON document on stdout, on failure too.
    if (json)
      deps.stdout.write(
        `${JSON.stringify({ error: { code: ERROR_CODE_NAMES[code] ?? "runtime", exitCode: code, message: masked } })}\n`,
      );
    if (errorsAsLogLines(command, argv, deps)) {
      // The shape of the daemon's own pino lines (level 50 = error), so journald gets one format.
      deps.stderr.write(
        `${JSON.stringify({ level: 50, time: deps.clock.now(), pid: process.pid, module: "cli", event: "cli.error", exitCode: code, msg: masked })}\n`,
      );
      return;
    }
    deps.stderr.write(`hl-deadman: ${masked}\n${extra ? maskSecrets(extra) : ""}`);
  };
  try {
    // -V, commander's own short flag of old, still prints the version.
    await program.parseAsync(
      argv.length === 3 && argv[2] === "-V" ? [...argv.slice(0, 2), "--version"] : argv,
    );
    return typeof process.exitCode === "number" ? process.exitCode : ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version come through here with exit code 0.
      if (error.exitCode === 0) return ExitCode.ok;
      // No command given: commander has printed the help itself (to stderr); nothing to add.
      if (error.code === "commander.help") {
        if (json)
          deps.stdout.write(
            `${JSON.stringify({ error: { code: "usage", exitCode: ExitCode.usage, message: "no command given; see 'hl-deadman --help'" } })}\n`,
          );
        return ExitCode.usage;
      }
      const oneLine = error.message
        .replace(/^error: /, "")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .join(" ");
      report(ExitCode.usage, `${oneLine}; see 'hl-deadman ${command ? `${command} ` : ""}--help'`);
      return ExitCode.usage;
    }
    const code = exitCodeFor(error);
    const message = error instanceof Error ? error.message : String(error);
    const stack =
      !(error instanceof CliError) && code === ExitCode.runtime && error instanceof Error && error.stack
        ? `${error.stack.split("\n").slice(1, 4).join("\n")}\n`
        : undefined;
    report(code, message, stack);
    return code;
  }
}
