/**
 * The switch's driver: runs the pure machine (machine.ts) against the exchange client, the ledger store and the
 * runtime. It decides nothing: it feeds events in, carries the effects out, and turns their results into the
 * next events (docs/daemon.md "The switch machine").
 */

import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import { ExchangeTime, every, type Repeating, type TimerHandle, type Timers } from "../core/runtime.js";
import type { SwitchStatus } from "../core/status.js";
import { HyperliquidApiError } from "../protocol/hyperliquid/errors.js";
import {
  answerDateOf,
  type ScheduleCancelParameters,
  type ScheduleCancelResult,
} from "../protocol/hyperliquid/exchange.js";
import { policyFor } from "../protocol/policy.js";
import type { Metrics } from "../surface/metrics.js";
import type { Ledger } from "./ledger.js";
import type { RecordEvidence } from "./ledger-model.js";
import {
  type Effect,
  type EngineDownPolicy,
  type Event,
  type Failure,
  initialModel,
  type Now,
  status as project,
  type ShutdownOutcome,
  type SwitchModel,
  step,
  type TimerName,
  timesOf,
} from "./machine.js";
import type { RecordResult } from "./record.js";

export { EXPEDITE_LEAD_MS, EXPIRY_MARGIN_MS, type ShutdownOutcome } from "./machine.js";

/** The exchange's volume gate for scheduleCancel: $1M cumulative traded volume (docs/exchange-behaviour.md). */
export const VOLUME_GATE_USD = 1_000_000;

/** What the switch needs from ExchangeClient. */
export type ScheduleCancelClient = {
  scheduleCancel(params: ScheduleCancelParameters): Promise<ScheduleCancelResult>;
};

export type CancelOpenOrders = (params: {
  account: string;
  vaultAddress?: string;
  cancelStops: boolean;
}) => Promise<{ confirmed: boolean; cancelled: number; kept: number; detail?: string }>;

export type CreateSwitchParameters = {
  account: string;
  vaultAddress?: string | undefined;
  client: ScheduleCancelClient;
  ledger: Ledger;
  clock: Clock;
  /** the exchange's time (default: one of its own over `clock`); share the daemon's */
  time?: ExchangeTime | undefined;
  timers: Timers;
  logger: Logger;
  metrics: Metrics;
  intervalMs: number;
  deadlineMs: number;
  requestTimeoutMs: number;
  permanentRecheckMs: number;
  triggerWarnRemaining: number;
  onEngineDown?: EngineDownPolicy | undefined;
  cancelStops?: boolean | undefined;
  /** called after a trigger is counted (the daemon polls exposure) */
  onTrigger?: ((account: string) => void) | undefined;
  /**
   * reads the exchange's record for the account (src/watchers/record-read.ts; it never throws): after a guessed
   * trigger, and again while guesses remain; absent, the ledger keeps its own count
   */
  readRecord?: ((account: string) => Promise<RecordResult>) | undefined;
  /** engine-down policy `cancel`: cancels the account's open orders */
  cancelOpenOrders?: CancelOpenOrders | undefined;
  /** the account's cumulative traded volume (userRateLimit.cumVlm), asked when a removal meets the volume gate */
  cumulativeVolume?: ((account: string) => Promise<number>) | undefined;
  /** the ledger's last verified time (its updatedAt at open): the exchange's time is never before it */
  timeFloor?: number | null | undefined;
  /** the signer's nonces: re-derived from the exchange's answer after `nonce too low` / `too high` */
  nonces?: { rebase(floor: number): void; accepted(nonce: number): void } | undefined;
  /** the runtime's root signal: the push loop stops when it is aborted */
  signal?: AbortSignal | undefined;
  /** runs on each push-loop wake-up, before the tick (the daemon's once-per-interval work rides on it) */
  onTick?: (() => void) | undefined;
};

export type Switch = {
  readonly account: string;
  /**
   * Reads the ledger (counting a trigger missed while down), then starts pushing at once, and then once per
   * interval on slots `slotOrigin + k × interval` (default origin: now; the daemon shares it with the exposure
   * poll, so that a poll rides on a push's wake-up).
   */
  start(slotOrigin?: number): void;
  /** Stops pushing and waits for an in-flight push. The schedule is left as it is. */
  stop(): Promise<void>;
  /** Graceful stop: stop pushing, then remove the schedule (`remove`) or leave it armed (`keep`). */
  shutdown(params: { mode: "remove" | "keep" }): Promise<ShutdownOutcome>;
  setEngineUp(up: boolean, detail?: string | null): void;
  /** The agent wallet's validity (missing/expired: NOT PROTECTED, no pushes). */
  setAgent(state: "ok" | "missing" | "expired", detail?: string): void;
  /** The exchange's record was read (docs/exchange-record.md): applied where it is fresh, never stops pushes. */
  recordRead(result: RecordResult): void;
  /** The wall clock was stepped by `deltaMs`. */
  clockStepped(deltaMs: number): void;
  /** 00:00 UTC: roll the day over, re-arm if exhausted. */
  onDayRollover(): void;
  /** A pure projection of the machine: reading never changes or writes anything. */
  status(): SwitchStatus;
  /** The machine's model (tests). */
  readonly model: SwitchModel;
  /** Resolves when nothing is in flight (tests). */
  settle(): Promise<void>;
  /** Runs one tick now (tests, and the daemon after events). */
  kick(reason?: string): void;
};

/**
 * A push's failure as the machine sees it, from the one policy table (src/core/errors/policy.ts, docs/errors.md). The
 * switch reads the kind's row, not the error's own `retryable`: a push its own time-out aborted is still a
 * `transport` failure the switch tries again, with a fresh nonce.
 */
export function describeFailure(error: unknown): Failure {
  if (error instanceof HyperliquidApiError) {
    const policy = policyFor("hyperliquid", error.kind, error.nonceDetail);
    return {
      kind: error.kind,
      // the server's text, and what the answer shows the operator must fix (a network mismatch)
      message: `${error.serverMessage ?? error.shortMessage}${error.hint ? ` (${error.hint})` : ""}`,
      permanent: policy.permanent,
      retryable: policy.retryable,
      outcomeUnknown: policy.outcomeUnknown,
      ...(error.nonceDetail ? { nonceDetail: error.nonceDetail } : {}),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { kind: "internal", message, permanent: false, retryable: true, outcomeUnknown: true };
}

export function createSwitch(p: CreateSwitchParameters): Switch {
  const { account, vaultAddress, client, ledger, clock, timers, metrics } = p;
  const time = p.time ?? new ExchangeTime(clock);
  const log = p.logger.child({ module: "switch", account });
  const labels = { account };
  let model = initialModel(
    {
      account,
      intervalMs: p.intervalMs,
      deadlineMs: p.deadlineMs,
      requestTimeoutMs: p.requestTimeoutMs,
      permanentRecheckMs: p.permanentRecheckMs,
      triggerWarnRemaining: p.triggerWarnRemaining,
      onEngineDown: p.onEngineDown ?? "expedite",
      cancelStops: p.cancelStops ?? false,
      historySize: ledger.historySize,
    },
    ledger.initial(account),
    p.timeFloor ?? null,
  );
  const handles = new Map<TimerName, TimerHandle>();
  /** the values last set on this account's trigger gauges */
  const gauges: {
    triggersToday?: number;
    triggersLeft?: number;
    exhausted?: boolean;
    proofs?: Record<string, number>;
  } = {};
  const busy = new Set<Promise<unknown>>();
  let loop: Repeating | undefined;
  let done: ((o: ShutdownOutcome) => void) | undefined;
  let outcome: Promise<ShutdownOutcome> | undefined;

  // The machine gets the local wall clock as read; the exchange's time is its own estimate (exchange-time.ts), which
  // the daemon's shared time (nonces, expiresAfter, the ledger's updatedAt) follows.
  const now = (): Now => ({ mono: time.monotonic(), wall: clock.now() });
  time.adopt((mono, wall) => {
    const t = timesOf(model, { mono, wall });
    return { act: t.act, exchange: t.exchange, verified: t.verified, ready: t.ready };
  });

  // Nothing here may throw out: the machine refuses what it cannot take (step never throws), and an effect that
  // throws is logged and the rest carried out; the switch keeps pushing on the last good model.
  const dispatch = (event: Event) => {
    const r = step(model, event, now());
    model = r.model;
    for (const effect of r.effects) {
      try {
        run(effect);
      } catch (error) {
        log.error(
          { event: "switch.effect_failed", effect: effect.type, err: error },
          `carrying out ${effect.type} threw; the switch goes on`,
        );
      }
    }
  };

  // Every piece of asynchronous work is caught here: a throw after an await never becomes an unhandled
  // rejection (which exits the daemon without removing anything, docs/daemon.md "Shutdown and crashes").
  const track = (work: Promise<unknown>) => {
    const safe = work.catch((error: unknown) =>
      log.error(
        { event: "switch.effect_failed", err: error },
        "asynchronous switch work threw; the switch goes on",
      ),
    );
    busy.add(safe);
    void safe.finally(() => busy.delete(safe));
  };

  const run = (e: Effect): void => {
    switch (e.type) {
      case "log":
        log[e.level]({ event: e.event, ...e.fields }, e.msg);
        return;
      case "metric":
        if (e.op === "gauges") {
          // Every step reports the gauges; each is set only when its value changed (a push's three steps set
          // the armed deadline once; prom-client hashes the labels at each set).
          metrics.setArmedUntil(account, e.armedUntil);
          if (gauges.triggersToday !== e.triggersToday) {
            gauges.triggersToday = e.triggersToday;
            metrics.triggersToday.set(labels, e.triggersToday);
          }
          if (gauges.triggersLeft !== e.triggersLeft) {
            gauges.triggersLeft = e.triggersLeft;
            metrics.triggersLeft.set(labels, e.triggersLeft);
          }
          if (gauges.exhausted !== e.exhausted) {
            gauges.exhausted = e.exhausted;
            metrics.exhausted.set(labels, e.exhausted ? 1 : 0);
          }
          for (const [proof, n] of Object.entries(e.proofs)) {
            if (gauges.proofs?.[proof] === n) continue;
            gauges.proofs = { ...gauges.proofs, [proof]: n };
            metrics.triggersByProof.set({ account, proof }, n);
          }
        } else if (e.name === "pushes") metrics.pushes.inc({ account, outcome: e.labels.outcome });
        else if (e.name === "cancelPasses") metrics.cancelPasses.inc({ account, outcome: e.labels.outcome });
        else if (e.name === "triggersTotal") metrics.triggersTotal.inc(labels);
        else if (e.name === "pushLatency") metrics.pushLatency.observe(labels, e.value);
        else if (e.name === "clockSuspect") metrics.clockSuspect.set(labels, e.value);
        else if (e.name === "clockDatesRefused")
          metrics.clockDatesRefused.inc({ account, reason: e.labels.reason });
        else metrics.notProtected.set({ account, reason: e.labels.reason }, e.value);
        return;
      case "persist":
      case "recordConfirmedPush":
      case "countTrigger":
        ledger.put(e.entry);
        return;
      case "armTimer": {
        handles.get(e.name)?.cancel();
        handles.set(
          e.name,
          timers.after(e.atMono - time.monotonic(), () => {
            handles.delete(e.name);
            dispatch({ type: "timer", name: e.name });
          }),
        );
        return;
      }
      case "cancelTimer":
        handles.get(e.name)?.cancel();
        handles.delete(e.name);
        return;
      case "pollExposure":
        try {
          p.onTrigger?.(account);
        } catch (error) {
          log.error({ event: "trigger.hook_failed", err: error }, "the onTrigger hook threw");
        }
        return;
      case "recordIntent":
        // The file may already say all a restart needs about this push (ledger-model.ts `intentCovered`):
        // the request leaves at once, without a write (docs/daemon.md, "The ledger").
        if (ledger.putIntent(e.entry)) {
          track(Promise.resolve().then(() => dispatch({ type: "intentRecorded", id: e.id })));
          return;
        }
        track(
          ledger.durable(e.budgetMs, timers).then((d) =>
            // A write that failed (read-only, full disk) is logged by the store; the daemon keeps protecting on
            // its in-memory ledger. A write still running after the budget: the push is not sent.
            dispatch(
              d === "timeout"
                ? { type: "intentFailed", id: e.id, reason: "disk too slow" }
                : { type: "intentRecorded", id: e.id },
            ),
          ),
        );
        return;
      case "sendPush":
        track(sendPush(e.id, e.cancelAt, e.expiresAfterMs));
        return;
      case "sendRemoval":
        track(sendRemoval(e.expiresAfterMs));
        return;
      case "cancelOpenOrders":
        track(cancelOrders(e.cancelStops));
        return;
      case "readRecord":
        track(readRecordNow());
        return;
      case "done":
        done?.(e.outcome);
        return;
      case "nonceFloor":
        p.nonces?.rebase(e.floor);
        log.warn(
          { event: "nonce.rederived", floor: e.floor, reason: e.reason },
          `the exchange refused the nonce (${e.reason}): the next nonces start above ${e.floor}, from its answer`,
        );
        return;
    }
  };

  /** Every answer's Date is a sample the machine judges (docs/daemon.md "What the switch believes about time"). */
  const observe = (date: number, sentMono: number) => {
    dispatch({ type: "clockSample", date, sentMono, receivedMono: time.monotonic() });
  };

  const sendPush = async (id: number, cancelAt: number, expiresAfterMs: number) => {
    const controller = new AbortController();
    // The request cannot land after its expiresAfter: stop waiting for it then (monotonic).
    const abort = timers.after(expiresAfterMs, () => controller.abort());
    const sentMono = time.monotonic();
    try {
      const r = await client.scheduleCancel({
        time: cancelAt,
        vaultAddress,
        expiresAfterMs,
        signal: controller.signal,
      });
      p.nonces?.accepted(r.nonce);
      if (r.serverDate !== undefined) observe(r.serverDate, sentMono);
      dispatch({ type: "pushConfirmed", id, cancelAt, latencyMs: r.latencyMs, exchangeDate: r.serverDate });
    } catch (error) {
      const date = answerDateOf(error);
      if (date !== undefined) observe(date, sentMono);
      dispatch({ type: "pushFailed", id, ...describeFailure(error) });
    } finally {
      abort.cancel();
    }
  };

  const sendRemoval = async (expiresAfterMs: number) => {
    try {
      await client.scheduleCancel({ vaultAddress, expiresAfterMs });
      dispatch({ type: "removalConfirmed" });
    } catch (error) {
      const failure = describeFailure(error);
      let belowVolumeGate: boolean | undefined;
      if (failure.kind === "volume_gate" && p.cumulativeVolume) {
        try {
          belowVolumeGate = (await p.cumulativeVolume(account)) < VOLUME_GATE_USD;
        } catch {
          belowVolumeGate = undefined;
        }
      }
      dispatch({ type: "removalFailed", ...failure, belowVolumeGate });
    }
  };

  /** Reads the exchange's record (when one is wired) and feeds it to the machine; never throws. */
  const readRecordNow = async () => {
    if (!p.readRecord) return dispatch({ type: "record", evidence: null, detail: "no record is configured" });
    let evidence: RecordEvidence | null = null;
    let detail: string | undefined;
    try {
      const r = await p.readRecord(account);
      if (r.available) evidence = { ...r, at: time.now() };
      else detail = `${r.reason}: ${r.detail}`;
    } catch (error) {
      detail = error instanceof Error ? error.message : String(error);
    }
    dispatch({ type: "record", evidence, detail });
  };

  const cancelOrders = async (cancelStops: boolean) => {
    let r: { confirmed: boolean; cancelled: number; kept: number; detail?: string };
    if (!p.cancelOpenOrders)
      r = { confirmed: false, cancelled: 0, kept: 0, detail: "no order canceller is wired" };
    else {
      try {
        r = await p.cancelOpenOrders({ account, ...(vaultAddress ? { vaultAddress } : {}), cancelStops });
      } catch (error) {
        r = {
          confirmed: false,
          cancelled: 0,
          kept: 0,
          detail: error instanceof Error ? error.message : String(error),
        };
      }
    }
    dispatch({ type: "ordersCancelled", ...r });
  };

  const settle = async () => {
    for (let i = 0; i < 20 && busy.size > 0; i++) await Promise.allSettled([...busy]);
  };

  const stopLoop = () => {
    loop?.stop();
    loop = undefined;
  };

  return {
    account,
    get model() {
      return model;
    },
    start(slotOrigin) {
      if (model.phase !== "new") return;
      dispatch({ type: "start" });
      loop = every(
        p.intervalMs,
        () => {
          p.onTick?.();
          dispatch({ type: "tick" });
        },
        {
          clock: time,
          timers,
          logger: log,
          onStall: () => metrics.eventLoopStalls.inc(),
          name: "push",
          immediate: false,
          signal: p.signal,
          startAt: slotOrigin,
        },
      );
    },
    async stop() {
      stopLoop();
      dispatch({ type: "halt" });
      await settle();
    },
    shutdown({ mode }) {
      outcome ??= new Promise<ShutdownOutcome>((resolve) => {
        done = resolve;
        stopLoop();
        if (model.phase === "stopped") {
          resolve({ account, outcome: mode === "keep" ? "kept" : "skipped", reason: "stopped" });
          return;
        }
        dispatch({ type: "shutdown", mode });
      });
      return outcome;
    },
    setEngineUp(up, detail) {
      dispatch({ type: "engine", up, detail: detail ?? null });
    },
    setAgent(state, detail) {
      dispatch({ type: "agent", state, detail });
    },
    recordRead(result) {
      dispatch(
        result.available
          ? { type: "record", evidence: { ...result, at: time.now() } }
          : { type: "record", evidence: null, detail: `${result.reason}: ${result.detail}` },
      );
    },
    clockStepped(deltaMs) {
      dispatch({ type: "clockStep", deltaMs });
    },
    onDayRollover() {
      dispatch({ type: "dayRollover" });
    },
    status: () => project(model, now()),
    settle,
    kick() {
      dispatch({ type: "tick" });
    },
  };
}
