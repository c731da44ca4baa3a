/**
 * A step's effects are a list (src/switch/ready.ts `Effect`) carried out by one table of handlers
 * (src/switch/effects.ts `EffectTable`): the list keeps the order the driver carries it out in, one effect per
 * slot (a later ask of the step replaces an earlier one), a kind without a handler does not compile, and the
 * kill's close, carried by the kill's own effect, leaves only after the kill's cancels answered.
 */
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { Ctx } from "../../src/switch/context.js";
import { createSwitch, type SwitchLedger } from "../../src/switch/driver.js";
import type { EffectTable } from "../../src/switch/effects.js";
import { initialTime, timesAt } from "../../src/switch/exchange-time.js";
import { HISTORY_SIZE, newEntry } from "../../src/switch/ledger-model.js";
import { initialModel, type Ready } from "../../src/switch/machine.js";
import { captureLogger } from "../app/helpers.js";
import { switchBus } from "../helpers/switch-bus.js";
import { FEATURES } from "./features.js";
import { SWITCH_CADENCE, SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("effects as a list", () => {
  test("behavior: the list keeps the driver's order, one effect per slot, the step's later ask replacing the earlier", () => {
    const m = initialModel(SWITCH_CFG, newEntry(SWITCH_CFG.account, T0, { limit: 10 }));
    const now = { mono: 0, wall: T0 };
    const ready: Ready = { mustSync: false, effects: [], events: [], wakeAt: null };
    const ctx = new Ctx(m, now, timesAt(initialTime(0, T0, null), 0, T0), ready);
    ctx.effect({ kind: "pollExposure" });
    ctx.effect({ kind: "readRecord", reason: "first" });
    ctx.effect({ kind: "cancelOrders", cancelStops: false });
    ctx.effect({ kind: "push", id: 1, cancelAt: T0 + 60_000, expiresAfterMs: 5_000 });
    ctx.effect({ kind: "readRecord", reason: "second" });
    ctx.effect({ kind: "removal", expiresAfterMs: 5_000 });
    expect(ready.effects).toEqual([
      { kind: "removal", expiresAfterMs: 5_000 },
      { kind: "cancelOrders", cancelStops: false },
      { kind: "readRecord", reason: "second" },
      { kind: "pollExposure" },
    ]);
  });

  test("a kind without a handler does not compile", () => {
    const handler = () => undefined;
    // @ts-expect-error the table lacks `pollExposure`: every kind of the union needs its handler
    const table: EffectTable = {
      push: handler,
      removal: handler,
      cancelOrders: handler,
      kill: handler,
      closePositions: handler,
      drillPlace: handler,
      drillVerify: handler,
      drillCancel: handler,
      readRecord: handler,
      nonceFloor: handler,
    };
    expect(Object.keys(table)).toHaveLength(10);
  });

  test("behavior: the kill's close leaves only after the kill's cancels answered", async () => {
    const clock = new ManualClock(T0);
    const timers = new ManualTimers(clock);
    const order: string[] = [];
    let cancelled: () => void = () => {};
    const ledger: SwitchLedger = {
      historySize: HISTORY_SIZE,
      initial: () => newEntry(SWITCH_CFG.account, T0, { limit: 10 }),
      put: () => undefined,
      durable: async () => "written",
      writtenUpdatedAt: T0,
    };
    const sw = createSwitch({
      account: { address: SWITCH_CFG.account },
      features: FEATURES,
      policy: SWITCH_CADENCE,
      io: {
        client: {
          scheduleCancel: async (params) => ({
            nonce: clock.now(),
            expiresAfter: undefined,
            time: params.time,
            responseType: "default",
            latencyMs: 5,
            serverDate: Math.floor(clock.now() / 1000) * 1000,
          }),
        },
        ledger,
        killOrders: () =>
          new Promise((resolve) => {
            order.push("cancel asked");
            cancelled = () => {
              order.push("cancel answered");
              resolve({ confirmed: true, cancelled: 2, kept: 0 });
            };
          }),
        closePositions: async () => {
          order.push("close");
          return { flat: true, orders: [], filledUsd: 0, dust: 0, refusal: null };
        },
      },
      runtime: createRuntime({ clock, timers }),
      bus: switchBus(captureLogger().logger, createMetrics({ defaultMetrics: false })),
    });
    sw.dispatch({ type: "start" });
    await sw.settle();
    const outcome = sw.dispatch({ type: "kill", by: "operator", close: true });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(order).toEqual(["cancel asked"]);
    cancelled();
    const r = await outcome;
    expect(order).toEqual(["cancel asked", "cancel answered", "close"]);
    expect(r).toMatchObject({ done: true, latched: true, cancel: { confirmed: true, cancelled: 2 } });
    await sw.dispatch({ type: "stop" });
  });
});
