/**
 * Applying the exchange's record to the ledger (docs/exchange-record.md): the pure `withReconciled` and the
 * switch machine's `reconciled` event. Conservative direction only; a fire the record proves is never counted
 * twice. No clock, no sockets, no disk.
 */
import { describe, expect, test } from "vitest";
import { newEntry, withReconciled, withTrigger } from "../../src/daemon/ledger-model.js";
import { initialModel, type Now, type SwitchConfig, step } from "../../src/daemon/switch/machine.js";
import { utcDay } from "../../src/utils/clock.js";
import { SWITCH_CFG } from "./switch/world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const DAY = utcDay(T0);
const ACCOUNT = "0x00000000000000000000000000000000000000aa";
const view = (v: Partial<Parameters<typeof withReconciled>[1]> = {}) => ({
  day: DAY,
  triggersToday: 0,
  assumed: false,
  armedUntil: null,
  ...v,
});

describe("withReconciled", () => {
  test("default: a deleted ledger gets the record's fires back; a counted count never goes down", () => {
    const fresh = newEntry(ACCOUNT, T0, { limit: 10 });
    expect(withReconciled(fresh, view({ triggersToday: 2 }), []).triggersToday).toBe(2);
    const counted = { ...fresh, triggersToday: 3 };
    expect(withReconciled(counted, view({ triggersToday: 1 }), [])).toBe(counted);
  });

  test("behavior: an assumed count takes the record's (lowered only when the reconcile says so)", () => {
    const assumed = newEntry(ACCOUNT, T0, { limit: 10, assumed: true });
    const lowered = withReconciled(assumed, view({ triggersToday: 1, assumed: false }), []);
    expect(lowered).toMatchObject({ triggersToday: 1, assumed: false });
    const kept = withReconciled(assumed, view({ triggersToday: 10, assumed: true }), []);
    expect(kept).toBe(assumed);
  });

  test("behavior: the deadline the record shows fired is marked counted, so the switch never counts it again", () => {
    const deadline = T0 - 30_000;
    const entry = { ...newEntry(ACCOUNT, T0, { limit: 10 }), armedUntil: deadline };
    const next = withReconciled(entry, view({ triggersToday: 1 }), [deadline]);
    expect(next).toMatchObject({ triggersToday: 1, armedUntil: null, lastCountedDeadline: deadline });
    // the lapse the switch would count at start for that deadline is not counted again
    const again = withTrigger(next, { deadline, at: T0 });
    expect(again.counted).toBe(false);
    expect(again.entry.triggersToday).toBe(1);
  });

  test("behavior: a later armed deadline from the record is taken; a view for another day changes nothing", () => {
    const entry = { ...newEntry(ACCOUNT, T0, { limit: 10 }), armedUntil: T0 + 10_000 };
    expect(withReconciled(entry, view({ armedUntil: T0 + 50_000 }), []).armedUntil).toBe(T0 + 50_000);
    expect(withReconciled(entry, view({ armedUntil: T0 + 5_000 }), [])).toBe(entry);
    expect(withReconciled(entry, view({ day: "2025-12-31", triggersToday: 5 }), [])).toBe(entry);
  });
});

describe("the switch machine's `reconciled` event", () => {
  const CFG: SwitchConfig = { ...SWITCH_CFG, account: ACCOUNT };
  const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });

  test("behavior: raises the count and persists it; reaching the limit turns the switch exhausted", () => {
    let model = initialModel(CFG, { ...newEntry(ACCOUNT, T0, { limit: 10 }), triggersToday: 1 });
    model = step(model, { type: "start" }, at(0)).model;
    const raised = step(model, { type: "reconciled", view: view({ triggersToday: 3 }), fired: [] }, at(10));
    expect(raised.model.entry.triggersToday).toBe(3);
    expect(raised.effects).toContainEqual(
      expect.objectContaining({ type: "persist", entry: expect.objectContaining({ triggersToday: 3 }) }),
    );
    const full = step(model, { type: "reconciled", view: view({ triggersToday: 10 }), fired: [] }, at(10));
    expect(full.model.state).toBe("exhausted");
    expect(full.effects).toContainEqual(expect.objectContaining({ type: "log", event: "trigger.exhausted" }));
  });

  test("behavior: mid-run a lower count from the record changes nothing", () => {
    let model = initialModel(CFG, { ...newEntry(ACCOUNT, T0, { limit: 10 }), triggersToday: 4 });
    model = step(model, { type: "start" }, at(0)).model;
    const same = step(model, { type: "reconciled", view: view({ triggersToday: 2 }), fired: [] }, at(10));
    expect(same.model.entry.triggersToday).toBe(4);
    expect(same.effects.filter((e) => e.type === "persist")).toHaveLength(0);
  });
});
