import { BaseError, type BaseErrorParameters } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";
import { exitCodeOfError } from "../protocol/policy.js";

/** An error that tells the CLI which exit code to use (docs/cli.md: 1 runtime, 2 usage, 65 data, 66 no input, 69 unavailable, 75 locked, 78 config). */
export class CliError extends BaseError {
  override name = "CliError";
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode, args: BaseErrorParameters = {}) {
    super(message, args);
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string, args?: BaseErrorParameters) =>
  new CliError(message, ExitCode.usage, args);
export const configError = (message: string, args?: BaseErrorParameters) =>
  new CliError(message, ExitCode.config, args);

/** Maps any error to the contract's exit code. Errors may also carry `exitCode` themselves. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error && typeof error === "object" && "exitCode" in error) {
    const code = (error as { exitCode: unknown }).exitCode;
    if (typeof code === "number" && (Object.values(ExitCode) as number[]).includes(code))
      return code as ExitCode;
  }
  // an error of a family (exchange, node, transport, argument) that no command wrapped: the policy table's code
  return exitCodeOfError(error) ?? ExitCode.runtime;
}
