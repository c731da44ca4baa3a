import { describe, expect, test } from "vitest";
import { BaseError, ValidationError } from "../../../src/core/errors/base.js";
import {
  classifyExchangeError,
  classifyHttpStatus,
  HyperliquidApiError,
  type HyperliquidErrorKind,
} from "../../../src/protocol/hyperliquid/errors.js";
import { isPermanentError as isPermanent, shouldRetry as isRetryable } from "../../../src/protocol/policy.js";

// Every string recorded in docs/exchange-behaviour.md §5, copied exactly, with the kind, retryable and permanent we expect.
const RECORDED: [text: string, kind: HyperliquidErrorKind, retryable: boolean, permanent: boolean][] = [
  ["Scheduled cancel time too early, must be at least 5 seconds from now.", "too_early", false, false],
  [
    "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $373.47205.",
    "volume_gate",
    false,
    true,
  ],
  [
    "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $0.",
    "volume_gate",
    false,
    true,
  ],
  ["Invalid nonce: duplicate nonce 1754922717871", "nonce", true, false],
  ["Invalid nonce: nonce too low 1776584283874 < 1776584799101", "nonce", false, false],
  ["Invalid nonce: nonce too high 1791572677029 > 1791486156858", "nonce", false, false],
  ["Action already expired", "expired", true, false],
  [
    "L1 error: User or API Wallet 0x0123456789abcdef0123456789abcdef01234589 does not exist.",
    "unknown_signer",
    false,
    true,
  ],
  [
    "User or API Wallet 0x95f0b2e1a4d8c3f7e6b5a4d3c2b1a0f9e8d701fc does not exist.",
    "unknown_signer",
    false,
    true,
  ],
  [
    "Must deposit before performing actions. User: 0x8ba1f109551bd432803012645ac136ddd64dba72",
    "unknown_signer",
    false,
    true,
  ],
  ["Unable to recover signer.", "unknown_signer", false, true],
  ["Vault not registered: 0x1111111111111111111111111111111111111111", "vault_not_registered", false, true],
  [
    "Too many cumulative requests sent (97460 > 97456) for cumulative volume traded $87457.46. Place taker orders to free up 1 request per USDC traded.",
    "address_budget",
    false,
    true,
  ],
  // No real daily-limit string is known (docs/exchange-behaviour.md §3): the simulator's wording and plausible variants.
  ["Too many scheduled cancel triggers today", "daily_limit", false, false],
  ["Scheduled cancel trigger limit reached", "daily_limit", false, false],
  ["Maximum number of triggers per day reached", "daily_limit", false, false],
  ["Max triggers reached for today", "daily_limit", false, false],
  ["Order has invalid size.", "rejected", false, false],
];

describe("classifyExchangeError", () => {
  test.each(RECORDED)("behavior: %s", (text, kind, retryable, permanent) => {
    const c = classifyExchangeError(text);
    expect(c.kind).toBe(kind);
    const error = new HyperliquidApiError({ ...c, endpoint: "exchange", status: 200, serverMessage: text });
    expect(error.kind).toBe(kind);
    expect(error.retryable).toBe(retryable);
    expect(error.permanent).toBe(permanent);
    expect(error.serverMessage).toBe(text);
    expect(error.shortMessage).toContain(`(${kind})`);
    expect(error.shortMessage).toContain(text);
    expect(isRetryable(error)).toBe(retryable);
    expect(isPermanent(error)).toBe(permanent);
  });

  test("behavior: the L1 error prefix is optional on every string", () => {
    for (const [text, kind] of RECORDED) {
      expect(classifyExchangeError(`L1 error: ${text}`).kind).toBe(kind);
    }
  });

  test("behavior: nonce details", () => {
    expect(classifyExchangeError("Invalid nonce: duplicate nonce 1754922717871")).toEqual({
      kind: "nonce",
      nonceDetail: "duplicate",
    });
    expect(classifyExchangeError("Invalid nonce: nonce too low 1776584283874 < 1776584799101")).toEqual({
      kind: "nonce",
      nonceDetail: "too_low",
    });
    expect(classifyExchangeError("Invalid nonce: nonce too high 1791572677029 > 1791486156858")).toEqual({
      kind: "nonce",
      nonceDetail: "too_high",
    });
    // An unrecognised nonce wording: a fresh nonce is cheap, so it stays retryable.
    expect(classifyExchangeError("Invalid nonce: something new")).toEqual({ kind: "nonce" });
    expect(new HyperliquidApiError({ kind: "nonce", endpoint: "exchange" }).retryable).toBe(true);
  });

  test("behavior: too low / too high say to check the clock", () => {
    const e = new HyperliquidApiError({
      ...classifyExchangeError("Invalid nonce: nonce too low 1776584283874 < 1776584799101"),
      endpoint: "exchange",
      status: 200,
      serverMessage: "Invalid nonce: nonce too low 1776584283874 < 1776584799101",
    });
    expect(e.nonceDetail).toBe("too_low");
    expect(e.message).toMatch(/check the clock/);
  });
});

describe("HTTP statuses", () => {
  test.each([
    [429, "", "rate_limited", true],
    [422, "Failed to deserialize the JSON body into the target type", "bad_request", false],
    [400, "bad", "bad_request", false],
    [500, "null", "server_error", true],
    [502, "<html>Bad Gateway</html>", "server_error", true],
    [503, "", "server_error", true],
    [301, "", "malformed_response", true],
  ] as const)("behavior: HTTP %i → %s", (status, body, kind, retryable) => {
    expect(classifyHttpStatus(status)).toBe(kind);
    const e = new HyperliquidApiError({ kind, endpoint: "info", status, serverMessage: body });
    expect(e.status).toBe(status);
    expect(e.retryable).toBe(retryable);
    expect(e.permanent).toBe(false);
    expect(e.message).toContain(`HTTP status: ${status}`);
  });

  test("default: 200 is not an error", () => {
    expect(classifyHttpStatus(200)).toBeUndefined();
  });
});

describe("HyperliquidApiError", () => {
  test("default: the message names the endpoint, the kind and the server's text", () => {
    const e = new HyperliquidApiError({
      kind: "volume_gate",
      endpoint: "exchange",
      status: 200,
      serverMessage:
        "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $0.",
      url: "https://api.hyperliquid.xyz/exchange",
    });
    expect(e).toBeInstanceOf(BaseError);
    expect(e.name).toBe("HyperliquidApiError");
    expect(e.message).toMatchInlineSnapshot(`
      "Hyperliquid exchange request failed (volume_gate): Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $0.

      The exchange refuses scheduleCancel until the account has traded $1,000,000 of volume; the switch cannot work on this account.
      HTTP status: 200
      URL: https://api.hyperliquid.xyz/exchange"
    `);
  });

  test("behavior: URLs are redacted", () => {
    const e = new HyperliquidApiError({
      kind: "transport",
      endpoint: "info",
      url: "https://user:pass@node.example/SECRETKEY123/info?token=abc",
      reason: "ECONNREFUSED",
    });
    expect(e.message).not.toContain("SECRETKEY123");
    expect(e.message).not.toContain("pass");
    expect(e.message).not.toContain("abc");
    expect(e.message).toContain("https://node.example/***/info?***");
  });

  test("behavior: long server text is clipped in the message and capped in serverMessage", () => {
    const text = "x".repeat(10_000);
    const e = new HyperliquidApiError({
      kind: "server_error",
      endpoint: "info",
      status: 502,
      serverMessage: text,
    });
    expect(e.shortMessage.length).toBeLessThan(400);
    expect(e.serverMessage!.length).toBeLessThan(4200);
  });

  test("behavior: an aborted request is never retryable", () => {
    const e = new HyperliquidApiError({ kind: "transport", endpoint: "exchange", aborted: true });
    expect(e.retryable).toBe(false);
    expect(isRetryable(e)).toBe(false);
  });
});

describe("isRetryable", () => {
  test("behavior: looks through the cause chain", () => {
    const inner = new HyperliquidApiError({ kind: "server_error", endpoint: "exchange", status: 500 });
    expect(isRetryable(new BaseError("push failed", { cause: inner }))).toBe(true);
    const permanent = new HyperliquidApiError({ kind: "unknown_signer", endpoint: "exchange" });
    expect(isPermanent(new BaseError("push failed", { cause: permanent }))).toBe(true);
  });

  test("behavior: other errors are not retryable", () => {
    expect(isRetryable(new ValidationError("x", ["bad"]))).toBe(false);
    expect(isRetryable(new Error("boom"))).toBe(false);
    expect(isRetryable("string")).toBe(false);
    expect(isRetryable(undefined)).toBe(false);
    expect(isPermanent(new Error("boom"))).toBe(false);
  });
});
