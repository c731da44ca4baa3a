/**
 * The shared parts of the switch's property tests (fast-check): the arbitraries, the scenario runners, the seeds and
 * the planted-bug checks. The tests themselves are in the properties-*.test.ts files beside this module, split so
 * that vitest runs them on separate workers at once (docs/development.md, "The suite's time"):
 *   properties-part1..4.test.ts  the seeded sequences of invariants 1-8, I-IV and IX: part N is fast-check's
 *                                2,000 runs from seed 20261126 + N (the four parts the one file ran one after the
 *                                other, the same seeds and runs: 8,000 sequences);
 *   properties-engine.test.ts    invariant V (1,000 runs, seed 20261138) and its fixed sequences, the
 *                                escalation's VI-VIII (1,000 runs, seed 20261139) and its fixed sequences;
 *   properties-replayed.test.ts  the counterexamples found, replayed as fixed sequences;
 *   properties-planted-a/b/c.test.ts  each invariant catches its planted bug (PLANTED_A, PLANTED_B and PLANTED_C
 *                                below, one file each).
 *
 * Replaying and hunting (HL_PROPERTY_SEEDS; every seeded property reads it):
 *   HL_PROPERTY_SEEDS=<seed> npx vitest run test/switch/properties-part3.test.ts
 *     replays the seed fast-check printed, in the file that printed it: a part file runs that seed's 2,000
 *     sequences as its one part, properties-engine.test.ts runs it for invariant V and for the escalation;
 *   HL_PROPERTY_SEEDS=random npx vitest run test/switch/properties-
 *     draws new seeds for every seeded property of every file (the four parts on their own workers).
 * The planted-bug checks and the fixed sequences keep their own seeds.
 *
 * What is checked (the switch's property tests as a whole):
 * Property-based tests of the switch (fast-check): random sequences of commands -- time passing, answers that
 * confirm, fail, time out, land without an answer, permanent refusals, engine down/up, wall-clock steps (either
 * way, across midnight), crashes and restarts from the persisted ledger, graceful stops, a slow disk, an exchange
 * gone dark -- run through the real driver (createSwitch) over fake I/O and a model of the exchange (world.ts),
 * with ManualClock and ManualTimers. After every
 * machine step the invariants of docs/daemon.md "Invariants" are checked:
 *   1 never overclaims  2 never under-counts  3 no earlier deadline than a confirmed one  4 nonces increase
 *   5 nothing sent at the daily limit  6 permanent refusals re-checked slowly  7 removal on shutdown
 *   8 wall-clock steps never move the day back nor reset its count;
 * and issue 25's, with an erratic clock in front of the exchange (every answer's Date off by any amount, or not
 * a date at all), pushes the exchange applies whose answer is lost, and a record that may lag or lie:
 * I never ready while the exchange holds no schedule at least the readiness margin ahead;
 * II the pushes never stop or shorten while the model exchange would accept them, unless it refused with its
 *   recognised daily limit or a permanent reason, or the operator's policy says so;
 * III with a fresh record covering the day the count equals the exchange's fires (without one it is never below
 *   them: 2);
 * IV no event sequence makes `step` throw;
 * and issue 38's V-grace: no account an engine held waits past its connect grace after a restart (the `engine`
 *   command is an engine naming the account; a crash or stop restarts the daemon from its ledger).
 * and issue 38's, with the engine's heartbeats on the guard's connection, its hang, death and return, and the
 * daemon's own stalls (SIGSTOP) as inputs, driven through the connection guard's liveness rule:
 * V no engine down (hence no cancel, fire or close) while the engine wrote a heartbeat within the gap of the moment
 *   it is judged, a moment the daemon is awake; and a hung engine is down within the gap of its last heartbeat, the
 *   end of the daemon's last stall or its connection, whichever is later;
 * and issue 39's, with the escalation's closes (the world's separate block): VI no close order leaves while the
 * engine is up (but the operator's kill); VII a HALTED account with a pass open before a restart is resumed or
 * reported after it; VIII no pass says "closed" while a position remains on a listed dex (several dexes as inputs).
 * fast-check shrinks a failing sequence and prints its seed and path (replay with { seed, path }).
 * Each invariant was shown to fail on a planted bug (`Plant` in world.ts; the "planted" test below).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { SwitchConfig } from "../../src/switch/machine.js";
import { propTest } from "./prop-test.js";
import { type Command, EngineWorld, type Plant, SWITCH_CFG, World } from "./world.js";

const CFG: SwitchConfig = SWITCH_CFG;

export const STARTS = [
  Date.UTC(2026, 0, 1, 12, 0, 0),
  Date.UTC(2026, 0, 1, 23, 58, 30), // crosses 00:00 UTC within a sequence
  Date.UTC(2026, 0, 1, 23, 50, 0),
];

const classic = [
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
];

/** The exchange's record read (lagging, lying or not), and the account's open orders coming and going. */
const recordCommands = [
  { weight: 1, arbitrary: fc.record({ c: fc.constant("orders" as const), open: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      c: fc.constant("record" as const),
      lagMs: fc.constantFrom(0, 0, 0, 20_000, 60_000, 300_000),
      lie: fc.constantFrom("none", "none", "none", "fake-lapses", "drop") as fc.Arbitrary<
        "none" | "fake-lapses" | "drop"
      >,
    }),
  },
];

const command: fc.Arbitrary<Command> = fc.oneof(...classic, ...recordCommands);

const scenarioOf = (commands: fc.Arbitrary<Command>) =>
  fc.record({
    start: fc.constantFrom(...STARTS),
    policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
    used: fc.constantFrom(0, 0, 0, 5, 9, 10),
    // triggers the ledger guessed beyond the exchange's (a flaky network's afternoon): the count may sit at the
    // limit while the exchange would still accept the pushes
    guessed: fc.constantFrom(0, 0, 0, 3, 10),
    commands: fc.array(commands, { minLength: 1, maxLength: 40 }),
  });
export const scenario = scenarioOf(command);
/** Without the record: the rarer sequences of the older invariants are found in as many runs as before. */
export const classicScenario = fc.record({
  start: fc.constantFrom(...STARTS),
  policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constantFrom(0, 0, 5, 9, 10),
  guessed: fc.constant(0),
  commands: fc.array(fc.oneof(...classic), { minLength: 1, maxLength: 40 }),
});
/** Unanswered pushes (applied or not), time, and truthful, fresh records: invariant 10's ground. */
export const recordScenario = fc.record({
  start: fc.constant(STARTS[0]!),
  policy: fc.constant("expedite" as const),
  used: fc.constant(0),
  guessed: fc.constant(0),
  commands: fc.array(
    fc.oneof(
      fc.record({ c: fc.constant("advance" as const), ms: fc.integer({ min: 1_000, max: 120_000 }) }),
      fc.record({
        c: fc.constant("respond" as const),
        kind: fc.constantFrom("ok", "lost") as fc.Arbitrary<"ok" | "lost">,
        applied: fc.boolean(),
      }),
      fc.constant({ c: "record" as const, lagMs: 0, lie: "none" as const }),
    ),
    { minLength: 1, maxLength: 30 },
  ),
});

export type Scenario = {
  start: number;
  policy: SwitchConfig["onEngineDown"];
  used: number;
  guessed: number;
  commands: Command[];
  /** issue 39: the account opted in to the escalation (its closes and the kill are wired) */
  escalation?: boolean;
  /** issue 39 (VIII): the listed perp dexes, a position on each; absent: the first perp dex only */
  dexes?: string[];
  /** issue 40: the host's wall clock this far off the exchange's from the start */
  startWallOffsetMs?: number;
};

// ---------------------------------------------------------------------------------------------------------------
// Issue 39 (helper h7): the escalation's closes. The engine dies and comes back between the orders of a pass (each
// close order waits for `fill`), passes are refused (the post-only window), the daemon crashes or stops with a pass
// open, the operator kills. VI no close order leaves while the engine is up (but a kill's); VII a HALTED account
// with a pass open before a restart is resumed or reported after it.
const ESCALATION: NonNullable<SwitchConfig["escalation"]> = {
  afterDownMs: 10_000,
  liquidationPct: null,
  drawdownPct: null,
  notionalCapUsd: null,
  retryMs: 8_000,
};
export const escalationScenario: fc.Arbitrary<Scenario> = fc.record({
  start: fc.constant(STARTS[0]!),
  policy: fc.constant("cancel" as const),
  used: fc.constant(0),
  guessed: fc.constant(0),
  escalation: fc.constant(true),
  // VIII: the same sequences, over one, two or three listed dexes (not sequences of their own)
  dexes: fc.constantFrom([""], ["", "xyz"], ["", "xyz", "abc"]),
  commands: fc.array(
    fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          c: fc.constant("advance" as const),
          ms: fc.integer({ min: 500, max: 40_000 }),
        }),
      },
      {
        weight: 4,
        arbitrary: fc.record({
          c: fc.constant("respond" as const),
          kind: fc.constantFrom("ok", "ok", "lost") as fc.Arbitrary<"ok" | "lost">,
          applied: fc.boolean(),
        }),
      },
      { weight: 4, arbitrary: fc.record({ c: fc.constant("engine" as const), up: fc.boolean() }) },
      { weight: 5, arbitrary: fc.record({ c: fc.constant("fill" as const), ok: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ c: fc.constant("crash" as const), applied: fc.boolean() }) },
      {
        weight: 1,
        arbitrary: fc.record({
          c: fc.constant("shutdown" as const),
          mode: fc.constantFrom("remove", "keep"),
        }) as fc.Arbitrary<Command>,
      },
      { weight: 1, arbitrary: fc.record({ c: fc.constant("disk" as const), slow: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ c: fc.constant("kill" as const), close: fc.boolean() }) },
    ),
    { minLength: 1, maxLength: 40 },
  ),
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

// Issue 40: the second witness's answers, the HyperEVM's latest block off the exchange's time (mostly true; a
// second behind, as a block is; or far off: a wrong RPC).
const block: fc.Arbitrary<Command> = fc.record({
  c: fc.constant("block" as const),
  offsetMs: fc.constantFrom(0, 0, 0, -1_000, 43_200_000, -7_200_000),
}) as fc.Arbitrary<Command>;

export const erratic = fc.record({
  start: fc.constantFrom(...STARTS),
  // issue 40: the local clock this far off the exchange's from the start (its block below)
  startWallOffsetMs: fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(7_200_000, -7_200_000, 72_000_000, -72_000_000, 259_200_000, -259_200_000),
    },
  ),
  policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constantFrom(0, 0, 5, 9, 10),
  guessed: fc.constantFrom(0, 0, 0, 3, 10),
  commands: fc.array(
    fc.oneof(
      { weight: 12, arbitrary: command },
      { weight: 2, arbitrary: date },
      { weight: 1, arbitrary: block },
    ),
    { minLength: 1, maxLength: 40 },
  ),
});

// ---------------------------------------------------------------------------------------------------------------
// Issue 40: the local clock off from the start (no step seen) and the second witness's answers (the world's
// `block` command: the HyperEVM's latest block off the exchange's time) are world inputs (test/switch/world.ts), both
// drawn in the shared parts (`erratic`): the local clock's offset at start (0 mostly; ±2 h, ±20 h, ±3 d), the
// block's answers (mostly true, a second behind, or 12 h ahead / 2 h behind: a wrong RPC, a witness fault the world
// allows for as an erratic Date), beside the answers' Date. Drawn so, they found (each fixed and replayed in
// properties-replayed.test.ts): the push in flight lapsed on a candidate that would have refused it; a
// "nonce too high" verdict taken from below only; guesses for a wrong clock's day crowding the exchange's out of the
// eight kept; a Date verified by the exchange's acceptance against a block that disagreed. A double fault with no
// true witness (the Date and the local clock wrong together, no true block) is outside what any design can know:
// the world's assumption (world.ts `blind`) is that IX and invariant 2's lower bound are not checked after one;
// every other invariant is, and these sequences are still drawn.
/** The local clock ahead from the start, the answers true: what finding 1 of issue 40 was (invariant IX's plant). */
export const clockAhead = fc.record({
  start: fc.constantFrom(...STARTS),
  policy: fc.constant("expedite" as const) as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constant(0),
  guessed: fc.constant(0),
  commands: fc.array(command, { minLength: 1, maxLength: 20 }),
  startWallOffsetMs: fc.constantFrom(7_200_000, 72_000_000, 259_200_000),
});
// ------------------------------------------------------------------------------------ end of issue 40's block

/** Runs one scenario; returns the violations (empty when every invariant held after every step). */
export async function runScenario(
  { start, policy, used, guessed, commands, escalation, dexes, startWallOffsetMs }: Scenario,
  plant: Plant = null,
) {
  const cfg = { ...CFG, onEngineDown: policy, ...(escalation ? { escalation: ESCALATION } : {}) };
  const w = new World(cfg, start, plant, used, guessed, startWallOffsetMs ?? 0);
  if (dexes) w.listDexes(dexes);
  await w.settle();
  for (const cmd of commands) {
    await w.apply(cmd);
    if (w.violations.length > 0) break;
  }
  return w;
}

export function explain(w: World): string {
  return `${w.violations.map((v) => `invariant ${v.invariant}: ${v.message}`).join("\n")}\ncommands:\n${w.trace.join("\n")}`;
}

// 4 x 2,000 (properties-part1..4) + 1,000 (the escalation's, issue 39) + 1,000 (invariant V, issue 38) = 10,000
// generated sequences per run (fast-check prints the seed and the shrunk path on failure).
// generous time-outs: a loaded CI machine can be several times slower than a laptop (a part takes ~2 s here)
//
// The seeds are fixed so that `npm test` and CI are deterministic. Counterexamples found with random seeds are kept
// as fixed sequences (properties-replayed.test.ts), each named with its seed. Hunting for more is
// `HL_PROPERTY_SEEDS=random npx vitest run test/switch/properties-`, which draws new seeds each run; one seed
// fast-check printed is replayed with `HL_PROPERTY_SEEDS=<seed>` on the file that printed it (a part file: its
// 2,000 sequences, as that file's one part).
const SEEDS = process.env.HL_PROPERTY_SEEDS ?? "";
export const RANDOM_SEEDS = SEEDS === "random";
export const GIVEN_SEED = /^-?\d+$/.test(SEEDS) ? Number(SEEDS) : null;
if (SEEDS !== "" && !RANDOM_SEEDS && GIVEN_SEED === null)
  throw new Error(`HL_PROPERTY_SEEDS must be "random" or an integer seed, not ${JSON.stringify(SEEDS)}`);

// ---------------------------------------------------------------------------------------------------------------
// Issue 38, invariant V: the engine's heartbeats, its hang, death and return, and the daemon's own stalls.
// ---------------------------------------------------------------------------------------------------------------

/** Time in small and large steps, stalls of the daemon of 0.3-6 s, the engine's life, answers and crashes. */
const engineCommand: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      c: fc.constant("advance" as const),
      ms: fc.oneof(fc.integer({ min: 1, max: 2_500 }), fc.integer({ min: 2_500, max: 40_000 })),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ c: fc.constant("stall" as const), ms: fc.integer({ min: 300, max: 6_000 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      c: fc.constant("life" as const),
      state: fc.constantFrom("beating", "beating", "hung", "closed") as fc.Arbitrary<
        "beating" | "hung" | "closed"
      >,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      c: fc.constant("respond" as const),
      kind: fc.constantFrom("ok", "ok", "lost") as fc.Arbitrary<"ok" | "lost">,
      applied: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ c: fc.constant("crash" as const), applied: fc.boolean() }) },
);
export const engineScenario = fc.record({
  start: fc.constant(STARTS[0]!),
  policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constant(0),
  guessed: fc.constant(0),
  commands: fc.array(engineCommand, { minLength: 1, maxLength: 30 }),
});

/** Runs one scenario of the engine's world (invariant V with the others). */
export async function runEngineScenario({ start, policy, commands }: Scenario, plant: Plant = null) {
  const w = new EngineWorld({ ...CFG, onEngineDown: policy }, start, plant);
  await w.settle();
  for (const cmd of commands) {
    await w.apply(cmd);
    if (w.violations.length > 0) break;
  }
  return w;
}

/**
 * The seeded sequences' part `part` (1-4) of invariants 1-8, I-IV and IX: 2,000 runs from seed 20261126 + part, or
 * from the seed HL_PROPERTY_SEEDS gives (then named by it), or a random one.
 */
export function seededPart(part: 1 | 2 | 3 | 4): void {
  // (each part takes 12-16 s alone; the whole suite on a loaded 2-core machine runs it up to four times slower)
  describe("switch machine: invariants hold after every step of random event sequences", {
    timeout: 120_000,
  }, () => {
    const seed = GIVEN_SEED ?? (RANDOM_SEEDS ? undefined : 20_261_126 + part);
    propTest([erratic], { numRuns: 2_000, ...(seed === undefined ? {} : { seed }) })(
      GIVEN_SEED === null
        ? `invariants 1-8, I-IV, IX, part ${part} of 4`
        : `invariants 1-8, I-IV, IX, seed ${GIVEN_SEED}`,
      async (s) => {
        const w = await runScenario(s);
        if (w.violations.length > 0) throw new Error(explain(w));
      },
      120_000,
    );
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Every invariant must be able to fail: each planted bug is found by fast-check (and by the invariant named).
// ---------------------------------------------------------------------------------------------------------------

/**
 * [plant, invariant, runs, scenarios, seed]: a bug that needs a rarer sequence gets more runs (each is still
 * seconds), or the commands that reach it
 * (a plant that breaks time also shortens the pushes on the wrong clock: II may name it first)
 */
export type Planted = [
  Plant,
  number | string | (number | string)[],
  number?,
  fc.Arbitrary<Scenario>?,
  number?,
];

/** The planted bugs of properties-planted-a.test.ts (the older invariants' and issue 25's). */
export const PLANTED_A: Planted[] = [
  ["pending-as-armed", 1],
  ["forget-trigger", 2],
  ["no-gate", 3],
  ["nonce-from-wall", 4],
  ["push-when-exhausted", 5],
  ["fast-recheck", 6],
  ["removal-ignored", 7],
  ["day-from-wall", [8, "II"]],
];

/**
 * The planted bugs of properties-planted-c.test.ts (the write-ahead's and the nonce floor's): apart from PLANTED_A
 * because no-gate (791 sequences of seed 11 before it is found) and cover-without-ledger-rule (884 of seed 2) each
 * cost about as much as the rest of the planted checks together; in one file they were the run's tail.
 */
export const PLANTED_C: Planted[] = [
  // an expedite (earlier deadline) with no write-ahead, a crash after the exchange applied it, the fire unseen
  // (rare: seed 2 reaches it in 884 runs through the real driver; 40,000 runs on seed 11 took minutes)
  ["cover-without-ledger-rule", [2, "II"], 2_500, classicScenario, 2],
  // (cover-without-nonce-floor, shown on invariant 4 until issue 25, is no longer reached here: since a nonce
  // handed out before an answer verified the time is neither persisted nor held against the next run's, the
  // model no longer produces the sequence; 20,000 runs on each of seeds 11-14 found none. The rule it planted
  // against, that a covered push ends where a restart's nonces would start below it, is checked directly:
  // test/switch/ledger.test.ts, "coverage ends where a restart would start its nonces below this push's".)
  ["nonce-floor-compounds", 4],
];

/** The planted bugs of properties-planted-b.test.ts (issues 25, 40, 38 and 39's). */
export const PLANTED_B: Planted[] = [
  // issue 25: the erratic clock, the guesses, the record
  // (since issue 40's local clock offsets are drawn, seed 11 first finds it as IX: ready on a local clock ahead of
  // the exchange, the schedule held far ahead of its time)
  ["readiness-on-local", ["I", "IX"], 5_000, erratic],
  // issue 40: pushes and readiness on the local clock while nothing is verified (a clock ahead from the start)
  ["local-wins", "IX", 5_000, clockAhead],
  ["stop-at-count", "II"],
  // (issue 40: with no answer verifying the time by itself, seed 11's first find is a fresh record that shows
  // the wrongly assumed limit: 10 counted against 0 fires, invariant III)
  ["unrecognised-as-limit", ["II", "III"]],
  ["record-ignored", "III", 5_000, recordScenario],
  ["date-unbounded", ["IV", "II"], 5_000, erratic],
  // issue 38: an account an engine held waits at most the connect grace after a restart
  ["no-connect-grace", "V-grace"],
  // issue 39
  ["close-no-check", "VI", 2_000, escalationScenario],
  ["pass-not-written", "VII", 2_000, escalationScenario],
  ["close-first-dex-only", "VIII", 2_000, escalationScenario],
];

/** One test per planted bug: fast-check finds a failing sequence, and the invariant named catches it. */
export function plantedChecks(planted: Planted[]): void {
  describe("switch machine: each invariant catches its planted bug", { timeout: 60_000 }, () => {
    for (const [plant, invariant, runs = 5_000, scenarios = scenario, seed = 11] of planted) {
      // (each up to 2 min: on a loaded 2-core machine 40,000 runs take a minute; idle, a few seconds)
      test(`planted ${plant} → invariant ${invariant}`, { timeout: 120_000 }, async () => {
        const result = await fc.check(
          fc.asyncProperty(scenarios, async (s) => (await runScenario(s, plant)).violations.length === 0),
          // No shrinking: the first failing sequence is enough to name the invariant (shrinking took seconds).
          { numRuns: runs, seed, endOnFailure: true },
        );
        expect(result.failed, `planted ${plant} was not found`).toBe(true);
        const caught = (await runScenario(result.counterexample![0], plant)).violations.map(
          (v) => v.invariant,
        );
        const named = Array.isArray(invariant) ? invariant : [invariant];
        expect(
          caught.some((c) => named.includes(c)),
          `caught ${caught.join(",")}`,
        ).toBe(true);
      });
    }
  });
}
