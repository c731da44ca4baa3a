/**
 * Property-based tests of the switch machine (fast-check): random sequences of commands -- time passing,
 * answers that confirm, fail, time out, land without an answer, permanent refusals, engine down/up, wall-clock
 * steps (either way, across midnight), crashes and restarts from the persisted ledger, graceful stops, a slow
 * disk, an exchange gone dark -- run through the machine and a model of the exchange (world.ts). After every
 * machine step the invariants of docs/daemon.md "Invariants" are checked:
 *   1 never overclaims  2 never under-counts  3 no earlier deadline than a confirmed one  4 nonces increase
 *   5 nothing sent at the daily limit  6 permanent refusals re-checked slowly  7 removal on shutdown
 *   8 wall-clock steps never move the day back nor reset its count;
 * and issue 25's, with an erratic clock in front of the exchange (every answer's Date off by any amount, or not
 * a date at all): I never ready while the exchange holds no schedule at least the readiness margin ahead;
 * IV no event sequence makes `step` throw.
 * fast-check shrinks a failing sequence and prints its seed and path (replay with { seed, path }).
 * Each invariant was shown to fail on a planted bug (`Plant` in world.ts; the "planted" test below).
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import type { SwitchConfig } from "../../../src/daemon/switch/machine.js";
import { type Command, type Plant, SWITCH_CFG, World } from "./world.js";

const CFG: SwitchConfig = SWITCH_CFG;

const STARTS = [
  Date.UTC(2026, 0, 1, 12, 0, 0),
  Date.UTC(2026, 0, 1, 23, 58, 30), // crosses 00:00 UTC within a sequence
  Date.UTC(2026, 0, 1, 23, 50, 0),
];

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      c: fc.constant("advance" as const),
      ms: fc.oneof(fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 20_000, max: 400_000 })),
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      c: fc.constant("respond" as const),
      kind: fc.constantFrom("ok", "ok", "ok", "lost", "5xx", "refused", "permanent") as fc.Arbitrary<
        "ok" | "lost" | "5xx" | "refused" | "permanent"
      >,
      applied: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ c: fc.constant("engine" as const), up: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      c: fc.constant("step" as const),
      deltaMs: fc.constantFrom(-600_000, -90_000, 90_000, 600_000, -3_600_000, 20_000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ c: fc.constant("crash" as const), applied: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      c: fc.constant("shutdown" as const),
      mode: fc.constantFrom("remove", "keep"),
    }) as fc.Arbitrary<Command>,
  },
  { weight: 1, arbitrary: fc.record({ c: fc.constant("disk" as const), slow: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ c: fc.constant("exchange" as const), down: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ c: fc.constant("gate" as const), on: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ c: "ghost" as const }) },
);

const scenario = fc.record({
  start: fc.constantFrom(...STARTS),
  policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constantFrom(0, 0, 5, 9, 10),
  commands: fc.array(command, { minLength: 1, maxLength: 40 }),
});

// Issue 25: the same commands and an erratic clock in front of the exchange: every answer's Date off by any
// amount, or not a date at all (NaN, the year 275760, negative, infinite).
const date: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    c: fc.constant("date" as const),
    offsetMs: fc.oneof(
      fc.constantFrom(0, 0, -120_000, 72_000_000, 129_600_000, -3_000, 3_000, -86_400_000 * 3),
      fc.integer({ min: -200_000_000, max: 200_000_000 }),
    ),
  }),
  fc.record({
    c: fc.constant("date" as const),
    offsetMs: fc.constant(0),
    absurd: fc.constantFrom(Number.NaN, 8.64e15, -1, 0, Number.POSITIVE_INFINITY, 1e20),
  }),
) as fc.Arbitrary<Command>;

const erratic = fc.record({
  start: fc.constantFrom(...STARTS),
  policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constantFrom(0, 0, 5, 9, 10),
  commands: fc.array(fc.oneof({ weight: 12, arbitrary: command }, { weight: 2, arbitrary: date }), {
    minLength: 1,
    maxLength: 40,
  }),
});

type Scenario = { start: number; policy: SwitchConfig["onEngineDown"]; used: number; commands: Command[] };

/** Runs one scenario; returns the violations (empty when every invariant held after every step). */
function runScenario({ start, policy, used, commands }: Scenario, plant: Plant = null) {
  const w = new World({ ...CFG, onEngineDown: policy }, start, plant, used);
  for (const cmd of commands) {
    w.apply(cmd);
    if (w.violations.length > 0) break;
  }
  return w;
}

function explain(w: World): string {
  return `${w.violations.map((v) => `invariant ${v.invariant}: ${v.message}`).join("\n")}\ncommands:\n${w.trace.join("\n")}`;
}

// 4 x 2,500 = 10,000 generated sequences per run (fast-check prints the seed and the shrunk path on failure).
// generous time-outs: a loaded CI machine can be several times slower than a laptop (a part takes ~2 s here)
describe("switch machine: invariants hold after every step of random event sequences", {
  timeout: 60_000,
}, () => {
  for (const part of [1, 2, 3, 4]) {
    test.prop([erratic], { numRuns: 2_500 })(`invariants 1-8, I and IV, part ${part} of 4`, (s) => {
      const w = runScenario(s);
      if (w.violations.length > 0) throw new Error(explain(w));
    });
  }
});

// Every invariant must be able to fail: each planted bug is found by fast-check (and by the invariant named).
describe("switch machine: each invariant catches its planted bug", { timeout: 60_000 }, () => {
  // [plant, invariant, runs]: a bug that needs a rarer sequence gets more runs (each is still seconds)
  const planted: [Plant, number | string, number?, boolean?, number?][] = [
    ["pending-as-armed", 1],
    ["forget-trigger", 2],
    ["no-gate", 3],
    ["nonce-from-wall", 4],
    ["push-when-exhausted", 5],
    ["fast-recheck", 6],
    ["removal-ignored", 7],
    ["day-from-wall", 8],
    // an expedite (earlier deadline) with no write-ahead, a crash after the exchange applied it, the fire unseen
    ["cover-without-ledger-rule", 2, 1_000, false, 13],
    // (cover-without-nonce-floor, shown on invariant 4 until issue 25, is no longer reached here: since a nonce
    // handed out before an answer verified the time is neither persisted nor held against the next run's, the
    // model no longer produces the sequence; 20,000 runs on each of seeds 11-14 found none. The rule it planted
    // against, that a covered push ends where a restart's nonces would start below it, is checked directly:
    // test/daemon/ledger.test.ts, "coverage ends where a restart would start its nonces below this push's".)
    ["nonce-floor-compounds", 4],
    // issue 25, with the erratic clock
    ["readiness-on-local", "I", 5_000, true],
    ["date-unbounded", "IV", 5_000, true],
  ];
  for (const [plant, invariant, runs = 5_000, dates = false, seed = 11] of planted) {
    // (each up to 2 min: on a loaded 2-core machine 40,000 runs take a minute; idle, a few seconds)
    test(`planted ${plant} → invariant ${invariant}`, { timeout: 120_000 }, () => {
      const result = fc.check(
        fc.property(dates ? erratic : scenario, (s) => runScenario(s, plant).violations.length === 0),
        // No shrinking: the first failing sequence is enough to name the invariant (shrinking took seconds).
        { numRuns: runs, seed, endOnFailure: true },
      );
      expect(result.failed, `planted ${plant} was not found`).toBe(true);
      const caught = runScenario(result.counterexample![0], plant).violations.map((v) => v.invariant);
      expect(caught).toContain(invariant);
    });
  }
});
