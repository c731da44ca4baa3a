/**
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
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import type { SwitchConfig } from "../../src/switch/machine.js";
import { type Command, EngineWorld, type Plant, SWITCH_CFG, World } from "./world.js";

const CFG: SwitchConfig = SWITCH_CFG;

const STARTS = [
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
const scenario = scenarioOf(command);
/** Without the record: the rarer sequences of the older invariants are found in as many runs as before. */
const classicScenario = fc.record({
  start: fc.constantFrom(...STARTS),
  policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constantFrom(0, 0, 5, 9, 10),
  guessed: fc.constant(0),
  commands: fc.array(fc.oneof(...classic), { minLength: 1, maxLength: 40 }),
});
/** Unanswered pushes (applied or not), time, and truthful, fresh records: invariant 10's ground. */
const recordScenario = fc.record({
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

type Scenario = {
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
const escalationScenario: fc.Arbitrary<Scenario> = fc.record({
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

const erratic = fc.record({
  start: fc.constantFrom(...STARTS),
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
// `block` command: the HyperEVM's latest block off the exchange's time) are world inputs (test/switch/world.ts).
// The block's answers are drawn in the shared parts (`erratic`: mostly true, a second behind, or 12 h ahead / 2 h
// behind: a wrong RPC, a witness fault the world allows for as an erratic Date). The local clock's offset at start
// (±2 h, ±20 h, ±3 d) is drawn, for now, only by invariant IX's planted bug below and the replayed counterexamples:
// drawn in the shared parts it found (besides the push in flight lapsed on a candidate that would have refused it,
// fixed and replayed) double faults with no block witness, where an erratic Date and the wrong local clock leave no
// true candidate: a Date +20 h agreeing with a local clock +20 h verified by the exchange's acceptance
// (date+verdict: an acceptance bounds the exchange's time from above only; invariant IX), a Date 8.5 s behind left
// the only candidate once the verdicts ruled out a local clock 3 d behind (a lapse counted 9 s late; invariant 2),
// and a push planned before a Date moved the plan (invariant II). Still open: the report of issue 40's helper h40c.
/** The local clock ahead from the start, the answers true: what finding 1 of issue 40 was (invariant IX's plant). */
const clockAhead = fc.record({
  start: fc.constantFrom(...STARTS),
  policy: fc.constant("expedite" as const) as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constant(0),
  guessed: fc.constant(0),
  commands: fc.array(command, { minLength: 1, maxLength: 20 }),
  startWallOffsetMs: fc.constantFrom(7_200_000, 72_000_000, 259_200_000),
});
// ------------------------------------------------------------------------------------ end of issue 40's block

/** Runs one scenario; returns the violations (empty when every invariant held after every step). */
async function runScenario(
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

function explain(w: World): string {
  return `${w.violations.map((v) => `invariant ${v.invariant}: ${v.message}`).join("\n")}\ncommands:\n${w.trace.join("\n")}`;
}

// 4 x 2,000 + 1,000 (the escalation's, issue 39) + 1,000 (invariant V, issue 38) = 10,000 generated sequences per
// run (fast-check prints the seed and the shrunk path on failure).
// generous time-outs: a loaded CI machine can be several times slower than a laptop (a part takes ~2 s here)
//
// The seeds are fixed so that `npm test` and CI are deterministic. Counterexamples found with random seeds are kept
// below as fixed sequences ("counterexamples found, replayed"), each named with its seed. Hunting for more is
// `HL_PROPERTY_SEEDS=random npx vitest run test/switch/properties.test.ts`, which draws new seeds each run;
// one seed fast-check printed is replayed with `HL_PROPERTY_SEEDS=<seed>` (its 2,500 sequences, as one part).
const SEEDS = process.env.HL_PROPERTY_SEEDS ?? "";
const RANDOM_SEEDS = SEEDS === "random";
const GIVEN_SEED = /^-?\d+$/.test(SEEDS) ? Number(SEEDS) : null;
if (SEEDS !== "" && !RANDOM_SEEDS && GIVEN_SEED === null)
  throw new Error(`HL_PROPERTY_SEEDS must be "random" or an integer seed, not ${JSON.stringify(SEEDS)}`);
// (each part takes 12-16 s alone; the whole suite on a loaded 2-core machine runs it up to four times slower)
describe("switch machine: invariants hold after every step of random event sequences", {
  timeout: 120_000,
}, () => {
  for (const part of GIVEN_SEED === null ? [1, 2, 3, 4] : [1]) {
    const seed = GIVEN_SEED ?? (RANDOM_SEEDS ? undefined : 20_261_126 + part);
    test.prop([erratic], { numRuns: 2_000, ...(seed === undefined ? {} : { seed }) })(
      GIVEN_SEED === null
        ? `invariants 1-8, I-IV, IX, part ${part} of 4`
        : `invariants 1-8, I-IV, IX, seed ${GIVEN_SEED}`,
      async (s) => {
        const w = await runScenario(s);
        if (w.violations.length > 0) throw new Error(explain(w));
      },
      120_000,
    );
  }
});

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
const engineScenario = fc.record({
  start: fc.constant(STARTS[0]!),
  policy: fc.constantFrom("expedite", "lapse", "cancel") as fc.Arbitrary<SwitchConfig["onEngineDown"]>,
  used: fc.constant(0),
  guessed: fc.constant(0),
  commands: fc.array(engineCommand, { minLength: 1, maxLength: 30 }),
});

/** Runs one scenario of the engine's world (invariant V with the others). */
async function runEngineScenario({ start, policy, commands }: Scenario, plant: Plant = null) {
  const w = new EngineWorld({ ...CFG, onEngineDown: policy }, start, plant);
  await w.settle();
  for (const cmd of commands) {
    await w.apply(cmd);
    if (w.violations.length > 0) break;
  }
  return w;
}

describe("switch machine: invariant V (the engine's silence, the daemon's stalls)", {
  timeout: 120_000,
}, () => {
  const seed = GIVEN_SEED ?? (RANDOM_SEEDS ? undefined : 20_261_138);
  test.prop([engineScenario], { numRuns: 1_000, ...(seed === undefined ? {} : { seed }) })(
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
  test.prop([escalationScenario], { numRuns: 1_000, ...(seed === undefined ? {} : { seed }) })(
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

// Counterexamples fast-check found, shrunk, kept as fixed sequences (each failed before its fix).
describe("switch machine: counterexamples found, replayed", () => {
  const cases: [string, Scenario][] = [
    [
      // random seed hunt (HL_PROPERTY_SEEDS=random) after the block was drawn: the local clock stepped 10 min ahead
      // and back, the push planned meanwhile bumped to deadline + interval toward the later candidate; once the
      // exchange's acceptance verified the time, the next push was planned at deadline only and the exchange held a
      // deadline 15 s earlier than the confirmed one (invariant 3; on main as well; the same with a block 12 h
      // ahead)
      "a push bumped while unverified, the next one at deadline once verified (invariant 3)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "step", deltaMs: 600_000 },
          { c: "advance", ms: 6_000 },
          { c: "step", deltaMs: -600_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "respond", kind: "ok", applied: false },
        ],
      },
    ],
    [
      "a block 12 h ahead, a push bumped toward it, the next one at deadline once verified (invariant 3)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "block", offsetMs: 43_200_000 },
          { c: "advance", ms: 20_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "respond", kind: "ok", applied: false },
        ],
      },
    ],
    [
      // part 2 (seed 20261128) once the block's answers were drawn in the shared parts: a Date a day ahead, the local
      // clock stepped 10 min back (the earliest candidate). A "nonce too high" answer ruled the local clock out, but
      // the retry sent in the same step was planned on the times the step began with: 10 min short of the deadline
      // on what was left (invariant II; on main as well).
      "a Date a day ahead, the clock stepped back, a nonce-too-high verdict and a retry in the same step (invariant II)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "date", offsetMs: 86_400_000 },
          { c: "respond", kind: "refused", applied: false },
          { c: "step", deltaMs: -600_000 },
          { c: "advance", ms: 81_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 20_000 },
        ],
      },
    ],
    [
      // issue 40's offsets drawn in the shared parts (seed 20261128): the local clock 2 h behind from the start, the
      // first answer's Date true. The next push, planned on the earliest candidate (the local clock), was counted
      // lapsed on the latest (the Date) 5 s after it was asked for, although every candidate that would have taken
      // it (its time then at most cancel time − 5 s) was still 2 h short of its cancel time: a guess with nothing
      // able to fire, before its unknown outcome was known. The push in flight now lapses on such a candidate.
      "the local clock 2 h behind, a true Date, a push in flight planned on the local clock (invariant 2)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        startWallOffsetMs: -7_200_000,
        commands: [
          { c: "respond", kind: "refused", applied: false },
          { c: "advance", ms: 20_000 },
          { c: "respond", kind: "ok", applied: false },
        ],
      },
    ],
    [
      // random seed -1931838477 (issue 40's witnesses): a Date 148 s behind, nothing verified. Pushes planned on the
      // earliest candidate (that Date) were judged lapsed on the latest (the local clock, here the right one): the
      // first guess, for 11:59:01.5, named the confirmed 12:01:00 as its alternative. A record 60 s behind showed
      // 11:59:01.5 never held and withdrew the guess with its alternative, although the record is not fresh for
      // 12:01:00, which fired: the ledger 0, the exchange 1. The guess now stands for the alternative.
      "a Date 148 s behind, unanswered pushes, a record 60 s behind withdrawing a guess whose alternative fired (invariant 2)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "date", offsetMs: -148_001 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 68_000 },
          { c: "record", lagMs: 60_000, lie: "none" },
          { c: "advance", ms: 20_000 },
          { c: "ghost" },
        ],
      },
    ],
    [
      // random seed 842085083: no answer until 00:00:38 (every push timed out), so nothing verified and the ledger
      // stayed on Jan 1; the pending 00:00:00 deadline was guessed for Jan 2 (`later`). A fresh, truthful record
      // read on Jan 2 changed nothing ("another day"), leaving the Jan 2 guess the record shows never held: 1
      // counted against 0 fires. A record read on a later day now settles the guesses kept for it.
      "a ledger left on Jan 1 by an unverified clock, a Jan 2 guess, a fresh Jan 2 record (invariant III)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "advance", ms: 121_464 },
          { c: "date", offsetMs: -86_438_001 },
          { c: "advance", ms: 6_536 },
          { c: "respond", kind: "ok", applied: false },
          { c: "record", lagMs: 0, lie: "none" },
          { c: "engine", up: false },
        ],
      },
    ],
    [
      // random seed 2117239909: 9 triggers used, the first push applied with its answer lost, the local clock
      // stepped 10 min back (the earliest candidate). The next push, planned on it, was guessed lapsed with the lost
      // push's 12:01:00 as its alternative; a fresh record showed the guessed deadline never held and withdrew the
      // guess, and the 12:01:00 fire it listed with orders took one of the 9 counts of unrecorded proof (`slot`):
      // the ledger 9, the exchange 10. The guess now stands for 12:01:00, and the record upgrades it to `orders`.
      "9 used, a lost answer applied, the clock stepped back, a record showing the alternative's fire (invariant 2)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 9,
        guessed: 0,
        commands: [
          { c: "respond", kind: "lost", applied: true },
          { c: "step", deltaMs: -600_000 },
          { c: "advance", ms: 62_501 },
          { c: "record", lagMs: 0, lie: "none" },
          { c: "respond", kind: "ok", applied: false },
        ],
      },
    ],
    [
      // seed 20261139 (the escalation's part) after h39 and h40 merged: the engine down 10 s, an expedite push 5.5 s
      // ahead; the answer's Date (± 2.5 s) put the latest candidate past its cancel time before the exchange refused
      // it as too early, and the lapse was counted; the first push's unknown outcome then counted at its own time:
      // 2 against 0 fires, beyond one per unknown outcome.
      "an expedite push's cancel time passed on the latest candidate before its too-early answer (invariant 2)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "cancel",
        used: 0,
        guessed: 0,
        escalation: true,
        dexes: [""],
        commands: [
          { c: "engine", up: false },
          { c: "advance", ms: 10_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 11_653 },
          { c: "advance", ms: 35_847 },
        ],
      },
    ],
    [
      // the world on the real driver: the local clock 10 min behind across 00:00. The record withdrew the ledger's
      // Jan 1 guess but not the four Jan 2 guesses kept for their own day (`later`): 4 counted against 0 fires.
      "the local clock 10 min behind across 00:00, guesses kept for Jan 2, then a truthful record (invariant III)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "step", deltaMs: -600_000 },
          { c: "advance", ms: 280_726 },
          { c: "advance", ms: 4_274 },
          { c: "respond", kind: "ok", applied: false },
          { c: "record", lagMs: 0, lie: "none" },
        ],
      },
    ],
    [
      // random seed -2125712987 (the world on the real driver): a lying record counts ten lapses, the local clock
      // steps 90 s ahead across 00:00, then a truthful fresh record is read. It was dated on the later clock
      // (Jan 2) and judged "another day" against the ledger's Jan 1: the lie stayed counted (10 against 0 fires).
      "a lying record, the local clock stepped past 00:00, then a truthful record (invariant III)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "respond", kind: "ok", applied: false },
          { c: "record", lagMs: 0, lie: "fake-lapses" },
          { c: "step", deltaMs: 90_000 },
          { c: "record", lagMs: 0, lie: "none" },
          { c: "date", offsetMs: 0, absurd: Number.NaN },
        ],
      },
    ],
    [
      // random seed 39614632, after the fix above: the same, with a push confirmed after the lost push's deadline
      // had passed. That late push was taken as the replacement of the lost one, so the lost push's lapse was
      // never counted once the record withdrew the guess: the ledger 0, the exchange 1.
      "a lost answer, silence past its deadline, a push confirmed too late, then a record 60 s behind (invariant 2)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "crash", applied: true },
          { c: "advance", ms: 12_530 },
          { c: "respond", kind: "lost", applied: true },
          { c: "advance", ms: 4_329 },
          { c: "advance", ms: 72_141 },
          { c: "respond", kind: "ok", applied: false },
          { c: "record", lagMs: 60_000, lie: "none" },
          { c: "exchange", down: false },
        ],
      },
    ],
    [
      // random seed 39614632: a crash with a push in flight applied, the restart's first push applied with its
      // answer lost, the exchange silent past both deadlines, then a record 60 s behind. The record lists the
      // lost push accepted before the confirmed deadline, so the guess for that deadline is withdrawn and the
      // replacing push becomes a possible deadline; but that deadline had already passed when the record came,
      // and no lapse was counted for it: the ledger 0, the exchange 1.
      "a lost answer, silence past both deadlines, then a record 60 s behind (invariants 2, III)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "crash", applied: true },
          { c: "advance", ms: 6_000 },
          { c: "respond", kind: "lost", applied: true },
          { c: "advance", ms: 62_501 },
          { c: "record", lagMs: 60_000, lie: "none" },
          { c: "exchange", down: false },
        ],
      },
    ],
    [
      // part 3, seed 1601749410: a restart on a wall clock stepped 10 min back counts its lapses on that clock
      // (Jan 1); the first answer's Date, applied unverified, puts the exchange's time past 00:00, where the
      // exchange fired the push in flight at the crash. The lapse was not judged on that sample (only a verified
      // one), and once judged the Jan 2 candidate was folded into a Jan 1 guess: Jan 2 counted 0, the exchange 1
      // (2), and the Jan 1 record then withdrew that guess.
      "a restart on a clock 10 min behind, an unverified Date past 00:00, then the record (invariants 2, III)",
      {
        start: Date.UTC(2026, 0, 1, 23, 50, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "advance", ms: 174_773 },
          { c: "advance", ms: 189_728 },
          { c: "respond", kind: "5xx", applied: false },
          { c: "advance", ms: 177_000 },
          { c: "step", deltaMs: -600_000 },
          { c: "crash", applied: true },
          { c: "advance", ms: 85_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "record", lagMs: 0, lie: "none" },
        ],
      },
    ],
    [
      // seed 1485887696: the daily-limit refusal, answered while the local clock stood 10 min ahead past 00:00,
      // was dated on that clock's day (Jan 2): after a restart the pushes were held through the exchange's Jan 2
      "the daily-limit refusal with the local clock stepped past 00:00, a crash (invariant II)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        policy: "expedite",
        used: 10,
        guessed: 0,
        commands: [
          { c: "step", deltaMs: 600_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "crash", applied: false },
          { c: "advance", ms: 105_000 },
          { c: "record", lagMs: 0, lie: "none" },
        ],
      },
    ],
    [
      // seed -1481053301: the same refusal answered right after a restart on that clock (unanswered, so the
      // ledger still on Jan 1): dated by the day clock alone it was still Jan 2
      "the daily-limit refusal after a restart on a clock stepped past 00:00 (invariant II)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        policy: "expedite",
        used: 10,
        guessed: 0,
        commands: [
          { c: "step", deltaMs: 600_000 },
          { c: "crash", applied: false },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 89_727 },
          { c: "advance", ms: 15_273 },
        ],
      },
    ],
    [
      // seed -276348626: the restart on that clock counted the pending 00:00 deadline on Jan 2 (its day by the
      // clock it had), and a refusal then came before any answer verified the time
      "the daily-limit refusal before any answer verified a restart's clock (invariant II)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        policy: "expedite",
        used: 10,
        guessed: 0,
        commands: [
          { c: "advance", ms: 60_000 },
          { c: "step", deltaMs: 600_000 },
          { c: "crash", applied: false },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 45_000 },
        ],
      },
    ],
    [
      // seed -1588713902: after a restart the first answer's Date, 3 s behind (within the 5 s that raises no
      // clock.suspect), became the exchange estimate; readiness was judged on it alone, so the schedule looked 3 s
      // further ahead than it was on the local clock (here the right one): ready with 27.5 s held, margin 30 s.
      "ready on a Date 3 s behind after a crash and two answers (invariant I)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "date", offsetMs: -3_000 },
          { c: "advance", ms: 159_501 },
          { c: "crash", applied: false },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 315_001 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 29_500 },
          { c: "engine", up: true },
        ],
      },
    ],
    [
      // seed 1596622753: a Date 123 s ahead (unverified, taken as it moves the time forward; the clocks bridged)
      // made the lapse of a push pending from 00:00 judged at 23:57:54 on the local clock; counting it rolled the
      // ledger to Jan 2 on the exchange estimate alone, and Jan 1's count (with the fire the exchange did make at
      // 23:51) went into the history: 0 today by the local clock, the exchange 1.
      "a Date 123 s ahead, a graceful stop's removal, an answer, a lapse at 00:00 on that Date (invariant 2)",
      {
        start: Date.UTC(2026, 0, 1, 23, 50, 0),
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "date", offsetMs: 122_718 },
          { c: "shutdown", mode: "remove" },
          { c: "advance", ms: 12_822 },
          { c: "advance", ms: 3_460 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 363_442 },
          { c: "advance", ms: 6_678 },
          { c: "advance", ms: 81_239 },
        ],
      },
    ],
  ];
  for (const [name, s] of cases)
    test(name, async () => {
      const w = await runScenario(s);
      expect(w.violations, explain(w)).toEqual([]);
    });
});

// Every invariant must be able to fail: each planted bug is found by fast-check (and by the invariant named).
describe("switch machine: each invariant catches its planted bug", { timeout: 60_000 }, () => {
  // [plant, invariant, runs, scenarios, seed]: a bug that needs a rarer sequence gets more runs (each is still
  // seconds), or the commands that reach it
  // (a plant that breaks time also shortens the pushes on the wrong clock: II may name it first)
  const planted: [Plant, number | string | (number | string)[], number?, fc.Arbitrary<Scenario>?, number?][] =
    [
      ["pending-as-armed", 1],
      ["forget-trigger", 2],
      ["no-gate", 3],
      ["nonce-from-wall", 4],
      ["push-when-exhausted", 5],
      ["fast-recheck", 6],
      ["removal-ignored", 7],
      ["day-from-wall", [8, "II"]],
      // an expedite (earlier deadline) with no write-ahead, a crash after the exchange applied it, the fire unseen
      // (rare: seed 2 reaches it in 884 runs through the real driver; 40,000 runs on seed 11 took minutes)
      ["cover-without-ledger-rule", [2, "II"], 2_500, classicScenario, 2],
      // (cover-without-nonce-floor, shown on invariant 4 until issue 25, is no longer reached here: since a nonce
      // handed out before an answer verified the time is neither persisted nor held against the next run's, the
      // model no longer produces the sequence; 20,000 runs on each of seeds 11-14 found none. The rule it planted
      // against, that a covered push ends where a restart's nonces would start below it, is checked directly:
      // test/switch/ledger.test.ts, "coverage ends where a restart would start its nonces below this push's".)
      ["nonce-floor-compounds", 4],
      // issue 25: the erratic clock, the guesses, the record
      ["readiness-on-local", "I", 5_000, erratic],
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
  for (const [plant, invariant, runs = 5_000, scenarios = scenario, seed = 11] of planted) {
    // (each up to 2 min: on a loaded 2-core machine 40,000 runs take a minute; idle, a few seconds)
    test(`planted ${plant} → invariant ${invariant}`, { timeout: 120_000 }, async () => {
      const result = await fc.check(
        fc.asyncProperty(scenarios, async (s) => (await runScenario(s, plant)).violations.length === 0),
        // No shrinking: the first failing sequence is enough to name the invariant (shrinking took seconds).
        { numRuns: runs, seed, endOnFailure: true },
      );
      expect(result.failed, `planted ${plant} was not found`).toBe(true);
      const caught = (await runScenario(result.counterexample![0], plant)).violations.map((v) => v.invariant);
      const named = Array.isArray(invariant) ? invariant : [invariant];
      expect(
        caught.some((c) => named.includes(c)),
        `caught ${caught.join(",")}`,
      ).toBe(true);
    });
  }
});
