/**
 * The error policy: ONE table saying, for every kind of every error family, whether a new request can help
 * (`retryable`), whether nothing will work until an operator acts (`permanent`, docs/exchange-behaviour.md §11),
 * whether a request that failed this way may still have been applied (`outcomeUnknown`: the switch then assumes
 * the worst, docs/daemon.md "The switch machine"), and the exit code a command uses when it fails with it
 * (docs/cli.md, "Exit codes"). The switch driver, the CLI commands, the transport's retries and `shouldRetry` all
 * read this table and nothing else. docs/errors.md shows it (generated).
 *
 * Families (each a BaseError subclass with a `domain` and a typed `kind`): `hyperliquid` (HyperliquidApiError),
 * `evm` (EvmError and its subclasses), `transport` (TransportError, before a protocol layer maps it) and
 * `argument` (ArgumentError, a bad argument refused before anything is sent).
 */
import type { EvmErrorKind } from "../../protocol/evm/errors.js";
import type { TransportErrorKind } from "../../protocol/http/errors.js";
import type { HyperliquidErrorKind, NonceDetail } from "../../protocol/hyperliquid/errors.js";
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

/** `nonce` is refined by its detail: a duplicate is cured by the next nonce, a clock off the window is not. */
export type HyperliquidPolicyKey = HyperliquidErrorKind | `nonce/${NonceDetail}`;

export type ErrorDomain = "hyperliquid" | "evm" | "transport" | "argument";

export type ErrorPolicyTable = {
  hyperliquid: Record<HyperliquidPolicyKey, ErrorPolicy>;
  evm: Record<EvmErrorKind, ErrorPolicy>;
  transport: Record<TransportErrorKind, ErrorPolicy>;
  argument: Record<"argument", ErrorPolicy>;
};

const { runtime, usage, unavailable } = ExitCode;
const row = (
  retryable: boolean,
  permanent: boolean,
  outcomeUnknown: boolean,
  exitCode: ExitCode,
  note: string,
): ErrorPolicy => Object.freeze({ retryable, permanent, outcomeUnknown, exitCode, note });

export const ERROR_POLICY: Readonly<ErrorPolicyTable> = Object.freeze({
  hyperliquid: Object.freeze({
    too_early: row(false, false, false, runtime, "cancel time under 5 s after the exchange's clock"),
    daily_limit: row(false, false, false, runtime, "10 scheduled-cancel triggers today; resets at 00:00 UTC"),
    volume_gate: row(
      false,
      true,
      false,
      runtime,
      "the account has not traded $1M: scheduleCancel is refused",
    ),
    nonce: row(true, false, false, runtime, "nonce refused (no detail given): the next nonce may pass"),
    "nonce/duplicate": row(true, false, false, runtime, "nonce already used: the next one passes"),
    "nonce/too_low": row(false, false, false, runtime, "local clock behind the exchange's nonce window"),
    "nonce/too_high": row(false, false, false, runtime, "local clock ahead of the exchange's nonce window"),
    expired: row(true, false, false, runtime, "expiresAfter passed before the exchange processed it"),
    unknown_signer: row(false, true, false, runtime, "the exchange does not know the signer"),
    vault_not_registered: row(
      false,
      true,
      false,
      runtime,
      "vaultAddress is not the signer's vault or subaccount",
    ),
    address_budget: row(false, true, false, runtime, "the address's cumulative request budget is used up"),
    rate_limited: row(true, false, false, unavailable, "HTTP 429: the IP rate limit"),
    bad_request: row(false, false, false, runtime, "HTTP 422 or another 4xx: the exchange could not read it"),
    server_error: row(true, false, true, unavailable, "HTTP 5xx"),
    transport: row(true, false, true, unavailable, "no answer: time-out, reset, refused, DNS, abort"),
    malformed_response: row(true, false, true, unavailable, "an answer we cannot read"),
    redirect: row(
      false,
      false,
      false,
      unavailable,
      "a 3xx redirect, never followed: the URL is not the API's",
    ),
    rejected: row(false, false, false, runtime, "any other refusal text"),
  }),
  evm: Object.freeze({
    json_rpc: row(false, false, false, runtime, "the node answered with a JSON-RPC error"),
    method_not_found: row(false, true, false, unavailable, "the node does not serve the method (ots_)"),
    http: row(true, false, false, unavailable, "a non-2xx HTTP status"),
    transport: row(true, false, false, unavailable, "no answer: time-out, reset, refused, DNS, abort"),
    malformed_response: row(true, false, false, runtime, "not JSON-RPC, wrong id, or not the method's shape"),
    redirect: row(
      false,
      false,
      false,
      unavailable,
      "a 3xx redirect, never followed: the URL is not the node's",
    ),
    not_found: row(false, false, false, runtime, "the node does not know the block"),
    inconsistent_block: row(true, false, false, runtime, "pages of one block did not add up"),
  }),
  transport: Object.freeze({
    transport: row(true, false, true, unavailable, "no answer (before a protocol layer maps it)"),
    malformed_response: row(true, false, true, unavailable, "a body over the bounds (docs/security.md)"),
    redirect: row(false, false, false, unavailable, "a 3xx redirect (before a protocol layer maps it)"),
  }),
  argument: Object.freeze({
    argument: row(false, false, false, usage, "a bad argument, refused before anything is sent"),
  }),
});

/** What an error of one of the families looks like to the policy. */
type Classified = Error & {
  domain: ErrorDomain;
  kind: string;
  nonceDetail?: unknown;
  aborted?: unknown;
};

function isClassified(error: unknown): error is Classified {
  if (!(error instanceof Error)) return false;
  const { domain, kind } = error as Partial<Classified>;
  return (
    typeof domain === "string" &&
    Object.hasOwn(ERROR_POLICY, domain) &&
    typeof kind === "string" &&
    Object.hasOwn(ERROR_POLICY[domain as ErrorDomain], kind)
  );
}

export type PolicyMatch = {
  domain: ErrorDomain;
  /** the table's key: the kind, or `nonce/<detail>` */
  key: string;
  policy: ErrorPolicy;
  /** the error of the chain that was classified */
  error: Classified;
};

/** The row for `domain` and `kind` (and a nonce's detail). Pure. */
export function policyFor(domain: ErrorDomain, kind: string, nonceDetail?: unknown): ErrorPolicy {
  const table = ERROR_POLICY[domain] as Record<string, ErrorPolicy>;
  if (domain === "hyperliquid" && kind === "nonce" && typeof nonceDetail === "string") {
    const refined = table[`nonce/${nonceDetail}`];
    if (refined) return refined;
  }
  const found = table[kind];
  if (!found) throw new BaseError(`No error policy for ${domain}.${kind}.`);
  return found;
}

/** The first error of the cause chain (BaseError.walk) that belongs to a family, with its row; else undefined. */
export function classify(error: unknown): PolicyMatch | undefined {
  const found = BaseError.prototype.walk.call(error, isClassified) as Classified | undefined;
  if (!found) return undefined;
  const key =
    found.domain === "hyperliquid" && found.kind === "nonce" && typeof found.nonceDetail === "string"
      ? `nonce/${found.nonceDetail}`
      : found.kind;
  return {
    domain: found.domain,
    key,
    policy: policyFor(found.domain, found.kind, found.nonceDetail),
    error: found,
  };
}

/**
 * Pure predicate (after viem's `shouldRetry`): true when a new request can help. Looks through the cause chain
 * for an error of one of the families; an abort by the caller is never retried; anything else
 * (validation, signing, a plain Error) is false.
 */
export function shouldRetry(error: unknown): boolean {
  const match = classify(error);
  if (!match) return false;
  if (match.error.aborted === true) return false;
  return match.policy.retryable;
}

/** True when the error (or its cause chain) is of a kind that needs an operator. */
export function isPermanentError(error: unknown): boolean {
  return classify(error)?.policy.permanent === true;
}

/** The exit code the table gives the error (or its cause chain); undefined for an error of no family. */
export function exitCodeOfError(error: unknown): ExitCode | undefined {
  return classify(error)?.policy.exitCode;
}
