/**
 * The sub-steps that return what they decide (context.ts `Decision`): protection.ts, engine-down.ts,
 * coordination.ts, the drill's steps (src/drill/) and the escalation's engine clock, restart and reset decide on a model they never change (each is called here on a
 * deep-frozen one: a change in place throws), and the step applies what they return. Pure: no clock, no sockets.
 */
import { describe, expect, test } from "vitest";
import type { DrillInput, EscalationInput, FeatureCommand } from "../../src/core/feature.js";
import { drill } from "../../src/drill/index.js";
import { escalation } from "../../src/escalation/index.js";
import { coordination } from "../../src/switch/coordination.js";
import { cancelAgain, cancelRetryDue, engine, ordersCancelled } from "../../src/switch/engine-down.js";
import { viewOf } from "../../src/switch/features.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import {
  type Event,
  initialModel,
  type Now,
  type SwitchConfig,
  type SwitchModel,
  step,
} from "../../src/switch/machine.js";
import { agent, exchangeAccepts, exchangeRefuses } from "../../src/switch/protection.js";
import { drillOf, escOf } from "./features.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });

/** The model after `events` (one per second from 0), deep-frozen. */
function frozenAfter(events: Event[], cfg: Partial<SwitchConfig> = {}): SwitchModel {
  let m = initialModel({ ...SWITCH_CFG, ...cfg }, newEntry(SWITCH_CFG.account, T0, { limit: 10 }));
  events.forEach((ev, i) => {
    m = step(m, ev, at(i * 1_000)).model;
  });
  deepFreeze(m);
  return m;
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

const types = (d: { events?: readonly { type: string }[] | undefined }) =>
  (d.events ?? []).map((e) => e.type);

/** The features' steps on a switch's model as it is (their own model and the switch's view): what they decide. */
const escStep = (m: SwitchModel, input: EscalationInput, ms: number) =>
  escalation.step(escOf(m), viewOf(m), input, at(ms), m.cfg.escalation ?? null);
const drillStep = (m: SwitchModel, input: DrillInput, ms = 0) =>
  drill.step(drillOf(m), viewOf(m), input, at(ms), undefined);
/** The events a feature's step says. */
const said = (r: { commands: readonly FeatureCommand[] }) => ({
  events: r.commands.flatMap((c) => (c.kind === "event" ? [c.event] : [])),
});
const effects = (r: { commands: readonly FeatureCommand[] }) =>
  r.commands.flatMap((c) => (c.kind === "effect" ? [c.effect] : []));

describe("sub-steps decide on a model they leave as it is", () => {
  test("the engine-down policy (down under cancel, the pass's answer, the next pass, up) and the escalation's engine clock, restart and reset", () => {
    const running = frozenAfter([{ type: "start" }], { onEngineDown: "cancel" });
    const down = engine(running, false, "closed", "seen");
    expect(down).toMatchObject({
      set: { engineUp: false, ordersCancel: "waiting", cancelPasses: 1 },
      become: { to: "engineDown", unlessRefused: true },
      effects: [{ kind: "cancelOrders" }],
    });
    expect(down?.push).toBeUndefined();
    expect(types(down ?? {})).toEqual(["engineDown"]);
    expect(engine(running, true, null)).toBeNull(); // no change: nothing decided

    const waiting = frozenAfter([{ type: "start" }, { type: "engine", up: false }], {
      onEngineDown: "cancel",
    });
    const answered = ordersCancelled(waiting, at(5_000), {
      type: "ordersCancelled",
      confirmed: true,
      cancelled: 3,
      kept: 0,
    });
    expect(answered).toMatchObject({ set: { ordersCancel: "confirmed" }, push: "orders-cancelled" });
    expect(types(answered)).toEqual(["ordersCancelled"]);
    expect(cancelRetryDue(waiting)).toEqual({
      wake: { cancel: null },
      effects: [{ kind: "cancelOrders", cancelStops: SWITCH_CFG.cancelStops }],
    });

    const confirmed = frozenAfter(
      [
        { type: "start" },
        { type: "engine", up: false },
        { type: "ordersCancelled", confirmed: true, cancelled: 3, kept: 0 },
      ],
      { onEngineDown: "cancel" },
    );
    expect(cancelAgain(confirmed)).toMatchObject({ set: { cancelPass: true, cancelPasses: 2 } });
    const up = engine(confirmed, true, "back");
    expect(up).toMatchObject({ set: { engineUp: true, ordersCancel: null }, push: "engine-up" });
    expect(up?.events).toEqual([{ type: "engineUp", detail: "back", action: "cancel", renewing: true }]);

    // the escalation's engine-down clock starts with the death (its decision, applied with the policy's)
    const ladder = frozenAfter([{ type: "start" }], {
      escalation: {
        afterDownMs: 60_000,
        liquidationPct: null,
        drawdownPct: null,
        notionalCapUsd: null,
        retryMs: 30_000,
      },
    });
    expect(escStep(ladder, { type: "engine", up: false, cause: "seen" }, 7_000)).toMatchObject({
      model: { downSinceMono: 7_000, downCause: "seen" },
      wakeAt: 67_000,
    });

    // a latch whose pass was open at a restart, the engine said down before the start: held, said, and the time
    // rule counted from the death
    const entry = {
      ...newEntry(SWITCH_CFG.account, T0, { limit: 10 }),
      halted: {
        since: T0 - 60_000,
        reason: "notional",
        closing: "open" as const,
        pass: 2,
        remaining: "BTC 0.25",
      },
    };
    let restarted = initialModel({ ...SWITCH_CFG, escalation: ladder.cfg.escalation }, entry);
    restarted = step(restarted, { type: "engine", up: false }, at(1_000)).model;
    deepFreeze(restarted);
    const atStart = escStep(restarted, { type: "start" }, 1_000);
    expect(atStart).toMatchObject({
      model: { closing: "held", passes: 2, remaining: "BTC 0.25" },
      wakeAt: 61_000,
    });
    expect(types(said(atStart))).toEqual(["closeStoppedAtRestart"]);
    // the operator's reset releases the latch on disk; the time rule counts from the reset while still down
    const held = step(restarted, { type: "start" }, at(2_000)).model;
    deepFreeze(held);
    const reset = escStep(held, { type: "reset", by: "ops" }, 3_000);
    expect(reset).toMatchObject({
      model: { closing: "idle" },
      wakeAt: 63_000,
    });
    expect(reset.commands).toContainEqual({ kind: "halted", latch: null, write: "persist" });
    expect(types(said(reset))).toEqual(["haltReleased"]);

    const expedite = engine(frozenAfter([{ type: "start" }], { onEngineDown: "expedite" }), false, null);
    expect(expedite?.push).toBe("engine-down");
  });

  test("protection: the agent missing then valid, the exchange's refusal and acceptance", () => {
    const running = frozenAfter([{ type: "start" }]);
    const missing = agent(running, "missing", "not registered");
    expect(missing).toMatchObject({
      set: { agentReason: "agent_missing", notProtectedReason: "agent_missing" },
      become: { to: "notProtected" },
    });
    expect(types(missing)).toEqual(["notProtectedGauge", "agentInvalid"]);
    expect(agent(running, "ok", undefined)).toEqual({}); // nothing to leave

    const refused = frozenAfter([{ type: "start" }, { type: "agent", state: "missing" }]);
    const ok = agent(refused, "ok", undefined);
    expect(ok).toMatchObject({ set: { agentReason: null }, become: { to: "holding" }, push: "agent-ok" });
    expect(types(ok)).toEqual(["notProtectedGauge", "protected"]);

    const byExchange = exchangeRefuses(refused, "unsupported", 9_000);
    expect(byExchange).toMatchObject({ first: true, set: { notProtectedReason: "unsupported" } });
    expect(types(byExchange)).toEqual(["notProtectedGauge", "notProtectedGauge"]);
    expect(types(exchangeAccepts(refused))).toEqual(["notProtectedGauge", "protected"]);
  });

  test("the replicas' role and the drill's end", () => {
    const coordinated = frozenAfter([{ type: "start" }], { coordinated: true });
    const lead = coordination(coordinated, {
      type: "coordination",
      role: "leader",
      token: "7",
      othersAlive: false,
    });
    expect(lead.set?.coord).toMatchObject({ role: "leader", token: "7", othersAlive: false });

    const drilling = frozenAfter([
      { type: "start" },
      { type: "pushConfirmed", id: 1, latencyMs: 5 },
      { type: "drillStart", id: "d1", by: "ops" },
      { type: "drillPlaced", id: "d1", oid: 77, coin: "BTC" },
    ]);
    expect(said(drillStep(drilling, { type: "start", id: "d2", by: "ops" }, 5_000))).toEqual({
      events: [{ type: "drillRefused", id: "d2", by: "ops", reason: "drill d1 is running" }],
    });
    const armed = frozenAfter([
      { type: "start" },
      { type: "pushConfirmed", id: 1, latencyMs: 5 },
      { type: "drillStart", id: "d1", by: "ops" },
    ]);
    expect(drillStep(armed, { type: "placed", id: "d1", oid: 77, coin: "BTC" })).toMatchObject({
      model: { phase: "arming", oid: 77 },
      commands: [{ kind: "push", reason: "drill" }],
    });
    // not firing yet: nothing to read (the deadline is counted by the usual rule only)
    expect(drillStep(drilling, { type: "due" }).commands).toEqual([{ kind: "checkLapse" }]);
    const ended = drillStep(drilling, { type: "end", detail: "stop" });
    expect(ended).toMatchObject({ model: null, wakeAt: null });
    expect(effects(ended)).toEqual([{ kind: "drillCancel", oid: 77, coin: "BTC" }]);
    expect(types(said(ended))).toEqual(["drillDone"]);
  });
});
