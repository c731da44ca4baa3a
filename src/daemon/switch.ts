/**
 * The switch for one account: keeps `scheduleCancel` armed by pushing `time = now + deadline` every interval,
 * counts triggers, and reports where it stands. Timeline and rules: docs/daemon.md.
 *
 * Invariants:
 * - Pushes for one account never overlap (one in flight at most).
 * - Each push is signed with expiresAfter = now + requestTimeout, and is aborted locally when that passes.
 *   After an attempt whose outcome is unknown (no answer, 5xx, unreadable answer), the next one is only sent
 *   once that expiresAfter + EXPIRY_MARGIN_MS has passed, so the old request can no longer land after the
 *   new one and pull the deadline earlier. The confirmed deadline only moves forward (the one exception is
 *   the deliberate engine-down expedite).
 * - A trigger is counted when the confirmed deadline passes without a newer confirmed push (and at start,
 *   when the ledger's deadline passed while the daemon was down); once per deadline.
 */
import { HyperliquidApiError } from "../hyperliquid/errors.js";
import type { ScheduleCancelParameters, ScheduleCancelResult } from "../hyperliquid/exchange.js";
import { type Clock, nextUtcMidnight } from "../utils/clock.js";
import type { Logger } from "../utils/logger.js";
import type { Ledger, LedgerEntry } from "./ledger.js";
import { createLoop, type Loop, type TimerHandle, type Timers } from "./loop.js";
import type { Metrics } from "./metrics.js";
import type { SwitchState, SwitchStatus } from "./types.js";

/** Expedite lead: the exchange's 5 s minimum (docs/exchange-behaviour.md §3) + 0.5 s so transit does not make it "too early". */
export const EXPEDITE_LEAD_MS = 5_500;
/** Extra wait after an unknown-outcome attempt's expiresAfter before the next attempt (covers clock skew). */
export const EXPIRY_MARGIN_MS = 1_000;
/** First retry delay; doubles per consecutive failure. */
export const BACKOFF_BASE_MS = 500;
/** First retry delay after HTTP 429. */
export const RATE_LIMIT_BACKOFF_BASE_MS = 2_000;

/** What the switch needs from ExchangeClient. */
export type ScheduleCancelClient = {
  scheduleCancel(params: ScheduleCancelParameters): Promise<ScheduleCancelResult>;
};

export type CreateSwitchParameters = {
  /** lower-case address whose orders the schedule cancels */
  account: string;
  /** sent as vaultAddress (a vault or subaccount); omit when the signer acts for its own user */
  vaultAddress?: string | undefined;
  client: ScheduleCancelClient;
  ledger: Ledger;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  metrics: Metrics;
  intervalMs: number;
  deadlineMs: number;
  requestTimeoutMs: number;
  permanentRecheckMs: number;
  triggerWarnRemaining: number;
  onEngineDown?: "expedite" | "lapse";
  /** called after a trigger is counted (the daemon polls exposure) */
  onTrigger?: ((account: string) => void) | undefined;
};

export type ShutdownOutcome = {
  account: string;
  outcome: "removed" | "kept" | "failed" | "skipped";
  reason?: string;
  message?: string;
};

export type Switch = {
  readonly account: string;
  /** Reads the ledger (counting a trigger missed while down), then starts pushing at once. */
  start(): void;
  /** Stops pushing (timers, loop) and waits for an in-flight push. The schedule is left as it is. */
  stop(): Promise<void>;
  /** Graceful stop: stop pushing, then remove the schedule (`remove`) or leave it armed (`keep`). */
  shutdown(params: { mode: "remove" | "keep" }): Promise<ShutdownOutcome>;
  /** The engine guard's view changed. */
  setEngineUp(up: boolean, detail?: string | null): void;
  /** 00:00 UTC: re-arm if exhausted. */
  onDayRollover(): void;
  status(): SwitchStatus;
  /** Resolves when no push is in flight (tests). */
  settle(): Promise<void>;
  /** Pushes now if allowed (tests, and the daemon after events). */
  kick(reason: string): void;
};

type Failure = {
  kind: string;
  message: string;
  permanent: boolean;
  retryable: boolean;
  unknownOutcome: boolean;
};

/** Kinds after which the request may or may not have been applied by the exchange. */
const UNKNOWN_OUTCOME_KINDS = new Set(["transport", "server_error", "malformed_response"]);

function describeFailure(error: unknown): Failure {
  if (error instanceof HyperliquidApiError) {
    return {
      kind: error.kind,
      message: error.serverMessage ?? error.shortMessage,
      permanent: error.permanent,
      retryable: error.retryable || error.kind === "transport",
      unknownOutcome: UNKNOWN_OUTCOME_KINDS.has(error.kind),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { kind: "internal", message, permanent: false, retryable: true, unknownOutcome: true };
}

export function createSwitch(params: CreateSwitchParameters): Switch {
  const {
    account,
    vaultAddress,
    client,
    ledger,
    clock,
    timers,
    metrics,
    intervalMs,
    deadlineMs,
    requestTimeoutMs,
    permanentRecheckMs,
    triggerWarnRemaining,
    onEngineDown = "expedite",
    onTrigger,
  } = params;
  const log = params.logger.child({ module: "switch", account });
  const labels = { account };

  let state: SwitchState = "starting";
  let armedUntil: number | null = null;
  let lastPushAt: number | null = null;
  let consecutiveFailures = 0;
  let lastError: { kind: string; message: string } | null = null;
  let notProtectedReason: string | null = null;
  let nextPermanentCheckAt = 0;
  /** earliest time the next attempt may be sent (previous attempt's outcome unknown) */
  let gateUntil = 0;
  /** earliest time a retry after a failure is due */
  let retryAt = 0;
  let inflight: Promise<void> | null = null;
  let kickAfterInflight = false;
  let engineUp = true;
  let expedited = false;
  let stopped = false;
  let started = false;
  let wasExhausted = false;
  let lapseTimer: TimerHandle | undefined;
  let retryTimer: TimerHandle | undefined;
  let loop: Loop | undefined;

  const isExhausted = (e: LedgerEntry) => e.triggersToday >= e.limit;

  const updateMetrics = (entry: LedgerEntry = ledger.get(account)) => {
    const now = clock.now();
    metrics.armedDeadline.set(labels, armedUntil === null ? 0 : armedUntil / 1000);
    metrics.protectionLeft.set(labels, armedUntil === null ? 0 : (armedUntil - now) / 1000);
    metrics.triggersToday.set(labels, entry.triggersToday);
    metrics.triggersLeft.set(labels, Math.max(0, entry.limit - entry.triggersToday));
    metrics.exhausted.set(labels, isExhausted(entry) ? 1 : 0);
  };

  const armLapseTimer = () => {
    lapseTimer?.cancel();
    lapseTimer = undefined;
    if (armedUntil === null || stopped) return;
    lapseTimer = timers.after(armedUntil - clock.now(), () => {
      checkLapse();
      kick("lapsed");
    });
  };

  const scheduleRetry = (at: number, reason: string) => {
    retryTimer?.cancel();
    retryTimer = timers.after(at - clock.now(), () => {
      retryTimer = undefined;
      kick(reason);
    });
  };

  /** Counts a trigger when the confirmed deadline has passed. */
  const checkLapse = (detail?: string) => {
    if (armedUntil === null) return;
    const now = clock.now();
    if (now < armedUntil) return;
    const deadline = armedUntil;
    armedUntil = null;
    lapseTimer?.cancel();
    lapseTimer = undefined;
    const result = ledger.countTrigger(account, { deadline, at: now, ...(detail ? { detail } : {}) });
    const entry = result.entry;
    const left = Math.max(0, entry.limit - entry.triggersToday);
    if (result.counted) {
      metrics.triggersTotal.inc(labels);
      log.warn(
        {
          event: "trigger.counted",
          triggersToday: entry.triggersToday,
          triggerLimit: entry.limit,
          triggersLeft: left,
          deadline,
          ...(detail ? { detail } : {}),
        },
        `the scheduled cancel fired at ${new Date(deadline).toISOString()} (${entry.triggersToday}/${entry.limit} today)`,
      );
      if (isExhausted(entry)) {
        if (!entry.assumed) logExhausted(entry, "the local ledger counted the daily limit");
      } else if (left <= triggerWarnRemaining) {
        log.warn(
          {
            event: "trigger.low",
            triggersToday: entry.triggersToday,
            triggersLeft: left,
            triggerLimit: entry.limit,
          },
          `only ${left} scheduled-cancel trigger(s) left today`,
        );
      }
    } else {
      log.warn(
        { event: "trigger.skipped", deadline, ...(detail ? { detail } : {}) },
        "a lapsed deadline from an earlier UTC day (or one already counted) is not counted today",
      );
    }
    state = isExhausted(entry) && !entry.assumed ? "exhausted" : engineUp ? "lapsed" : "engine_down";
    updateMetrics(entry);
    if (onTrigger) {
      try {
        onTrigger(account);
      } catch (error) {
        log.error({ event: "trigger.hook_failed", err: error }, "the onTrigger hook threw");
      }
    }
  };

  const logExhausted = (entry: LedgerEntry, why: string, message?: string) => {
    wasExhausted = true;
    const resumesAt = nextUtcMidnight(clock.now());
    log.error(
      {
        event: "trigger.exhausted",
        triggersToday: entry.triggersToday,
        triggerLimit: entry.limit,
        resumesAt,
        ...(message ? { message } : {}),
      },
      `daily trigger limit reached (${why}): the switch cannot protect until ${new Date(resumesAt).toISOString()}`,
    );
  };

  /** Decides whether to push now, and does. */
  const kick = (reason: string) => {
    if (stopped || !started) return;
    const now = clock.now();
    checkLapse();
    if (inflight) {
      if (reason !== "interval") kickAfterInflight = true;
      return;
    }
    const entry = ledger.get(account);
    if (wasExhausted && !isExhausted(entry)) {
      wasExhausted = false;
      log.info(
        { event: "trigger.reset", day: entry.day, triggersToday: entry.triggersToday },
        "new UTC day: the trigger budget is back, re-arming",
      );
      if (state === "exhausted") state = armedUntil === null ? "lapsed" : "armed";
    }
    updateMetrics(entry);
    if (!engineUp) {
      if (onEngineDown === "lapse" || expedited) return;
    }
    if (isExhausted(entry) && !entry.assumed) {
      // Pushing a time would be refused anyway; the loop keeps ticking and resumes after 00:00 UTC.
      state = "exhausted";
      return;
    }
    if (state === "not_protected" && now < nextPermanentCheckAt) return;
    if (now < gateUntil) {
      scheduleRetry(gateUntil, "gate");
      return;
    }
    if (now < retryAt && reason === "interval") return;
    const mode = engineUp ? "arm" : "expedite";
    inflight = attempt(mode).finally(() => {
      inflight = null;
      if (kickAfterInflight) {
        kickAfterInflight = false;
        kick("after-inflight");
      }
    });
  };

  const attempt = async (mode: "arm" | "expedite"): Promise<void> => {
    const time = clock.now() + (mode === "arm" ? deadlineMs : EXPEDITE_LEAD_MS);
    // Write-ahead: the ledger knows this cancel time before the exchange can accept it (see Ledger.recordIntent).
    const previousPending = ledger.get(account).pendingUntil;
    await ledger.recordIntent(account, { deadline: time });
    const sentAt = clock.now();
    const controller = new AbortController();
    // The request cannot land after its expiresAfter: stop waiting for it then (on the daemon's clock).
    const abortTimer = timers.after(requestTimeoutMs, () => controller.abort());
    try {
      const result = await client.scheduleCancel({
        time,
        vaultAddress,
        expiresAfterMs: requestTimeoutMs,
        signal: controller.signal,
      });
      onOk(result, mode, time);
    } catch (error) {
      const failure = describeFailure(error);
      // An explicit refusal armed nothing; an unknown outcome (time-out, reset) stays pending in the ledger.
      if (!failure.unknownOutcome)
        ledger.clearIntent(account, { deadline: time, restoreTo: previousPending });
      onFail(failure, sentAt, mode);
    } finally {
      abortTimer.cancel();
    }
  };

  const onOk = (result: ScheduleCancelResult, mode: "arm" | "expedite", sent: number) => {
    const now = clock.now();
    const confirmed = result.time ?? sent;
    if (mode === "expedite") {
      // Deliberately earlier: the engine is down, let the exchange cancel at the 5 s minimum.
      armedUntil = confirmed;
      expedited = true;
    } else if (armedUntil === null || confirmed > armedUntil) {
      armedUntil = confirmed;
    }
    lastPushAt = now;
    gateUntil = 0;
    retryAt = 0;
    consecutiveFailures = 0;
    lastError = null;
    if (notProtectedReason !== null) {
      metrics.notProtected.set({ account, reason: notProtectedReason }, 0);
      log.info(
        { event: "switch.protected", previousReason: notProtectedReason },
        "the exchange accepts the switch again",
      );
      notProtectedReason = null;
    }
    const entry = ledger.recordPush(account, { deadline: armedUntil, at: now });
    state = mode === "expedite" || !engineUp ? "engine_down" : "armed";
    metrics.pushes.inc({ account, outcome: "ok" });
    metrics.pushLatency.observe(labels, result.latencyMs / 1000);
    armLapseTimer();
    updateMetrics(entry);
    if (mode === "expedite") {
      log.warn(
        { event: "heartbeat.ok", deadline: armedUntil, latencyMs: result.latencyMs, expedited: true },
        `engine down: the cancel is now scheduled at ${new Date(armedUntil).toISOString()} (5 s minimum)`,
      );
    } else {
      log.info(
        { event: "heartbeat.ok", deadline: armedUntil, latencyMs: result.latencyMs },
        `armed until ${new Date(armedUntil).toISOString()}`,
      );
    }
  };

  const onFail = (failure: Failure, sentAt: number, mode: "arm" | "expedite") => {
    const now = clock.now();
    if (stopped) return;
    consecutiveFailures++;
    lastError = { kind: failure.kind, message: failure.message };
    metrics.pushes.inc({ account, outcome: failure.kind });
    if (failure.unknownOutcome) gateUntil = Math.max(gateUntil, sentAt + requestTimeoutMs + EXPIRY_MARGIN_MS);
    if (mode === "expedite") expedited = true; // one expedite per engine-down episode (docs/daemon.md)

    if (failure.permanent) {
      const first = notProtectedReason !== failure.kind;
      if (notProtectedReason !== null && first)
        metrics.notProtected.set({ account, reason: notProtectedReason }, 0);
      notProtectedReason = failure.kind;
      state = "not_protected";
      nextPermanentCheckAt = now + permanentRecheckMs;
      metrics.notProtected.set({ account, reason: failure.kind }, 1);
      log.warn(
        { event: "heartbeat.failed", reason: failure.kind, message: failure.message, consecutiveFailures },
        `push refused: ${failure.message}`,
      );
      if (first) {
        log.error(
          {
            event: "switch.not_protected",
            reason: failure.kind,
            message: failure.message,
            recheckInMs: permanentRecheckMs,
          },
          `NOT PROTECTED: the exchange refuses the switch for this account (${failure.kind}); rechecking every ${Math.round(permanentRecheckMs / 1000)} s`,
        );
      }
      scheduleRetry(nextPermanentCheckAt, "permanent-recheck");
      updateMetrics();
      return;
    }

    if (failure.kind === "daily_limit") {
      const entry = ledger.markLimitReached(account, { at: now, message: failure.message });
      state = "exhausted";
      log.warn(
        { event: "heartbeat.failed", reason: failure.kind, message: failure.message, consecutiveFailures },
        `push refused: ${failure.message}`,
      );
      logExhausted(entry, "the exchange refused with its daily-limit error", failure.message);
      updateMetrics(entry);
      return;
    }

    if (state !== "engine_down") state = "retrying";
    let delay: number | null = null;
    if (failure.retryable) {
      const base = failure.kind === "rate_limited" ? RATE_LIMIT_BACKOFF_BASE_MS : BACKOFF_BASE_MS;
      const cap = failure.kind === "rate_limited" ? intervalMs : Math.max(1_000, intervalMs / 2);
      delay = Math.min(base * 2 ** Math.min(consecutiveFailures - 1, 20), cap);
    }
    const next = delay === null ? null : Math.max(now + delay, gateUntil);
    log.warn(
      {
        event: "heartbeat.failed",
        reason: failure.kind,
        message: failure.message,
        consecutiveFailures,
        retryInMs: next === null ? null : next - now,
        armedUntil,
      },
      `push failed (${failure.kind}): ${failure.message}`,
    );
    if (next !== null && engineUp) {
      retryAt = next;
      scheduleRetry(next, "retry");
    }
    updateMetrics();
  };

  const status = (): SwitchStatus => {
    if (started && !stopped) checkLapse();
    const entry = ledger.get(account);
    updateMetrics(entry);
    return {
      account,
      state,
      armedUntil,
      lastPushAt,
      consecutiveFailures,
      lastError,
      notProtectedReason,
      day: entry.day,
      triggersToday: entry.triggersToday,
      triggerLimit: entry.limit,
      exhausted: isExhausted(entry),
    };
  };

  const stopTimers = () => {
    loop?.stop();
    retryTimer?.cancel();
    lapseTimer?.cancel();
    retryTimer = undefined;
    lapseTimer = undefined;
  };

  const waitInflight = async () => {
    for (let i = 0; i < 10 && inflight; i++) await inflight;
  };

  const sleepUntil = (at: number) =>
    new Promise<void>((resolve) => {
      timers.after(at - clock.now(), resolve);
    });

  return {
    account,
    start() {
      if (started) return;
      started = true;
      const entry = ledger.get(account);
      armedUntil = entry.armedUntil;
      lastPushAt = entry.lastPushAt;
      // A push sent just before the last stop may have been accepted without its confirmation reaching the
      // ledger (write-ahead pendingUntil). At most one of the two deadlines can fire (a newer schedule replaces
      // the older), so: if the pending one has passed, count it; if only the confirmed one has passed, count
      // that (it fired unless the pending push was accepted: counting errs toward fewer triggers left), then
      // treat the pending one as possibly armed.
      const pending = entry.pendingUntil;
      if (pending !== null && (armedUntil === null || pending > armedUntil)) {
        const startNow = clock.now();
        if (pending <= startNow) {
          armedUntil = pending;
        } else if (armedUntil !== null && armedUntil <= startNow) {
          checkLapse("the deadline passed while the daemon was down");
          armedUntil = pending;
        } else {
          armedUntil = pending;
        }
        log.info(
          { event: "ledger.pending", pendingUntil: pending, confirmedUntil: entry.armedUntil },
          "a push sent before the last stop has no recorded confirmation; assuming the exchange accepted it",
        );
      }
      if (entry.assumed) {
        log.error(
          {
            event: "trigger.exhausted",
            triggersToday: entry.triggersToday,
            triggerLimit: entry.limit,
            assumed: true,
          },
          "the trigger ledger was unreadable: assuming the daily limit is used; pushes continue, readiness fails until 00:00 UTC",
        );
      }
      if (armedUntil !== null && armedUntil <= clock.now()) {
        checkLapse("the deadline passed while the daemon was down");
      } else if (armedUntil !== null) {
        state = "armed";
        armLapseTimer();
      }
      const now = ledger.get(account);
      if (isExhausted(now) && !now.assumed && state !== "exhausted") {
        state = "exhausted";
        logExhausted(now, "from the ledger");
      }
      updateMetrics();
      loop = createLoop({
        intervalMs,
        clock,
        timers,
        logger: log,
        metrics,
        name: "push",
        onTick: () => kick("interval"),
      });
      loop.start();
    },
    async stop() {
      stopped = true;
      stopTimers();
      await waitInflight();
    },
    async shutdown({ mode }) {
      stopped = true;
      stopTimers();
      await waitInflight();
      if (mode === "keep") {
        state = "stopped";
        log.info(
          { event: "shutdown.kept", armedUntil },
          armedUntil === null
            ? "graceful stop: nothing is armed"
            : `graceful stop: the schedule stays armed until ${new Date(armedUntil).toISOString()}`,
        );
        return { account, outcome: "kept" };
      }
      // An attempt with unknown outcome could still land: remove only after it can no longer.
      if (clock.now() < gateUntil) await sleepUntil(gateUntil);
      try {
        await client.scheduleCancel({ vaultAddress, expiresAfterMs: requestTimeoutMs });
        const previous = armedUntil;
        armedUntil = null;
        ledger.recordRemoval(account, { at: clock.now() });
        state = "stopped";
        updateMetrics();
        log.info(
          { event: "shutdown.removed", previousDeadline: previous },
          "graceful stop: the scheduled cancel is removed",
        );
        return { account, outcome: "removed" };
      } catch (error) {
        const failure = describeFailure(error);
        state = "stopped";
        if (failure.permanent && notProtectedReason !== null && armedUntil === null) {
          log.warn(
            { event: "shutdown.skipped", reason: failure.kind, message: failure.message },
            "graceful stop: nothing to remove (the exchange refuses the switch for this account)",
          );
          return { account, outcome: "skipped", reason: failure.kind, message: failure.message };
        }
        log.error(
          { event: "shutdown.remove_failed", reason: failure.kind, message: failure.message, armedUntil },
          `graceful stop: could not remove the scheduled cancel (${failure.kind}); it fires at the armed deadline`,
        );
        return { account, outcome: "failed", reason: failure.kind, message: failure.message };
      }
    },
    setEngineUp(up, detail) {
      if (up === engineUp) return;
      engineUp = up;
      if (!up) {
        expedited = false;
        retryTimer?.cancel();
        retryTimer = undefined;
        retryAt = 0;
        state = "engine_down";
        log.warn(
          { event: "engine.down", action: onEngineDown, detail: detail ?? null, armedUntil },
          onEngineDown === "expedite"
            ? "trading engine down: scheduling the cancel at the 5 s minimum, then no more pushes"
            : "trading engine down: no more pushes; the armed deadline will lapse",
        );
        if (onEngineDown === "expedite") kick("engine-down");
      } else {
        expedited = false;
        state = armedUntil === null ? "lapsed" : "armed";
        log.info({ event: "engine.up", detail: detail ?? null }, "trading engine back: pushing again");
        kick("engine-up");
      }
    },
    onDayRollover() {
      kick("rollover");
    },
    status,
    async settle() {
      await waitInflight();
    },
    kick,
  };
}
