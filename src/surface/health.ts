/**
 * Health and metrics server: GET /healthz (liveness), GET /readyz (readiness, with the reasons), GET /metrics
 * (Prometheus text via prom-client). Binds to 127.0.0.1:9464 by default (config `health`); `off` disables it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import type { Logger } from "../core/logger.js";
import type { ExposureStatus, GuardStatus, Readiness, SwitchStatus } from "../core/status.js";

// ---------------------------------------------------------------------------------------------- readiness

export type ComputeReadinessParameters = {
  /** local ms */
  now: number;
  accounts: SwitchStatus[];
  exposure: ExposureStatus;
  guard: GuardStatus;
  /** push cadence (ms) */
  intervalMs: number;
  /** how far ahead each push arms the cancel (ms) */
  deadlineMs: number;
  /** protection that must be left on every account to count as ready; default `defaultMinMarginMs` */
  minMarginMs?: number | undefined;
};

/**
 * Default readiness margin: max(deadline − 2 × interval, (deadline − interval) / 2).
 *
 * Right before each on-time push an account still has deadline − interval of protection left; after one
 * missed push it has deadline − 2 × interval. So the daemon stays ready through one missed push and turns
 * unready at the second, while protection is still in place (60 s / 15 s: unready below 30 s left). When
 * the interval is close to the deadline, (deadline − interval) / 2 keeps the margin positive and below what
 * a normal cycle reaches, so readiness does not flap between pushes.
 */
export function defaultMinMarginMs({ intervalMs, deadlineMs }: { intervalMs: number; deadlineMs: number }) {
  return Math.max(deadlineMs - 2 * intervalMs, (deadlineMs - intervalMs) / 2, 0);
}

/** How stale the last successful exposure poll may be before readiness fails: 3 exposure intervals. */
export const EXPOSURE_FRESH_INTERVALS = 3;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Where a HALTED account's closes stand, in words (status.ts `halted.closes`). */
export function haltedCloses(h: NonNullable<SwitchStatus["halted"]>): string {
  const left = h.remaining ? `; positions left at the last read: ${h.remaining}` : "";
  switch (h.closes) {
    case "closing":
      return `the positions are being closed (pass ${h.passes ?? "?"})`;
    case "retrying":
      return `the positions are not closed yet${left}; the next pass follows while the engine stays down`;
    case "held":
      return `closing is held: ${h.heldWhy ?? "the engine is back"}${left}`;
    case "stopped at restart":
      return `closing stopped at restart (pass ${h.passes ?? "?"} was open)${left}; the closes resume when the engine is down and a rule holds`;
    case "closed":
      return "the positions were closed";
    case "none":
      return "no close pass has run";
    default:
      return "the positions are being closed or were closed";
  }
}

/**
 * Ready only when every account is armed (or retrying) with at least `minMarginMs` of protection left, no
 * account is exhausted or refused permanently, the engine guard (if any) says up, and — when the exposure
 * poll is enabled — its last success is within 3 exposure intervals. One reason line per failure.
 */
export function computeReadiness({
  now,
  accounts,
  exposure,
  guard,
  intervalMs,
  deadlineMs,
  minMarginMs = defaultMinMarginMs({ intervalMs, deadlineMs }),
}: ComputeReadinessParameters): Readiness {
  const reasons: string[] = [];
  if (accounts.length === 0) reasons.push("no account is configured");
  for (const a of accounts) {
    const who = `account ${a.account}`;
    // HALTED is said whatever else holds: a person must look (the switch keeps pushing).
    if (a.halted)
      reasons.push(
        `${who}: HALTED since ${new Date(a.halted.since).toISOString()} (${a.halted.reason}); ${haltedCloses(a.halted)}; release with hl-deadman reset --account ${a.account}`,
      );
    if (a.exhausted || a.state === "exhausted") {
      reasons.push(
        `${who}: daily trigger limit reached (${a.triggersToday}/${a.triggerLimit} on ${a.day}); cannot protect until 00:00 UTC`,
      );
      continue;
    }
    if (a.limitSuspected) {
      const p = a.triggerProofs;
      reasons.push(
        `${who}: the count reaches the daily limit (${a.triggersToday}/${a.triggerLimit} on ${a.day}${p ? `: ${p.guess} guessed, ${p.record} from the record, ${p.orders} proven by orders` : ""}) without the exchange's proof; pushes continue`,
      );
      continue;
    }
    if (a.state === "not_protected") {
      reasons.push(
        `${who}: refused permanently by the exchange (${a.notProtectedReason ?? "unknown reason"})`,
      );
      continue;
    }
    // The exchange's time must be verified by two witnesses, and the local clock must agree with it within the
    // clock.suspect limit (docs/daemon.md): a schedule judged on a clock nothing confirmed is not evidence.
    if (a.clockUnverified) {
      reasons.push(
        `${who}: the exchange's time is not verified yet (no two outside witnesses agree: answers' Date, HyperEVM block time, the exchange's verdicts on pushes; the local clock is never one${a.clockOffMs !== undefined && Math.abs(a.clockOffMs) > 5_000 ? `; the local clock is ${seconds(a.clockOffMs)} off the earliest candidate` : ""}); pushes go on, planned on the earliest candidate (clock.suspect)`,
      );
      continue;
    }
    if (a.clockSuspect) {
      reasons.push(
        `${who}: the local clock is ${a.clockOffMs !== undefined ? seconds(a.clockOffMs) : "more than 5 s"} off the exchange's verified time (clock.suspect, limit 5 s); pushes go on, on the exchange's time; fix the host's time sync`,
      );
      continue;
    }
    if (a.clockStepped) {
      reasons.push(`${who}: the wall clock was stepped; waiting for a push confirmed on the corrected clock`);
      continue;
    }
    if (a.state !== "armed" && a.state !== "retrying") {
      const last = a.lastError ? `; last error ${a.lastError.kind}: ${a.lastError.message}` : "";
      reasons.push(`${who}: switch is ${a.state}, not armed${last}`);
      continue;
    }
    if (a.armedUntil === null) {
      reasons.push(`${who}: no confirmed deadline`);
      continue;
    }
    const left = a.armedUntil - now;
    if (left < minMarginMs) {
      const last = a.lastError ? `; last error ${a.lastError.kind}: ${a.lastError.message}` : "";
      reasons.push(
        `${who}: only ${seconds(left)} of protection left (needs ${seconds(minMarginMs)}), ` +
          `${a.consecutiveFailures} consecutive push failure(s)${last}`,
      );
    }
  }
  // The connection guard's `up` is false while an account waits too: only a down engine is reported down here.
  const engineDown = guard.accounts
    ? Object.values(guard.accounts).some((state) => state === "down")
    : !guard.up;
  if (guard.configured && engineDown) {
    reasons.push(
      `engine guard (${guard.kind ?? "?"}) reports the trading engine down${guard.detail ? `: ${guard.detail}` : ""}`,
    );
  }
  // The connection guard before an engine first named the account: pushes go on (no cancel), but nothing guards it.
  const waiting = Object.entries(guard.accounts ?? {})
    .filter(([, state]) => state === "waiting")
    .map(([account]) => account);
  if (waiting.length > 0)
    reasons.push(`engine guard (socket): waiting for the engine to connect for ${waiting.join(", ")}`);
  if (exposure.enabled) {
    const maxAge = EXPOSURE_FRESH_INTERVALS * exposure.intervalMs;
    if (exposure.lastSuccessAt === null) {
      reasons.push(
        `exposure: no successful poll yet${exposure.lastError ? ` (last error: ${exposure.lastError})` : ""}`,
      );
    } else if (now - exposure.lastSuccessAt > maxAge) {
      reasons.push(
        `exposure: last successful poll ${seconds(now - exposure.lastSuccessAt)} ago (limit ${seconds(maxAge)})` +
          (exposure.lastError ? `; last error: ${exposure.lastError}` : ""),
      );
    }
  }
  return { ready: reasons.length === 0, reasons, accounts, exposure, guard };
}

// ------------------------------------------------------------------------------------------ listen address

// The one listen-address parser lives with the configuration (src/config/listen.ts); re-exported for the daemon.
export { type ListenAddress, ListenAddressError, parseListenAddress } from "../config/listen.js";

// ---------------------------------------------------------------------------------------------- the server

export type Liveness = { ok: boolean; detail?: string | undefined };

export type CreateHealthServerParameters = {
  host: string;
  /** 0 picks a free port (tests) */
  port: number;
  metrics: { registry: Registry };
  readiness: () => Readiness;
  liveness: () => Liveness;
  logger: Logger;
  /** more GET routes by path (the status page, src/surface/status-page/) */
  routes?: Readonly<Record<string, ExtraRoute>> | undefined;
};

/** A GET route; `query` is the request's query string (bounded by node's header limit). */
export type ExtraRoute = (query: URLSearchParams) => {
  status: number;
  body: string;
  headers: Record<string, string>;
};

export type HealthServer = {
  /** http://HOST:PORT, with the port actually bound */
  url: string;
  close(): Promise<void>;
};

function send(res: ServerResponse, status: number, body: string, contentType: string, head: boolean) {
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(head ? undefined : body);
}

const JSON_TYPE = "application/json; charset=utf-8";

/** Resolves once listening; rejects (e.g. EADDRINUSE) with the listen error. */
export async function createHealthServer({
  host,
  port,
  metrics,
  readiness,
  liveness,
  logger,
  routes = {},
}: CreateHealthServerParameters): Promise<HealthServer> {
  const log = logger.child({ module: "health" });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const [path = "/", search = ""] = (req.url ?? "/").split("?", 2);
    const extra = Object.hasOwn(routes, path) ? routes[path] : undefined;
    const known = path === "/healthz" || path === "/readyz" || path === "/metrics" || extra !== undefined;
    if (!known) return send(res, 404, `${JSON.stringify({ error: "not found" })}\n`, JSON_TYPE, false);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      return send(res, 405, `${JSON.stringify({ error: "method not allowed" })}\n`, JSON_TYPE, false);
    }
    const head = req.method === "HEAD";
    if (extra) {
      const r = extra(new URLSearchParams(search));
      res.writeHead(r.status, {
        ...r.headers,
        "content-length": Buffer.byteLength(r.body),
        "cache-control": "no-store",
      });
      return res.end(head ? undefined : r.body);
    }
    if (path === "/healthz") {
      const live = liveness();
      // exactly {"status":"ok"} while alive (probes compare bodies); the detail only says why it is failing
      const body = live.ok
        ? { status: "ok" }
        : { status: "failing", ...(live.detail ? { detail: live.detail } : {}) };
      return send(res, live.ok ? 200 : 503, `${JSON.stringify(body)}\n`, JSON_TYPE, head);
    }
    if (path === "/readyz") {
      const ready = readiness();
      return send(res, ready.ready ? 200 : 503, `${JSON.stringify(ready)}\n`, JSON_TYPE, head);
    }
    const text = await metrics.registry.metrics();
    return send(res, 200, text, metrics.registry.contentType, head);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      log.error({ event: "health.error", path: req.url, err: message }, "health request failed");
      if (!res.headersSent) {
        send(res, 500, `${JSON.stringify({ error: message })}\n`, JSON_TYPE, false);
      } else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (error) =>
    log.error({ event: "health.error", err: error.message }, "health server error"),
  );

  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${urlHost}:${boundPort}`;
  log.info({ event: "health.listening", url }, `health and metrics on ${url}`);

  let closing: Promise<void> | null = null;
  return {
    url,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // close() alone only stops new connections: end idle keep-alive sockets and in-flight ones too
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
