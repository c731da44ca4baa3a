/**
 * The escalation's machine alone (src/escalation/), driven by random sequences of its inputs under random views of
 * the switch (the engine up, down seen or absent; exposure figures; close answers; reset, kill; the replicas' gate
 * opening and shutting; the stop; the passing of time, its wake-ups taken when due). After every step the
 * invariants of "Take nothing away without evidence" (docs/operations.md, "When cancelling is not enough") hold:
 *   E1 a close pass opens only while the view says the engine is down, the switch runs, the gate is open and the
 *      account is opted in; the kill's only while running with the gate open;
 *   E2 absence alone never opens a close: with the engine absent, a pass of the escalation's own opens only under
 *      the time rule, and only once the engine has been absent for `afterDownMs` (a pass that did not finish is
 *      retried while the engine is down, whatever the cause: a retry is the pass the evidence opened, not a new
 *      one; so is the retry of the operator's kill's pass);
 *   E3 the HALTED latch goes to the ledger with `sync` before (or with) the first act: a close pass is preceded in
 *      its step by the latch written ahead with that pass open; a kill on an unlatched account latches with sync
 *      before its cancels;
 *   E4 `closeHold` lets a close order leave only while the switch runs, the account is HALTED, a pass is out, the
 *      engine is down (or the pass is the kill's) and the gate is open; it refuses whenever one of these fails;
 *   E5 the engine back holds a due pass at once: after the engine's return no pass is due (`retry`), and no close
 *      opens on a step whose view has the engine up (but the kill's);
 *   E6 the latch is taken only on evidence (a kill, or the engine down with a rule's evidence: E1), and released
 *      only by a reset with the gate open and no pass out;
 *   E7 a close pass of the escalation's own (not a retry) opens only while a step-2 rule holds on the evidence as
 *      the world fed it (its own reckoning of the engine's down time, the last exposure figures and the account
 *      value when the engine went down);
 *   E8 a retry goes on only within the death its pass opened under: a pass (the escalation's or the kill's) that
 *      answers after the engine came back is held, not due again, even when the engine is down again by then (the
 *      new death needs a rule of its own: E7), and no retry opens after a return of the engine.
 * 1,000 sequences from seed 20261201 (HL_PROPERTY_SEEDS=<seed> replays one, =random draws new ones).
 */
import fc from "fast-check";
import { describe } from "vitest";
import type {
  EscalationConfig,
  EscalationInput,
  FeatureCommand,
  FeatureNow,
  SwitchView,
} from "../../src/core/feature.js";
import { closeHold, type EscalationModel, escalation } from "../../src/escalation/index.js";
import { machineProperty } from "../switch/prop-test.js";

type Action =
  | { a: "advance"; ms: number }
  | { a: "engine"; up: boolean; cause: "seen" | "absent" }
  | { a: "exposure"; accountValue: number; notionalUsd: number; minLiquidationPct: number | null }
  | { a: "check" }
  | {
      a: "closeResult";
      flat: boolean;
      refusal: string | null;
      detail: string | undefined;
      remaining: string | undefined;
    }
  | { a: "reset" }
  | { a: "kill"; close: boolean }
  | { a: "gate"; gate: string | null }
  | { a: "stop" };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ a: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 90_000 }) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      a: fc.constant("engine" as const),
      up: fc.boolean(),
      cause: fc.constantFrom("seen" as const, "absent" as const),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      a: fc.constant("exposure" as const),
      accountValue: fc.integer({ min: 0, max: 20_000 }),
      notionalUsd: fc.integer({ min: 0, max: 200_000 }),
      minLiquidationPct: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ a: fc.constant("check" as const) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      a: fc.constant("closeResult" as const),
      flat: fc.boolean(),
      refusal: fc.constantFrom(null, "post_only", "refused", "unavailable", "held"),
      detail: fc.constantFrom(undefined, "the engine is back"),
      remaining: fc.constantFrom(undefined, "BTC 0.25"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("reset" as const) }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("kill" as const), close: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      a: fc.constant("gate" as const),
      gate: fc.constantFrom(
        null,
        null,
        "another replica holds the coordination lease",
        "etcd is unreachable",
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant("stop" as const) }) },
);

const config: fc.Arbitrary<EscalationConfig | null> = fc.option(
  fc.record({
    afterDownMs: fc.option(fc.integer({ min: 1_000, max: 200_000 }), { nil: null }),
    liquidationPct: fc.option(fc.integer({ min: 1, max: 30 }), { nil: null }),
    drawdownPct: fc.option(fc.integer({ min: 1, max: 50 }), { nil: null }),
    notionalCapUsd: fc.option(fc.integer({ min: 1_000, max: 150_000 }), { nil: null }),
    retryMs: fc.integer({ min: 1_000, max: 60_000 }),
  }),
  { nil: null, freq: 5 },
);

/** A restart's latch (or none), and the engine down before the start. */
const start = fc.record({
  halted: fc.option(
    fc.record({
      since: fc.constant(1_700_000_000_000),
      reason: fc.constant("notional"),
      closing: fc.constantFrom(undefined, "open" as const, "done" as const),
      pass: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      remaining: fc.constantFrom(undefined, "ETH -3"),
    }),
    { nil: null, freq: 3 },
  ),
  downBefore: fc.boolean(),
});

const scenario = fc.record({
  cfg: config,
  start,
  actions: fc.array(action, { minLength: 1, maxLength: 40 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

/** The switch as the escalation sees it: its view, the escalation's slot, the time; the invariants after each step. */
class World {
  view: SwitchView = {
    running: false,
    state: "armed",
    engineUp: true,
    halted: null,
    gate: null,
    token: undefined,
    coordinated: false,
    othersAlive: null,
    triggersLeft: 10,
  };
  model: EscalationModel = escalation.initial();
  wakeAt: number | null = null;
  mono = 1_000;
  wall = 1_700_000_100_000;
  /** when the engine went absent (this episode; null: up, or down seen) */
  absentSince: number | null = null;
  /** the world's own reckoning of the evidence (E7): when the engine went down, the last figures, the baseline */
  downSince: number | null = null;
  exposure: Extract<EscalationInput, { type: "exposure" }> | null = null;
  baseline: number | null = null;
  /** the engine came back since the last pass opened (or a pass became due on a rule holding): E8 */
  upSincePass = false;
  violations: string[] = [];
  log: string[] = [];

  constructor(readonly cfg: EscalationConfig | null) {}

  get now(): FeatureNow {
    return { mono: this.mono, wall: this.wall };
  }

  feed(input: EscalationInput) {
    const before = this.view;
    const was = this.model;
    const r = escalation.step(was, before, input, this.now, this.cfg);
    this.model = r.model;
    if (r.wakeAt !== undefined) this.wakeAt = r.wakeAt;
    this.log.push(`${this.mono}: ${JSON.stringify(input)} → ${r.commands.map((c) => kindOf(c)).join(", ")}`);
    this.check(input, before, was, r.commands);
    // E8: entering `retry` is a pass's continuation only within the death it opened under
    if (was.closing !== "retry" && this.model.closing === "retry") {
      if (was.closing === "waiting" && this.upSincePass)
        this.fail("E8", `a pass that answered after the engine's return is due again (${input.type})`);
      else if (this.ruleHolds()) this.upSincePass = false;
    }
    const opened = r.commands.some(
      (c) =>
        c.kind === "effect" &&
        (c.effect.kind === "closePositions" || (c.effect.kind === "kill" && c.effect.close !== undefined)),
    );
    if (opened) this.upSincePass = false;
    for (const c of r.commands) if (c.kind === "halted") this.view = { ...this.view, halted: c.latch };
    this.checkHold();
  }

  fail(rule: string, why: string) {
    this.violations.push(`${rule}: ${why}`);
  }

  check(input: EscalationInput, view: SwitchView, was: EscalationModel, commands: readonly FeatureCommand[]) {
    let latchedOpen: number | null = null;
    let latchSynced = false;
    for (const c of commands) {
      if (c.kind === "halted") {
        if (c.latch === null) {
          // E6: released only by the operator's reset, gate open, no pass out
          if (input.type !== "reset") this.fail("E6", `the latch released on ${input.type}`);
          if (view.gate !== null) this.fail("E6", "the latch released with the gate shut");
          if (was.closing === "waiting") this.fail("E6", "the latch released while a pass is out");
          continue;
        }
        if (view.halted === null && input.type !== "kill") {
          // E6: a latch of the escalation's own only on the engine's death, the gate open, opted in
          if (view.engineUp || view.gate !== null || !view.running || this.cfg === null)
            this.fail("E6", `latched without evidence on ${input.type}`);
        }
        if (c.write === "sync") latchSynced = true;
        if (c.latch.closing === "open" && c.write === "sync") latchedOpen = c.latch.pass ?? null;
      }
      if (c.kind !== "effect") continue;
      const e = c.effect;
      if (e.kind === "closePositions") {
        // E1
        if (view.engineUp) this.fail("E1/E5", `a close pass opened while the engine is up (${input.type})`);
        if (!view.running) this.fail("E1", "a close pass opened while the switch is not running");
        if (view.gate !== null) this.fail("E1", "a close pass opened with the gate shut");
        if (this.cfg === null) this.fail("E1", "a close pass of the escalation on an account not opted in");
        // E2, E7: a pass of its own (a retry goes on with the pass the evidence opened)
        const retry = was.closing === "retry";
        if (this.absentSince !== null && !retry) {
          const after = this.cfg?.afterDownMs;
          if (after == null) this.fail("E2", "the engine's absence alone opened a close (no time rule)");
          else if (this.mono - this.absentSince < after)
            this.fail(
              "E2",
              `a close opened ${this.mono - this.absentSince} ms into an absence (rule ${after})`,
            );
        }
        if (!retry && !this.ruleHolds())
          this.fail("E7", `close pass ${e.pass} opened on ${input.type} with no rule holding`);
        if (retry && this.upSincePass)
          this.fail("E8", `close pass ${e.pass} retried after the engine came back (${input.type})`);
        // E3
        if (latchedOpen !== e.pass)
          this.fail("E3", `close pass ${e.pass} not written ahead with sync before it`);
      }
      if (e.kind === "kill") {
        if (input.type !== "kill") this.fail("E1", `a kill's cancels on ${input.type}`);
        if (!view.running || view.gate !== null) this.fail("E1", "a kill acted while stopping or gated");
        if (view.halted === null && !latchSynced) this.fail("E3", "a kill acted before its latch was synced");
        if (e.close && latchedOpen !== e.close.pass)
          this.fail("E3", `the kill's close pass ${e.close.pass} not written ahead with sync`);
      }
    }
    // E5: the engine back holds a due pass at once
    if (input.type === "engine" && input.up && this.model.closing === "retry")
      this.fail("E5", "a pass is still due after the engine came back");
  }

  /** Whether a step-2 rule holds on the evidence as the world fed it (docs/operations.md's rules, written again). */
  ruleHolds(): boolean {
    const cfg = this.cfg;
    if (cfg === null || this.downSince === null) return false;
    if (cfg.afterDownMs !== null && this.mono - this.downSince >= cfg.afterDownMs) return true;
    if (this.absentSince !== null) return false; // absence: the time rule only
    const x = this.exposure;
    if (x === null) return false;
    if (
      cfg.liquidationPct !== null &&
      x.minLiquidationPct !== null &&
      x.minLiquidationPct < cfg.liquidationPct
    )
      return true;
    if (cfg.drawdownPct !== null && this.baseline !== null && this.baseline > 0)
      if (((this.baseline - x.accountValue) / this.baseline) * 100 >= cfg.drawdownPct) return true;
    return cfg.notionalCapUsd !== null && x.notionalUsd > cfg.notionalCapUsd;
  }

  /** The exposure poll's figures: kept for the world's reckoning (the first after a death is its baseline). */
  exposed(x: Extract<EscalationInput, { type: "exposure" }>) {
    if (this.downSince !== null && this.baseline === null) this.baseline = x.accountValue;
    this.exposure = x;
    this.feed(x);
  }

  /** E4, on the view as it is and on views that differ in one fact each. */
  checkHold() {
    const variants: SwitchView[] = [
      this.view,
      { ...this.view, engineUp: !this.view.engineUp },
      { ...this.view, gate: this.view.gate === null ? "shut" : null },
      { ...this.view, running: !this.view.running },
    ];
    for (const v of variants) {
      const may =
        v.running &&
        v.halted !== null &&
        this.model.closing === "waiting" &&
        (!v.engineUp || this.model.killPass) &&
        v.gate === null;
      const hold = closeHold(this.model, v);
      if (may !== (hold === null))
        this.fail(
          "E4",
          `closeHold ${hold === null ? "lets an order leave" : `refuses (${hold})`} on ${JSON.stringify(v)}`,
        );
    }
  }

  /** The time passes: the wake-up asked for is taken when due (as the switch's `wake`). */
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

  engine(up: boolean, cause: "seen" | "absent") {
    if (up === this.view.engineUp) return; // the switch tells the features of a change only
    this.feed({ type: "engine", up, cause });
    this.view = { ...this.view, engineUp: up };
    if (up) this.upSincePass = true;
    this.absentSince = up || cause === "seen" ? null : this.mono;
    this.downSince = up ? null : this.mono;
    this.baseline = up ? null : (this.exposure?.accountValue ?? null);
  }
}

const kindOf = (c: FeatureCommand) =>
  c.kind === "event" ? c.event.type : c.kind === "effect" ? c.effect.kind : c.kind;

function run(s: Scenario): World {
  const w = new World(s.cfg);
  w.view = { ...w.view, halted: s.start.halted };
  if (s.start.downBefore) w.engine(false, "seen");
  w.view = { ...w.view, running: true };
  w.feed({ type: "start" });
  for (const x of s.actions) {
    if (w.violations.length > 0) break;
    switch (x.a) {
      case "advance":
        w.advance(x.ms);
        break;
      case "engine":
        w.engine(x.up, x.cause);
        break;
      case "exposure":
        w.exposed({ type: "exposure", ...x });
        break;
      case "check":
        if (w.view.running) w.feed({ type: "check" });
        break;
      case "closeResult":
        w.feed({ type: "closeResult", orders: 1, filledUsd: 10, dust: 0, ...x });
        break;
      case "reset":
        w.feed({ type: "reset", by: "ops" });
        break;
      case "kill":
        w.feed({ type: "kill", by: "ops", close: x.close });
        break;
      case "gate":
        w.view = { ...w.view, gate: x.gate, coordinated: true, token: x.gate === null ? "7" : undefined };
        if (w.view.running) w.feed({ type: "check" });
        break;
      case "stop":
        w.view = { ...w.view, running: false };
        w.wakeAt = null; // a stop cancels the features' wake-ups (src/switch/context.ts `cancelTimers`)
        break;
    }
  }
  return w;
}

describe("escalation machine: take nothing away without evidence", () => {
  machineProperty("E1-E8", 20_261_201, scenario, run);
});
