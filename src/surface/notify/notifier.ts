/**
 * Delivers notifications to webhook URLs without ever delaying the switch: `send()` only enqueues and
 * returns. Each URL has its own bounded queue (oldest dropped when full) and one request in flight, so a
 * slow or dead receiver holds back nobody else. A failed delivery (network error, time-out, 429, 5xx) is
 * retried with exponential back-off; after `maxAttempts`, or at once on another 4xx, it gives up: logged
 * (`notify.gave_up`) and counted (`hl_deadman_notifications_total{outcome="failed"}`).
 *
 * Credentials in a URL (`https://user:pass@host/...`, a token in the path or query) are never logged: logs
 * name the target by `redactUrl`, and user:pass travels as an Authorization header (node:http builds it from the URL), not in the request line.
 *
 * Each URL has its own instance of the one HTTP transport (src/protocol/http/http.ts: got on node:http, its time-outs,
 * its body bound, its keep-alive agent), never the global `fetch` (undici needs WebAssembly, gone under the shipped
 * `--jitless --no-expose-wasm`). A redirect is not followed (the document and its credentials would go to a URL
 * nobody configured): the delivery fails at once, not retried, and the log says where it pointed. The retries are
 * the transport's one retry loop, with this module's schedule and the webhook's statuses (docs/development.md,
 * "Dependencies": why not got's `retry`).
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { Logger } from "../../core/logger.js";
import { redactUrl, scrub, secretsOf } from "../../core/redact.js";
import type { Timers } from "../../core/runtime.js";
import { TransportError } from "../../protocol/http/errors.js";
import { createHttpTransport, type HttpTransport, isRetryableStatus } from "../../protocol/http/http.js";
import type { Notification } from "./events.js";

export type NotifierOptions = {
  urls: readonly string[];
  logger: Logger;
  /** the daemon's metrics registry; the notifier registers its own two metrics on it */
  registry?: Registry | undefined;
  /** per-URL queue bound; the oldest waiting notification is dropped when full (default 100) */
  queueSize?: number;
  /** attempts per notification, the first included (default 5) */
  maxAttempts?: number;
  /** first retry delay (ms), doubled per attempt up to maxBackoffMs (default 1 s / 30 s) */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** time-out of one POST (ms, default 5 s) */
  timeoutMs?: number;
  /** the timers the back-off and the bound on close wait on: the runtime's, the only owner of timers */
  timers: Timers;
};

/** The largest receiver answer read (only its status matters); a larger one fails the delivery, not retried. */
export const NOTIFY_MAX_BODY_BYTES = 64 * 1024;

export type Notifier = {
  /** Enqueues for every URL; never throws, never waits. */
  send(notification: Notification): void;
  /** Waits (at most `timeoutMs`) for the queues to drain, then stops; later sends are ignored. */
  close(timeoutMs?: number): Promise<void>;
  /** Notifications waiting or in flight, all URLs. */
  pending(): number;
};

type Queued = { n: Notification; body: string };

type Target = {
  url: string;
  shown: string;
  transport: HttpTransport;
  headers: Record<string, string>;
  queue: Queued[];
  busy: boolean;
};

/** One receiver; its URL's user:pass goes as Basic authentication through the one transport. */
function target(url: string, timeoutMs: number, timers: Timers): Target {
  return {
    url,
    shown: redactUrl(url),
    transport: createHttpTransport({
      baseUrl: url,
      timeoutMs,
      limits: { maxBytes: NOTIFY_MAX_BODY_BYTES },
      timers,
    }),
    headers: { "content-type": "application/json" },
    queue: [],
    busy: false,
  };
}

const registered = new WeakMap<Registry, { total: Counter<"outcome">; queued: Gauge }>();

function metricsFor(registry: Registry | undefined) {
  const existing = registry && registered.get(registry);
  if (existing) return existing;
  const registers = registry ? [registry] : [];
  const m = {
    total: new Counter({
      name: "hl_deadman_notifications_total",
      help: "Notifications by outcome: sent, failed (gave up after retries or a refusal), dropped (queue full).",
      labelNames: ["outcome"] as const,
      registers,
    }),
    queued: new Gauge({
      name: "hl_deadman_notifications_queued",
      help: "Notifications waiting or in flight, all URLs.",
      registers,
    }),
  };
  for (const outcome of ["sent", "failed", "dropped"]) m.total.inc({ outcome }, 0);
  if (registry) registered.set(registry, m);
  return m;
}

export function createNotifier({
  urls,
  logger,
  registry,
  queueSize = 100,
  maxAttempts = 5,
  backoffMs = 1_000,
  maxBackoffMs = 30_000,
  timeoutMs = 5_000,
  timers,
}: NotifierOptions): Notifier {
  const log = logger.child({ module: "notify" });
  const metrics = metricsFor(registry);
  const targets = urls.map((url) => target(url, timeoutMs, timers));
  const secrets = urls.flatMap(secretsOf);
  // Aborted on close: a delivery waiting out its back-off wakes at once and gives up.
  const stop = new AbortController();
  let closed = false;
  let idle: (() => void) | null = null;

  const pending = () => targets.reduce((sum, t) => sum + t.queue.length, 0);
  const update = () => {
    metrics.queued.set(pending());
    if (idle && pending() === 0) idle();
  };

  /**
   * One delivery: the transport sends it and, on no answer, 408, 429 or 5xx, sends it again after a back-off of
   * `backoffMs` doubling up to `maxBackoffMs`, `maxAttempts` in all (a webhook is safe to repeat: the receiver sees
   * the same document). The back-off waits on the runtime's timers and ends at once on close (`stop`).
   */
  async function deliver(t: Target, item: Queued): Promise<{ attempts: number; error: string | null }> {
    let attempts = 1;
    try {
      const { status } = await t.transport.request(undefined, {
        method: "POST",
        body: item.body,
        headers: t.headers,
        parseJson: false,
        signal: stop.signal,
        idempotent: true,
        // 408 too: the receiver gave up waiting for the request; the same request may pass
        retryStatus: (status) => status === 408 || isRetryableStatus(status),
        // No answer: retried. A redirect (never followed) or an answer over the bound: the receiver answered, and
        // the same request would meet the same answer.
        retryError: (error) =>
          error instanceof TransportError && error.kind === "transport" && !error.aborted,
        retry: {
          limit: maxAttempts - 1,
          delayMs: backoffMs,
          maxDelayMs: maxBackoffMs,
          onRetry: ({ attempt, delayMs, reason }) => {
            attempts = attempt + 1;
            log.debug(
              {
                event: "notify.retry",
                target: t.shown,
                attempt,
                retryInMs: delayMs,
                err: scrub(reason, secrets),
              },
              "notification failed; retrying",
            );
          },
        },
      });
      return { attempts, error: status >= 200 && status < 300 ? null : `HTTP ${status}` };
    } catch (error) {
      if (!(error instanceof TransportError)) return { attempts, error: scrub(String(error), secrets) };
      if (error.kind === "transport" && error.code === "ETIMEDOUT")
        return { attempts, error: `timed out after ${timeoutMs} ms` };
      return {
        attempts,
        error: scrub(error.kind === "transport" ? (error.code ?? error.reason) : error.reason, secrets),
      };
    }
  }

  async function drain(t: Target) {
    if (t.busy) return;
    t.busy = true;
    try {
      while (t.queue.length > 0) {
        const item = t.queue[0]!;
        const { attempts, error } = await deliver(t, item);
        if (error === null) {
          metrics.total.inc({ outcome: "sent" });
          log.debug(
            { event: "notify.sent", target: t.shown, notification: item.n.event, attempts },
            "notification delivered",
          );
        } else {
          metrics.total.inc({ outcome: "failed" });
          log.warn(
            {
              event: "notify.gave_up",
              target: t.shown,
              notification: item.n.event,
              account: item.n.account,
              attempts,
              err: error,
            },
            `notification ${item.n.event} not delivered to ${t.shown} after ${attempts} attempt(s): ${error}`,
          );
        }
        t.queue.shift();
        update();
      }
    } finally {
      t.busy = false;
    }
  }

  return {
    send(n) {
      if (closed || targets.length === 0) return;
      const body = JSON.stringify(n);
      for (const t of targets) {
        if (t.queue.length >= queueSize) {
          // the head may be in flight: drop the oldest waiting one behind it
          const dropped = t.queue.splice(t.busy ? 1 : 0, 1)[0];
          metrics.total.inc({ outcome: "dropped" });
          log.warn(
            { event: "notify.dropped", target: t.shown, notification: dropped?.n.event, queueSize },
            `notification queue for ${t.shown} is full: dropped the oldest`,
          );
        }
        t.queue.push({ n, body });
        void drain(t);
      }
      update();
    },
    async close(waitMs = 2_000) {
      if (pending() > 0) {
        await new Promise<void>((resolve) => {
          const timer = timers.after(waitMs, resolve);
          idle = () => {
            timer.cancel();
            resolve();
          };
        });
      }
      closed = true;
      idle = null;
      stop.abort();
      // Ends a delivery still in flight (it is then given up) and the keep-alive sockets.
      for (const t of targets) t.transport.close();
    },
    pending,
  };
}
