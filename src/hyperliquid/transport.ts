/**
 * HTTP transport for the Hyperliquid REST API: one got instance and one keep-alive agent per base URL.
 *
 * - Statuses are never thrown (`throwHttpErrors: false`): the clients classify them (errors.ts).
 * - A failure with no response (time-out, reset, refused, DNS, aborted) is thrown as a HyperliquidApiError
 *   of kind `transport`; a body over the bounds of ../utils/bounded-body.ts (size after decompression, JSON depth,
 *   number of values) as `malformed_response`, before JSON.parse sees it.
 * - Retries happen only when `retryLimit > 0` and never for `/exchange`: a signed action is never re-sent
 *   blindly with the same nonce. Info POSTs are read-only and safe to repeat.
 */
import http from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import got, { type Got } from "got";
import {
  BodyLimitError,
  type BodyLimits,
  DEFAULT_BODY_LIMITS,
  EXCHANGE_BODY_LIMITS,
  parseBoundedJson,
  postBounded,
} from "../utils/bounded-body.js";
import { VERSION } from "../version.js";
import {
  classifyHttpStatus,
  HyperliquidApiError,
  type HyperliquidEndpoint,
  kindIsRetryable,
} from "./errors.js";

/** 8 MiB for /info (docs/security.md, "Bounded input"); /exchange answers are capped at 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = DEFAULT_BODY_LIMITS.maxBytes;

export type HttpTransportOptions = {
  /** `https://api.hyperliquid.xyz` or the simulator's URL; the path is appended. */
  baseUrl: string;
  /** Connect time-out and whole-request time-out, per attempt (ms). Default 5000. */
  timeoutMs?: number;
  userAgent?: string;
  /** Extra attempts for info requests after a transport error, 429 or 5xx. Default 0. Never used for /exchange. */
  retryLimit?: number;
  /** First back-off between retries (ms), doubled each time, capped at 2 s. Default 200. */
  retryDelayMs?: number;
  /** Bodies larger than this (after decompression) are refused as malformed_response. Default 8 MiB (/info), 1 MiB (/exchange). */
  maxBodyBytes?: number;
  /** Depth and value-count bounds checked before JSON.parse (docs/security.md). Default DEFAULT_BODY_LIMITS. */
  maxDepth?: number;
  maxValues?: number;
};

export type PostJsonOptions = { signal?: AbortSignal | undefined; timeoutMs?: number | undefined };

export type HttpResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bodyText: string;
  /** The parsed body, or undefined when the body is not JSON (`null` is a valid JSON body). */
  json: unknown | undefined;
  /** The response's Date header in ms, when present and readable (second precision). */
  date: number | undefined;
  /** Wall time of the last attempt (monotonic clock). */
  elapsedMs: number;
  /** How many attempts were made (1 without retries). */
  attempts: number;
};

export type HttpTransport = {
  readonly baseUrl: string;
  postJson(path: string, body: unknown, options?: PostJsonOptions): Promise<HttpResponse>;
  /** Destroys the keep-alive sockets. Idempotent. */
  close(): void;
};

function endpointOf(path: string): HyperliquidEndpoint {
  return /exchange/.test(path) ? "exchange" : "info";
}

function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

function parseDate(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

function describeTransportError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const base = error.message.split("\n")[0] ?? error.name;
  return typeof code === "string" && !base.includes(code) ? `${code}: ${base}` : base;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export function createHttpTransport({
  baseUrl,
  timeoutMs = 5000,
  userAgent = `hl-deadman/${VERSION}`,
  retryLimit = 0,
  retryDelayMs = 200,
  maxBodyBytes,
  maxDepth = DEFAULT_BODY_LIMITS.maxDepth,
  maxValues = DEFAULT_BODY_LIMITS.maxValues,
}: HttpTransportOptions): HttpTransport {
  const infoLimits: BodyLimits = {
    maxBytes: maxBodyBytes ?? DEFAULT_BODY_LIMITS.maxBytes,
    maxDepth,
    maxValues,
  };
  const exchangeLimits: BodyLimits = {
    maxBytes: maxBodyBytes ?? EXCHANGE_BODY_LIMITS.maxBytes,
    maxDepth,
    maxValues,
  };
  const parsedBase = new URL(baseUrl);
  const isHttps = parsedBase.protocol === "https:";
  const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: 16, maxFreeSockets: 4 };
  const agent = isHttps ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const client: Got = got.extend({
    agent: isHttps ? { https: agent as https.Agent } : { http: agent },
    throwHttpErrors: false,
    retry: { limit: 0 },
    followRedirect: false,
    headers: { "user-agent": userAgent, accept: "application/json" },
  });
  let closed = false;

  async function attempt(
    url: string,
    body: unknown,
    endpoint: HyperliquidEndpoint,
    signal: AbortSignal | undefined,
    perAttemptTimeout: number,
  ): Promise<Omit<HttpResponse, "attempts">> {
    const started = performance.now();
    const limits = endpoint === "exchange" ? exchangeLimits : infoLimits;
    try {
      const response = await postBounded(
        client,
        url,
        {
          body: JSON.stringify(body),
          headers: { "content-type": "application/json" },
          signal,
          timeout: { connect: perAttemptTimeout, request: perAttemptTimeout },
        },
        limits,
      );
      const elapsedMs = performance.now() - started;
      // Bounded before JSON.parse: depth and number of values (docs/security.md, "Bounded input").
      const json = parseBoundedJson(response.body, limits);
      return {
        status: response.status,
        headers: response.headers,
        bodyText: response.body.toString("utf8"),
        json,
        date: parseDate(response.headers.date),
        elapsedMs,
      };
    } catch (error) {
      if (error instanceof BodyLimitError) {
        throw new HyperliquidApiError({
          kind: "malformed_response",
          endpoint,
          url,
          reason: error.reason,
        });
      }
      const aborted = signal?.aborted === true;
      throw new HyperliquidApiError({
        kind: "transport",
        endpoint,
        url,
        aborted,
        reason: aborted ? "request aborted" : describeTransportError(error),
        cause: error,
      });
    }
  }

  return {
    baseUrl,
    async postJson(path, body, { signal, timeoutMs: callTimeout } = {}) {
      if (closed) {
        throw new HyperliquidApiError({
          kind: "transport",
          endpoint: endpointOf(path),
          reason: "transport is closed",
        });
      }
      const url = joinUrl(baseUrl, path);
      const endpoint = endpointOf(path);
      const limit = endpoint === "exchange" ? 0 : Math.max(0, Math.floor(retryLimit));
      const perAttemptTimeout = callTimeout ?? timeoutMs;
      for (let attemptNo = 1; ; attemptNo++) {
        const last = attemptNo > limit;
        try {
          const response = await attempt(url, body, endpoint, signal, perAttemptTimeout);
          const kind = classifyHttpStatus(response.status);
          if (last || kind === undefined || !kindIsRetryable(kind))
            return { ...response, attempts: attemptNo };
        } catch (error) {
          if (last || !(error instanceof HyperliquidApiError) || !error.retryable) throw error;
        }
        await sleep(Math.min(2000, retryDelayMs * 2 ** (attemptNo - 1)), signal);
        if (signal?.aborted) {
          throw new HyperliquidApiError({
            kind: "transport",
            endpoint,
            url,
            aborted: true,
            reason: "request aborted",
          });
        }
      }
    },
    close() {
      if (closed) return;
      closed = true;
      agent.destroy();
    },
  };
}
