/**
 * Applying the exchange's record to the ledger (docs/exchange-record.md): the pure `withReconciled` (an assumed
 * count at start-up), the pure `withRecord` (both directions, where the record is fresh) and the switch machine's
 * `record` event, which never stops the pushes. A fire the record proves is never counted twice. No clock, no
 * sockets, no disk.
 */
import { describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";
import { logLineOf } from "../../src/surface/switch/index.js";
import { LedgerEntry } from "../../src/switch/ledger.js";
import { newEntry, withRemoval, withTrigger } from "../../src/switch/ledger-model.js";
import {
  inflight,
  initialModel,
  type Now,
  type SwitchConfig,
  type SwitchModel,
  status,
} from "../../src/switch/machine.js";
import { type RecordEvidence, withReconciled, withRecord } from "../../src/switch/record-reconcile.js";
import { type ReadyView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

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

const CFG: SwitchConfig = { ...SWITCH_CFG, account: ACCOUNT };
const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });
const logs = (r: ReadyView) => r.events.flatMap((e) => logLineOf(e)?.event ?? []);
type Tx = { txTime: number; deadline: number | null; error?: string | null };
/** A record as readFinding gives it: the listed schedules (oldest first, one the day before: it covers the day). */
function evidence(txs: Tx[], fires: RecordEvidence["fires"] = [], readAt = T0): RecordEvidence {
  const schedules = [
    { txTime: T0 - 86_400_000, deadline: T0 - 86_000_000, error: "refused" },
    ...txs.map((t) => ({ txTime: t.txTime, deadline: t.deadline, error: t.error ?? null })),
  ];
  return { at: readAt, schedules, fires, newestTx: Math.max(...schedules.map((x) => x.txTime)) };
}
const lapse = (deadline: number, orders = 0) => ({
  deadline,
  day: utcDay(deadline),
  cancelledOrders: orders,
  proof: orders > 0 ? ("orders" as const) : ("lapse" as const),
});
const own = (o: Partial<Parameters<typeof withRecord>[2]> = {}) => ({
  now: T0,
  marginMs: 10_000,
  sent: [],
  confirmed: [],
  pushLeadMs: 65_000,
  ...o,
});

describe("withRecord: the record corrects the count both ways, where it is fresh", () => {
  test("behavior: a guess is withdrawn when the record lists the daemon's own later push accepted before the deadline", () => {
    const D = T0 - 120_000;
    // the deadline D was confirmed at D - 60 s; the next push (D + 15 s) was applied but never answered
    const guessed = withTrigger(newEntry(ACCOUNT, T0, { limit: 10 }), {
      deadline: D,
      at: D,
      alt: [D + 15_000],
    }).entry;
    expect(guessed.triggers).toEqual([{ deadline: D, proof: "guess", at: D, alt: [D + 15_000] }]);
    const rec = evidence([
      { txTime: D - 60_000, deadline: D },
      { txTime: D - 45_000, deadline: D + 15_000 },
      { txTime: D + 14_000, deadline: D + 74_000 },
    ]);
    const r = withRecord(guessed, rec, own({ sent: [D + 74_000] }));
    expect(r.entry.triggersToday).toBe(0);
    expect(r.entry.triggers).toEqual([]);
    expect(r.changes[0]).toMatchObject({ field: "triggersToday", from: 1, to: 0 });
    // a push this daemon never sent (a guessed hash of a liar) withdraws nothing
    const liar = evidence([
      { txTime: D - 60_000, deadline: D },
      { txTime: D - 45_000, deadline: D + 15_001 },
    ]);
    expect(
      withRecord({ ...guessed, triggers: [{ deadline: D, proof: "guess", at: D }] }, liar, own()).entry
        .triggersToday,
    ).toBe(1);
  });

  test("behavior: ten accepted lapsed schedules without orders count as `record` only where fresh; never exhausted", () => {
    const start = T0 - 3_600_000;
    const txs = Array.from({ length: 10 }, (_, k) => ({
      txTime: start + k * 180_000,
      deadline: start + k * 180_000 + 60_000,
    }));
    const fires = txs.map((t) => lapse(t.deadline!));
    const entry = newEntry(ACCOUNT, T0, { limit: 10 });
    // the record's newest entry is the last schedule's push: its lapse is not yet the record's to prove
    const r = withRecord(entry, evidence(txs, fires), own());
    expect(r.entry.triggersToday).toBe(9);
    expect(r.entry.triggers.every((t) => t.proof === "record")).toBe(true);
    expect(r.notes.join(" ")).toContain("newer than the record's freshness");
    // the daemon's own confirmed pushes in between contradict them
    const confirmed = txs.map((t) => ({ at: t.txTime + 30_000, cancelAt: t.txTime + 90_000 }));
    const listed = evidence(
      [...txs, ...confirmed.map((c) => ({ txTime: c.at - 100, deadline: c.cancelAt }))],
      fires,
    );
    expect(withRecord(entry, listed, own({ confirmed })).entry.triggersToday).toBe(0);
    // a record leaving out a push this daemon saw confirmed proves nothing
    const omits = withRecord(entry, evidence(txs, fires), own({ confirmed }));
    expect(omits.entry.triggersToday).toBe(0);
    expect(omits.notes.join(" ")).toContain("leaves out this daemon's push");
  });

  test("behavior: a record lagging 60 s never counts a removal at a graceful stop as a fire", () => {
    const D = T0 - 20_000; // pushed at D - 60 s, removed at D - 50 s, the daemon restarts at T0
    const removed = withRemoval({ ...newEntry(ACCOUNT, T0, { limit: 10 }), armedUntil: D }, D - 50_000);
    expect(removed.removals).toEqual([D]);
    // lagging: lists the push, not the removal; even read later (fresh by time), the removal is honoured
    const lagging = evidence(
      [
        { txTime: D - 60_000, deadline: D },
        { txTime: T0 + 60_000, deadline: T0 + 120_000 },
      ],
      [lapse(D)],
      T0 + 61_000,
    );
    const r = withRecord(removed, lagging, own({ now: T0 + 61_000 }));
    expect(r.entry.triggersToday).toBe(0);
    expect(r.notes.join(" ")).toContain("removed by this daemon");
    // without the ledger's removal the same record would have counted it
    expect(
      withRecord({ ...removed, removals: [] }, lagging, own({ now: T0 + 61_000 })).entry.triggersToday,
    ).toBe(1);
  });

  test("behavior: scheduledCancel orders upgrade a guess to `orders` (counted once); a record of another day changes nothing", () => {
    const D = T0 - 120_000;
    const guessed = withTrigger(newEntry(ACCOUNT, T0, { limit: 10 }), { deadline: D, at: D }).entry;
    const r = withRecord(guessed, evidence([{ txTime: D - 60_000, deadline: D }], [lapse(D, 2)]), own());
    expect(r.entry.triggersToday).toBe(1);
    expect(r.entry.triggers).toEqual([{ deadline: D, proof: "orders", at: T0 }]);
    const yesterday = withRecord(guessed, { ...evidence([], [lapse(D, 2)]), at: T0 - 86_400_000 }, own());
    expect(yesterday.entry).toBe(guessed);
  });

  test("default: a ledger file from before provenance reads, its count of unrecorded proof", () => {
    const old = {
      account: ACCOUNT,
      day: DAY,
      triggersToday: 3,
      limit: 10,
      assumed: false,
      armedUntil: null,
      lastPushAt: null,
      pendingUntil: null,
      lastCountedDeadline: null,
      history: [],
    };
    const entry = LedgerEntry.parse(old);
    expect(entry).toMatchObject({ triggers: [], limitRefusedAt: null, removals: [] });
    const m = initialModel(CFG, entry);
    expect(status(m, at(0)).triggerProofs).toMatchObject({ unrecorded: 3, guess: 0 });
    // a fire the record proves takes the place of one of them: the count stays 3
    const r = withRecord(
      entry,
      evidence([{ txTime: T0 - 200_000, deadline: T0 - 140_000 }], [lapse(T0 - 140_000, 1)]),
      own(),
    );
    expect(r.entry.triggersToday).toBe(3);
    expect(r.entry.triggers).toEqual([{ deadline: T0 - 140_000, proof: "orders", at: T0, slot: true }]);
  });
});

describe("the switch machine's `record` event", () => {
  const started = (entry = newEntry(ACCOUNT, T0, { limit: 10 })): SwitchModel =>
    step(initialModel(CFG, entry), { type: "start" }, at(0)).model;

  test("behavior: orders proving the limit make it exhausted (trigger.exhausted), and the pushes still go on until the exchange refuses", () => {
    const start = T0 - 3_600_000;
    const txs = Array.from({ length: 10 }, (_, k) => ({
      txTime: start + k * 180_000,
      deadline: start + k * 180_000 + 60_000,
    }));
    const r = step(
      started(),
      {
        type: "record",
        evidence: evidence(
          txs,
          txs.map((t) => lapse(t.deadline!, 1)),
        ),
      },
      at(10),
    );
    expect(r.model.entry.triggersToday).toBe(10);
    expect(status(r.model, at(10)).exhausted).toBe(true);
    expect(logs(r.ready)).toContain("trigger.exhausted");
    expect(logs(r.ready)).toContain("ledger.reconciled");
    const m = step(r.model, { type: "pushConfirmed", id: 1, latencyMs: 10 }, at(30)).model;
    expect(step(m, { type: "tick" }, at(15_000)).ready.send).toMatchObject({ kind: "push" });
  });

  test("behavior: a lying record of ten lapses raises the count beside, not exhaustion: limit suspected, pushes continue", () => {
    const start = T0 - 3_600_000;
    const txs = Array.from({ length: 11 }, (_, k) => ({
      txTime: start + k * 180_000,
      deadline: start + k * 180_000 + 60_000,
    }));
    const r = step(
      started(),
      {
        type: "record",
        evidence: evidence(
          txs,
          txs.map((t) => lapse(t.deadline!)),
        ),
      },
      at(10),
    );
    expect(r.model.entry.triggersToday).toBe(10);
    expect(status(r.model, at(10))).toMatchObject({ exhausted: false, limitSuspected: true });
    expect(logs(r.ready)).toContain("trigger.limit_suspected");
    expect(logs(r.ready)).not.toContain("trigger.exhausted");
    // the push asked for at start is still in flight and its answer is taken
    expect(inflight(r.model)?.id).toBe(1);
    const m = step(r.model, { type: "pushConfirmed", id: 1, latencyMs: 10 }, at(20)).model;
    expect(m.entry.armedUntil).toBe(T0 + 60_000);
  });
});
