import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";

/** A configuration that cannot be used: exit 78, every issue listed. */
export class ConfigError extends BaseError {
  override name = "ConfigError";
  readonly exitCode = ExitCode.config;
  readonly issues: string[];
  readonly file: string | undefined;
  constructor(issues: string[], { file }: { file?: string | undefined } = {}) {
    super(
      issues.length === 1
        ? `Invalid configuration: ${issues[0]}`
        : `Invalid configuration (${issues.length} problems):`,
      { metaMessages: issues.length === 1 ? [] : issues.map((i) => `- ${i}`) },
    );
    this.issues = issues;
    this.file = file;
  }
}
