/**
 * HTTP transport for the Hyperliquid REST API: one got instance and one keep-alive agent per base URL.
 *
 * - Statuses are never thrown (`throwHttpErrors: false`): the clients classify them (errors.ts).
 * - A failure with no response (time-out, reset, refused, DNS, aborted) is thrown as a HyperliquidApiError
 *   of kind `transport`; a body over `maxBodyBytes` as `malformed_response`.
 * - Retries happen only when `retryLimit > 0` and never for `/exchange`: a signed action is never re-sent
 *   blindly with the same nonce. Info POSTs are read-only and safe to repeat.
 */
import http from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import got, { type Got } from "got";
import { VERSION } from "../version.js";
import {
  classifyHttpStatus,
  HyperliquidApiError,
  type HyperliquidEndpoint,
  kindIsRetryable,
} from "./errors.js";

/** 16 MiB: far above any real response (a 1000-user batch is a few MiB) and far below a memory problem. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

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
  /** Bodies larger than this are refused as malformed_response. Default 16 MiB. */
  maxBodyBytes?: number;
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

function tryParseJson(text: string): unknown | undefined {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
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

class BodyTooLargeError extends Error {}

export function createHttpTransport({
  baseUrl,
  timeoutMs = 5000,
  userAgent = `hl-deadman/${VERSION}`,
  retryLimit = 0,
  retryDelayMs = 200,
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
}: HttpTransportOptions): HttpTransport {
  const parsedBase = new URL(baseUrl);
  const isHttps = parsedBase.protocol === "https:";
  const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: 16, maxFreeSockets: 4 };
  const agent = isHttps ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const client: Got = got.extend({
    agent: isHttps ? { https: agent as https.Agent } : { http: agent },
    throwHttpErrors: false,
    retry: { limit: 0 },
    followRedirect: false,
    decompress: true,
    responseType: "buffer",
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
    let tooLarge = false;
    const request = client.post(url, {
      json: body,
      signal,
      timeout: { connect: perAttemptTimeout, request: perAttemptTimeout },
    });
    request.on("downloadProgress", (progress: { transferred: number }) => {
      if (progress.transferred > maxBodyBytes && !tooLarge) {
        tooLarge = true;
        request.cancel(new BodyTooLargeError().message);
      }
    });
    try {
      const response = await request;
      const elapsedMs = performance.now() - started;
      const raw = response.rawBody ?? Buffer.alloc(0);
      if (raw.byteLength > maxBodyBytes) throw new BodyTooLargeError();
      const bodyText = raw.toString("utf8");
      return {
        status: response.statusCode,
        headers: response.headers,
        bodyText,
        json: tryParseJson(bodyText),
        date: parseDate(response.headers.date),
        elapsedMs,
      };
    } catch (error) {
      if (tooLarge || error instanceof BodyTooLargeError) {
        throw new HyperliquidApiError({
          kind: "malformed_response",
          endpoint,
          url,
          reason: `response body exceeds ${maxBodyBytes} bytes`,
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
