/**
 * The one HTTP transport of every call the program makes: the exchange, info, explorer and EVM clients, the engine
 * guard's health URL and the webhook notifier. It knows nothing of Hyperliquid or JSON-RPC: it sends a request to a
 * URL and returns the status, headers, body and Date header, or throws a TransportError (src/protocol/http/errors.ts).
 * Each protocol layer classifies statuses and bodies itself. It is got on node:http, never the global `fetch` or
 * `WebSocket` (undici), which need WebAssembly and are gone under the shipped `--jitless --no-expose-wasm`
 * (test/protocol/http/no-fetch.test.ts keeps src/ free of them).
 *
 * - One got instance and one keep-alive agent per base URL; statuses other than redirects are never thrown.
 * - No redirect is followed, to another origin or to the same one: a 3xx answer with a Location is a
 *   TransportError of kind `redirect` naming where it pointed (redacted). A followed redirect would carry a signed
 *   action, a webhook's credentials or a keyed RPC request to a URL nobody configured; the configured URL must be
 *   the final one.
 * - Bodies are read under the bounds of ./bounded-body.ts (size after decompression, JSON depth and number of
 *   values), before JSON.parse sees them (docs/security.md, "Bounded input").
 * - A per-attempt connect and request time-out; the caller's abort signal ends the request at once.
 * - Retries only when asked twice: `retryLimit > 0` on the transport AND `idempotent: true` on the call. A
 *   non-idempotent POST (a signed /exchange action) is sent once, whatever the transport's retryLimit.
 *   An idempotent call is retried on a TransportError that `shouldRetry` accepts (never an abort) and on 429 or 5xx.
 *   The loop is this module's, not got's `retry`: got retries a stream only through a handler that rebuilds the
 *   request around the same loop, and its back-off waits on real timers, not the runtime's (docs/development.md,
 *   "Dependencies").
 * - The URL may hold a key (an RPC endpoint key as a path segment): errors carry only `redactUrl(url)`, messages
 *   are scrubbed of its secret parts, and got's own errors (whose options hold the URL) are never kept as a cause.
 * - A URL's user:pass is sent as HTTP Basic authentication: got hands the URL to node:http, which percent-decodes
 *   it into the Authorization header and leaves it out of the request line; it is never part of a URL shown.
 */
import http from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import got, { type Got } from "got";
import { redactUrl, scrub, secretsOf } from "../../core/redact.js";
import { sleep, systemTimers, type Timers } from "../../core/runtime.js";
import { VERSION } from "../../core/version.js";
import { shouldRetry } from "../policy.js";
import {
  BodyLimitError,
  type BodyLimits,
  DEFAULT_BODY_LIMITS,
  parseBoundedJson,
  requestBounded,
} from "./bounded-body.js";
import { TransportError } from "./errors.js";

export type HttpTransportOptions = {
  /** Where requests go; a call's `path` is appended (none: the URL as given, e.g. a JSON-RPC endpoint). */
  baseUrl: string;
  /** Connect time-out and whole-request time-out, per attempt (ms). Default 5000. */
  timeoutMs?: number;
  userAgent?: string;
  /** Extra attempts for idempotent calls after a retryable TransportError, 429 or 5xx. Default 0. */
  retryLimit?: number;
  /** First back-off between retries (ms), doubled each time, capped at 2 s. Default 200. */
  retryDelayMs?: number;
  /** Default body bounds of every call. Default DEFAULT_BODY_LIMITS. */
  limits?: Partial<BodyLimits> | undefined;
  /** The timers the back-off between retries waits on (the runtime's). Default: real timers. */
  timers?: Timers | undefined;
};

export type PostOptions = {
  signal?: AbortSignal | undefined;
  /** Per-attempt time-out of this call (ms). Default: the transport's. */
  timeoutMs?: number | undefined;
  /** Body bounds of this call, over the transport's. */
  limits?: Partial<BodyLimits> | undefined;
  /** The call is safe to repeat (a read): only then may the transport retry it. Default false. */
  idempotent?: boolean | undefined;
  /** Which answers' statuses are worth another attempt (the caller's error policy). Default: isRetryableStatus. */
  retryStatus?: ((status: number) => boolean) | undefined;
  /** Which failures without an answer are worth another attempt. Default: the error policy's `shouldRetry`. */
  retryError?: ((error: unknown) => boolean) | undefined;
  /**
   * This call's own retry schedule, over the transport's (`retryLimit`, `retryDelayMs`, the 2 s cap): for a caller
   * whose request is safe to repeat and that waits longer between attempts (the notifier's webhooks). `onRetry`
   * hears each retry before its back-off (the attempt that failed, the wait, why).
   */
  retry?:
    | {
        limit: number;
        delayMs: number;
        maxDelayMs: number;
        onRetry?: ((r: { attempt: number; delayMs: number; reason: string }) => void) | undefined;
      }
    | undefined;
};

export type RequestOptions = PostOptions & {
  /** Default POST. */
  method?: "GET" | "POST" | undefined;
  /** The request body, sent as is (none for a GET). */
  body?: string | undefined;
  /** Headers of this call, over the transport's (`user-agent`, `accept: application/json`). */
  headers?: Record<string, string> | undefined;
  /** Parse the body as JSON under the bounds (default true); false leaves `json` undefined (a health check). */
  parseJson?: boolean | undefined;
};

export type HttpResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The decompressed body. */
  body: Buffer;
  /** The body as UTF-8 text, converted when first read (most answers are read as `json` only). */
  readonly bodyText: string;
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
  /** `baseUrl` as it may be shown (redactUrl). */
  readonly shownUrl: string;
  /** POSTs `body` (a JSON value, sent as JSON) to `baseUrl` + `path`. */
  postJson(path: string | undefined, body: unknown, options?: PostOptions): Promise<HttpResponse>;
  /** Any request to `baseUrl` + `path`: the method, body and headers as given, under the same bounds and rules. */
  request(path: string | undefined, options?: RequestOptions): Promise<HttpResponse>;
  /** Masks the secret parts of the base URL (path segments, user info, query) in `text`. */
  scrub(text: string): string;
  /** Destroys the keep-alive sockets. Idempotent. */
  close(): void;
};

/** 429 and 5xx: statuses after which a repeated read can succeed (the default; a caller may pass its policy's). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

export function joinUrl(baseUrl: string, path: string | undefined): string {
  if (path === undefined || path === "") return baseUrl;
  return `${baseUrl.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/** An HTTP date as servers send it (RFC 9110 IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * The `Date` header in ms: undefined when absent, NaN when present but not an IMF-fixdate (the daemon logs and
 * refuses it: src/switch/exchange-time.ts). Whether the value is plausible is for the reader to judge.
 */
function parseDate(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (!IMF_FIXDATE.test(text.trim())) return Number.NaN;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : Number.NaN;
}

function codeOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; name?: unknown };
  if (typeof e?.code === "string") return e.code;
  return e?.name === "AbortError" ? "ERR_ABORTED" : undefined;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = codeOf(error);
  const base = error.message.split("\n")[0] ?? error.name;
  return code !== undefined && !base.includes(code) ? `${code}: ${base}` : base;
}

/** A redirect: a 3xx status with a Location header (a 304 or a 3xx without one is an ordinary status). */
function redirectTarget(
  status: number,
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  if (status < 300 || status > 399) return undefined;
  const location = headers.location;
  const text = Array.isArray(location) ? location[0] : location;
  return typeof text === "string" && text !== "" && status !== 304 ? text : undefined;
}

/** Where a redirect points (redacted) and whether it stays on the request's origin; an unreadable Location is foreign. */
export function describeRedirect(
  requestUrl: string,
  location: string,
): { shown: string; sameOrigin: boolean } {
  try {
    const target = new URL(location, requestUrl);
    return { shown: redactUrl(target.toString()), sameOrigin: target.origin === new URL(requestUrl).origin };
  } catch {
    return { shown: "[invalid url]", sameOrigin: false };
  }
}

export function createHttpTransport({
  baseUrl,
  timeoutMs = 5000,
  userAgent = `hl-deadman/${VERSION}`,
  retryLimit = 0,
  retryDelayMs = 200,
  limits,
  timers = systemTimers(),
}: HttpTransportOptions): HttpTransport {
  const isHttps = new URL(baseUrl).protocol === "https:";
  const defaults: BodyLimits = { ...DEFAULT_BODY_LIMITS, ...(limits ?? {}) };
  const secrets = secretsOf(baseUrl);
  const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: 16, maxFreeSockets: 4 };
  const agent = isHttps ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const client: Got = got.extend({
    agent: isHttps ? { https: agent as https.Agent } : { http: agent },
    throwHttpErrors: false,
    retry: { limit: 0 },
    followRedirect: false,
    headers: { "user-agent": userAgent, accept: "application/json" },
  });
  const shownBase = redactUrl(baseUrl);
  let closed = false;
  const scrubText = (text: string) => scrub(text, secrets);

  async function attempt(
    url: string,
    call: Required<Pick<RequestOptions, "method" | "headers" | "parseJson">> & { body: string | undefined },
    callLimits: BodyLimits,
    signal: AbortSignal | undefined,
    perAttemptTimeout: number,
  ): Promise<HttpResponse> {
    const started = performance.now();
    try {
      const response = await requestBounded(
        client,
        url,
        {
          method: call.method,
          // as bytes: got measures a string body by encoding it once more to set content-length
          ...(call.body === undefined ? {} : { body: Buffer.from(call.body, "utf8") }),
          headers: call.headers,
          signal,
          timeout: { connect: perAttemptTimeout, request: perAttemptTimeout },
        },
        callLimits,
      );
      const elapsedMs = performance.now() - started;
      const location = redirectTarget(response.status, response.headers);
      if (location !== undefined) {
        const { shown, sameOrigin } = describeRedirect(url, location);
        throw new TransportError({
          kind: "redirect",
          url: redactUrl(url),
          status: response.status,
          location: shown,
          sameOrigin,
          reason: scrubText(
            `answered ${response.status}, a redirect to ${sameOrigin ? "the same origin" : "another origin"} (${shown}); redirects are not followed: configure the final URL`,
          ),
        });
      }
      // Bounded before JSON.parse: depth and number of values (docs/security.md, "Bounded input").
      const json = call.parseJson ? parseBoundedJson(response.body, callLimits) : undefined;
      let text: string | undefined;
      return {
        status: response.status,
        headers: response.headers,
        body: response.body,
        get bodyText() {
          text ??= response.body.toString("utf8");
          return text;
        },
        json,
        date: parseDate(response.headers.date),
        elapsedMs,
        attempts: 1,
      };
    } catch (error) {
      if (error instanceof TransportError) throw error;
      const shown = redactUrl(url);
      if (error instanceof BodyLimitError) {
        throw new TransportError({
          kind: "malformed_response",
          url: shown,
          reason: scrubText(error.reason),
          limit: error.limit,
        });
      }
      const aborted = signal?.aborted === true;
      throw new TransportError({
        kind: "transport",
        url: shown,
        aborted,
        code: aborted ? "ERR_ABORTED" : codeOf(error),
        reason: aborted ? "request aborted" : scrubText(describe(error)),
      });
    }
  }

  return {
    baseUrl,
    shownUrl: shownBase,
    scrub: scrubText,
    request,
    postJson(path, body, options = {}) {
      return request(path, {
        ...options,
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
    },
    close() {
      if (closed) return;
      closed = true;
      agent.destroy();
    },
  };

  async function request(
    path: string | undefined,
    {
      method = "POST",
      body,
      headers = {},
      parseJson = true,
      signal,
      timeoutMs: callTimeout,
      limits: callLimits,
      idempotent,
      retryStatus = isRetryableStatus,
      retryError = shouldRetry,
      retry,
    }: RequestOptions = {},
  ): Promise<HttpResponse> {
    const url = joinUrl(baseUrl, path);
    if (closed)
      throw new TransportError({ kind: "transport", url: redactUrl(url), reason: "transport is closed" });
    const call = { method, body, headers, parseJson };
    const bounds = { ...defaults, ...(callLimits ?? {}) };
    const limit = idempotent === true ? Math.max(0, Math.floor(retry?.limit ?? retryLimit)) : 0;
    const firstDelay = retry?.delayMs ?? retryDelayMs;
    const maxDelay = retry?.maxDelayMs ?? 2000;
    const perAttemptTimeout = callTimeout ?? timeoutMs;
    for (let attemptNo = 1; ; attemptNo++) {
      const last = attemptNo > limit;
      let reason: string;
      try {
        const response = await attempt(url, call, bounds, signal, perAttemptTimeout);
        if (last || !retryStatus(response.status)) {
          response.attempts = attemptNo;
          return response;
        }
        reason = `HTTP ${response.status}`;
      } catch (error) {
        if (last || !retryError(error)) throw error;
        reason = error instanceof TransportError ? (error.code ?? error.reason) : String(error);
      }
      const delayMs = Math.min(maxDelay, firstDelay * 2 ** (attemptNo - 1));
      retry?.onRetry?.({ attempt: attemptNo, delayMs, reason });
      await sleep(delayMs, { timers, signal });
      if (signal?.aborted) {
        throw new TransportError({
          kind: "transport",
          url: redactUrl(url),
          aborted: true,
          code: "ERR_ABORTED",
          reason: "request aborted",
        });
      }
    }
  }
}
