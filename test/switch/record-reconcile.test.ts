/**
 * The start-up reconciliation's decision (src/switch/record-reconcile.ts `reconcileAtStart`): from an account's
 * entry and the record read before the switches start, what is said and what the store applies. A table of the
 * cases, then its rules as properties over random entries and records; what it decides is applied with the store's
 * own rule (`withReconciled`), as the app does.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { Fire, RecordFinding, RecordResult } from "../../src/core/record.js";
import type { LedgerEntry } from "../../src/switch/ledger.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import { reconcileAtStart, withReconciled } from "../../src/switch/record-reconcile.js";
import { propTest } from "./prop-test.js";

const ACCOUNT = "0x1111111111111111111111111111111111111111";
const DAY = Date.parse("2026-11-23T00:00:00Z");
const TODAY = "2026-11-23";
const H = 3_600_000;
const NOW = DAY + 5 * H;
const LIMIT = 10;

const assumed = (o: Partial<LedgerEntry> = {}): LedgerEntry => ({
  ...newEntry(ACCOUNT, NOW, { limit: LIMIT, assumed: true, corruptDetail: "is not valid JSON" }),
  ...o,
});
const counted = (o: Partial<LedgerEntry> = {}): LedgerEntry => ({
  ...newEntry(ACCOUNT, NOW, { limit: LIMIT }),
  ...o,
});

/** A record of `fires` fires today (each with a scheduledCancel order), reaching back before 00:00 UTC or not. */
function record(
  fires: number,
  {
    coversDay = true,
    day = TODAY,
    armedUntil = null,
  }: { coversDay?: boolean; day?: string; armedUntil?: number | null } = {},
): RecordFinding {
  const start = Date.parse(`${day}T00:00:00Z`);
  const list: Fire[] = Array.from({ length: fires }, (_, i) => ({
    deadline: start + (i + 1) * 60_000,
    day,
    cancelledOrders: 1,
    proof: "orders",
  }));
  const last = armedUntil ?? list.at(-1)?.deadline ?? null;
  return {
    available: true,
    at: NOW,
    day,
    lastAccepted: last === null ? null : { txTime: last - 60_000, deadline: last, hash: "0xaa", error: null },
    armedUntil,
    fires: list,
    firesToday: fires,
    refusedToday: 0,
    lastRefusal: null,
    oldestTx: coversDay ? start - H : start + 30_000,
    newestTx: NOW - 1_000,
    schedules: [],
    coversDay,
  };
}
const unavailable: RecordResult = {
  available: false,
  reason: "error",
  detail: "explorer userDetails: transport",
};

describe("reconcileAtStart", () => {
  test("default: an assumed count and a record of the whole day: the record's count applied, no longer assumed", () => {
    const entry = assumed({ armedUntil: NOW + 30_000 });
    const d = reconcileAtStart(entry, record(1));
    expect(d.say).toEqual({
      day: TODAY,
      triggersToday: LIMIT,
      assumed: true,
      armedUntil: NOW + 30_000,
      pendingUntil: null,
    });
    expect(d.apply).toEqual({ day: TODAY, triggersToday: 1, assumed: false, armedUntil: NOW + 30_000 });
    const applied = withReconciled(entry, d.apply!, []);
    expect(applied.triggersToday).toBe(1);
    expect(applied.assumed).toBe(false);
  });

  test.each([
    // [case, entry, record, says, applies]
    [
      "a counted entry: the switch applies the record once started",
      counted({ triggersToday: 3 }),
      record(1),
      false,
      false,
    ],
    ["an unavailable record", assumed(), unavailable, false, false],
    [
      "a record that does not reach back to 00:00 UTC",
      assumed(),
      record(1, { coversDay: false }),
      true,
      false,
    ],
    ["a record of another UTC day", assumed(), record(1, { day: "2026-11-22" }), true, false],
    ["a record of the whole day without fires", assumed(), record(0), true, true],
  ])("behavior: %s", (_name, entry, result, says, applies) => {
    const d = reconcileAtStart(entry, result);
    expect(d.say !== null).toBe(says);
    expect(d.apply !== null).toBe(applies);
  });

  test("behavior: never above the assumed count, and the armed deadline stays the entry's", () => {
    const entry = assumed({ triggersToday: 4, armedUntil: NOW + 10_000 });
    const d = reconcileAtStart(entry, record(7, { armedUntil: NOW + 50_000 }));
    expect(d.apply).toEqual({ day: TODAY, triggersToday: 4, assumed: false, armedUntil: NOW + 10_000 });
  });

  const entries = fc.record({
    assumed: fc.boolean(),
    triggersToday: fc.integer({ min: 0, max: LIMIT }),
    armedUntil: fc.option(fc.integer({ min: NOW - H, max: NOW + H }), { nil: null }),
    pendingUntil: fc.option(fc.integer({ min: NOW - H, max: NOW + H }), { nil: null }),
  });
  const results = fc.oneof(
    fc.constant(unavailable),
    fc
      .record({
        fires: fc.integer({ min: 0, max: LIMIT + 3 }),
        coversDay: fc.boolean(),
        otherDay: fc.boolean(),
        armedUntil: fc.option(fc.integer({ min: NOW, max: NOW + H }), { nil: null }),
      })
      .map(({ fires, coversDay, otherDay, armedUntil }) =>
        record(fires, { coversDay, armedUntil, day: otherDay ? "2026-11-22" : TODAY }),
      ),
  );

  propTest([entries, results])(
    "property: only an assumed count meets an available record; applied only when the record settles the assumption; never raised, never armed here",
    (e, result) => {
      const entry = e.assumed ? assumed(e) : counted(e);
      const d = reconcileAtStart(entry, result);
      expect(d.say !== null).toBe(entry.assumed && result.available);
      if (d.say)
        expect(d.say).toMatchObject({ day: entry.day, triggersToday: entry.triggersToday, assumed: true });
      const settles = entry.assumed && result.available && result.coversDay && result.day === entry.day;
      expect(d.apply !== null).toBe(settles);
      if (d.apply === null || !result.available) return;
      expect(d.apply).toEqual({
        day: entry.day,
        triggersToday: Math.min(entry.triggersToday, result.firesToday),
        assumed: false,
        armedUntil: entry.armedUntil,
      });
      const applied = withReconciled(entry, d.apply, []);
      expect(applied.triggersToday).toBeLessThanOrEqual(entry.triggersToday);
      expect(applied.armedUntil).toBe(entry.armedUntil);
      expect(applied.pendingUntil).toBe(entry.pendingUntil);
    },
  );
});
