/**
 * The exposure poller: what the accounts hold, polled with `batchClearinghouseStates` on its own cadence.
 *
 * - Its own repetition through the runtime's `every` (src/core/runtime.ts: drift-free on the monotonic clock,
 *   missed ticks skipped, never bunched), separate from the heartbeat's; no shared lock, so a slow or failing
 *   /info never delays a push. Polls never overlap: a tick or pollNow() during a poll joins it, and a "trigger"
 *   poll runs once more after it so the log shows what a trigger left open.
 * - One `exposure` log line per account (and dex) per poll, with the fields of docs/observability.md ("Log events") plus derived figures
 *   (figures.ts: exact BigInt decimals); `exposure.alert` / `exposure.alert.cleared` once per crossing of a
 *   threshold; `clock.skew` / `clock.skew.cleared` once per crossing of the skew limit (skew.ts).
 * - A failed poll (any dex) is published (`exposurePollFailed`: `exposure.failed` at warn with the error kind and
 *   message, counted by `exposure_poll_failures_total`), and is retried at the next tick. It never throws out of
 *   the poller.
 * Everything it and its report see is published on the bus (src/core/events.ts `ExposurePollEvent`, the clock's
 * `ClockEvent`, the `exposure` line); the wording and the metrics are subscribers (src/surface/watchers/).
 */

import { normalizeAddress } from "../core/address.js";
import { ArgumentError } from "../core/errors/argument.js";
import type { EventBus } from "../core/events.js";
import type { Repeating, Runtime } from "../core/runtime.js";
import type { ExposureStatus } from "../core/status.js";
import type { HyperliquidErrorKind } from "../protocol/hyperliquid/errors.js";
import type { ClearinghouseState } from "../protocol/hyperliquid/schemas.js";
import { createExposureReporter } from "./exposure-report.js";
import { loopHooks } from "./loop.js";
import { CrossingLatch, SkewEstimator, sampleSkew } from "./skew.js";

/** What the poller needs from InfoClient (src/protocol/hyperliquid/info.ts); tests may pass their own. */
export type ExposureInfo = {
  batchClearinghouseStatesWithMeta(params: {
    users: string[];
    dex?: string | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<{
    states: ClearinghouseState[];
    serverDate: number | undefined;
    sentAt: number;
    receivedAt: number;
  }>;
};

export type ExposureThresholds = {
  /** alert when total notional / account value is above this */
  maxLeverage?: number | undefined;
  /** alert when a position's distance to liquidation (percent of mark) is below this */
  minLiquidationDistancePct?: number | undefined;
  /** alert when the account's total notional (USD) is above this */
  maxNotionalUsd?: number | undefined;
};

export type PollReason = "start" | "interval" | "trigger" | (string & {});

export type CreateExposurePollerParameters = {
  info: ExposureInfo;
  /** accounts plus extra exposure users; any case, de-duplicated, validated here */
  users: readonly string[];
  /** perp dexes; "" is the first perp dex */
  dexes?: readonly string[];
  /** the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts) */
  runtime: Runtime;
  /** poll cadence (ms); 0 disables the poller (start and pollNow do nothing) */
  intervalMs: number;
  thresholds?: ExposureThresholds;
  /** warn when |local − exchange| exceeds this (ms) */
  clockSkewWarnMs: number;
  /** the daemon's event bus: each account's exposure, the clock's skew and the polls are published there */
  bus: EventBus;
};

export type ExposurePoller = {
  /**
   * First poll at once (reason "start"), then one per interval, on slots `slotOrigin + k × interval` when given
   * (the push loop's origin: a poll then shares a push's wake-up). Idempotent.
   */
  start(slotOrigin?: number): void;
  /** Stops the timer, aborts a running poll and waits for it. Idempotent. */
  stop(): Promise<void>;
  /** Polls now (or joins the running poll; a "trigger" poll runs once more after it). Never rejects. */
  pollNow(reason: PollReason): Promise<void>;
  status(): ExposureStatus;
};

function errorKind(error: unknown): HyperliquidErrorKind | string {
  if (error && typeof error === "object" && "kind" in error && typeof error.kind === "string")
    return error.kind;
  if (error instanceof Error) return error.name;
  return "unknown";
}

function errorText(error: unknown): string {
  if (
    error &&
    typeof error === "object" &&
    "shortMessage" in error &&
    typeof error.shortMessage === "string"
  ) {
    return error.shortMessage;
  }
  return error instanceof Error ? error.message : String(error);
}

export function createExposurePoller({
  info,
  users: rawUsers,
  dexes = [""],
  runtime,
  intervalMs,
  thresholds = {},
  clockSkewWarnMs,
  bus,
}: CreateExposurePollerParameters): ExposurePoller {
  const { clock } = runtime;
  if (!Number.isFinite(intervalMs) || intervalMs < 0) {
    throw new ArgumentError(`intervalMs must be a number of milliseconds >= 0, got ${intervalMs}`);
  }
  const users = [...new Set(rawUsers.map((u, i) => normalizeAddress(u, `exposure users[${i}]`)))];
  const dexList = [...new Set(dexes)];
  if (dexList.length === 0) dexList.push("");
  const enabled = intervalMs > 0 && users.length > 0;

  const skew = new SkewEstimator();
  const skewLatch = new CrossingLatch(clockSkewWarnMs);
  // the figures' way out: line, changes, alerts (exposure-report.ts)
  const reporter = createExposureReporter({ bus, thresholds });

  let lastSuccessAt: number | null = null;
  let lastAttemptAt: number | null = null;
  let lastError: string | null = null;

  let started = false;
  let stopped = false;
  let repeating: Repeating | undefined;
  let running: Promise<void> | null = null;
  let queuedTrigger: Promise<void> | null = null;
  let controller: AbortController | null = null;

  // ------------------------------------------------------------------------------------------ skew

  function updateSkew(sample: ReturnType<typeof sampleSkew>) {
    const estimate = skew.add(sample);
    if (!estimate) return;
    bus.publish({
      module: "clock",
      origin: "exposure",
      type: "clockSkew",
      skewMs: estimate.skewMs,
      uncertaintyMs: estimate.uncertaintyMs,
      limitMs: clockSkewWarnMs,
      source: estimate.source,
      change: skewLatch.update(Math.abs(estimate.skewMs)),
    });
  }

  // ------------------------------------------------------------------------------------------ one poll

  async function pollDex(dex: string, reason: PollReason, signal: AbortSignal): Promise<boolean> {
    try {
      const result = await info.batchClearinghouseStatesWithMeta({ users, dex, signal });
      if (result.states.length !== users.length) {
        throw new RangeError(`asked for ${users.length} states, got ${result.states.length}`);
      }
      updateSkew(
        sampleSkew({
          sentAt: result.sentAt,
          receivedAt: result.receivedAt,
          serverTimes: result.states.map((s) => s.time),
          serverDate: result.serverDate,
        }),
      );
      // `dex` only for the other perp dexes: "" is the first perp dex, the one the contract's line describes
      const extra = { reason, ...(dex !== "" ? { dex } : {}) };
      for (let i = 0; i < users.length; i++) reporter.report(users[i]!, dex, result.states[i]!, extra);
      return true;
    } catch (error) {
      if (stopped && signal.aborted) return false;
      const kind = errorKind(error);
      const message = errorText(error);
      lastError = `${kind}: ${message}`;
      bus.publish({ module: "exposurePoll", type: "exposurePollFailed", reason, dex, kind, message });
      return false;
    }
  }

  async function poll(reason: PollReason): Promise<void> {
    const startedAt = clock.now();
    // durations come from the monotonic performance clock; the injected clock is for timestamps
    const t0 = performance.now();
    lastAttemptAt = startedAt;
    controller = new AbortController();
    const { signal } = controller;
    let ok = true;
    for (const dex of dexList) {
      if (signal.aborted) return;
      ok = (await pollDex(dex, reason, signal)) && ok;
    }
    const durationMs = performance.now() - t0;
    if (ok) {
      lastSuccessAt = clock.now();
      lastError = null;
    }
    bus.publish({
      module: "exposurePoll",
      type: "exposurePolled",
      durationMs,
      succeededAt: ok ? lastSuccessAt : null,
    });
  }

  function runOnce(reason: PollReason): Promise<void> {
    const p = poll(reason)
      .catch((error: unknown) => {
        // poll() catches per dex; this only guards against a bug in the report (the bus never throws)
        lastError = `${errorKind(error)}: ${errorText(error)}`;
        bus.publish({
          module: "exposurePoll",
          type: "exposurePollCrashed",
          reason,
          kind: errorKind(error),
          message: errorText(error),
        });
      })
      .finally(() => {
        running = null;
        controller = null;
      });
    running = p;
    return p;
  }

  function pollNow(reason: PollReason): Promise<void> {
    if (!enabled || stopped) return Promise.resolve();
    if (running) {
      if (reason !== "trigger") return running;
      // after a trigger, the state must be read after the trigger: wait for the running poll, then poll again
      queuedTrigger ??= running.then(() => {
        queuedTrigger = null;
        if (stopped) return;
        return running ?? runOnce("trigger");
      });
      return queuedTrigger;
    }
    return runOnce(reason);
  }

  // ------------------------------------------------------------------------------------------ cadence

  return {
    start(slotOrigin) {
      if (!enabled || started || stopped) return;
      started = true;
      void pollNow("start");
      repeating = runtime.every(intervalMs, () => pollNow("interval"), {
        ...loopHooks(bus, "exposure", "exposure", intervalMs),
        immediate: false,
        startAt: slotOrigin,
      });
    },
    async stop() {
      stopped = true;
      repeating?.stop();
      repeating = undefined;
      controller?.abort(new Error("exposure poller stopped"));
      await (queuedTrigger ?? running ?? Promise.resolve());
    },
    pollNow,
    status(): ExposureStatus {
      return {
        enabled,
        intervalMs,
        lastSuccessAt,
        lastAttemptAt,
        lastError,
        clockSkewMs: skew.estimate ? Math.round(skew.estimate.skewMs) : null,
      };
    },
  };
}

export { exposureSummary } from "./exposure-report.js";
