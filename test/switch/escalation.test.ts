/**
 * The escalation ladder in the switch machine (src/switch/escalation.ts): one row per rule of docs/operations.md
 * "When cancelling is not enough". Pure steps: no clock, no sockets, no disk.
 */
import { describe, expect, test } from "vitest";
import type { EscalationConfig } from "../../src/core/feature.js";
import { ENGINE_BACK } from "../../src/escalation/index.js";
import { logLineOf } from "../../src/surface/switch/index.js";
import { closeHold } from "../../src/switch/features.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import {
  type Event,
  initialModel,
  type Now,
  type SwitchConfig,
  type SwitchModel,
  status,
} from "../../src/switch/machine.js";
import { escOf, wakeOf } from "./features.js";
import { type ReadyView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });
const ESC: EscalationConfig = {
  afterDownMs: 120_000,
  liquidationPct: 5,
  drawdownPct: 10,
  notionalCapUsd: 500_000,
  retryMs: 30_000,
};
const CFG: SwitchConfig = { ...SWITCH_CFG, onEngineDown: "cancel", escalation: ESC };

class Run {
  model: SwitchModel;
  ready: ReadyView = { mustSync: false, effects: [], events: [], wakeAt: null };
  id = 1;
  constructor(cfg: Partial<SwitchConfig> = {}, entry = newEntry(CFG.account, T0, { limit: 10 })) {
    this.model = initialModel({ ...CFG, ...cfg }, entry);
  }
  /** one event; a push it sends is answered (confirmed) at once, so that the pipeline is free for the next */
  on(event: Event, ms: number) {
    const ready = this.#step(event, ms);
    if (ready.send?.kind === "push")
      this.#step({ type: "pushConfirmed", id: ready.send.id, latencyMs: 5 }, ms);
    this.ready = ready;
    return ready;
  }
  #step(event: Event, ms: number) {
    let ready: ReadyView;
    ({ model: this.model, ready } = step(this.model, event, at(ms)));
    return ready;
  }
  /** started, one push confirmed, the engine's orders cancelled after its death at `downAt` */
  armedThenDown(
    downAt: number,
    exposure?: { accountValue: number; notionalUsd: number; minLiquidationPct: number | null },
  ) {
    this.on({ type: "start" }, 0);
    if (exposure) this.on({ type: "exposure", ...exposure }, 20);
    this.on({ type: "engine", up: false, detail: "closed" }, downAt);
    return this.on({ type: "ordersCancelled", confirmed: true, cancelled: 3, kept: 0 }, downAt + 30);
  }
  logs(r = this.ready) {
    return r.events.map(logLineOf).flatMap((l) => (l ? [l.event] : []));
  }
}
const FIG = { accountValue: 10_000, notionalUsd: 40_000, minLiquidationPct: 30 };

describe("escalation: step 2 closes the positions, the account latched HALTED", () => {
  test("the engine down for afterDownMs: HALTED on disk before the close leaves, then the close", () => {
    const r = new Run();
    r.armedThenDown(1_000, FIG);
    // not before the time
    expect(r.on({ type: "tick" }, 100_000).closePositions).toBeUndefined();
    expect(wakeOf(r.model).escalate).toBe(121_000);
    const ready = r.on({ type: "wake" }, 121_000);
    expect(ready.closePositions).toEqual({ reason: expect.stringContaining("down for 120 s"), pass: 1 });
    // the latch is in the entry, written ahead (mustSync) of the close in the same ReadyView
    expect(ready.entry?.halted).toEqual({
      since: T0 + 121_000,
      reason: expect.any(String),
      closing: "open",
      pass: 1,
    });
    expect(ready.mustSync).toBe(true);
    expect(r.logs(ready)).toContain("escalation.halted");
    expect(status(r.model, at(121_000)).halted).toMatchObject({ since: T0 + 121_000 });
  });

  test("a rule over the exposure poll while the engine is down: liquidation, drawdown, notional", () => {
    const liq = new Run();
    liq.armedThenDown(1_000, FIG);
    const a = liq.on({ type: "exposure", ...FIG, minLiquidationPct: 4.2 }, 5_000);
    expect(a.closePositions?.reason).toBe("a position is 4.2 % from liquidation (limit 5 %)");

    const dd = new Run();
    dd.armedThenDown(1_000, FIG);
    expect(dd.on({ type: "exposure", ...FIG, accountValue: 9_100 }, 5_000).closePositions).toBeUndefined();
    const b = dd.on({ type: "exposure", ...FIG, accountValue: 8_900 }, 6_000);
    expect(b.closePositions?.reason).toBe(
      "the account value is down 11 % from 10000 USD when the engine went down (limit 10 %)",
    );

    const cap = new Run();
    cap.armedThenDown(1_000, FIG);
    expect(cap.on({ type: "exposure", ...FIG, notionalUsd: 600_000 }, 5_000).closePositions?.reason).toBe(
      "the total notional is 600000 USD (cap 500000 USD)",
    );
  });

  test("the engine down before any poll (a restart, an engine that never connected): the first poll after its death is the drawdown's baseline", () => {
    const r = new Run({ escalation: { ...ESC, afterDownMs: null } });
    r.armedThenDown(1_000);
    expect(escOf(r.model).baseline).toBeNull();
    expect(r.on({ type: "exposure", ...FIG }, 2_000).closePositions).toBeUndefined();
    expect(escOf(r.model).baseline).toBe(10_000);
    expect(r.on({ type: "exposure", ...FIG, accountValue: 9_500 }, 3_000).closePositions).toBeUndefined();
    expect(r.on({ type: "exposure", ...FIG, accountValue: 8_900 }, 4_000).closePositions?.reason).toBe(
      "the account value is down 11 % from 10000 USD when the engine went down (limit 10 %)",
    );
  });

  test("the engine up: no rule applies, whatever the exposure says (a live engine manages its own risk)", () => {
    const r = new Run();
    r.on({ type: "start" }, 0);
    const ready = r.on({ type: "exposure", accountValue: 1, notionalUsd: 9e9, minLiquidationPct: 0.1 }, 20);
    expect(ready.closePositions).toBeUndefined();
    expect(r.model.entry.halted).toBeUndefined();
  });

  test("the engine back before the time: the time rule is withdrawn", () => {
    const r = new Run();
    r.armedThenDown(1_000, FIG);
    r.on({ type: "engine", up: true, detail: "back" }, 60_000);
    expect(wakeOf(r.model).escalate).toBeNull();
    expect(r.on({ type: "tick" }, 200_000).closePositions).toBeUndefined();
  });

  test("not opted in: nothing escalates", () => {
    const r = new Run({ escalation: null });
    r.armedThenDown(1_000, FIG);
    expect(
      r.on({ type: "exposure", ...FIG, minLiquidationPct: 0.5 }, 300_000).closePositions,
    ).toBeUndefined();
    expect(r.on({ type: "tick" }, 400_000).closePositions).toBeUndefined();
  });

  test("HALTED keeps the pushes going; a pass refused in the post-only window is said and tried again, never changed", () => {
    const r = new Run();
    r.armedThenDown(1_000, FIG);
    r.on({ type: "wake" }, 121_000);
    const refused = r.on(
      {
        type: "closeResult",
        flat: false,
        orders: 1,
        filledUsd: 0,
        dust: 0,
        refusal: "post_only",
        detail: "Only post-only orders allowed immediately after a network upgrade",
      },
      121_500,
    );
    expect(r.logs(refused)).toContain("escalation.close_incomplete");
    expect(wakeOf(r.model).escalate).toBe(151_500);
    const again = r.on({ type: "wake" }, 151_500);
    expect(again.closePositions).toEqual({ reason: expect.any(String), pass: 2 });
    const done = r.on(
      { type: "closeResult", flat: true, orders: 2, filledUsd: 40_000, dust: 0, refusal: null },
      152_000,
    );
    expect(r.logs(done)).toContain("escalation.closed");
    // the latch stays; the switch goes on pushing (the backstop) and no further pass is asked
    expect(r.model.entry.halted).toBeDefined();
    const tick = r.on({ type: "tick" }, 165_000);
    expect(tick.closePositions).toBeUndefined();
    expect(tick.send?.kind).toBe("push");
  });

  test("reset releases the latch on disk and says who; refused when not HALTED or while a pass runs", () => {
    const r = new Run();
    r.armedThenDown(1_000, FIG);
    expect(r.logs(r.on({ type: "reset", by: "uid 0" }, 2_000))).toContain("escalation.reset_refused");
    r.on({ type: "wake" }, 121_000);
    const busy = r.on({ type: "reset", by: "uid 0" }, 121_100);
    expect(busy.events).toContainEqual(
      expect.objectContaining({ type: "resetRefused", reason: expect.stringContaining("close pass") }),
    );
    r.on({ type: "closeResult", flat: true, orders: 1, filledUsd: 100, dust: 0, refusal: null }, 121_200);
    r.on({ type: "engine", up: true, detail: null }, 130_000);
    const reset = r.on({ type: "reset", by: "uid 0" }, 140_000);
    expect(reset.events).toContainEqual(expect.objectContaining({ type: "haltReleased", by: "uid 0" }));
    expect(reset.entry).toBeDefined();
    expect(reset.entry!.halted).toBeUndefined();
    expect(status(r.model, at(140_000)).halted).toBeNull();
  });

  test("a restart finds the account HALTED (the latch is in the ledger entry)", () => {
    const entry = {
      ...newEntry(CFG.account, T0, { limit: 10 }),
      halted: { since: T0 - 5_000, reason: "earlier", closing: "done" as const, pass: 2 },
    };
    const r = new Run({}, entry);
    const ready = r.on({ type: "start" }, 0);
    expect(status(r.model, at(0)).halted).toEqual({
      since: T0 - 5_000,
      reason: "earlier",
      closes: "closed",
      heldWhy: null,
      remaining: "",
      passes: 2,
    });
    expect(r.logs(ready)).not.toContain("escalation.stopped_at_restart");
    expect(ready.events).toContainEqual({ type: "gauge", name: "halted", value: true });
    expect(ready.send?.kind).toBe("push");
  });

  test("malformed exposure figures are refused, the model unchanged", () => {
    const r = new Run();
    r.armedThenDown(1_000, FIG);
    const before = r.model;
    const ready = r.on(
      { type: "exposure", accountValue: Number.NaN, notionalUsd: 1, minLiquidationPct: null },
      5_000,
    );
    expect(r.model).toBe(before);
    expect(r.logs(ready)).toEqual(["switch.event_refused"]);
  });
});

// Issue 38: an engine ABSENT (an account an engine held that no engine named within the connect grace after a
// restart) is weaker evidence than a death seen: it never starts a close by itself; only the time rule holds,
// counted from the grace's end.
describe("escalation: an engine absent past the connect grace", () => {
  test("behavior: the exposure rules never close on absence; the time rule does, from the grace's end", () => {
    const r = new Run();
    r.on({ type: "start" }, 0);
    r.on({ type: "exposure", ...FIG }, 20);
    const down = r.on({ type: "engine", up: false, detail: "no engine named it", cause: "absent" }, 45_000);
    // the engine-down cancel follows as for a death seen
    expect(down.cancelOrders).toEqual({ cancelStops: false });
    expect(down.events.find((e) => e.type === "engineDown")).toMatchObject({ cause: "absent" });
    r.on({ type: "ordersCancelled", confirmed: true, cancelled: 3, kept: 0 }, 45_030);
    // every exposure rule over its limit: no close on absence
    const over = r.on(
      { type: "exposure", accountValue: 5_000, notionalUsd: 900_000, minLiquidationPct: 1 },
      46_000,
    );
    expect(over.closePositions).toBeUndefined();
    expect(r.model.entry.halted).toBeUndefined();
    expect(r.on({ type: "tick" }, 100_000).closePositions).toBeUndefined();
    // the time rule: afterDownMs from the grace's end
    expect(wakeOf(r.model).escalate).toBe(45_000 + ESC.afterDownMs!);
    const ready = r.on({ type: "wake" }, 45_000 + ESC.afterDownMs!);
    expect(ready.closePositions).toEqual({
      reason: expect.stringContaining("no engine has named the account for 120 s after the connect grace"),
      pass: 1,
    });
  });

  test("behavior: the same figures close at once after a death seen (the contrast)", () => {
    const r = new Run();
    r.armedThenDown(45_000, FIG);
    const ready = r.on(
      { type: "exposure", accountValue: 5_000, notionalUsd: 900_000, minLiquidationPct: 1 },
      46_000,
    );
    expect(ready.closePositions).toEqual({ reason: expect.any(String), pass: 1 });
  });
});

describe("issue 39: closes only while the engine is down; the latch carries its pass across restarts", () => {
  const latched = () => {
    const r = new Run();
    r.armedThenDown(1_000, FIG);
    r.on({ type: "wake" }, 121_000);
    expect(escOf(r.model).closing).toBe("waiting");
    return r;
  };
  const incomplete = {
    type: "closeResult" as const,
    flat: false,
    orders: 2,
    filledUsd: 0,
    dust: 0,
    refusal: "post_only",
    detail: "post-only window",
    remaining: "BTC 0.25, ETH -3",
  };

  test("the engine back while a pass is out: the pass's next order is refused, no retry fires, the closes are held and paged", () => {
    const r = latched();
    expect(closeHold(r.model)).toBeNull();
    const up = r.on({ type: "engine", up: true, detail: "connected" }, 125_000);
    // the executor asks before every order: the engine back stops the pass at its next step
    expect(closeHold(r.model)).toBe(ENGINE_BACK);
    expect(r.logs(up)).toContain("escalation.held");
    const answered = r.on(incomplete, 126_000);
    expect(escOf(r.model).closing).toBe("held");
    expect(wakeOf(r.model).escalate).toBeNull();
    expect(answered.closePositions).toBeUndefined();
    expect(r.logs(answered)).toEqual(
      expect.arrayContaining(["escalation.close_incomplete", "escalation.held"]),
    );
    // time passes with the engine up: no pass, whatever the ticks and wake-ups
    for (const ms of [135_000, 160_000, 200_000]) {
      expect(r.on({ type: "tick" }, ms).closePositions).toBeUndefined();
      expect(r.on({ type: "wake" }, ms + 1).closePositions).toBeUndefined();
    }
    expect(status(r.model, at(200_000)).halted).toMatchObject({
      closes: "held",
      remaining: "BTC 0.25, ETH -3",
    });
    expect(r.model.entry.halted).toMatchObject({ closing: "open", pass: 1 });
  });

  test("a retry due while the engine comes back is dropped; latched, the closes resume when it is down again and a rule holds", () => {
    const r = latched();
    r.on(incomplete, 122_000);
    expect(escOf(r.model).closing).toBe("retry");
    expect(wakeOf(r.model).escalate).toBe(152_000);
    const up = r.on({ type: "engine", up: true, detail: null }, 130_000);
    expect(wakeOf(r.model).escalate).toBeNull();
    expect(r.logs(up)).toContain("escalation.held");
    expect(r.on({ type: "wake" }, 152_000).closePositions).toBeUndefined();
    // down again: not at once (a rule must hold), then the time rule, counted from this death
    r.on({ type: "engine", up: false, detail: "closed" }, 200_000);
    expect(r.on({ type: "tick" }, 210_000).closePositions).toBeUndefined();
    expect(wakeOf(r.model).escalate).toBe(320_000);
    const resumed = r.on({ type: "wake" }, 320_000);
    expect(resumed.closePositions).toEqual({ reason: expect.any(String), pass: 2 });
    expect(r.logs(resumed)).toContain("escalation.resumed");
    expect(resumed.entry?.halted).toMatchObject({ closing: "open", pass: 2 });
    expect(resumed.mustSync).toBe(true);
  });

  test("a pass is written ahead; flat is written as done", () => {
    const r = latched();
    const done = r.on(
      { type: "closeResult", flat: true, orders: 2, filledUsd: 900, dust: 0, refusal: null },
      122_000,
    );
    expect(done.entry?.halted).toMatchObject({ closing: "done", pass: 1, remaining: "" });
    expect(status(r.model, at(122_000)).halted).toMatchObject({ closes: "closed" });
  });

  test("a restart with a pass open: 'closing stopped at restart' with the positions left; resumed once the engine is down and a rule holds", () => {
    const entry = {
      ...newEntry(CFG.account, T0, { limit: 10 }),
      halted: {
        since: T0 - 5_000,
        reason: "earlier",
        closing: "open" as const,
        pass: 1,
        remaining: "BTC 0.25, SOL 40",
      },
    };
    const r = new Run({}, entry);
    const start = r.on({ type: "start" }, 0);
    expect(r.logs(start)).toContain("escalation.stopped_at_restart");
    expect(start.events).toContainEqual(
      expect.objectContaining({ type: "closeStoppedAtRestart", pass: 1, remaining: "BTC 0.25, SOL 40" }),
    );
    expect(start.closePositions).toBeUndefined();
    expect(status(r.model, at(0)).halted).toMatchObject({
      closes: "stopped at restart",
      remaining: "BTC 0.25, SOL 40",
    });
    // the engine up: nothing is closed
    expect(r.on({ type: "tick" }, 15_000).closePositions).toBeUndefined();
    // down (as this run sees it) and the time rule holds: resumed, pass 2
    r.on({ type: "engine", up: false, detail: "never connected" }, 20_000);
    r.on({ type: "ordersCancelled", confirmed: true, cancelled: 0, kept: 0 }, 20_100);
    const resumed = r.on({ type: "wake" }, 140_000);
    expect(resumed.closePositions).toEqual({ reason: "earlier", pass: 2 });
    expect(r.logs(resumed)).toContain("escalation.resumed");
  });

  test("a ledger HALTED without the pass state (an older file) is taken as a pass open", () => {
    const entry = {
      ...newEntry(CFG.account, T0, { limit: 10 }),
      halted: { since: T0 - 5_000, reason: "old" },
    };
    const r = new Run({}, entry);
    expect(r.logs(r.on({ type: "start" }, 0))).toContain("escalation.stopped_at_restart");
  });

  test("kill: latched on disk before anything leaves, cancels asked for, no rule needed, the engine up; --close closes whatever the engine", () => {
    const r = new Run();
    r.on({ type: "start" }, 0);
    const k = r.on({ type: "kill", by: "alice (pid 1)", close: true }, 1_000);
    expect(k.kill).toEqual({ by: "alice (pid 1)" });
    expect(k.closePositions).toEqual({ reason: "the operator's kill (alice (pid 1))", pass: 1 });
    expect(k.mustSync).toBe(true);
    expect(k.entry?.halted).toMatchObject({ reason: "the operator's kill (alice (pid 1))", closing: "open" });
    expect(r.logs(k)).toContain("kill.started");
    // the kill's pass goes on with the engine up: the command is its evidence
    expect(closeHold(r.model)).toBeNull();
    const c = r.on(
      { type: "killCancelled", by: "alice (pid 1)", confirmed: true, cancelled: 4, kept: 0 },
      1_100,
    );
    expect(r.logs(c)).toEqual(["kill.cancelled"]);
    // not flat with the engine up: held, no retry
    r.on({ ...incomplete, refusal: "no_match" }, 1_200);
    expect(escOf(r.model).closing).toBe("held");
    expect(wakeOf(r.model).escalate).toBeNull();
    // reset releases it
    expect(r.logs(r.on({ type: "reset", by: "alice" }, 2_000))).toContain("escalation.reset");
  });

  test("kill without --close on an opted-in account: the escalation's rules still close it once the engine is down", () => {
    const r = new Run();
    r.on({ type: "start" }, 0);
    r.on({ type: "kill", by: "carol", close: false }, 1_000);
    expect(escOf(r.model).closing).toBe("idle");
    r.on({ type: "engine", up: false, detail: "closed" }, 2_000);
    r.on({ type: "ordersCancelled", confirmed: true, cancelled: 0, kept: 0 }, 2_100);
    const resumed = r.on({ type: "wake" }, 122_000);
    expect(resumed.closePositions).toEqual({ reason: "the operator's kill (carol)", pass: 1 });
  });

  test("kill without --close: latched, cancels only; refused while stopping", () => {
    const r = new Run({ escalation: null });
    r.on({ type: "start" }, 0);
    const k = r.on({ type: "kill", by: "bob", close: false }, 1_000);
    expect(k.kill).toEqual({ by: "bob" });
    expect(k.closePositions).toBeUndefined();
    expect(r.model.entry.halted?.reason).toBe("the operator's kill (bob)");
    r.on({ type: "shutdown", mode: "keep" }, 2_000);
    const refused = r.on({ type: "kill", by: "bob", close: false }, 3_000);
    expect(refused.kill).toBeUndefined();
    expect(r.logs(refused)).toEqual(["kill.refused"]);
  });
});
