/**
 * The switch's driver: it feeds the pure machine (machine.ts) one event at a time and carries out each step's
 * Ready in its fixed order: write the entry (with `mustSync`, its request waits until it is durable), the effects
 * in the list's order, each through the one table of handlers (effects.ts: kind → handler), the one wake-up, the
 * events published on the bus (and only published: surface/ words and counts them), a stop's answer. Every
 * durable write is reported back (`persisted`). It decides nothing.
 */
import { publishSwitchEvent } from "../core/events.js";
import { ExchangeTime, type Repeating } from "../core/runtime.js";
import type { SwitchEvent } from "../core/switch-events.js";
import {
  type AnswerTo,
  type CreateSwitchParameters,
  type Switch,
  type SwitchInput,
  switchConfig,
} from "./api.js";
import { operatorCommands } from "./commands.js";
import { type Carry, createEffects, inFlight, oneWake } from "./effects.js";
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
  const { policy, io, runtime, bus } = p;
  const { address: account, vaultAddress } = p.account;
  const { clock, timers } = runtime;
  const time = runtime.time ?? new ExchangeTime(clock);
  const publish = (e: SwitchEvent) => publishSwitchEvent(bus, account, e);
  let model = initialModel(switchConfig(p), io.ledger.initial(account), runtime.timeFloor ?? null);
  const work = inFlight((effect, error) => publish({ type: "effectFailed", effect, error }));
  let loop: Repeating | undefined;
  let done: ((o: ShutdownOutcome) => void) | undefined;
  let outcome: Promise<ShutdownOutcome> | undefined;
  // The machine's own estimate of the exchange's time (exchange-time.ts) is what the daemon's shared time follows.
  time.adopt((mono, wall) => {
    const { act, exchange, verified, ready, plan, witnessed } = timesOf(model, { mono, wall });
    return { act, exchange, verified, ready, plan, witnessed };
  });

  const stepOf = p.testSeams?.machineStep ?? step;
  const now = () => ({ mono: time.monotonic(), wall: clock.now(), nonce: io.nonces?.last });
  /** One event stepped and its Ready carried out; an operator's command's answer is one of the step's events. */
  const ask = <T extends SwitchEvent["type"]>(event: Event, answers: readonly T[] = []) => {
    const r = stepOf(model, event, now());
    model = r.model;
    carry(r.ready);
    return r.ready.events.find((e): e is Extract<SwitchEvent, { type: T }> => answers.includes(e.type as T));
  };
  const feed = (event: Event) => void ask(event);
  const commands = operatorCommands(ask);
  const wake = oneWake(time, timers, () => feed({ type: "wake" }));
  const parts = { ...io, account, vaultAddress, requestTimeoutMs: policy.requestTimeoutMs };
  const run = { work, model: () => model, killed: commands.killed };
  const effects = createEffects(parts, time, timers, feed, run);
  // (the table's handler for the effect's own kind: the union is correlated by `kind`, which TS cannot follow)
  const handle = (e: Effect, c: Carry) => (effects.table[e.kind] as (e: Effect, c: Carry) => void)(e, c);

  const carry = (ready: Ready) => {
    const c = effects.persist(ready);
    for (const e of ready.effects) work.part(e.kind, () => handle(e, c));
    work.part("wake", () => wake(ready.wakeAt));
    for (const e of ready.events) work.part(`publish ${e.type}`, () => publish(e));
    if (ready.done) done?.(ready.done);
  };

  const stopLoop = () => {
    loop?.stop();
    loop = undefined;
  };

  const start = (slotOrigin: number | undefined) => {
    if (model.phase.name !== "new") return;
    feed({ type: "start" });
    const tick = () => {
      try {
        feed({ type: "tick" });
      } catch (error) {
        publish({ type: "tickFailed", loop: "push", error });
      }
    };
    const { intervalMs } = policy;
    const onStall = (gapMs: number, expectedAt: number) =>
      publish({ type: "loopStalled", loop: "push", gapMs, expectedAt, intervalMs });
    // the slots are on the exchange's time; the runtime's timers and stop signal
    loop = runtime
      .withClock(time)
      .every(intervalMs, tick, { onStall, name: "push", immediate: false, startAt: slotOrigin });
  };

  /** One input: the operator's commands answer from the step's own events; the others are the machine's events. */
  const dispatch = (input: SwitchInput): unknown => {
    switch (input.type) {
      case "start":
        return start(input.slotOrigin);
      case "stop":
        stopLoop();
        feed({ type: "halt" });
        return work.settle();
      case "record":
        return effects.recordRead(input.result);
      case "drill":
        return commands.drill(input.id, input.by);
      case "kill":
        return commands.kill(input.by, input.close);
      case "reset":
        return commands.reset(input.by);
      case "engine": {
        const { up, detail, cause } = input;
        return feed({ type: "engine", up, detail: detail ?? null, ...(cause === "absent" ? { cause } : {}) });
      }
      default:
        return feed(input);
    }
  };

  return {
    account,
    dispatch: dispatch as <I extends SwitchInput>(input: I) => AnswerTo<I>,
    shutdown({ mode }) {
      outcome ??= new Promise<ShutdownOutcome>((resolve) => {
        done = resolve;
        stopLoop();
        feed({ type: "shutdown", mode });
      });
      return outcome;
    },
    status: () => project(model, now()),
    protection: () => protectionOf(model),
    settle: work.settle,
    testSeams: {
      get model() {
        return model;
      },
    },
  };
}
