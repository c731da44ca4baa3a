/**
 * What `engine.down`, `engine.up` and `engine.cancel_failed` say, per `--on-engine-down` policy, against what the
 * machine then does (src/switch/engine-down.ts): the words are read from the same ReadyView whose pushes and cancels
 * are checked, so a wording that promises what the machine does not do fails here.
 */
import { describe, expect, test } from "vitest";
import { toNotification } from "../../src/surface/notify/events.js";
import { describeSwitchEvent, logLineOf } from "../../src/surface/switch/index.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import {
  type Event,
  EXPEDITE_LEAD_MS,
  initialModel,
  type Now,
  type SwitchConfig,
  type SwitchModel,
} from "../../src/switch/machine.js";
import { type ReadyView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });
const DEADLINE = SWITCH_CFG.deadlineMs;
const INTERVAL = SWITCH_CFG.intervalMs;

/** A machine started and armed at 0 under `policy`, stepped one event at a time. */
function machine(policy: SwitchConfig["onEngineDown"]) {
  let model: SwitchModel = initialModel(
    { ...SWITCH_CFG, onEngineDown: policy },
    newEntry(SWITCH_CFG.account, T0, { limit: 10 }),
  );
  let pushId = 0;
  const go = (event: Event, ms: number): ReadyView => {
    const r = step(model, event, at(ms));
    model = r.model;
    if (r.ready.send?.kind === "push") pushId = r.ready.send.id;
    return r.ready;
  };
  go({ type: "start" }, 0);
  go({ type: "pushConfirmed", id: pushId, latencyMs: 10 }, 0);
  return {
    go,
    confirm: (ms: number) => go({ type: "pushConfirmed", id: pushId, latencyMs: 10 }, ms),
    get model() {
      return model;
    },
  };
}
const said = (r: ReadyView, name: string) => r.events.map(logLineOf).find((l) => l?.event === name)?.msg;

describe("engine.down / engine.up say what the policy does", () => {
  test("cancel: the orders cancelled each interval and the schedule renewed a full deadline ahead; up ends the passes", () => {
    const m = machine("cancel");
    const down = m.go({ type: "engine", up: false }, 1_000);
    expect(down.cancelOrders).toBeDefined();
    const words = said(down, "engine.down")!;
    expect(words).not.toMatch(/no more pushes/);
    expect(words).toMatch(/cancelling the open orders now and again each interval/);
    expect(words).toMatch(/schedule keeps being renewed a full deadline ahead/);
    // what it promised: a confirmed pass renews the schedule a full deadline ahead, not the 5 s minimum
    const confirmed = m.go({ type: "ordersCancelled", confirmed: true, cancelled: 2, kept: 0 }, 1_100);
    expect(confirmed.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_100 + DEADLINE });
    m.confirm(1_100);
    // each interval while down: a push a full deadline ahead, and a cancel pass
    const tick = m.go({ type: "tick" }, 1_100 + INTERVAL);
    expect(tick.cancelOrders).toBeDefined();
    expect(tick.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_100 + INTERVAL + DEADLINE });
    m.confirm(1_100 + INTERVAL);
    m.go({ type: "ordersCancelled", confirmed: true, cancelled: 0, kept: 0 }, 1_200 + INTERVAL);
    const up = m.go({ type: "engine", up: true }, 2_000 + INTERVAL);
    const back = said(up, "engine.up")!;
    expect(back).not.toMatch(/pushing again/);
    expect(back).toMatch(/no more cancel passes; the schedule goes on being renewed/);
    expect(m.go({ type: "tick" }, 1_100 + 2 * INTERVAL).cancelOrders).toBeUndefined();
  });

  test("cancel not confirmed: the expedite at the 5 s minimum, then no push and no pass; up pushes again", () => {
    const m = machine("cancel");
    m.go({ type: "engine", up: false }, 1_000);
    const failed = m.go({ type: "ordersCancelled", confirmed: false, cancelled: 0, kept: 0 }, 1_100);
    expect(failed.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_100 + EXPEDITE_LEAD_MS });
    expect(said(failed, "engine.cancel_failed")).toMatch(
      /5 s minimum .*then no more pushes or cancel passes until the engine is back/,
    );
    m.confirm(1_100);
    const tick = m.go({ type: "tick" }, 1_100 + INTERVAL);
    expect(tick.send).toBeUndefined();
    expect(tick.cancelOrders).toBeUndefined();
    const up = m.go({ type: "engine", up: true }, 2_000 + INTERVAL);
    expect(said(up, "engine.up")).toBe("trading engine back: pushing again, a full deadline ahead");
    expect(up.send).toMatchObject({ kind: "push", cancelAt: T0 + 2_000 + INTERVAL + DEADLINE });
  });

  test("expedite: one push at the 5 s minimum, then none until up", () => {
    const m = machine("expedite");
    const down = m.go({ type: "engine", up: false }, 1_000);
    expect(down.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_000 + EXPEDITE_LEAD_MS });
    expect(said(down, "engine.down")).toMatch(/5 s minimum .*then no more pushes until the engine is back/);
    m.confirm(1_000);
    expect(m.go({ type: "tick" }, 1_000 + INTERVAL).send).toBeUndefined();
    const up = m.go({ type: "engine", up: true }, 2_000 + INTERVAL);
    expect(said(up, "engine.up")).toBe("trading engine back: pushing again, a full deadline ahead");
    expect(up.send).toMatchObject({ kind: "push", cancelAt: T0 + 2_000 + INTERVAL + DEADLINE });
  });

  test("lapse: no push, and the words name the armed deadline that lapses", () => {
    const m = machine("lapse");
    const down = m.go({ type: "engine", up: false }, 1_000);
    expect(down.send).toBeUndefined();
    expect(down.cancelOrders).toBeUndefined();
    expect(said(down, "engine.down")).toBe(
      `trading engine down: no more pushes until the engine is back; the armed deadline lapses at ${new Date(T0 + DEADLINE).toISOString()} (the exchange cancels the open orders, one trigger)`,
    );
    expect(m.go({ type: "tick" }, 1_000 + INTERVAL).send).toBeUndefined();
    const up = m.go({ type: "engine", up: true }, 2_000 + INTERVAL);
    expect(said(up, "engine.up")).toBe("trading engine back: pushing again, a full deadline ahead");
    expect(up.send).toMatchObject({ kind: "push" });
  });
});

describe("the notification says the same as the line", () => {
  test("engine.down under cancel: the schedule renewed, not the 5 s minimum; engine.up: no more passes", () => {
    const who = SWITCH_CFG.account;
    const notify = (e: Record<string, unknown>) =>
      toNotification(describeSwitchEvent({ module: "switch", account: who, ...e } as never)!, {
        now: T0,
        host: "h",
        version: "v",
      })!.text;
    const down = notify({
      type: "engineDown",
      action: "cancel",
      detail: "closed",
      armedUntil: T0 + DEADLINE,
    });
    expect(down).toMatch(/DOWN \(closed\); cancelling the open orders now .*keeps being renewed/);
    expect(down).not.toMatch(/cancel moved to the 5 s minimum/);
    expect(notify({ type: "engineDown", action: "expedite", detail: "x", armedUntil: null })).toMatch(
      /scheduling the cancel at the 5 s minimum/,
    );
    expect(notify({ type: "engineUp", action: "cancel", detail: null, renewing: true })).toMatch(
      /is back; no more cancel passes; the schedule goes on being renewed as before\.$/,
    );
  });
});
