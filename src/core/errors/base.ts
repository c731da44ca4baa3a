/**
 * One error base for the whole project (after viem's BaseError): a short message, optional details,
 * meta lines, and a cause. Every error we throw descends from it; we never throw a bare string.
 */
export type BaseErrorParameters = {
  cause?: unknown;
  details?: string | undefined;
  metaMessages?: (string | undefined | false)[] | undefined;
};

/** How far `walk` follows `cause`. */
const MAX_CAUSE_DEPTH = 16;

export class BaseError extends Error {
  override name = "BaseError";
  readonly shortMessage: string;
  readonly details: string | undefined;
  readonly metaMessages: string[];

  constructor(shortMessage: string, args: BaseErrorParameters = {}) {
    const metaMessages = (args.metaMessages ?? []).filter(
      (m): m is string => typeof m === "string" && m !== "",
    );
    const details =
      args.details ??
      (args.cause instanceof BaseError
        ? args.cause.details
        : args.cause instanceof Error
          ? args.cause.message
          : undefined);
    const message = [
      shortMessage,
      ...(metaMessages.length > 0 ? ["", ...metaMessages] : []),
      ...(details && details !== shortMessage ? ["", `Details: ${details}`] : []),
    ].join("\n");
    super(message, args.cause === undefined ? undefined : { cause: args.cause });
    this.shortMessage = shortMessage;
    this.details = details;
    this.metaMessages = metaMessages;
  }

  /**
   * Walks the cause chain and returns the first error for which `fn` is true (or the last error). Stops after
   * MAX_CAUSE_DEPTH links, so a cyclic chain cannot hang it. Works on any Error (`BaseError.prototype.walk.call`).
   */
  walk(fn?: (err: unknown) => boolean): unknown {
    let err: unknown = this;
    for (let depth = 0; err instanceof Error && depth < MAX_CAUSE_DEPTH; depth++) {
      if (fn?.(err)) return err;
      if (err.cause === undefined) break;
      err = err.cause;
    }
    return fn ? undefined : err;
  }
}

/** A value that came in from outside (a response, a file, a flag) did not have the expected shape. */
export class ValidationError extends BaseError {
  override name = "ValidationError";
  readonly issues: string[];
  constructor(what: string, issues: string[], args: BaseErrorParameters = {}) {
    super(`Invalid ${what}.`, { ...args, metaMessages: issues, details: args.details });
    this.issues = issues;
  }
}
