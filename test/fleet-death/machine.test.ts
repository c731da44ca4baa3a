/**
 * The passes of a simultaneous death (src/fleet-death/machine.ts), its invariants over random histories: never a
 * pass for an account whose engine is up; every dead account's first pass runs or falls back, never neither; the
 * first passes of one decision go in risk order and none waiting outranks one that ran; the weight issued in any
 * window never exceeds the budget (and a repeated pass never spends the room kept for the live engines). Replay one seed with HL_PROPERTY_SEEDS=<seed>.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { AccountRisk } from "../../src/config/weight.js";
import {
  type DeathCommand,
  type DeathInput,
  type DeathModel,
  initialDeath,
  riskOrder,
  step,
} from "../../src/fleet-death/machine.js";

const WINDOW = 60_000;
const ACCOUNTS = ["a", "b", "c", "d", "e", "f"];
const seeds = process.env.HL_PROPERTY_SEEDS?.split(",").map(Number);
const runs = seeds ? { seed: seeds[0], numRuns: 1 } : { numRuns: 300 };

type Op =
  | { op: "engine"; account: string; up: boolean }
  | { op: "risk"; account: string; distance: number | null; notional: number }
  | { op: "ask"; account: string; inTime: number; confirm: number; within: number }
  | { op: "answer"; account: string; confirmed: boolean }
  | { op: "confirmAsked"; account: string }
  | { op: "tick"; advance: number }
  /** a host's death: every account's engine down at once, and each asks for its pass */
  | { op: "hostDeath"; within: number; known: boolean };

const account = fc.constantFrom(...ACCOUNTS);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("engine" as const), account, up: fc.boolean() }),
  fc.record({
    op: fc.constant("risk" as const),
    account,
    distance: fc.option(fc.integer({ min: 0, max: 50 }).map((x) => x / 100)),
    notional: fc.integer({ min: 0, max: 1_000_000 }),
  }),
  fc.record({
    op: fc.constant("ask" as const),
    account,
    inTime: fc.constantFrom(2, 22, 44),
    confirm: fc.constantFrom(20, 40),
    within: fc.integer({ min: 0, max: 240_000 }),
  }),
  fc.record({ op: fc.constant("answer" as const), account, confirmed: fc.boolean() }),
  fc.record({ op: fc.constant("confirmAsked" as const), account }),
  fc.record({ op: fc.constant("tick" as const), advance: fc.integer({ min: 0, max: 30_000 }) }),
  fc.record({
    op: fc.constant("hostDeath" as const),
    within: fc.integer({ min: 0, max: 240_000 }),
    known: fc.boolean(),
  }),
);

/** Plays a history through the machine, checking every step; at the end, time runs on until nothing waits. */
function play(budget: number, reserveEach: number, ops: Op[]) {
  let m: DeathModel = initialDeath({ budget, windowMs: WINDOW, reserveEach });
  let now = 0;
  let confirmId = 0;
  const up = new Map(ACCOUNTS.map((a) => [a, true]));
  const issued: { at: number; weight: number }[] = [];
  /** the first asks made while the engine was down, not yet answered by a run, fallback or drop */
  const unresolved = new Set<string>();
  const running = new Set<string>();
  const check = (input: DeathInput, commands: DeathCommand[], before: DeathModel) => {
    const ranFirst: string[] = [];
    for (const c of commands) {
      if (c.kind === "run" || (c.kind === "confirm" && c.go)) {
        // never a pass (nor its read) for an account whose engine is up
        expect(up.get(c.account), `${c.kind} for ${c.account} whose engine is up`).toBe(false);
        issued.push({ at: now, weight: c.weight });
      }
      if (c.kind === "run" && !c.repeat) ranFirst.push(c.account);
      if (c.kind === "run" || c.kind === "fallback" || c.kind === "drop") {
        unresolved.delete(c.account);
        if (c.kind === "run") running.add(c.account);
      }
    }
    // the budget: the weight issued in any window ending now
    const inWindow = issued.filter((e) => e.at > now - WINDOW).reduce((s, e) => s + e.weight, 0);
    expect(inWindow, `weight ${inWindow} in a window, budget ${budget}`).toBeLessThanOrEqual(budget);
    // a repeated pass never spends the room kept for the live engines' next death
    if (commands.some((c) => c.kind === "run" && c.repeat)) {
      const live = Object.values(before.accounts).filter((x) => !x.down).length;
      expect(inWindow, "a repeat spent the live engines' room").toBeLessThanOrEqual(
        budget - live * reserveEach,
      );
    }
    if (input.type === "tick" && ranFirst.length > 0) {
      // risk order: the first passes of one decision in the order of their risk...
      const asks = before.waiting.filter((w) => ranFirst.includes(w.account));
      expect(ranFirst).toEqual(riskOrder(before, asks).map((a) => a.account));
      // ...and none still waiting outranks the last that ran
      const last = ranFirst[ranFirst.length - 1]!;
      for (const w of m.waiting.filter((x) => !x.repeat)) {
        const order = riskOrder(m, [w, { account: last }]).map((x) => x.account);
        expect(order[0], `${w.account} waits while ${last}, of lower risk, ran`).toBe(last);
      }
    }
  };
  const feed = (input: DeathInput) => {
    const before = m;
    const r = step(m, input, now);
    m = r.model;
    check(input, r.commands, before);
    return r;
  };
  let wakeAt: number | null = null;
  for (const o of ops) {
    switch (o.op) {
      case "engine":
        up.set(o.account, o.up);
        if (o.up) unresolved.delete(o.account);
        feed({ type: "engine", account: o.account, up: o.up });
        break;
      case "risk":
        feed({
          type: "risk",
          risk: { account: o.account, liquidationDistance: o.distance, notional: o.notional } as AccountRisk,
        });
        break;
      case "ask":
        // a switch asks only while its engine is down and no pass of its own runs
        if (up.get(o.account) || running.has(o.account)) break;
        if (!m.accounts[o.account]?.confirmed) unresolved.add(o.account);
        feed({
          type: "ask",
          account: o.account,
          giveUpAt: now + o.within,
          cost: { inTime: o.inTime, confirm: o.confirm },
        });
        break;
      case "answer":
        if (!running.has(o.account)) break;
        running.delete(o.account);
        feed({ type: "answered", account: o.account, confirmed: o.confirmed });
        break;
      case "confirmAsked":
        if (!running.has(o.account)) break;
        feed({ type: "confirmAsked", account: o.account, id: confirmId++, weight: 20 });
        break;
      case "hostDeath":
        for (const a of ACCOUNTS) {
          up.set(a, false);
          feed({ type: "engine", account: a, up: false });
          if (running.has(a)) continue;
          if (!m.accounts[a]?.confirmed) unresolved.add(a);
          feed({
            type: "ask",
            account: a,
            giveUpAt: now + o.within,
            cost: o.known ? { inTime: 2, confirm: 20 } : { inTime: 22, confirm: 20 },
          });
        }
        break;
      case "tick":
        now += o.advance;
        wakeAt = feed({ type: "tick" }).wakeAt;
        break;
    }
  }
  // time runs on: every wake-up asked for is honoured until nothing waits
  wakeAt = feed({ type: "tick" }).wakeAt;
  for (let i = 0; i < 1_000 && wakeAt !== null; i++) {
    now = Math.max(now, wakeAt);
    wakeAt = feed({ type: "tick" }).wakeAt;
  }
  // never neither: every first ask made while the engine was down ran, fell back, or was dropped (engine up)
  expect([...unresolved], "dead accounts left with neither a pass nor a fallback").toEqual([]);
}

describe("the passes of a simultaneous death (property)", () => {
  test("invariants: engine up never passed, none left unprotected, risk order, the budget", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 50, max: 400 }),
        fc.constantFrom(0, 22, 42),
        fc.array(op, { minLength: 1, maxLength: 120, size: "max" }),
        (budget, reserveEach, ops) => play(budget, reserveEach, ops),
      ),
      runs,
    );
  });
});

describe("the passes of a simultaneous death (examples)", () => {
  // (the bench's 10 accounts at 1 s repeated their passes each second while their engines stayed down, filled the
  // minute, and the next death's passes fell back: 4 triggers)
  test("behavior: repeated passes keep a whole pass of room for every live engine", () => {
    let m = initialDeath({ budget: 100, windowMs: WINDOW, reserveEach: 42 });
    m = step(m, { type: "engine", account: "live", up: true }, 0).model;
    m = step(m, { type: "engine", account: "dead", up: false }, 0).model;
    m = step(m, { type: "answered", account: "dead", confirmed: true }, 0).model;
    for (let i = 0; i < 5; i++) {
      m = step(
        m,
        { type: "ask", account: "dead", giveUpAt: 50_000, cost: { inTime: 22, confirm: 0 } },
        i,
      ).model;
      const r = step(m, { type: "tick" }, i);
      m = r.model;
      if (i < 2) expect(r.commands).toEqual([{ kind: "run", account: "dead", weight: 22, repeat: true }]);
      // 44 spent: one more (66) would leave less than the live engine's 42
      else expect(r.commands).toEqual([]);
    }
  });

  // (a give-up already passed made every pass fall back: a short deadline turned a cheap cancel into a trigger)
  test("behavior: a give-up time already passed: a pass the window affords now still runs, one that would wait falls back", () => {
    let m = initialDeath({ budget: 50, windowMs: WINDOW, reserveEach: 42 });
    for (const a of ["a", "b"]) {
      m = step(m, { type: "engine", account: a, up: false }, 1_000).model;
      m = step(m, { type: "ask", account: a, giveUpAt: 0, cost: { inTime: 22, confirm: 20 } }, 1_000).model;
    }
    const r = step(m, { type: "tick" }, 1_000);
    expect(r.commands.map((c) => `${c.kind} ${c.account}`)).toEqual(["fallback b", "run a"]);
  });

  test("behavior: a host's death, 5 accounts, room for 3 whole passes: risk order, then the fallbacks at once", () => {
    let m = initialDeath({ budget: 130, windowMs: WINDOW, reserveEach: 42 });
    const risks: AccountRisk[] = [
      { account: "a", liquidationDistance: null, notional: 10 },
      { account: "b", liquidationDistance: 0.05, notional: 10 },
      { account: "c", liquidationDistance: 0.2, notional: 900 },
      { account: "d", liquidationDistance: 0.2, notional: 100 },
    ];
    for (const r of risks) m = step(m, { type: "risk", risk: r }, 0).model;
    for (const a of ["a", "b", "c", "d", "e"]) {
      m = step(m, { type: "engine", account: a, up: false }, 0).model;
      m = step(m, { type: "ask", account: a, giveUpAt: 40_000, cost: { inTime: 22, confirm: 20 } }, 0).model;
    }
    const r = step(m, { type: "tick" }, 0);
    // 130 before the give-up: three whole passes (42 each) in risk order; a (no liquidation) and e (unknown risk)
    // fall back at once instead of retrying into 429s
    expect(r.commands.map((c) => `${c.kind} ${c.account}`)).toEqual([
      "fallback a",
      "fallback e",
      "run b",
      "run c",
      "run d",
    ]);
    expect(r.model.owed).toEqual({ b: 20, c: 20, d: 20 });
    expect(r.model.waiting).toEqual([]);
  });

  test("behavior: what cannot be afforded before the give-up time falls back at once, lowest risk first", () => {
    let m = initialDeath({ budget: 100, windowMs: WINDOW, reserveEach: 42 });
    m = step(m, { type: "risk", risk: { account: "a", liquidationDistance: 0.01, notional: 1 } }, 0).model;
    for (const a of ["a", "b", "c", "d"]) {
      m = step(m, { type: "engine", account: a, up: false }, 0).model;
      m = step(m, { type: "ask", account: a, giveUpAt: 30_000, cost: { inTime: 42, confirm: 20 } }, 0).model;
    }
    const r = step(m, { type: "tick" }, 0);
    // 100 in the window before the give-up: a (the nearest liquidation) has its 62; b, c, d cannot: fall back now
    expect(r.commands.map((c) => `${c.kind} ${c.account}`)).toEqual([
      "fallback b",
      "fallback c",
      "fallback d",
      "run a",
    ]);
    // a's confirming read goes once asked, within the budget
    m = step(r.model, { type: "confirmAsked", account: "a", id: 1, weight: 20 }, 10).model;
    const c = step(m, { type: "tick" }, 10);
    expect(c.commands).toEqual([{ kind: "confirm", id: 1, account: "a", go: true, weight: 20 }]);
  });
});
