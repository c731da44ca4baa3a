/**
 * The error policy everything reads: the families' rows (each exported by its protocol, next to its error class)
 * composed into one table, and its readers (src/core/errors/policy.ts). The switch driver, the CLI commands, the
 * transport's retries and `shouldRetry` all read this table and nothing else. docs/errors.md shows it (generated).
 *
 * Families (each a BaseError subclass with a `domain` and a typed `kind`): `hyperliquid` (HyperliquidApiError),
 * `evm` (EvmError and its subclasses), `transport` (TransportError, before a protocol layer maps it) and
 * `argument` (ArgumentError, a bad argument refused before anything is sent).
 */
import { ARGUMENT_POLICY, createErrorPolicy, type PolicyMatch } from "../core/errors/policy.js";
import { EVM_POLICY } from "./evm/errors.js";
import { TRANSPORT_POLICY } from "./http/errors.js";
import { HYPERLIQUID_POLICY } from "./hyperliquid/errors.js";

export type { ErrorPolicy } from "../core/errors/policy.js";
export type { HyperliquidPolicyKey } from "./hyperliquid/errors.js";

export const ERROR_POLICY = Object.freeze({
  hyperliquid: HYPERLIQUID_POLICY,
  evm: EVM_POLICY,
  transport: TRANSPORT_POLICY,
  argument: ARGUMENT_POLICY,
});

export type ErrorPolicyTable = typeof ERROR_POLICY;
export type ErrorDomain = keyof ErrorPolicyTable;
export type { PolicyMatch };

export const { policyFor, classify, shouldRetry, isPermanentError, exitCodeOfError } =
  createErrorPolicy(ERROR_POLICY);
