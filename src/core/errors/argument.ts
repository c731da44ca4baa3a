/**
 * The one way to refuse a bad argument to our own APIs (a constructor option, a page number, a block tag): thrown
 * before anything is sent or started. Its policy row (src/core/errors/policy.ts) is never retryable, and the CLI maps it
 * to exit 2 (docs/cli.md, "Exit codes").
 */
import { BaseError, type BaseErrorParameters } from "./base.js";

export type ArgumentErrorParameters = BaseErrorParameters & {
  /** the argument's name, as the caller wrote it (`timeoutMs`, `page size`) */
  argument?: string | undefined;
};

export class ArgumentError extends BaseError {
  override name = "ArgumentError";
  readonly domain = "argument" as const;
  readonly kind = "argument" as const;
  readonly argument: string | undefined;
  constructor(message: string, { argument, ...args }: ArgumentErrorParameters = {}) {
    super(message, args);
    this.argument = argument;
  }
}
