/**
 * The switch's driver: it feeds the pure machine (machine.ts) one event at a time and carries out each step's
 * Ready in its fixed order: write the entry (with `mustSync`, its request waits until it is durable), the effects
 * in the list's order, each through the one table of handlers (effects.ts: kind → handler), the one wake-up, the
 * events published, a stop's answer. Every durable write is reported back (`persisted`). It decides nothing.
 */
import { ExchangeTime, type Repeating } from "../core/runtime.js";
import { type CreateSwitchParameters, type KillOutcome, type Switch, switchConfig } from "./api.js";
import { type Carry, createEffects, inFlight, type Killed, oneWake } from "./effects.js";
import type { SwitchEvent } from "./events.js";
import { publish } from "./log.js";
import {
  type Event,
  initialModel,
  status as project,
  protectionOf,
  type Ready,
  step,
  timesOf,
} from "./machine.js";
import type { Effect, ShutdownOutcome } from "./model.js";

export type * from "./api.js";
export { describeFailure } from "./failure.js";
export { EXPEDITE_LEAD_MS, EXPIRY_MARGIN_MS, type ShutdownOutcome } from "./machine.js";

export function createSwitch(p: CreateSwitchParameters): Switch {
  const { account, ledger, runtime, metrics } = p;
  const { clock, timers } = runtime;
  const time = p.time ?? new ExchangeTime(clock);
  const log = p.logger.child({ module: "switch", account });
  let model = initialModel(switchConfig(p), ledger.initial(account), p.timeFloor ?? null);
  const work = inFlight(log);
  let loop: Repeating | undefined;
  let done: ((o: ShutdownOutcome) => void) | undefined;
  let outcome: Promise<ShutdownOutcome> | undefined;
  // The machine's own estimate of the exchange's time (exchange-time.ts) is what the daemon's shared time follows.
  time.adopt((mono, wall) => {
    const { act, exchange, verified, ready, plan, witnessed } = timesOf(model, { mono, wall });
    return { act, exchange, verified, ready, plan, witnessed };
  });

  const stepOf = p.testSeams?.machineStep ?? step;
  const now = () => ({ mono: time.monotonic(), wall: clock.now(), nonce: p.nonces?.last });
  /** One event stepped and its Ready carried out; an operator's command's answer is one of the step's events. */
  const ask = <T extends SwitchEvent["type"]>(event: Event, answers: readonly T[] = []) => {
    const r = stepOf(model, event, now());
    model = r.model;
    carry(r.ready);
    return r.ready.events.find((e): e is Extract<SwitchEvent, { type: T }> => answers.includes(e.type as T));
  };
  const dispatch = (event: Event) => void ask(event);
  /** The operators' kills waiting for their cancels (and close) to answer, in the order they were asked. */
  const killWaiters: ((r: Killed) => void)[] = [];
  const killed = (r: Killed) => killWaiters.shift()?.(r);
  const wake = oneWake(time, timers, () => dispatch({ type: "wake" }));
  const io = createEffects(p, time, timers, dispatch, { work, model: () => model, killed });
  // (the table's handler for the effect's own kind: the union is correlated by `kind`, which TS cannot follow)
  const run = (e: Effect, c: Carry) => (io.table[e.kind] as (e: Effect, c: Carry) => void)(e, c);

  const carry = (ready: Ready) => {
    const c = io.persist(ready);
    for (const e of ready.effects) work.part(e.kind, () => run(e, c));
    work.part("wake", () => wake(ready.wakeAt));
    for (const e of ready.events)
      work.part(`publish ${e.type}`, () => publish(e, log, metrics, account, p.bus));
    if (ready.done) done?.(ready.done);
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
      if (model.phase.name !== "new") return;
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
      await work.settle();
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
        const waiter = (r: Killed) => resolve({ done: true, latched, ...r });
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
    settle: work.settle,
    kick: () => dispatch({ type: "tick" }),
  };
}
