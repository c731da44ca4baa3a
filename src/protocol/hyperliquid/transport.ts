/**
 * The Hyperliquid REST API over the one HTTP transport (src/protocol/http/http.ts): this layer only maps the
 * transport's errors to HyperliquidApiError and picks the body bounds and retries per endpoint.
 *
 * - Statuses are never thrown: the clients classify them (errors.ts). A redirect is never followed: it is a
 *   HyperliquidApiError of kind `redirect` (the transport's, src/protocol/http/http.ts).
 * - A failure with no response (time-out, reset, refused, DNS, aborted) is a HyperliquidApiError of kind
 *   `transport`; a body over the bounds of ../http/bounded-body.ts (size after decompression, JSON depth, number
 *   of values) is `malformed_response`, before JSON.parse sees it.
 * - Retries happen only when `retryLimit > 0` and never for `/exchange`: a signed action is not idempotent and is
 *   never re-sent blindly with the same nonce. Info POSTs are read-only and safe to repeat.
 */

import { type BodyLimits, DEFAULT_BODY_LIMITS, EXCHANGE_BODY_LIMITS } from "../http/bounded-body.js";
import { TransportError } from "../http/errors.js";
import {
  createHttpTransport as createGenericTransport,
  type HttpTransportOptions as GenericOptions,
  type HttpResponse as GenericResponse,
  joinUrl,
} from "../http/http.js";
import {
  classifyHttpStatus,
  HyperliquidApiError,
  type HyperliquidEndpoint,
  kindIsRetryable,
} from "./errors.js";

export { CLIENT_DEFAULTS } from "./client-defaults.js";

/** A read's answer is tried again when the policy table says its status's kind is retryable (src/core/errors/policy.ts). */
const retryStatus = (status: number): boolean => {
  const kind = classifyHttpStatus(status);
  return kind !== undefined && kindIsRetryable(kind);
};

/** 8 MiB for /info (docs/security.md, "Bounded input"); /exchange answers are capped at 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = DEFAULT_BODY_LIMITS.maxBytes;

/**
 * The generic transport's options (timeouts, user agent, retries for /info only) without its generic body bounds:
 * each endpoint has its own (8 MiB for /info, 1 MiB for /exchange), which these three override.
 */
export type HttpTransportOptions = Omit<GenericOptions, "limits"> & {
  /** Bodies larger than this (after decompression) are refused as malformed_response. Default 8 MiB (/info), 1 MiB (/exchange). */
  maxBodyBytes?: number;
  /** Depth and value-count bounds checked before JSON.parse (docs/security.md). Default DEFAULT_BODY_LIMITS. */
  maxDepth?: number;
  maxValues?: number;
};

export type PostJsonOptions = { signal?: AbortSignal | undefined; timeoutMs?: number | undefined };

export type HttpResponse = Omit<GenericResponse, "body">;

export type HttpTransport = {
  readonly baseUrl: string;
  postJson(path: string, body: unknown, options?: PostJsonOptions): Promise<HttpResponse>;
  /** Destroys the keep-alive sockets. Idempotent. */
  close(): void;
};

function endpointOf(path: string): HyperliquidEndpoint {
  return /exchange/.test(path) ? "exchange" : "info";
}

export function createHttpTransport({
  baseUrl,
  timeoutMs = 5000,
  userAgent,
  retryLimit = 0,
  retryDelayMs = 200,
  maxBodyBytes,
  maxDepth = DEFAULT_BODY_LIMITS.maxDepth,
  maxValues = DEFAULT_BODY_LIMITS.maxValues,
}: HttpTransportOptions): HttpTransport {
  const limits: Record<HyperliquidEndpoint, BodyLimits> = {
    info: { maxBytes: maxBodyBytes ?? DEFAULT_BODY_LIMITS.maxBytes, maxDepth, maxValues },
    exchange: { maxBytes: maxBodyBytes ?? EXCHANGE_BODY_LIMITS.maxBytes, maxDepth, maxValues },
  };
  const transport = createGenericTransport({
    baseUrl,
    timeoutMs,
    retryLimit,
    retryDelayMs,
    ...(userAgent ? { userAgent } : {}),
  });
  return {
    baseUrl,
    async postJson(path, body, { signal, timeoutMs: callTimeout } = {}) {
      const endpoint = endpointOf(path);
      try {
        return await transport.postJson(path, body, {
          signal,
          timeoutMs: callTimeout,
          limits: limits[endpoint],
          // A signed action is not idempotent: never retried (docs/exchange-behaviour.md §8).
          idempotent: endpoint !== "exchange",
          retryStatus,
        });
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        throw new HyperliquidApiError({
          kind: error.kind,
          endpoint,
          url: joinUrl(baseUrl, path),
          aborted: error.aborted,
          status: error.status,
          reason: error.reason,
          // Safe to keep: the transport's error holds only the redacted URL and a scrubbed reason.
          cause: error,
        });
      }
    },
    close() {
      transport.close();
    },
  };
}
