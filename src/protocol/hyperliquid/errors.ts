/**
 * Every way a call to the Hyperliquid API can fail, as one error class with a `kind`.
 *
 * The exchange answers almost every refusal with HTTP 200 and `{"status":"err","response":"<text>"}`
 * (docs/exchange-behaviour.md §5), so the kind comes from the server's text. `classifyExchangeError` is the only place that
 * knows those strings; it is pure and unit-tested on every recorded one. HTTP-level failures (429, 422, 5xx),
 * transport failures and unreadable bodies get their own kinds.
 *
 * `retryable`: a new request (always with a fresh nonce) can help. `permanent`: nothing will work until an
 * operator acts (docs/exchange-behaviour.md §11). Both come from the one policy table (src/core/errors/policy.ts,
 * docs/errors.md). A message never carries a key; URLs go through `redactUrl`.
 */
import { BaseError } from "../../core/errors/base.js";
import { type PolicyRows, policyRow as row, rowFor } from "../../core/errors/policy.js";
import { ExitCode } from "../../core/exit-codes.js";
import { redactUrl } from "../../core/redact.js";

export type HyperliquidErrorKind =
  /** "Scheduled cancel time too early, must be at least 5 seconds from now." */
  | "too_early"
  /** the daily trigger limit is reached (no real string is known, docs/exchange-behaviour.md §3) */
  | "daily_limit"
  /** "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $…" */
  | "volume_gate"
  /** "Invalid nonce: duplicate nonce …" / "… nonce too low … < …" / "… nonce too high … > …" */
  | "nonce"
  /** "Action already expired" */
  | "expired"
  /** "User or API Wallet 0x… does not exist." / "Must deposit before performing actions. …" / "Unable to recover signer." */
  | "unknown_signer"
  /** "Vault not registered: 0x…" */
  | "vault_not_registered"
  /** "Too many cumulative requests sent (…) …" */
  | "address_budget"
  /** HTTP 429 */
  | "rate_limited"
  /** HTTP 422 ("Failed to deserialize the JSON body into the target type") or another 4xx */
  | "bad_request"
  /** HTTP 5xx (e.g. 500 with body `null`) */
  | "server_error"
  /** no response: time-out, reset, refused, DNS, socket hang up, aborted */
  | "transport"
  /** a response we cannot read: not JSON, the wrong shape, too large, or an unexpected status */
  | "malformed_response"
  /** a 3xx answer with a Location: never followed (src/protocol/http/http.ts), the URL is not the API's */
  | "redirect"
  /** any other `{"status":"err"}` text */
  | "rejected";

export type HyperliquidEndpoint = "exchange" | "info";
export type NonceDetail = "duplicate" | "too_low" | "too_high";

/** `nonce` is refined by its detail: a duplicate is cured by the next nonce, a clock off the window is not. */
export type HyperliquidPolicyKey = HyperliquidErrorKind | `nonce/${NonceDetail}`;

const { runtime, unavailable } = ExitCode;

/** The exchange's rows of the error policy (src/protocol/policy.ts composes the table). */
export const HYPERLIQUID_POLICY: PolicyRows<HyperliquidPolicyKey> = Object.freeze({
  too_early: row(false, false, false, runtime, "cancel time under 5 s after the exchange's clock"),
  daily_limit: row(false, false, false, runtime, "10 scheduled-cancel triggers today; resets at 00:00 UTC"),
  volume_gate: row(false, true, false, runtime, "the account has not traded $1M: scheduleCancel is refused"),
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
  redirect: row(false, false, false, unavailable, "a 3xx redirect, never followed: the URL is not the API's"),
  rejected: row(false, false, false, runtime, "any other refusal text"),
});

const policyFor = (kind: HyperliquidErrorKind, nonceDetail?: NonceDetail) =>
  rowFor(HYPERLIQUID_POLICY, "hyperliquid", kind, nonceDetail);

/** Every kind, in the order of the policy table (src/core/errors/policy.ts). */
export const HYPERLIQUID_ERROR_KINDS: readonly HyperliquidErrorKind[] = Object.freeze(
  Object.keys(HYPERLIQUID_POLICY).filter((k): k is HyperliquidErrorKind => !k.includes("/")),
);

/** Kinds for which nothing works until an operator acts (docs/exchange-behaviour.md §11): read from the policy table. */
export const PERMANENT_KINDS: ReadonlySet<HyperliquidErrorKind> = new Set(
  HYPERLIQUID_ERROR_KINDS.filter((kind) => HYPERLIQUID_POLICY[kind].permanent),
);

/** Whether a fresh request can help, for a kind (and, for `nonce`, its detail): the policy table's row. */
export function kindIsRetryable(kind: HyperliquidErrorKind, nonceDetail?: NonceDetail): boolean {
  // A duplicate is cured by the next nonce; too low / too high mean the local clock is off (docs/exchange-behaviour.md §8),
  // and every nonce taken from that clock will be refused the same way.
  return policyFor(kind, nonceDetail).retryable;
}

const HINTS: Record<HyperliquidErrorKind, string> = {
  too_early:
    "The cancel time must be at least 5 s after the exchange's clock: check the lead time and the local clock.",
  daily_limit:
    "The daily scheduled-cancel trigger limit (10 per UTC day) is reached; it resets at 00:00 UTC.",
  volume_gate:
    "The exchange refuses scheduleCancel until the account has traded $1,000,000 of volume; the switch cannot work on this account.",
  nonce: "The nonce was refused.",
  expired:
    "The request's expiresAfter passed before the exchange processed it; a new request can succeed. If every request expires, the local clock is behind the exchange's by more than the request window: check the clock (NTP).",
  unknown_signer:
    "The exchange recovered a signer it does not know: check the key, the network (mainnet/testnet), that the API wallet is approved, and that the account has a deposit.",
  vault_not_registered: "The vaultAddress is not a registered vault or subaccount of the signer.",
  address_budget:
    "The address's cumulative request budget (10,000 + 1 per USDC traded) is used up; the exchange now allows 1 request per 10 s.",
  rate_limited: "The IP rate limit was hit (HTTP 429): back off before the next request.",
  bad_request: "The exchange could not read the request: a bug or an API change.",
  server_error: "The exchange had a server error; it is usually transient.",
  transport: "No response arrived from the exchange.",
  malformed_response: "The response could not be read.",
  redirect:
    "The URL answered with a redirect, which hl-deadman never follows (a signed action must not go to a host nobody configured): set the API URL to the final one.",
  rejected: "The exchange refused the request with a message hl-deadman does not recognise.",
};

const NONCE_HINTS: Record<NonceDetail, string> = {
  duplicate: "That nonce was already used; the next request takes a fresh one.",
  too_low:
    "The nonce (the local clock in ms) is below the exchange's window: check the clock (NTP); it must be within (T - 2 d, T + 1 d) of the exchange.",
  too_high:
    "The nonce (the local clock in ms) is above the exchange's window: check the clock (NTP); it must be within (T - 2 d, T + 1 d) of the exchange.",
};

export type HyperliquidApiErrorParameters = {
  kind: HyperliquidErrorKind;
  endpoint: HyperliquidEndpoint;
  status?: number | undefined;
  serverMessage?: string | undefined;
  nonceDetail?: NonceDetail | undefined;
  /** the request URL (redacted before it is shown) */
  url?: string | undefined;
  /** the caller aborted the request: never retryable */
  aborted?: boolean | undefined;
  /** what went wrong, in our words, when the server said nothing useful */
  reason?: string | undefined;
  /** what the operator most likely has to fix, when the answer shows it (signerMismatchHint) */
  hint?: string | undefined;
  cause?: unknown;
};

const MAX_SHOWN = 300;
const MAX_KEPT = 4096;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

export class HyperliquidApiError extends BaseError {
  override name = "HyperliquidApiError";
  readonly domain = "hyperliquid" as const;
  readonly kind: HyperliquidErrorKind;
  /** A new request (with a fresh nonce) can help. */
  readonly retryable: boolean;
  /** The switch cannot work until an operator acts. */
  readonly permanent: boolean;
  /** HTTP status when there was a response. */
  readonly status: number | undefined;
  /** The server's exact text (the `response` string, or the body text), capped at 4 KiB. */
  readonly serverMessage: string | undefined;
  readonly endpoint: HyperliquidEndpoint;
  readonly nonceDetail?: NonceDetail;
  /** The caller's signal aborted the request. */
  readonly aborted: boolean;
  /** What the operator most likely has to fix, when the answer shows it (signerMismatchHint). */
  readonly hint: string | undefined;

  constructor(params: HyperliquidApiErrorParameters) {
    const {
      kind,
      endpoint,
      status,
      serverMessage,
      nonceDetail,
      url,
      aborted = false,
      reason,
      hint,
      cause,
    } = params;
    // Our reason (when we give one) says more than the body of an unreadable response; the server's text
    // then goes on its own line.
    const hasText = serverMessage !== undefined && serverMessage !== "";
    const said = reason ?? (hasText ? serverMessage : undefined);
    const short = `Hyperliquid ${endpoint} request failed (${kind})${said ? `: ${clip(said, MAX_SHOWN)}` : "."}`;
    super(short, {
      cause,
      metaMessages: [
        reason !== undefined && hasText ? `Server said: ${clip(serverMessage, MAX_SHOWN)}` : undefined,
        hint,
        nonceDetail ? NONCE_HINTS[nonceDetail] : HINTS[kind],
        status !== undefined ? `HTTP status: ${status}` : undefined,
        url ? `URL: ${redactUrl(url)}` : undefined,
      ],
    });
    this.kind = kind;
    this.endpoint = endpoint;
    this.status = status;
    this.serverMessage = serverMessage === undefined ? undefined : clip(serverMessage, MAX_KEPT);
    if (nonceDetail) this.nonceDetail = nonceDetail;
    this.aborted = aborted;
    this.hint = hint;
    const policy = policyFor(kind, nonceDetail);
    this.retryable = !aborted && policy.retryable;
    this.permanent = policy.permanent;
  }
}

/**
 * "User or API Wallet 0x… does not exist" names the address the exchange recovered from the signature. When that
 * is not our signer, the signature was checked against something else than what we signed: the other network's
 * source (`a` mainnet, `b` testnet; `--network testnet` against a mainnet host, or the reverse) or another key. The
 * address then means nothing to the operator: say so (docs/exchange-behaviour.md, signing).
 */
export function signerMismatchHint(text: string, signer: string, isMainnet: boolean): string | undefined {
  const named = /User or API Wallet (0x[0-9a-fA-F]{40}) does not exist/i.exec(text)?.[1]?.toLowerCase();
  if (named === undefined || named === signer.toLowerCase()) return undefined;
  return (
    `the exchange recovered this request's signature as ${named}, not the signer ${signer.toLowerCase()}: a network ` +
    `or signature mismatch. It was signed for ${isMainnet ? "mainnet" : "testnet"}; is the API URL a ` +
    `${isMainnet ? "testnet" : "mainnet"} host (check --network and --api-url), or does the signing differ?`
  );
}

export type ExchangeErrorClassification = { kind: HyperliquidErrorKind; nonceDetail?: NonceDetail };

// Daily limit: no real string is known (docs/exchange-behaviour.md §3), so recognise any plausible wording. The simulator's
// default is "Too many scheduled cancel triggers today", the only wording seen in the wild (invented there).
const DAILY_LIMIT_PATTERNS = [
  /too many scheduled cancel triggers/i,
  /triggers? (limit|per day|today)/i,
  /max(imum)? (number of )?triggers/i,
];

/**
 * Maps the text of a `{"status":"err","response":"…"}` answer to a kind. Pure: the recorded strings are in
 * docs/exchange-behaviour.md §5 (the `L1 error: ` prefix is optional on every one of them).
 */
export function classifyExchangeError(text: string): ExchangeErrorClassification {
  if (/invalid nonce/i.test(text)) {
    if (/duplicate nonce/i.test(text)) return { kind: "nonce", nonceDetail: "duplicate" };
    if (/nonce too low/i.test(text)) return { kind: "nonce", nonceDetail: "too_low" };
    if (/nonce too high/i.test(text)) return { kind: "nonce", nonceDetail: "too_high" };
    return { kind: "nonce" };
  }
  if (/scheduled cancel time too early/i.test(text)) return { kind: "too_early" };
  if (/until enough volume traded/i.test(text)) return { kind: "volume_gate" };
  if (/already expired/i.test(text)) return { kind: "expired" };
  if (
    /User or API Wallet 0x[0-9a-f]* does not exist/i.test(text) ||
    /Must deposit before performing actions/i.test(text) ||
    /Unable to recover signer/i.test(text)
  ) {
    return { kind: "unknown_signer" };
  }
  if (/Vault not registered/i.test(text)) return { kind: "vault_not_registered" };
  if (/Too many cumulative requests sent/i.test(text)) return { kind: "address_budget" };
  if (DAILY_LIMIT_PATTERNS.some((re) => re.test(text))) return { kind: "daily_limit" };
  return { kind: "rejected" };
}

/**
 * The kind for a non-200 HTTP status, or undefined for 200. 429 → rate_limited, 5xx → server_error, any other
 * 4xx (422 in practice, docs/exchange-behaviour.md §5, §5.2) → bad_request, anything else unexpected → malformed_response.
 */
export function classifyHttpStatus(status: number): HyperliquidErrorKind | undefined {
  if (status === 200) return undefined;
  if (status === 429) return "rate_limited";
  if (status >= 500 && status <= 599) return "server_error";
  if (status >= 400 && status <= 499) return "bad_request";
  return "malformed_response";
}
