/**
 * The explorer client: `userDetails`, the L1 transactions an address sent, newest first, each with
 * `error: null` when the exchange accepted it (docs/exchange-record.md, "The record"). The explorer lives on
 * its own host and path (`https://rpc.hyperliquid.xyz/explorer` on mainnet), not under the trading API.
 * Read-only, so the transport retries it like /info. Requests cost 40 IP weight each: read it at start-up,
 * after a lapse and on demand, never on a tight loop. The default URLs per network are EXPLORER_URLS in
 * src/config/schema.ts.
 */

import { normalizeAddress } from "../../core/address.js";
import { formatIssues } from "../../core/errors/parse.js";
import { classifyHttpStatus, HyperliquidApiError } from "./errors.js";
import { type ExplorerTx, UserDetailsResponse } from "./schemas.js";
import { createHttpTransport, type HttpTransport } from "./transport.js";

export type ExplorerClientOptions = {
  /** Full URL of the explorer endpoint, path included (e.g. `https://rpc.hyperliquid.xyz/explorer`). */
  explorerUrl: string;
  timeoutMs?: number;
  retryLimit?: number;
  retryDelayMs?: number;
  userAgent?: string;
  transport?: HttpTransport;
};

export class ExplorerClient {
  readonly url: string;
  readonly #transport: HttpTransport;
  readonly #path: string;

  constructor({
    explorerUrl,
    timeoutMs = 5000,
    retryLimit = 1,
    retryDelayMs = 200,
    userAgent,
    transport,
  }: ExplorerClientOptions) {
    const parsed = new URL(explorerUrl);
    this.url = explorerUrl;
    // The transport joins base + path; keep the configured path exactly (no trailing slash is added).
    this.#path = parsed.pathname === "" ? "/" : parsed.pathname;
    this.#transport =
      transport ??
      createHttpTransport({
        baseUrl: parsed.origin,
        timeoutMs,
        retryLimit,
        retryDelayMs,
        ...(userAgent ? { userAgent } : {}),
      });
  }

  /** The address's L1 transactions as the explorer lists them (it decides how far back the list goes). */
  async userDetails({
    user,
    signal,
  }: {
    user: string;
    signal?: AbortSignal | undefined;
  }): Promise<ExplorerTx[]> {
    const address = normalizeAddress(user, "user");
    const response = await this.#transport.postJson(
      this.#path,
      { type: "userDetails", user: address },
      { signal },
    );
    const base = { endpoint: "info" as const, status: response.status, url: this.url };
    const kind = classifyHttpStatus(response.status);
    if (kind !== undefined) {
      throw new HyperliquidApiError({ ...base, kind, serverMessage: response.bodyText });
    }
    if (response.json === undefined) {
      throw new HyperliquidApiError({ ...base, kind: "malformed_response", reason: "the body is not JSON" });
    }
    const parsed = UserDetailsResponse.safeParse(response.json);
    if (!parsed.success) {
      throw new HyperliquidApiError({
        ...base,
        kind: "malformed_response",
        reason: `invalid userDetails: ${formatIssues(parsed.error).slice(0, 5).join("; ")}`,
      });
    }
    return parsed.data.txs;
  }

  close(): void {
    this.#transport.close();
  }
}
