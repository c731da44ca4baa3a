/**
 * The drill in the switch machine (src/switch/drill.ts): one row per rule of docs/operations.md "The drill".
 * Pure steps: no clock, no sockets, no disk.
 */
import { describe, expect, test } from "vitest";
import { DRILL_LEAD_MS, DRILL_VERIFY_MARGIN_MS } from "../../src/drill/index.js";
import { logLineOf } from "../../src/surface/switch/index.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import {
  type Event,
  inflight,
  initialModel,
  type Now,
  type SwitchConfig,
  type SwitchModel,
} from "../../src/switch/machine.js";
import { drillOf, wakeOf } from "./features.js";
import { type ReadyView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });

class Run {
  model: SwitchModel;
  constructor(cfg: Partial<SwitchConfig> = {}, entry = newEntry(SWITCH_CFG.account, T0, { limit: 10 })) {
    this.model = initialModel({ ...SWITCH_CFG, ...cfg }, entry);
  }
  /** one event; an arming push it sends is confirmed at once (a drill's push is left to the test) */
  on(event: Event, ms: number, confirm = true): ReadyView {
    let ready: ReadyView;
    ({ model: this.model, ready } = step(this.model, event, at(ms)));
    const send = ready.send;
    if (confirm && send?.kind === "push" && inflight(this.model)?.mode === "arm")
      ({ model: this.model } = step(
        this.model,
        { type: "pushConfirmed", id: send.id, latencyMs: 5 },
        at(ms),
      ));
    return ready;
  }
  logs(r: ReadyView) {
    return r.events.map(logLineOf).flatMap((l) => (l ? [l.event] : []));
  }
  armed() {
    this.on({ type: "start" }, 0);
    return this;
  }
}

describe("drill", () => {
  test("the whole drill: order, its own push 8 s ahead, no push until it fired, the status read, pushes again", () => {
    const r = new Run().armed();
    const start = r.on({ type: "drillStart", id: "d1", by: "ops" }, 1_000);
    expect(start.drillPlace).toEqual({ id: "d1" });
    expect(r.logs(start)).toContain("drill.started");
    // the order rests: the next push is the drill's
    const placed = r.on({ type: "drillPlaced", id: "d1", oid: 77, coin: "BTC" }, 1_200, false);
    expect(placed.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_200 + DRILL_LEAD_MS });
    const id = (placed.send as { id: number }).id;
    r.on({ type: "pushConfirmed", id, latencyMs: 5 }, 1_300);
    // held: an interval tick sends nothing while the drill's deadline is pending
    expect(r.on({ type: "tick" }, 5_000).send).toBeUndefined();
    const due = 1_200 + DRILL_LEAD_MS + DRILL_VERIFY_MARGIN_MS;
    expect(wakeOf(r.model).drill).toBe(due);
    const verify = r.on({ type: "wake" }, due);
    expect(verify.drillVerify).toEqual({ id: "d1", oid: 77, coin: "BTC" });
    // the drill's deadline passed unrenewed: one trigger counted by the usual rule
    expect(r.model.entry.triggersToday).toBe(1);
    const done = r.on(
      { type: "drillVerified", id: "d1", status: "scheduledCancel", statusTimestamp: T0 + 9_200 },
      due + 300,
      false,
    );
    expect(done.events).toContainEqual(
      expect.objectContaining({ type: "drillDone", fired: true, status: "scheduledCancel" }),
    );
    expect(r.logs(done)).toContain("drill.passed");
    expect(done.send).toMatchObject({ kind: "push", cancelAt: T0 + due + 300 + SWITCH_CFG.deadlineMs });
    expect(done.readRecord).toEqual({ reason: "drill" });
    expect(done.drillCancel).toBeUndefined();
    expect(drillOf(r.model)).toBeNull();
    // the drill's own order proves its trigger: counted once, with proof `orders`, never a guess
    expect(r.model.entry.triggersToday).toBe(1);
    expect(r.model.entry.triggers).toEqual([
      expect.objectContaining({ deadline: T0 + 1_200 + DRILL_LEAD_MS, proof: "orders" }),
    ]);
    expect(done.events).toContainEqual(
      expect.objectContaining({
        type: "reconciled",
        changes: expect.arrayContaining([
          expect.objectContaining({ reason: expect.stringContaining("the drill's own order 77") }),
        ]),
      }),
    );
  });

  test("refused: fewer than two triggers left, the engine down, not armed; nothing changes", () => {
    const nine = { ...newEntry(SWITCH_CFG.account, T0, { limit: 10 }), triggersToday: 9 };
    const low = new Run({}, nine).armed();
    const a = low.on({ type: "drillStart", id: "d", by: "ops" }, 1_000);
    expect(a.events).toContainEqual(
      expect.objectContaining({
        type: "drillRefused",
        reason: expect.stringContaining("only 1 trigger(s) left"),
      }),
    );
    expect(a.drillPlace).toBeUndefined();

    const down = new Run().armed();
    down.on({ type: "engine", up: false, detail: "gone" }, 500);
    const b = down.on({ type: "drillStart", id: "d", by: "ops" }, 1_000);
    expect(b.events).toContainEqual(
      expect.objectContaining({ type: "drillRefused", reason: expect.stringContaining("engine is down") }),
    );

    const fresh = new Run();
    fresh.on({ type: "start" }, 0, false);
    const c = fresh.on({ type: "drillStart", id: "d", by: "ops" }, 100);
    expect(c.events).toContainEqual(
      expect.objectContaining({ type: "drillRefused", reason: expect.stringContaining("not armed") }),
    );
  });

  test("the order not placed: the drill ends, no push of its own, nothing to cancel", () => {
    const r = new Run().armed();
    r.on({ type: "drillStart", id: "d", by: "ops" }, 1_000);
    const failed = r.on(
      { type: "drillPlaced", id: "d", oid: null, coin: null, detail: "Insufficient margin" },
      1_100,
    );
    expect(failed.events).toContainEqual(
      expect.objectContaining({
        type: "drillDone",
        fired: false,
        detail: expect.stringContaining("Insufficient margin"),
      }),
    );
    expect(failed.send).toBeUndefined();
    expect(failed.drillCancel).toBeUndefined();
    expect(drillOf(r.model)).toBeNull();
  });

  test("the engine down after the drill's order: the drill ends and its order is cancelled; the engine policy rules", () => {
    const r = new Run({ onEngineDown: "cancel" }).armed();
    r.on({ type: "drillStart", id: "d", by: "ops" }, 1_000);
    r.on({ type: "drillPlaced", id: "d", oid: 5, coin: "ETH" }, 1_100, false);
    const down = r.on({ type: "engine", up: false, detail: "closed" }, 1_200);
    expect(down.drillCancel).toEqual({ oid: 5, coin: "ETH" });
    expect(down.cancelOrders).toEqual({ cancelStops: false });
    expect(down.events).toContainEqual(expect.objectContaining({ type: "drillDone", fired: false }));
  });

  test("the status is not scheduledCancel: the drill FAILED and says so", () => {
    const r = new Run().armed();
    r.on({ type: "drillStart", id: "d", by: "ops" }, 1_000);
    const placed = r.on({ type: "drillPlaced", id: "d", oid: 9, coin: "BTC" }, 1_100, false);
    r.on({ type: "pushConfirmed", id: (placed.send as { id: number }).id, latencyMs: 5 }, 1_150);
    r.on({ type: "wake" }, wakeOf(r.model).drill!);
    const v = r.on({ type: "drillVerified", id: "d", status: "open", statusTimestamp: null }, 20_000, false);
    expect(r.logs(v)).toContain("drill.failed");
    expect(v.events).toContainEqual(
      expect.objectContaining({
        type: "drillDone",
        fired: false,
        detail: expect.stringContaining("did NOT prove itself"),
      }),
    );
    expect(v.drillCancel).toEqual({ oid: 9, coin: "BTC" });
  });
});
