/**
 * The error policy's shape and its reading. ONE table says, for every kind of every error family, whether a new
 * request can help (`retryable`), whether nothing will work until an operator acts (`permanent`,
 * docs/exchange-behaviour.md §11), whether a request that failed this way may still have been applied
 * (`outcomeUnknown`: the switch then assumes the worst, docs/daemon.md "The switch machine"), and the exit code a
 * command uses when it fails with it (docs/cli.md, "Exit codes").
 *
 * The base knows no protocol: each protocol exports its own rows next to its error class
 * (src/protocol/http/errors.ts, src/protocol/hyperliquid/errors.ts, src/protocol/evm/errors.ts) and
 * src/protocol/policy.ts composes them with the `argument` rows here into the table everything reads
 * (docs/errors.md shows it, generated).
 */
import { ExitCode } from "../exit-codes.js";
import { BaseError } from "./base.js";

export type ErrorPolicy = {
  /** A new request (for the exchange: with a fresh nonce) can help. */
  retryable: boolean;
  /** Nothing will work until an operator acts. */
  permanent: boolean;
  /** The request may have been applied although it failed (no answer, or an answer we cannot trust). */
  outcomeUnknown: boolean;
  /** The exit code of a command that fails with this kind. */
  exitCode: ExitCode;
  /** One line for the docs. */
  note: string;
};

/** One family's rows: by kind, or by `kind/detail` where a detail refines a kind (the exchange's nonce refusals). */
export type PolicyRows<K extends string = string> = Readonly<Record<K, ErrorPolicy>>;

/** One row of the table, frozen. */
export const policyRow = (
  retryable: boolean,
  permanent: boolean,
  outcomeUnknown: boolean,
  exitCode: ExitCode,
  note: string,
): ErrorPolicy => Object.freeze({ retryable, permanent, outcomeUnknown, exitCode, note });

const { usage } = ExitCode;
const row = policyRow;

/** The `argument` family (ArgumentError, a bad argument refused before anything is sent). */
export const ARGUMENT_POLICY: PolicyRows<"argument"> = Object.freeze({
  argument: row(false, false, false, usage, "a bad argument, refused before anything is sent"),
});

/** The row for `kind` in one family's rows, refined by `detail` when the rows have `kind/detail`. Pure. */
export function rowFor(rows: PolicyRows, family: string, kind: string, detail?: unknown): ErrorPolicy {
  if (typeof detail === "string") {
    const refined = rows[`${kind}/${detail}`];
    if (refined) return refined;
  }
  const found = Object.hasOwn(rows, kind) ? rows[kind] : undefined;
  if (!found) throw new BaseError(`No error policy for ${family}.${kind}.`);
  return found;
}

/** What an error of one of the families looks like to the policy. */
export type Classified = Error & {
  domain: string;
  kind: string;
  nonceDetail?: unknown;
  aborted?: unknown;
};

export type PolicyMatch<D extends string = string> = {
  domain: D;
  /** the table's key: the kind, or `kind/<detail>` */
  key: string;
  policy: ErrorPolicy;
  /** the error of the chain that was classified */
  error: Classified;
};

export type ErrorPolicyReader<T extends Readonly<Record<string, PolicyRows>>> = {
  readonly table: T;
  /** The row for `domain` and `kind` (and a nonce's detail). Pure. */
  policyFor(domain: keyof T & string, kind: string, nonceDetail?: unknown): ErrorPolicy;
  /** The first error of the cause chain (BaseError.walk) that belongs to a family, with its row; else undefined. */
  classify(error: unknown): PolicyMatch<keyof T & string> | undefined;
  /**
   * Pure predicate (after viem's `shouldRetry`): true when a new request can help. Looks through the cause chain
   * for an error of one of the families; an abort by the caller is never retried; anything else (validation,
   * signing, a plain Error) is false.
   */
  shouldRetry(error: unknown): boolean;
  /** True when the error (or its cause chain) is of a kind that needs an operator. */
  isPermanentError(error: unknown): boolean;
  /** The exit code the table gives the error (or its cause chain); undefined for an error of no family. */
  exitCodeOfError(error: unknown): ExitCode | undefined;
};

/** Reads a table composed of families' rows (src/protocol/policy.ts). */
export function createErrorPolicy<T extends Readonly<Record<string, PolicyRows>>>(
  table: T,
): ErrorPolicyReader<T> {
  type D = keyof T & string;
  const isClassified = (error: unknown): error is Classified => {
    if (!(error instanceof Error)) return false;
    const { domain, kind } = error as Partial<Classified>;
    return (
      typeof domain === "string" &&
      Object.hasOwn(table, domain) &&
      typeof kind === "string" &&
      Object.hasOwn(table[domain] as PolicyRows, kind)
    );
  };
  const policyFor = (domain: D, kind: string, nonceDetail?: unknown): ErrorPolicy => {
    const rows = table[domain];
    if (!rows) throw new BaseError(`No error policy for ${domain}.${kind}.`);
    return rowFor(rows, domain, kind, nonceDetail);
  };
  const classify = (error: unknown): PolicyMatch<D> | undefined => {
    const found = BaseError.prototype.walk.call(error, isClassified) as Classified | undefined;
    if (!found) return undefined;
    const rows = table[found.domain] as PolicyRows;
    const refined = typeof found.nonceDetail === "string" ? `${found.kind}/${found.nonceDetail}` : undefined;
    const key = refined !== undefined && Object.hasOwn(rows, refined) ? refined : found.kind;
    return {
      domain: found.domain as D,
      key,
      policy: policyFor(found.domain as D, found.kind, found.nonceDetail),
      error: found,
    };
  };
  return {
    table,
    policyFor,
    classify,
    shouldRetry(error) {
      const match = classify(error);
      if (!match) return false;
      if (match.error.aborted === true) return false;
      return match.policy.retryable;
    },
    isPermanentError: (error) => classify(error)?.policy.permanent === true,
    exitCodeOfError: (error) => classify(error)?.policy.exitCode,
  };
}
