/**
 * The write-ahead rule, the machine's (src/switch/write-ahead.ts): a push's intent is written durably before its
 * request leaves (the Ready's `mustSync`) unless what the ledger file may hold after a crash already tells a
 * restart all it would, and a restart's nonces start above the push's. The machine learns what the file holds
 * from the driver's `persisted` events. Pure: (model, event, now) → ReadyView; no disk.
 */
import { describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";
import { newEntry, withIntent, withLimitReached } from "../../src/switch/ledger-model.js";
import {
  type Event,
  initialModel,
  type Now,
  type SwitchModel,
  UNSYNCED_KEPT,
} from "../../src/switch/machine.js";
import { writeAheadCoverage } from "../../src/switch/write-ahead.js";
import { type ReadyView, type StepView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const SPAN = { requestTimeoutMs: 5_000, deadlineMs: 60_000 };
const CFG = { ...SWITCH_CFG, nonceSpan: SPAN };
/** `ms` after T0 on both clocks; the signer's last nonce is the clock's (as NonceSource hands them out). */
const at = (ms: number, nonce = T0 + ms): Now => ({ mono: ms, wall: T0 + ms, nonce });

/** One switch's machine, stepped by hand, remembering each Ready. */
function machine(start: number = T0, cfg: Partial<typeof CFG> = {}) {
  let model: SwitchModel = initialModel({ ...CFG, ...cfg }, newEntry(CFG.account, start, { limit: 10 }));
  const s = {
    get model() {
      return model;
    },
    ready: null as ReadyView | null,
    step(event: Event, now: Now): ReadyView {
      const r: StepView = step(model, event, now);
      model = r.model;
      s.ready = r.ready;
      return r.ready;
    },
    /** the driver's report: the write of the last Ready's entry is durable, the file written at `updatedAt` */
    persisted(ready: ReadyView, now: Now, updatedAt = now.wall) {
      expect(ready.entrySeq).toBeDefined();
      return s.step({ type: "persisted", seq: ready.entrySeq!, updatedAt }, now);
    },
  };
  return s;
}

/** A started switch whose first push is confirmed and on disk at `ms` (the file written then). */
function armed(ms = 0, cfg: Partial<typeof CFG> = {}) {
  const sw = machine(T0, cfg);
  const first = sw.step({ type: "start" }, at(ms));
  sw.persisted(first, at(ms + 5));
  const confirmed = sw.step({ type: "pushConfirmed", id: 1, latencyMs: 10 }, at(ms + 10));
  sw.persisted(confirmed, at(ms + 20));
  return sw;
}

const pushOf = (r: ReadyView) => (r.send?.kind === "push" ? r.send : undefined);

describe("write-ahead: the machine decides whether a push waits for its intent to be durable", () => {
  test("behavior: nothing known on disk → written ahead; a later deadline the file covers → sent at once, nothing written", () => {
    const sw = machine();
    // This run knows nothing durable yet: the first push is written ahead.
    const first = sw.step({ type: "start" }, at(0));
    expect(first).toMatchObject({ mustSync: true, syncBudgetMs: 5_000, entrySeq: 1 });
    expect(first.entry?.pendingUntil).toBe(T0 + 60_000);
    sw.persisted(first, at(5));
    const confirmed = sw.step({ type: "pushConfirmed", id: 1, latencyMs: 10 }, at(10));
    expect(confirmed).toMatchObject({ mustSync: false, entrySeq: 2 });
    // The confirmation's write is not reported durable yet: the next push is written ahead.
    const early = sw.step({ type: "tick" }, at(15_000));
    expect(early.mustSync).toBe(true);
    sw.persisted(early, at(15_005));
    sw.step({ type: "pushConfirmed", id: 2, latencyMs: 10 }, at(15_010));
    const c2 = sw.ready!;
    sw.persisted(c2, at(15_020));
    // 15 s later: a later deadline on the same day, nothing else changed: no entry at all, the request at once.
    const covered = sw.step({ type: "tick" }, at(30_000));
    expect(covered.entry).toBeUndefined();
    expect(covered.mustSync).toBe(false);
    expect(pushOf(covered)).toMatchObject({ id: 3, cancelAt: T0 + 90_000 });
    expect(sw.model.disk.covered).toBe(1);
    // in memory all the same: the exchange holds the confirmed deadline or this one
    expect(sw.model.entry).toMatchObject({ armedUntil: T0 + 75_000, pendingUntil: T0 + 90_000 });
  });

  test("behavior: an earlier deadline (an engine-down expedite) is written ahead", () => {
    const sw = armed();
    sw.step({ type: "engine", up: false, detail: "down" }, at(1_000));
    const expedite = sw.ready!;
    expect(pushOf(expedite)?.cancelAt).toBe(T0 + 1_000 + 5_500);
    expect(expedite.mustSync).toBe(true);
    expect(expedite.entry?.pendingUntil).toBe(T0 + 6_500);
    expect(sw.model.disk.covered).toBe(0);
  });

  test("behavior: while an entry handed to the store is not known durable, a push is covered only if it covers it too", () => {
    const sw = armed();
    const c1 = sw.model.disk.entry!;
    // The file holds the confirmation; an entry with the daily-limit refusal was handed over and is not durable:
    // a crash may leave either, and the second does not say what the push's intent would.
    const next = withIntent(c1, T0 + 75_000);
    const limit = withLimitReached(c1, T0 + 1_000, "x", 50);
    const disk = sw.model.disk;
    expect(writeAheadCoverage(disk, next, SPAN, T0 + 15_000)).toEqual({ entry: true, floor: true });
    const pending = { ...disk, unsynced: [{ seq: disk.seq + 1, entry: limit }] };
    expect(writeAheadCoverage(pending, next, SPAN, T0 + 15_000)).toEqual({ entry: false, floor: true });
    // Through the steps: the confirmation of push 2 is handed over, not reported; push 3 is written ahead, and
    // once that write is reported the next one is covered.
    const p2 = sw.step({ type: "tick" }, at(15_000));
    expect(p2.mustSync).toBe(false);
    const c2 = sw.step({ type: "pushConfirmed", id: 2, latencyMs: 10 }, at(15_010));
    const p3 = sw.step({ type: "tick" }, at(30_000));
    expect(p3.mustSync).toBe(true);
    expect(sw.model.disk.unsynced.map((u) => u.seq)).toEqual([c2.entrySeq, p3.entrySeq]);
    // reported out of order: the older write says the later one may still be in flight
    sw.persisted(c2, at(30_001));
    expect(sw.model.disk.unsynced.map((u) => u.seq)).toEqual([p3.entrySeq]);
    sw.persisted(p3, at(30_002));
    sw.step({ type: "pushConfirmed", id: 3, latencyMs: 10 }, at(30_010));
    sw.persisted(sw.ready!, at(30_020));
    expect(sw.step({ type: "tick" }, at(45_000)).mustSync).toBe(false);
    expect(sw.model.disk.covered).toBe(2);
  });

  test("behavior: coverage ends where a restart would start its nonces below this push's, and at 00:00 UTC", () => {
    // A restart from the file written at 20 ms starts its nonces above 20 ms + 65 s: a push signed at 64.5 s (+ the
    // 1 s the signing may take) is not covered.
    const sw = armed();
    expect(sw.model.disk.updatedAt).toBe(T0 + 20);
    const late = sw.step({ type: "tick" }, at(64_500));
    expect(late.mustSync).toBe(true);
    // A signer whose last nonce ran ahead of the clock (another account's pushes on the same key) ends it too.
    const ahead = armed();
    expect(ahead.step({ type: "tick" }, at(15_000, T0 + 64_500)).mustSync).toBe(true);
    expect(armed().step({ type: "tick" }, at(15_000, T0 + 60_000)).mustSync).toBe(false);
    // A signer's nonce that is not a number bounds nothing: written ahead.
    expect(armed().step({ type: "tick" }, at(15_000, Number.NaN)).mustSync).toBe(true);
    // Without the nonce span (a daemon that does not say how its nonces restart) every push is written ahead.
    const none = armed(0, { nonceSpan: undefined });
    expect(none.step({ type: "tick" }, at(15_000)).mustSync).toBe(true);
    // The next push's deadline on the next UTC day: written ahead (a restart keeps that day's trigger pending).
    const nightAt = (tickMs: number) => {
      const night = machine(Date.UTC(2026, 0, 1, 23, 58, 30));
      const t = Date.UTC(2026, 0, 1, 23, 58, 30) - T0;
      night.persisted(night.step({ type: "start" }, at(t)), at(t + 5));
      night.persisted(night.step({ type: "pushConfirmed", id: 1, latencyMs: 10 }, at(t + 10)), at(t + 20));
      return { night, ready: night.step({ type: "tick" }, at(t + tickMs)), t };
    };
    const before = nightAt(29_000);
    expect(utcDay(pushOf(before.ready)!.cancelAt)).toBe("2026-01-01");
    expect(before.ready.mustSync).toBe(false);
    const { night, ready } = nightAt(30_000);
    expect(utcDay(pushOf(ready)!.cancelAt)).toBe("2026-01-02");
    expect(ready.mustSync).toBe(true);
    expect(night.model.disk.covered).toBe(0);
  });

  test("behavior: `persisted` for an entry the machine does not hold says nothing; too many unsynced → none covered", () => {
    const sw = armed();
    const before = sw.model.disk;
    sw.step({ type: "persisted", seq: 999, updatedAt: T0 + 50_000 }, at(100));
    expect(sw.model.disk).toEqual(before);
    // a malformed report is refused, the model unchanged
    const bad = sw.step({ type: "persisted", seq: Number.NaN, updatedAt: 1 }, at(101));
    expect(bad.events.map((e) => e.type)).toEqual(["eventRefused"]);
    // More entries handed over than are kept: nothing is covered until a later one is reported durable.
    const c = before.entry!;
    const full = {
      ...before,
      unsynced: Array.from({ length: UNSYNCED_KEPT }, (_, i) => ({ seq: i + 10, entry: c })),
      seq: UNSYNCED_KEPT + 10,
      overflow: true,
    };
    expect(writeAheadCoverage(full, withIntent(c, T0 + 75_000), SPAN, T0 + 15_000).entry).toBe(false);
    expect(
      writeAheadCoverage({ ...full, overflow: false }, withIntent(c, T0 + 75_000), SPAN, T0 + 15_000).entry,
    ).toBe(true);
  });
});
