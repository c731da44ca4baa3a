import { existsSync } from "node:fs";
import { connect } from "node:net";
import { userInfo } from "node:os";
import { createInterface } from "node:readline";
import { type Command, Option } from "commander";
import { controlRequest, controlSocketPath } from "../../app/control.js";
import { effectiveStateDir, loadConfig } from "../../config/load.js";
import { optionOf } from "../../config/options.js";
import { ExitCode } from "../../core/exit-codes.js";
import { systemTimers } from "../../core/runtime.js";
import type { CliDeps } from "../deps.js";
import { CliError, usageError } from "../errors.js";
import { configFlag } from "../options.js";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Who asks, for the daemon's log and audit trail: the user name and the pid (never anything secret). */
function whoAsks(): string {
  let name = "unknown user";
  try {
    name = userInfo().username;
  } catch {
    // a uid without a name (a container): the uid says it
    name = `uid ${process.getuid?.() ?? "?"}`;
  }
  return `${name} (pid ${process.pid})`.slice(0, 100);
}

/** Asks on a terminal for `expected`; resolves whether it was typed. */
export async function confirmOnTerminal(deps: CliDeps, question: string, expected: string): Promise<boolean> {
  const rl = createInterface({ input: deps.stdin ?? process.stdin, output: deps.stderr });
  try {
    const typed = await new Promise<string>((resolve) => {
      rl.question(`${question}\nType ${expected} to confirm: `, resolve);
      rl.once("close", () => resolve(""));
    });
    return typed.trim() === expected;
  } finally {
    rl.close();
  }
}

/** Sends one control request to the daemon that holds `stateDir`; errors in the contract's codes. */
export async function askDaemon(
  stateDir: string,
  request: { command: string; account: string; options?: Record<string, unknown> },
  timeoutMs = 60_000,
) {
  if (!existsSync(stateDir))
    throw new CliError(
      `The state directory ${stateDir} does not exist (check --state-dir).`,
      ExitCode.noInput,
    );
  try {
    return await controlRequest(
      stateDir,
      { ...request, by: whoAsks() },
      { timeoutMs, connect, timers: systemTimers() },
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ECONNREFUSED")
      throw new CliError(
        `No running daemon answers on ${controlSocketPath(stateDir)} (${code}). \`${request.command}\` is carried out by the daemon that holds this state directory: start it (or pass its --state-dir), then try again.`,
        ExitCode.unavailable,
      );
    if (code === "EACCES")
      throw new CliError(
        `${controlSocketPath(stateDir)} refuses this user (EACCES): run as the daemon's user (the socket is 0600).`,
        ExitCode.unavailable,
      );
    throw new CliError(
      `The daemon did not answer: ${error instanceof Error ? error.message : String(error)}`,
      ExitCode.unavailable,
    );
  }
}

export function registerReset(program: Command, deps: CliDeps): void {
  program
    .command("reset")
    .description("release an account latched HALTED by the escalation (through the running daemon)")
    .addOption(new Option("--account <addr>", "the HALTED account").makeOptionMandatory())
    .addOption(configFlag(optionOf("stateDir")))
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(new Option("--yes", "confirm without asking (required when stdin is not a terminal)"))
    .addOption(new Option("--json", "one JSON document on stdout"))
    .action(async (opts: Record<string, unknown>) => {
      const account = String(opts.account);
      if (!ADDRESS.test(account))
        throw usageError(`--account ${account}: must be 0x followed by 40 hex digits`);
      const { config } = loadConfig({
        options: { stateDir: opts.stateDir, config: opts.config },
        env: deps.env,
        cwd: deps.cwd,
      });
      const stateDir = effectiveStateDir(config, deps.cwd);
      if (opts.yes !== true) {
        const tty = (deps.stdin as { isTTY?: boolean } | undefined)?.isTTY ?? process.stdin.isTTY;
        if (opts.json === true || !tty)
          throw usageError(
            "reset changes what the daemon does: pass --yes (stdin is not a terminal, or --json)",
          );
        const ok = await confirmOnTerminal(
          deps,
          `Release HALTED for ${account}? The escalation may close its positions again if its rule still holds while the engine is down.`,
          "reset",
        );
        if (!ok) throw new CliError("Not confirmed: nothing was changed.", ExitCode.usage);
      }
      const answer = await askDaemon(stateDir, { command: "reset", account: account.toLowerCase() });
      if (!answer.ok) throw new CliError(`The daemon refused the reset: ${answer.error}`, ExitCode.runtime);
      if (opts.json === true) deps.stdout.write(`${JSON.stringify({ ok: true, ...answer.result })}\n`);
      else deps.stdout.write(`${account}: HALTED ${String(answer.result.detail ?? "released")}\n`);
    });
}
