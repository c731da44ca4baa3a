/**
 * The switch's property tests: the counterexamples fast-check found, replayed as fixed sequences (properties-shared.ts
 * says what is checked).
 */
import { describe, expect, test } from "vitest";
import { explain, runScenario, type Scenario } from "./properties-shared.js";

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
    // ----------------------------------------------------------------------------------------------------------
    // Issue 40: the local clock's offset at start drawn in the shared parts (`erratic`).
    [
      // part 3 (seed 20261129): the local clock 3 d ahead from the start, 23:58:30. The exchange refused the first
      // push's nonce as too high, naming its time + 1 day, but only the lower bound of that verdict was taken (the
      // upper one asked for the push in flight after the step had let it go): the local clock stayed the latest
      // candidate, every push planned on the Date was counted lapsed at once on it, kept for the clock's Jan 5, and
      // the guesses for the exchange's Jan 2 pushed out of the eight kept (Jan 2's count went from 8 to 7:
      // invariant 8). Rule: a verdict bounds the exchange's time; "nonce too high" from above too. Fix: the bound is
      // taken with the push in flight (time-step.ts `verdictOf`; the next case's fix alone also keeps Jan 2's).
      "the local clock 3 d ahead, a nonce-too-high answer, a crash at 23:59 (invariant 8)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        startWallOffsetMs: 259_200_000,
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 57_000 },
          { c: "crash", applied: false },
          { c: "advance", ms: 60_000 },
          { c: "date", offsetMs: 0, absurd: Number.NaN },
        ],
      },
    ],
    [
      // part 2 (seed 20261128): the same clock, a crash before any answer verified the time and a step 90 s ahead:
      // the restart has only the local clock (3 d ahead), and every unanswered push was guessed lapsed for Jan 5;
      // the ninth such guess pushed the one kept for the exchange's Jan 2 out of the eight the ledger keeps for later
      // days, and Jan 2's count went from 1 to 0 (invariant 8). Rule: never under-count. Fix: full, the guesses for
      // the soonest days are kept, the furthest dropped (ledger-model.ts `keptLater`).
      "the local clock 3 d ahead, a crash, a step: guesses for the clock's day crowd out the exchange's (invariant 8)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        startWallOffsetMs: 259_200_000,
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "advance", ms: 20_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 10_000 },
          { c: "crash", applied: false },
          { c: "step", deltaMs: 90_000 },
          { c: "advance", ms: 100_500 },
        ],
      },
    ],
    [
      // part 3 (seed 20261129) after the first fix: the same, through a graceful stop (invariant 8: 6 to 5).
      "the local clock 3 d ahead, a graceful stop, no answer: guesses for the clock's day (invariant 8)",
      {
        start: Date.UTC(2026, 0, 1, 23, 58, 30),
        startWallOffsetMs: 259_200_000,
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 308_527 },
          { c: "advance", ms: 6_473 },
          { c: "shutdown", mode: "keep" },
          { c: "advance", ms: 185_500 },
        ],
      },
    ],
    [
      // the hunt's double fault with a true block: the local clock and the Date 20 h ahead, the block true. The first
      // push, planned on the local clock before the block came, was accepted (the exchange takes cancel times a day
      // ahead), and the Date agreeing with its plan was verified by that acceptance: ready with the schedule 20 h
      // ahead (invariant IX). Rule: an acceptance bounds the exchange's time from above only, and a witness that
      // disagrees (the block) is not overruled by it. Fix: no Date+verdict verification while the block disagrees
      // (exchange-time.ts `agreeingVerdict`); the plan goes to the earliest candidate, the block.
      "the local clock and the Date 20 h ahead, a true block, the first push accepted (invariant IX)",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        startWallOffsetMs: 72_000_000,
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "block", offsetMs: 0 },
          { c: "date", offsetMs: 72_000_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 20_000 },
          { c: "respond", kind: "ok", applied: false },
        ],
      },
    ],
    [
      // the same with no block: the Date and the local clock 20 h ahead are all there is (the exchange's verdicts
      // bound its time from one side each, and it accepts cancel times and nonces a day ahead). No design can know
      // the exchange's time here: the world's assumption (world.ts `blind`) is that IX is checked only while an
      // outside witness is true whenever the local clock is off; every other invariant is checked.
      "the local clock and the Date 20 h ahead, no block: blind, IX not asserted, the others hold",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        startWallOffsetMs: 72_000_000,
        policy: "expedite",
        used: 0,
        guessed: 0,
        commands: [
          { c: "date", offsetMs: 72_000_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 20_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "advance", ms: 80_000 },
        ],
      },
    ],
    [
      // random seed 108: the same with 9 triggers used: the time verified 20 h ahead rolled the ledger to Jan 2 and
      // put the 9 in the history, while the exchange counts them on Jan 1. Nothing tells the day here either: under
      // the same assumption invariant 2's lower bound is not checked (its upper bound, and 8, still are).
      "the local clock and the Date 20 h ahead, no block, 9 used: blind, the day rolled on them",
      {
        start: Date.UTC(2026, 0, 1, 12, 0, 0),
        startWallOffsetMs: 72_000_000,
        policy: "expedite",
        used: 9,
        guessed: 0,
        commands: [
          { c: "date", offsetMs: 72_000_000 },
          { c: "respond", kind: "ok", applied: false },
          { c: "date", offsetMs: 0 },
          { c: "advance", ms: 20_000 },
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

// Issue 40: the world's assumption (world.ts `blind`) is taken only where no outside witness was true while the local
// clock was off; one true witness (a block, or the Date) keeps every invariant checked.
describe("issue 40: blind only after a double fault with no true witness", () => {
  const base = { start: Date.UTC(2026, 0, 1, 12, 0, 0), policy: "expedite" as const, used: 0, guessed: 0 };
  const answers = [
    { c: "respond", kind: "ok", applied: false },
    { c: "advance", ms: 20_000 },
    { c: "respond", kind: "ok", applied: false },
  ] as const;
  test.each([
    [
      "the local clock and the Date 20 h ahead, no block",
      72_000_000,
      [{ c: "date", offsetMs: 72_000_000 }],
      true,
    ],
    [
      "the local clock 2 h behind, the Date 12 h ahead",
      -7_200_000,
      [{ c: "date", offsetMs: 43_200_000 }],
      true,
    ],
    [
      "the same with a true block",
      72_000_000,
      [
        { c: "block", offsetMs: 0 },
        { c: "date", offsetMs: 72_000_000 },
      ],
      false,
    ],
    ["the local clock 20 h ahead, the Date true", 72_000_000, [], false],
    ["the Date 20 h ahead, the local clock true", 0, [{ c: "date", offsetMs: 72_000_000 }], false],
  ] as [string, number, Scenario["commands"], boolean][])("%s", async (_name, offset, first, blind) => {
    const w = await runScenario({ ...base, startWallOffsetMs: offset, commands: [...first, ...answers] });
    expect(w.violations, explain(w)).toEqual([]);
    expect(w.blind).toBe(blind);
  });
});
