/**
 * redactUrl (src/core/redact.ts): what is not a URL is "[invalid url]" (answered before any parse that throws), and
 * a URL keeps its scheme, host and the well-known path segments only.
 */
import { describe, expect, test } from "vitest";
import { redactUrl } from "../../src/core/redact.js";

describe("redactUrl", () => {
  test("not a URL: [invalid url]", () => {
    for (const url of ["model", "", "http://", "not a url", "/exchange", "://x"])
      expect(redactUrl(url)).toBe("[invalid url]");
  });

  test("a URL: the host and the known segments, the rest hidden", () => {
    expect(redactUrl("https://user:pw@rpc.example.com:8545/KEY123/evm?apikey=1#f")).toBe(
      "https://rpc.example.com:8545/***/evm?***",
    );
    expect(redactUrl("https://api.hyperliquid.xyz/exchange")).toBe("https://api.hyperliquid.xyz/exchange");
    expect(redactUrl("http://127.0.0.1:3001")).toBe("http://127.0.0.1:3001");
  });
});
