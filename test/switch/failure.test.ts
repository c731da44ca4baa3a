/** A failed request's row, read through the one policy table (src/protocol/policy.ts), never guessed. */
import { describe, expect, test } from "vitest";
import { BaseError } from "../../src/core/errors/base.js";
import { HyperliquidApiError } from "../../src/protocol/hyperliquid/errors.js";
import { policyFor } from "../../src/protocol/policy.js";
import { describeFailure, UNCLASSIFIED } from "../../src/switch/failure.js";

describe("describeFailure", () => {
  test("behavior: an exchange error found in the cause chain gets its own row, not the unclassified one", () => {
    const refused = new HyperliquidApiError({
      kind: "volume_gate",
      endpoint: "exchange",
      serverMessage: "gate",
    });
    const wrapped = new BaseError("the push failed", { cause: refused });
    const row = policyFor("hyperliquid", "volume_gate");
    for (const error of [refused, wrapped])
      expect(describeFailure(error)).toEqual({
        kind: "volume_gate",
        message: "gate",
        permanent: row.permanent,
        retryable: row.retryable,
        outcomeUnknown: row.outcomeUnknown,
      });
    expect(row.permanent).toBe(true);
  });

  test("error: an error of no family: outcome unknown, retried, never permanent", () => {
    expect(describeFailure(new Error("boom"))).toEqual({ ...UNCLASSIFIED, message: "boom" });
    expect(describeFailure("text")).toEqual({ ...UNCLASSIFIED, message: "text" });
    expect(UNCLASSIFIED).toMatchObject({ permanent: false, retryable: true, outcomeUnknown: true });
  });
});
