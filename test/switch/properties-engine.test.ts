/**
 * The switch's property tests of invariant V (issue 38: the engine's heartbeats, hang, death and return, the daemon's
 * stalls) and of the escalation's VI, VII and VIII (issue 39), each with its fixed sequences (properties-shared.ts
 * says what is checked and how to replay a seed).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { propTest } from "./prop-test.js";
import {
  engineScenario,
  escalationScenario,
  explain,
  GIVEN_SEED,
  RANDOM_SEEDS,
  runEngineScenario,
  runScenario,
  STARTS,
} from "./properties-shared.js";

describe("switch machine: invariant V (the engine's silence, the daemon's stalls)", {
  timeout: 120_000,
}, () => {
  const seed = GIVEN_SEED ?? (RANDOM_SEEDS ? undefined : 20_261_138);
  propTest([engineScenario], { numRuns: 1_000, ...(seed === undefined ? {} : { seed }) })(
    "invariants 1-8, I-V with heartbeats, hangs, deaths and stalls",
    async (s) => {
      const w = await runEngineScenario(s);
      if (w.violations.length > 0) throw new Error(explain(w));
    },
    120_000,
  );

  test("planted judge-on-wake → invariant V", { timeout: 120_000 }, async () => {
    const result = await fc.check(
      fc.asyncProperty(
        engineScenario,
        async (s) => (await runEngineScenario(s, "judge-on-wake")).violations.length === 0,
      ),
      { numRuns: 1_000, seed: 11, endOnFailure: true },
    );
    expect(result.failed, "planted judge-on-wake was not found").toBe(true);
    const w = await runEngineScenario(result.counterexample![0], "judge-on-wake");
    expect(w.violations.map((v) => v.invariant)).toContain("V");
  });

  test("a stall of 2 s with the engine beating is no engine down; a hang after it is down a gap later", async () => {
    const w = await runEngineScenario({
      start: STARTS[0]!,
      policy: "cancel",
      used: 0,
      guessed: 0,
      commands: [
        { c: "respond", kind: "ok", applied: false },
        { c: "advance", ms: 500 },
        { c: "stall", ms: 2_000 },
        { c: "advance", ms: 300 },
        { c: "life", state: "hung" },
        { c: "advance", ms: 900 },
      ],
    });
    expect(w.violations, explain(w)).toEqual([]);
    expect(w.engineDowns).toBe(0);
    await w.apply({ c: "advance", ms: 200 });
    expect(w.violations, explain(w)).toEqual([]);
    expect(w.engineDowns).toBe(1);
    expect(w.model.engineUp).toBe(false);
  });
});

// Issue 39: the escalation's closes against a returning engine, restarts with a pass open, the kill (VI, VII).
describe("escalation: invariants VI, VII and VIII hold after every step", { timeout: 120_000 }, () => {
  const seed = GIVEN_SEED ?? (RANDOM_SEEDS ? undefined : 20_261_139);
  propTest([escalationScenario], { numRuns: 1_000, ...(seed === undefined ? {} : { seed }) })(
    "invariants VI, VII, VIII (and 1-8, I-IV) with closes on several dexes, a returning engine, restarts and kills",
    async (s) => {
      const w = await runScenario(s);
      if (w.violations.length > 0) throw new Error(explain(w));
    },
    120_000,
  );
});

describe("escalation: the returning engine and the restart, fixed sequences", () => {
  const base = { start: STARTS[0]!, policy: "cancel" as const, used: 0, guessed: 0, escalation: true };
  test("the engine back between two orders of a pass: held, no order while up; down again: resumed, flat", async () => {
    const w = await runScenario({
      ...base,
      commands: [
        { c: "engine", up: false },
        { c: "advance", ms: 11_000 },
        { c: "fill", ok: true },
        { c: "engine", up: true },
        { c: "fill", ok: true },
        { c: "advance", ms: 40_000 },
        { c: "engine", up: false },
        { c: "advance", ms: 11_000 },
        { c: "fill", ok: true },
        { c: "fill", ok: true },
        { c: "fill", ok: true },
        { c: "advance", ms: 1_000 },
      ],
    });
    expect(w.violations, explain(w)).toEqual([]);
    expect(w.logs).toEqual(
      expect.arrayContaining(["escalation.held", "escalation.resumed", "escalation.closed"]),
    );
    expect(w.position).toBe(0);
  });
  test("a crash with a pass open: reported at the restart, resumed once the engine is down", async () => {
    const w = await runScenario({
      ...base,
      commands: [
        { c: "engine", up: false },
        { c: "advance", ms: 11_000 },
        { c: "crash", applied: false },
        { c: "engine", up: true },
        { c: "engine", up: false },
        { c: "advance", ms: 11_000 },
        { c: "fill", ok: true },
        { c: "fill", ok: true },
        { c: "fill", ok: true },
        { c: "advance", ms: 1_000 },
      ],
    });
    expect(w.violations, explain(w)).toEqual([]);
    expect(w.logs).toEqual(
      expect.arrayContaining(["escalation.stopped_at_restart", "escalation.resumed", "escalation.closed"]),
    );
  });
});
