import { ExchangeTime, every, type Repeating, type TimerHandle } from "../core/runtime.js";
import { answerDateOf } from "../protocol/hyperliquid/exchange.js";
import type { CreateSwitchParameters, Switch } from "./api.js";
import { describeFailure } from "./failure.js";
import { publish } from "./log.js";
import {
  type Event,
  initialModel,
  status as project,
  type Ready,
  type Send,
  type ShutdownOutcome,
  step,
  timesOf,
} from "./machine.js";
import type { RecordResult } from "./record.js";

export type {
  CancelOpenOrders,
  CreateSwitchParameters,
  ScheduleCancelClient,
  Switch,
  SwitchLedger,
} from "./api.js";
export { describeFailure } from "./failure.js";
export { EXPEDITE_LEAD_MS, EXPIRY_MARGIN_MS, type ShutdownOutcome } from "./machine.js";

export function createSwitch(p: CreateSwitchParameters): Switch {
  const { account, vaultAddress, client, ledger, clock, timers, metrics } = p;
  const time = p.time ?? new ExchangeTime(clock);
  const log = p.logger.child({ module: "switch", account });
  const cfg = {
    account,
    intervalMs: p.intervalMs,
    deadlineMs: p.deadlineMs,
    requestTimeoutMs: p.requestTimeoutMs,
    permanentRecheckMs: p.permanentRecheckMs,
    triggerWarnRemaining: p.triggerWarnRemaining,
    onEngineDown: p.onEngineDown ?? "expedite",
    cancelStops: p.cancelStops ?? false,
    historySize: ledger.historySize,
  } as const;
  let model = initialModel(cfg, ledger.initial(account), p.timeFloor ?? null);
  const busy = new Set<Promise<unknown>>();
  let wake: { at: number; handle: TimerHandle } | null = null;
  let loop: Repeating | undefined;
  let done: ((o: ShutdownOutcome) => void) | undefined;
  let outcome: Promise<ShutdownOutcome> | undefined;
  // The machine's own estimate of the exchange's time (exchange-time.ts) is what the daemon's shared time follows.
  time.adopt((mono, wall) => {
    const t = timesOf(model, { mono, wall });
    return { act: t.act, exchange: t.exchange, verified: t.verified, ready: t.ready };
  });

  const failed = (what: string, err: unknown) =>
    log.error(
      { event: "switch.effect_failed", effect: what, err },
      `carrying out ${what} threw; the switch goes on`,
    );
  /** Asynchronous work is caught here: a throw after an await never becomes an unhandled rejection. */
  const track = (what: string, work: () => Promise<unknown>) => {
    const safe = Promise.resolve()
      .then(work)
      .catch((err: unknown) => failed(what, err));
    busy.add(safe);
    void safe.finally(() => busy.delete(safe));
  };
  /** Runs one part of a Ready; a throw is logged and the rest carried out (the machine keeps its model). */
  const part = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      failed(what, err);
    }
  };

  const stepOf = p.machineStep ?? step;
  const dispatch = (event: Event) => {
    const r = stepOf(model, event, { mono: time.monotonic(), wall: clock.now() });
    model = r.model;
    carry(r.ready);
  };

  const carry = (ready: Ready) => {
    let send = ready.send;
    if (ready.entry !== undefined) {
      const entry = ready.entry;
      part("persist", () => {
        if (!ready.mustSync) return ledger.put(entry);
        // The file may already say all a restart needs (ledger-model.ts `writeAheadCoverage`): send at once.
        if (ledger.putIntent(entry)) return;
        const held = send;
        send = undefined;
        track("persist", async () => {
          const d = await ledger.durable(ready.syncBudgetMs ?? p.requestTimeoutMs, timers);
          // A failed write (read-only, full disk) is logged by the store; protection goes on from memory.
          if (d === "timeout" && held?.kind === "push")
            return dispatch({ type: "syncFailed", id: held.id, reason: "disk too slow" });
          if (held) sendNow(held);
        });
      });
    }
    const now = send;
    if (now) part("send", () => sendNow(now));
    if (ready.cancelOrders) {
      const { cancelStops } = ready.cancelOrders;
      track("cancelOrders", () => cancelOrders(cancelStops));
    }
    if (ready.readRecord) track("readRecord", readRecordNow);
    if (ready.nonceFloor) part("nonceFloor", () => p.nonces?.rebase(ready.nonceFloor!.floor));
    if (ready.pollExposure) part("pollExposure", () => p.onTrigger?.(account));
    part("wake", () => setWake(ready.wakeAt));
    for (const e of ready.events) part(`publish ${e.type}`, () => publish(e, log, metrics, account, p.bus));
    if (ready.done) done?.(ready.done);
  };

  /** The one wake-up: re-set only when the machine asks for another time. */
  const setWake = (at: number | null) => {
    if (wake?.at === at) return;
    wake?.handle.cancel();
    wake = null;
    if (at === null) return;
    const handle = timers.after(Math.max(0, at - time.monotonic()), () => {
      wake = null;
      dispatch({ type: "wake" });
    });
    wake = { at, handle };
  };

  /** Every answer's Date is a sample the machine judges (docs/daemon.md "What the switch believes about time"). */
  const observe = (date: number | undefined, sentMono: number) => {
    if (date !== undefined) dispatch({ type: "clockSample", date, sentMono, receivedMono: time.monotonic() });
  };

  const sendNow = (s: Send) => track(s.kind, () => (s.kind === "push" ? push(s) : removal(s.expiresAfterMs)));

  const push = async ({ id, cancelAt, expiresAfterMs }: Extract<Send, { kind: "push" }>) => {
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
      observe(r.serverDate, sentMono);
      dispatch({ type: "pushConfirmed", id, latencyMs: r.latencyMs });
    } catch (error) {
      observe(answerDateOf(error), sentMono);
      dispatch({ type: "pushFailed", id, sentMono, ...describeFailure(error) });
    } finally {
      abort.cancel();
    }
  };

  const removal = async (expiresAfterMs: number) => {
    try {
      await client.scheduleCancel({ vaultAddress, expiresAfterMs });
      return dispatch({ type: "removalConfirmed" });
    } catch (error) {
      const failure = describeFailure(error);
      // The machine judges the volume against the gate; unreadable is null (then nothing is proven).
      let cumulativeVolume: number | null | undefined;
      if (failure.kind === "volume_gate" && p.cumulativeVolume)
        cumulativeVolume = await p.cumulativeVolume(account).catch(() => null);
      dispatch({ type: "removalFailed", ...failure, cumulativeVolume });
    }
  };

  const readRecordNow = async () => {
    if (!p.readRecord) return dispatch({ type: "record", evidence: null, detail: "no record is configured" });
    const r = await p.readRecord(account).catch(
      (error: unknown): RecordResult => ({
        available: false,
        reason: "error",
        detail: error instanceof Error ? error.message : String(error),
      }),
    );
    recordRead(r);
  };

  const recordRead = (r: RecordResult) =>
    dispatch(
      r.available
        ? { type: "record", evidence: { ...r, at: time.now() } }
        : { type: "record", evidence: null, detail: `${r.reason}: ${r.detail}` },
    );

  const cancelOrders = async (cancelStops: boolean) => {
    const none = { confirmed: false, cancelled: 0, kept: 0 };
    const r = !p.cancelOpenOrders
      ? { ...none, detail: "no order canceller is wired" }
      : await p
          .cancelOpenOrders({ account, ...(vaultAddress ? { vaultAddress } : {}), cancelStops })
          .catch((error: unknown) => ({
            ...none,
            detail: error instanceof Error ? error.message : String(error),
          }));
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
      const tick = () => {
        p.onTick?.();
        dispatch({ type: "tick" });
      };
      const opts = {
        clock: time,
        timers,
        logger: log,
        onStall: () => metrics.eventLoopStalls.inc(),
        name: "push",
        immediate: false,
        signal: p.signal,
        startAt: slotOrigin,
      };
      loop = every(p.intervalMs, tick, opts);
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
        dispatch({ type: "shutdown", mode });
      });
      return outcome;
    },
    setEngineUp: (up, detail) => dispatch({ type: "engine", up, detail: detail ?? null }),
    setAgent: (state, detail) => dispatch({ type: "agent", state, detail }),
    recordRead,
    clockStepped: (deltaMs) => dispatch({ type: "clockStep", deltaMs }),
    onDayRollover: () => dispatch({ type: "dayRollover" }),
    status: () => project(model, { mono: time.monotonic(), wall: clock.now() }),
    settle,
    kick: () => dispatch({ type: "tick" }),
  };
}
