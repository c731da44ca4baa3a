/**
 * The engine guard: pushes continue only while the trading engine is alive. Two kinds:
 * - file: the engine touches a file; it is alive while the file's mtime is at most `maxAgeMs` old;
 * - url: the engine's health URL answers a GET with 2xx within the time-out. One failed request is not enough to
 *   call the engine down (a single slow answer would otherwise expedite the cancel): it takes
 *   URL_FAILURES_FOR_DOWN consecutive failures; one success brings it back up. The request goes through the one
 *   HTTP transport (src/protocol/http/http.ts: got on node:http, under the shipped `--jitless --no-expose-wasm`),
 *   with its time-outs and a body bound of GUARD_URL_MAX_BODY_BYTES; a redirect is a failure, never followed.
 * A failure seen by a look that ran late (the daemon stalled) is taken again at once before it counts.
 * Checked every `intervalMs` on a drift-free loop; `onChange(up, detail)` is called on every change (the
 * daemon tells the switches, which log `engine.down` / `engine.up` per account). What it sees it publishes as
 * typed events on the bus (src/core/events.ts `GuardEvent`); its log lines and its metric are subscribers in
 * src/surface/watchers/guard.ts.
 */
import { stat } from "node:fs/promises";
import { DEFAULTS } from "../config/options.js";
import { monotonicOf } from "../core/clock.js";
import { createEventBus, type EventBus } from "../core/events.js";
import { redactUrl } from "../core/redact.js";
import type { Repeating, Runtime } from "../core/runtime.js";
import type { GuardStatus } from "../core/status.js";
import { TransportError } from "../protocol/http/errors.js";
import { createHttpTransport, type HttpTransport } from "../protocol/http/http.js";
import { lateToleranceMs } from "./liveness.js";
import { loopHooks } from "./loop.js";

export const URL_FAILURES_FOR_DOWN = 2;
/** At most this many looks in one check when each ran late (the first and its re-takes). */
export const MAX_LOOKS = 3;
/**
 * How far in the future a guard file's mtime may be (clock granularity, a writer's small skew) before it counts
 * as stale (docs/security.md, "Guard file").
 */
export const FUTURE_MTIME_TOLERANCE_MS = 2_000;
/** Time-out of one guard URL request: short, and below the check interval. */
export const GUARD_URL_TIMEOUT_MS = 2_000;
/**
 * The largest health answer read (the body is only drained: the status decides). A health endpoint answers a few
 * bytes to a few KB; one over this counts as a failed check, like any answer that cannot be read.
 */
export const GUARD_URL_MAX_BODY_BYTES = 1024 * 1024;

export type CreateGuardParameters = {
  file?: string | undefined;
  maxAgeMs?: number;
  url?: string | undefined;
  intervalMs: number;
  /** the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts) */
  runtime: Runtime;
  /**
   * the daemon's event bus, where its log lines and metric subscribe (src/surface/watchers/guard.ts); without one
   * (a one-off check: `hl-deadman doctor`), what it sees is told to no one but `onChange`
   */
  bus?: EventBus | undefined;
  onChange: (up: boolean, detail: string | null) => void;
  /** injectable for tests; default a transport of its own for `url` (closed by `stop`) */
  transport?: HttpTransport | undefined;
};

export type Guard = {
  /** Runs the first check and resolves with the engine's state, then checks every interval. */
  start(): Promise<boolean>;
  stop(): void;
  /** One check now; resolves with the state after it. */
  check(): Promise<boolean>;
  /** Resolves when no check is running (tests, shutdown). */
  idle(): Promise<void>;
  status(): GuardStatus;
};

/** Returns null when no guard is configured. */
export function createGuard(params: CreateGuardParameters): Guard | null {
  const { file, url, intervalMs, runtime, onChange, maxAgeMs = DEFAULTS.guardMaxAge } = params;
  const { clock } = runtime;
  if (!file && !url) return null;
  const timeoutMs = Math.min(GUARD_URL_TIMEOUT_MS, Math.max(100, intervalMs));
  // a look later than this is a stall's (liveness.ts); a URL's look may take its time-out, a file's stat no time
  const tolerance = lateToleranceMs(intervalMs);
  const probeBoundMs = url && !file ? timeoutMs : 0;
  const transport =
    params.transport ??
    (url
      ? createHttpTransport({ baseUrl: url, timeoutMs, limits: { maxBytes: GUARD_URL_MAX_BODY_BYTES } })
      : undefined);
  const kind: "file" | "url" = file ? "file" : "url";
  const bus = params.bus ?? createEventBus();
  let up = true;
  let lastCheckAt: number | null = null;
  let detail: string | null = null;
  let failures = 0;
  let checking: Promise<boolean> | null = null;
  let loop: Repeating | undefined;
  const shown = file ?? redactUrl(url!);
  let futureWarned = false;
  let stopped = false;
  bus.publish({ module: "guard", type: "guardConfigured", kind });

  const probe = async (): Promise<{ ok: boolean; detail: string }> => {
    if (file) {
      try {
        const s = await stat(file);
        const age = clock.now() - s.mtimeMs;
        // An mtime in the future (touch -d '+5 min', a skewed writer) is stale, not alive forever.
        if (age < -FUTURE_MTIME_TOLERANCE_MS) {
          const aheadMs = Math.round(-age);
          if (!futureWarned) bus.publish({ module: "guard", type: "guardFutureMtime", file, aheadMs });
          futureWarned = true;
          return { ok: false, detail: `${file} mtime is ${aheadMs} ms in the future (stale)` };
        }
        futureWarned = false;
        if (age > maxAgeMs)
          return { ok: false, detail: `${file} last touched ${Math.round(age)} ms ago (max ${maxAgeMs} ms)` };
        return { ok: true, detail: `${file} touched ${Math.max(0, Math.round(age))} ms ago` };
      } catch (error) {
        return { ok: false, detail: `${file}: ${(error as NodeJS.ErrnoException).code ?? "cannot stat"}` };
      }
    }
    try {
      const res = await transport!.request(undefined, {
        method: "GET",
        headers: { accept: "*/*" },
        parseJson: false,
        timeoutMs,
      });
      if (res.status >= 200 && res.status < 300)
        return { ok: true, detail: `${shown} answered ${res.status}` };
      return { ok: false, detail: `${shown} answered ${res.status}` };
    } catch (error) {
      // A transport error holds only the redacted URL and a scrubbed reason; a refused or timed-out request is
      // named by its code, a redirect or an unreadable answer by its reason.
      if (error instanceof TransportError)
        return {
          ok: false,
          detail: `${shown}: ${error.kind === "transport" ? (error.code ?? error.reason) : error.reason}`,
        };
      return { ok: false, detail: `${shown}: ${error instanceof Error ? error.name : "error"}` };
    }
  };

  /**
   * One look at the engine. A look that ran late (its tick woke more than the tolerance after it was due, or the
   * probe took longer than it may: a URL's time-out that fired late) was taken while the daemon was not running: a
   * failure it saw is no evidence yet, and it is taken again at once; only an on-time look's failure counts
   * (src/watchers/liveness.ts, "silence counts only over time the daemon was awake"). A success counts as it comes.
   */
  const look = async (lateMs: number): Promise<{ ok: boolean; detail: string } | null> => {
    for (let attempt = 0; attempt < MAX_LOOKS; attempt++) {
      const startedAt = monotonicOf(clock);
      const result = await probe();
      const tookMs = monotonicOf(clock) - startedAt;
      const late = (attempt === 0 && lateMs > tolerance) || tookMs > probeBoundMs + tolerance;
      if (result.ok || !late) return result;
    }
    // every look ran late (the daemon keeps stalling): nothing counts; the next tick looks again
    return null;
  };

  const check = (lateMs = 0): Promise<boolean> => {
    checking ??= (async () => {
      try {
        const result = await look(lateMs);
        if (result === null) return up;
        // Stopped meanwhile (its transport closed under it): the daemon is going; report no change.
        if (stopped) return up;
        lastCheckAt = clock.now();
        detail = result.detail;
        failures = result.ok ? 0 : failures + 1;
        const next = result.ok
          ? true
          : kind === "url"
            ? failures >= URL_FAILURES_FOR_DOWN
              ? false
              : up
            : false;
        bus.publish({ module: "guard", type: "guardChecked", kind, ok: result.ok, detail: result.detail });
        if (next !== up) {
          up = next;
          bus.publish({ module: "guard", type: "engineChanged", kind, up, detail: result.detail });
          onChange(up, result.detail);
        }
        return up;
      } finally {
        checking = null;
      }
    })();
    return checking;
  };

  return {
    async start() {
      const state = await check();
      loop?.stop();
      loop = runtime.every(
        intervalMs,
        ({ k, lateMs }) => {
          if (k > 0) void check(lateMs);
        },
        loopHooks(bus, "guard", "guard", intervalMs),
      );
      return state;
    },
    stop() {
      stopped = true;
      loop?.stop();
      // Its own transport only (an injected one belongs to the caller); a check in flight fails at once.
      if (!params.transport) transport?.close();
    },
    check,
    async idle() {
      if (checking) await checking.catch(() => undefined);
    },
    status: () => ({ configured: true, up, kind, lastCheckAt, detail }),
  };
}
