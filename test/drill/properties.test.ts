/**
 * The drill's machine alone (src/drill/), driven by random sequences of its inputs under random views of the switch
 * (running or stopped, armed or not, the engine up or down, HALTED, the triggers left, the replicas' gate and
 * another replica alive; its order placed or not, its push confirmed, refused or unanswered, its status read back;
 * the passing of time, its wake-up taken when due). After every step the invariants of "Take nothing away without
 * evidence" (docs/operations.md, "The drill") hold:
 *   D1 a drill starts (its order is placed) only while the switch runs, armed, the engine up, not HALTED, at least
 *      two triggers left today, the gate open, no other replica alive and no drill running;
 *   D2 the drill's push is asked only once its order is placed (the answer naming its order, while it is placing);
 *   D3 the pushes are held only from the drill's confirmed push (or one whose outcome is unknown) until its
 *      verification, and the wake-up that verifies it is never later than the drill's cancel time + margin;
 *   D4 every drill that ends without a fire commands the cancel of its placed order, and an order placed for a
 *      drill that ended is cancelled too;
 *   D5 a stop or the engine's death ends a running drill at once;
 *   D6 the order's status is read (`drillVerify`) only once the drill's deadline and margin have passed.
 * 1,000 sequences from seed 20261202 (HL_PROPERTY_SEEDS=<seed> replays one, =random draws new ones).
 */
import fc from "fast-check";
import { describe } from "vitest";
import type { DrillInput, FeatureCommand, FeatureNow, SwitchView } from "../../src/core/feature.js";
import { DRILL_VERIFY_MARGIN_MS, type DrillModel, drill } from "../../src/drill/index.js";
import { machineProperty } from "../switch/prop-test.js";

type Action =
  /** the drill's next natural step (started, placed, its push sent and confirmed, its deadline passed, read back) */
  | { a: "next"; status: string | null; outcome: "confirmed" | "refused" | "unknown" }
  | { a: "advance"; ms: number }
  | { a: "start"; id: string }
  | { a: "placed"; stale: boolean; placed: boolean }
  | { a: "push" }
  | { a: "answer"; outcome: "confirmed" | "refused" | "unknown" }
  | { a: "verified"; status: string | null }
  | { a: "view"; change: Partial<SwitchView> }
  | { a: "engineDown" }
  | { a: "stop" };

const viewChange: fc.Arbitrary<Partial<SwitchView>> = fc.oneof(
  fc.record({
    state: fc.constantFrom("armed" as const, "armed" as const, "lapsed" as const, "retrying" as const),
  }),
  fc.record({ engineUp: fc.constant(true) }),
  fc.record({
    halted: fc.option(fc.constant({ since: 1, reason: "notional" }), { nil: null, freq: 2 }),
  }),
  fc.record({ triggersLeft: fc.integer({ min: 0, max: 10 }) }),
  fc.record({
    gate: fc.constantFrom(null, null, "another replica holds the coordination lease"),
    coordinated: fc.boolean(),
    othersAlive: fc.constantFrom(null, true, false),
  }),
);

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      a: fc.constant("next" as const),
      status: fc.constantFrom("scheduledCancel", "scheduledCancel", "open", null),
      outcome: fc.constantFrom(
        "confirmed" as const,
        "confirmed" as const,
        "refused" as const,
        "unknown" as const,
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ a: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 15_000 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ a: fc.constant("start" as const), id: fc.constantFrom("d1", "d2", "d3") }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constant("placed" as const),
      stale: fc.boolean(),
      placed: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ a: fc.constant("push" as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constant("answer" as const),
      outcome: fc.constantFrom(
        "confirmed" as const,
        "confirmed" as const,
        "refused" as const,
        "unknown" as const,
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      a: fc.constant("verified" as const),
      status: fc.constantFrom("scheduledCancel", "scheduledCancel", "open", "canceled", null),
    }),
  },
  { weight: 3, arbitrary: fc.record({ a: fc.constant("view" as const), change: viewChange }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("engineDown" as const) }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("stop" as const) }) },
);

const scenario = fc.array(action, { minLength: 1, maxLength: 40 });

/** The switch as the drill sees it: its view, the drill's slot, the drill's push, the time; the invariants. */
class World {
  view: SwitchView = {
    running: true,
    state: "armed",
    engineUp: true,
    halted: null,
    gate: null,
    token: undefined,
    coordinated: false,
    othersAlive: null,
    triggersLeft: 10,
  };
  model: DrillModel | null = drill.initial();
  wakeAt: number | null = null;
  mono = 1_000;
  wall = 1_700_000_100_000;
  /** the drill's push the switch sent, not answered yet (its cancel time) */
  pushOut: number | null = null;
  /** the drill's push was confirmed (or left without an answer) this drill, at this cancel time */
  armedAt: number | null = null;
  /** the orders placed for drills, not cancelled nor fired: oid → drill id */
  resting = new Map<number, string>();
  /** the exchange's next order id */
  nextOid = 77;
  /** the verification asked for (its order) */
  verifying: number | null = null;
  violations: string[] = [];
  log: string[] = [];

  get now(): FeatureNow {
    return { mono: this.mono, wall: this.wall };
  }

  fail(rule: string, why: string) {
    this.violations.push(`${rule}: ${why}`);
  }

  feed(input: DrillInput) {
    const view = this.view;
    const was = this.model;
    const r = drill.step(was, view, input, this.now, undefined);
    this.model = r.model;
    if (r.wakeAt !== undefined) this.wakeAt = r.wakeAt;
    this.log.push(`${this.mono}: ${JSON.stringify(input)} → ${r.commands.map(kindOf).join(", ")}`);
    this.check(input, view, was, r.commands);
  }

  check(input: DrillInput, view: SwitchView, was: DrillModel | null, commands: readonly FeatureCommand[]) {
    const cancelled = new Set<number>();
    for (const c of commands) {
      if (c.kind === "push" && c.reason === "drill") {
        // D2
        if (input.type !== "placed" || input.oid === null || was?.phase !== "placing" || was.id !== input.id)
          this.fail("D2", `the drill's push asked on ${input.type} before its order was placed`);
      }
      if (c.kind !== "effect") continue;
      const e = c.effect;
      if (e.kind === "drillPlace") {
        // D1
        const may =
          view.running &&
          view.state === "armed" &&
          view.engineUp &&
          view.halted === null &&
          view.triggersLeft >= 2 &&
          view.gate === null &&
          !(view.coordinated && view.othersAlive === true) &&
          was === null;
        if (!may)
          this.fail("D1", `a drill started on ${JSON.stringify(view)} (drill before: ${was?.id ?? "none"})`);
      }
      if (e.kind === "drillCancel") {
        cancelled.add(e.oid);
        this.resting.delete(e.oid);
      }
      if (e.kind === "drillVerify") {
        // D6
        if (input.type !== "due") this.fail("D6", `the status read on ${input.type}`);
        if (was?.cancelAt == null || this.wall < was.cancelAt + DRILL_VERIFY_MARGIN_MS)
          this.fail("D6", `the status read at ${this.wall} before the deadline ${was?.cancelAt} + margin`);
        this.verifying = e.oid;
      }
    }
    // D4: a drill that ended without a fire cancels its order
    const done = commands.find((c) => c.kind === "event" && c.event.type === "drillDone");
    if (done?.kind === "event" && done.event.type === "drillDone") {
      if (!done.event.fired && was?.oid != null && !cancelled.has(was.oid))
        this.fail("D4", `drill ${was.id} ended without a fire and its order ${was.oid} is not cancelled`);
      if (done.event.fired && was?.oid != null) this.resting.delete(was.oid);
      this.armedAt = null;
      this.verifying = null;
    }
    // an order placed for a drill that is no longer placing must not stay on the book
    if (
      input.type === "placed" &&
      input.oid !== null &&
      this.model?.oid !== input.oid &&
      !cancelled.has(input.oid)
    )
      this.fail("D4", `order ${input.oid} placed for drill ${input.id} that ended, not cancelled`);
    if (input.type === "placed" && input.oid !== null && this.model?.oid === input.oid)
      this.resting.set(input.oid, input.id);
    // D5
    if (input.type === "end" && this.model !== null)
      this.fail("D5", `drill ${this.model.id} goes on after ${input.detail}`);
    // D3: pushes held only from the confirmed push until the verification, the wake-up no later than the deadline
    if (drill.holdsPushes(this.model)) {
      if (this.armedAt === null) this.fail("D3", "pushes held without the drill's confirmed push");
      const d = this.model!;
      if (d.phase === "firing") {
        if (this.wakeAt === null) this.fail("D3", "pushes held with no wake-up to verify");
        else if (
          d.cancelAt !== null &&
          this.wakeAt - this.mono > d.cancelAt + DRILL_VERIFY_MARGIN_MS - this.wall
        )
          this.fail("D3", `the hold lasts past the cancel time + margin (${this.wakeAt} > ${d.cancelAt})`);
      }
      if (d.phase === "verifying" && this.verifying === null) this.fail("D3", "held while verifying nothing");
    }
  }

  /** The time passes: the wake-up asked for is taken when due (as the switch's `wake`, while running). */
  advance(ms: number) {
    const to = this.mono + ms;
    while (this.wakeAt !== null && this.wakeAt <= to && this.violations.length === 0) {
      const at = Math.max(this.mono, this.wakeAt);
      this.wall += at - this.mono;
      this.mono = at;
      this.wakeAt = null;
      if (this.view.running) this.feed({ type: "due" });
    }
    this.wall += to - this.mono;
    this.mono = to;
  }
}

const kindOf = (c: FeatureCommand) =>
  c.kind === "event" ? c.event.type : c.kind === "effect" ? c.effect.kind : c.kind;

/** The drill's next natural step, as the switch and the exchange would take it. */
function next(w: World, x: Extract<Action, { a: "next" }>): Action[] {
  const d = w.model;
  if (d === null) return [{ a: "start", id: `d${w.nextOid}` }];
  if (d.phase === "placing") return [{ a: "placed", stale: false, placed: true }];
  if (d.phase === "arming") return [{ a: "push" }, { a: "answer", outcome: x.outcome }];
  if (d.phase === "firing") return [{ a: "advance", ms: 12_000 }];
  return [{ a: "verified", status: x.status }];
}

function run(actions: readonly Action[]): World {
  const w = new World();
  const queue = [...actions];
  while (queue.length > 0) {
    const x = queue.shift()!;
    if (w.violations.length > 0) break;
    const d = w.model;
    switch (x.a) {
      case "next":
        queue.unshift(...next(w, x));
        break;
      case "advance":
        w.advance(x.ms);
        break;
      case "start":
        w.feed({ type: "start", id: x.id, by: "ops" });
        break;
      case "placed": {
        // the answer of the drill placing, or a late one of an earlier drill
        const oid = x.placed ? w.nextOid++ : null;
        w.feed({
          type: "placed",
          id: x.stale || d === null ? "old" : d.id,
          oid,
          coin: oid === null ? null : "BTC",
          ...(oid === null ? { detail: "Insufficient margin" } : {}),
        });
        break;
      }
      case "push":
        // the switch's next push is the drill's while it says so (running.ts `kick`), one at a time
        if (w.view.running && w.pushOut === null) {
          const lead = drill.pushLeadMs(d);
          if (lead !== null) w.pushOut = w.wall + lead;
        }
        break;
      case "answer": {
        if (w.pushOut === null) break;
        const cancelAt = w.pushOut;
        w.pushOut = null;
        if (x.outcome !== "refused") w.armedAt = cancelAt;
        if (x.outcome === "confirmed") w.feed({ type: "pushConfirmed", cancelAt });
        else
          w.feed({
            type: "pushFailed",
            cancelAt,
            outcomeUnknown: x.outcome === "unknown",
            message: "refused",
          });
        break;
      }
      case "verified":
        if (w.verifying === null || d === null) break;
        w.feed({ type: "verified", id: d.id, status: x.status, statusTimestamp: x.status ? w.wall : null });
        break;
      case "view":
        w.view = { ...w.view, ...x.change };
        break;
      case "engineDown":
        if (!w.view.engineUp) break;
        w.feed({ type: "end", detail: "the engine went down during the drill" });
        w.view = { ...w.view, engineUp: false };
        break;
      case "stop":
        if (!w.view.running) break;
        w.feed({ type: "end", detail: "the daemon is stopping" });
        w.view = { ...w.view, running: false };
        w.wakeAt = null;
        break;
    }
  }
  return w;
}

describe("drill machine: take nothing away without evidence", () => {
  machineProperty("D1-D6", 20_261_202, scenario, run);
});
