/**
 * The switch's driver: it feeds the pure machine (machine.ts) one event at a time and carries out each step's
 * Ready in a fixed order: write the entry (and, when `mustSync`, hold the request until it is durable), send,
 * cancel orders, read the record, set the one wake-up, publish the events. Every durable write is reported back
 * (`persisted`). It decides nothing; the I/O itself is effects.ts.
 */
import { ExchangeTime, type Repeating, type TimerHandle } from "../core/runtime.js";
import { type CreateSwitchParameters, type KillOutcome, type Switch, switchConfig } from "./api.js";
import { createEffects, inFlight } from "./effects.js";
import { closeHold } from "./escalation.js";
import type { SwitchEvent } from "./events.js";
import { publish } from "./log.js";
import {
  type Event,
  initialModel,
  status as project,
  protectionOf,
  type Ready,
  type Send,
  type ShutdownOutcome,
  step,
  timesOf,
} from "./machine.js";

export type {
  CancelOpenOrders,
  CloseOrderReport,
  ClosePositions,
  CreateSwitchParameters,
  KillOutcome,
  ScheduleCancelClient,
  Switch,
  SwitchLedger,
  SwitchTestSeams,
} from "./api.js";
export { describeFailure } from "./failure.js";
export { EXPEDITE_LEAD_MS, EXPIRY_MARGIN_MS, type ShutdownOutcome } from "./machine.js";

export function createSwitch(p: CreateSwitchParameters): Switch {
  const { account, ledger, runtime, metrics } = p;
  const { clock, timers } = runtime;
  const time = p.time ?? new ExchangeTime(clock);
  const log = p.logger.child({ module: "switch", account });
  let model = initialModel(switchConfig(p), ledger.initial(account), p.timeFloor ?? null);
  const { track, part, settle } = inFlight(log);
  let wake: { at: number; handle: TimerHandle } | null = null;
  let loop: Repeating | undefined;
  let done: ((o: ShutdownOutcome) => void) | undefined;
  let outcome: Promise<ShutdownOutcome> | undefined;
  // The machine's own estimate of the exchange's time (exchange-time.ts) is what the daemon's shared time follows.
  time.adopt((mono, wall) => {
    const t = timesOf(model, { mono, wall });
    return {
      act: t.act,
      exchange: t.exchange,
      verified: t.verified,
      ready: t.ready,
      plan: t.plan,
      witnessed: t.witnessed,
    };
  });

  const stepOf = p.testSeams?.machineStep ?? step;
  const now = () => ({ mono: time.monotonic(), wall: clock.now(), nonce: p.nonces?.last });
  const dispatch = (event: Event) => {
    const r = stepOf(model, event, now());
    model = r.model;
    carry(r.ready);
  };
  /** An operator's command: dispatched like any event; its answer is the step's event of one of `answers`. */
  const ask = <T extends SwitchEvent["type"]>(event: Event, answers: readonly T[]) => {
    const r = stepOf(model, event, now());
    model = r.model;
    carry(r.ready);
    return r.ready.events.find((e): e is Extract<SwitchEvent, { type: T }> => answers.includes(e.type as T));
  };
  const io = createEffects(p, time, timers, dispatch);
  /** The operators' kills waiting for their cancels (and close) to answer, in the order they were asked. */
  const killWaiters: ((r: Omit<Extract<KillOutcome, { done: true }>, "done" | "latched">) => void)[] = [];
  const sendNow = (s: Send) =>
    track(s.kind, () => (s.kind === "push" ? io.push(s) : io.removal(s.expiresAfterMs)));

  /** Stores the entry; reports it once durable. With `mustSync` the request leaves only then (within budget). */
  const persist = (ready: Ready, entry: NonNullable<Ready["entry"]>) => {
    ledger.put(entry);
    const held = ready.mustSync ? ready.send : undefined;
    const wait = async () => {
      const d = await ledger.durable(ready.syncBudgetMs ?? p.requestTimeoutMs, timers);
      if (d === "written" && ready.entrySeq !== undefined)
        dispatch({ type: "persisted", seq: ready.entrySeq, updatedAt: ledger.writtenUpdatedAt });
      if (held === undefined) return;
      // A failed write (read-only, full disk) is logged by the store; protection goes on from memory.
      if (d === "timeout" && held.kind === "push")
        return dispatch({ type: "syncFailed", id: held.id, reason: "disk too slow" });
      sendNow(held);
    };
    track("persist", wait, held !== undefined);
    return held !== undefined;
  };

  const carry = (ready: Ready) => {
    const entry = ready.entry;
    // (a store that throws holds no request back: it leaves at once)
    let held = false;
    if (entry !== undefined) part("persist", () => (held = persist(ready, entry)));
    const send = held ? undefined : ready.send;
    if (send) part("send", () => sendNow(send));
    const cancel = ready.cancelOrders;
    if (cancel) track("cancelOrders", () => io.cancelOrders(cancel.cancelStops));
    const close = ready.closePositions;
    const kill = ready.kill;
    // The HALTED latch and the pass are written ahead of the first close order (escalation.ts): wait for the
    // write, within the budget; a disk too slow does not hold the close back (the rule holds; the latch is kept in
    // memory). The kill's cancels go first, then its close. Every close order asks the machine first (closeHold).
    if (close || kill)
      track(kill ? "kill" : "closePositions", async () => {
        const asked = time.monotonic();
        if (entry !== undefined && ready.mustSync)
          await ledger.durable(ready.syncBudgetMs ?? p.requestTimeoutMs, timers).catch(() => "failed");
        const cancel = kill ? await io.killOrders(kill.by) : null;
        const cancelMs = time.monotonic() - asked;
        const closed = close ? await io.closePositions(close.pass, () => closeHold(model)) : null;
        if (cancel) killWaiters.shift()?.({ cancel, close: closed, cancelMs });
      });
    const drill = ready;
    if (drill.drillPlace) track("drillPlace", () => io.drillPlace(drill.drillPlace!.id));
    if (drill.drillVerify) track("drillVerify", () => io.drillVerify(drill.drillVerify!));
    if (drill.drillCancel) track("drillCancel", () => io.drillCancel(drill.drillCancel!));
    if (ready.readRecord) track("readRecord", io.readRecord);
    const floor = ready.nonceFloor?.floor;
    if (floor !== undefined) part("nonceFloor", () => p.nonces?.rebase(floor));
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
      const onStall = () => metrics.eventLoopStalls.inc();
      const opts = { logger: log, onStall, name: "push", immediate: false, startAt: slotOrigin };
      // the slots are on the exchange's time; the runtime's timers and stop signal
      loop = runtime.withClock(time).every(p.intervalMs, tick, opts);
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
    setEngineUp: (up, detail, cause) =>
      dispatch({ type: "engine", up, detail: detail ?? null, ...(cause === "absent" ? { cause } : {}) }),
    exposure: (figures) => dispatch({ type: "exposure", ...figures }),
    drill(id, by) {
      const e = ask({ type: "drillStart", id, by }, ["drillStarted", "drillRefused"]);
      if (e?.type === "drillStarted") return { started: true };
      return { started: false, reason: e?.type === "drillRefused" ? e.reason : "the switch did not answer" };
    },
    kill(by, close) {
      return new Promise<KillOutcome>((resolve) => {
        let latched = false;
        const waiter = (r: Omit<Extract<KillOutcome, { done: true }>, "done" | "latched">) =>
          resolve({ done: true, latched, ...r });
        killWaiters.push(waiter);
        const e = ask({ type: "kill", by, close }, ["killed", "killRefused"]);
        if (e?.type === "killed") {
          latched = e.latched;
          return;
        }
        killWaiters.splice(killWaiters.indexOf(waiter), 1);
        resolve({ done: false, reason: e?.type === "killRefused" ? e.reason : "the switch did not answer" });
      });
    },
    reset(by) {
      const e = ask({ type: "reset", by }, ["haltReleased", "resetRefused"]);
      if (e?.type === "haltReleased")
        return {
          released: true,
          reason: `released (HALTED since ${new Date(e.since).toISOString()}: ${e.reason})`,
        };
      return { released: false, reason: e?.type === "resetRefused" ? e.reason : "the switch did not answer" };
    },
    coordinate: (state) => dispatch({ type: "coordination", ...state }),
    setAgent: (state, detail) => dispatch({ type: "agent", state, detail }),
    recordRead: io.recordRead,
    clockStepped: (deltaMs) => dispatch({ type: "clockStep", deltaMs }),
    blockTime: (sample) => dispatch({ type: "blockSample", ...sample }),
    onDayRollover: () => dispatch({ type: "dayRollover" }),
    status: () => project(model, now()),
    protection: () => protectionOf(model),
    settle,
    kick: () => dispatch({ type: "tick" }),
  };
}
