/**
 * Issue 25, pure checks: the exchange's time as a bounded estimate inside the machine (exchange-time.ts), the
 * nonce floor re-derived from the exchange's own answer, and the fail-safe step (no event throws out of `step`).
 */
import { describe, expect, test } from "vitest";
import { NonceSource } from "../../src/protocol/hyperliquid/nonce.js";
import { logLineOf } from "../../src/surface/switch/index.js";
import {
  BRIDGE_MS,
  initialTime,
  type TimeModel,
  takeBlock,
  takeSample,
  timeRefused,
  timesAt,
  timeVerdict,
} from "../../src/switch/exchange-time.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import { type Event, initialModel, type Now, status, timesOf } from "../../src/switch/machine.js";
import { type ReadyView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (mono: number, wallOffset = 0): Now => ({ mono, wall: T0 + mono + wallOffset });
/** The exchange accepted a push planned on `planMs` at `mono` (a verdict: its time was at most cancel time − 5 s). */
const accepted = (t: TimeModel, planMs: number, mono: number) =>
  timeVerdict(t, { kind: "accepted", cancelAt: planMs + 60_000, askedMono: mono, planMs });
const logs = (r: ReadyView) => r.events.flatMap((e) => logLineOf(e)?.event ?? []);
const sample = (date: number, sentMono: number, receivedMono: number): Event => ({
  type: "clockSample",
  date,
  sentMono,
  receivedMono,
});

describe("exchange time: a bounded estimate", () => {
  test("behavior: a Date, even with the local clock agreeing, verifies nothing; with the exchange's acceptance of a push planned on it, it does; a later one outside the window is refused", () => {
    const t0 = initialTime(0, T0, null);
    const alone = takeSample(t0, { date: T0 + 1_000, sentMono: 900, receivedMono: 1_100 }, T0 + 1_100);
    expect(alone.verdict).toMatchObject({ kind: "applied", verified: false });
    expect(timesAt(alone.time, 1_100, T0 + 1_100)).toMatchObject({ verified: false, witnessed: false });
    // the block agreeing with the local clock verifies nothing either
    const block = takeBlock(t0, { timestampSec: T0 / 1000, sentMono: 0, receivedMono: 100 }, T0 + 100);
    expect(timesAt(block.time, 100, T0 + 100).witnessed).toBe(false);
    // the exchange accepted a push planned on T0 + 1 s at mono 1,000: the Date agrees with that verdict
    const a = takeSample(
      accepted(t0, T0 + 1_000, 1_000),
      { date: T0 + 1_000, sentMono: 900, receivedMono: 1_100 },
      T0 + 1_100,
    );
    expect(a.verdict).toMatchObject({ kind: "applied", verified: true });
    expect(a.time.verifiedBy).toBe("date+verdict");
    expect(timesAt(a.time, 1_100, T0 + 1_100)).toMatchObject({ verified: true, suspect: false });
    // the verdict after the Date verifies it too
    const later = accepted(alone.time, T0 + 1_000, 1_000);
    expect(later.verifiedBy).toBe("date+verdict");
    // a push planned 2 h ahead (the local clock) and accepted says nothing about a true Date
    const ahead = takeSample(
      accepted(initialTime(0, T0 + 7_200_000, null), T0 + 7_201_000, 1_000),
      { date: T0 + 1_000, sentMono: 900, receivedMono: 1_100 },
      T0 + 7_201_100,
    );
    expect(timesAt(ahead.time, 1_100, T0 + 7_201_100).witnessed).toBe(false);
    // 20 h ahead, 60 s later on the monotonic clock: outside the window, off the local clock
    const b = takeSample(
      a.time,
      { date: T0 + 72_060_000, sentMono: 61_000, receivedMono: 61_100 },
      T0 + 61_100,
    );
    expect(b.verdict).toMatchObject({ kind: "refused", reason: "outside_window" });
    expect(b.time.offset).toBe(a.time.offset);
  });

  test("behavior: the exchange's acceptance never verifies a Date a block disagrees with (it bounds the time from above only)", () => {
    const ahead = 72_000_000;
    // the local clock 20 h ahead, a true block, then a push planned on the local clock accepted
    let t = initialTime(0, T0 + ahead, null);
    t = takeBlock(t, { timestampSec: T0 / 1000, sentMono: 0, receivedMono: 100 }, T0 + ahead + 100).time;
    t = accepted(t, T0 + ahead, 0);
    // a Date 20 h ahead agrees with that plan, and is not verified: the block says otherwise
    const wrong = takeSample(
      t,
      { date: T0 + ahead + 1_000, sentMono: 900, receivedMono: 1_100 },
      T0 + ahead + 1_100,
    );
    expect(wrong.verdict).toMatchObject({ kind: "applied", verified: false });
    expect(timesAt(wrong.time, 1_100, T0 + ahead + 1_100)).toMatchObject({ witnessed: false, suspect: true });
    // pushes are planned on the earliest candidate, the block (the time its acceptance then rules the others out on)
    expect(timesAt(wrong.time, 1_100, T0 + ahead + 1_100).plan).toBeLessThan(T0 + 5_000);
    // a true Date agrees with the block: verified on the two
    const right = takeSample(
      wrong.time,
      { date: T0 + 2_000, sentMono: 1_900, receivedMono: 2_100 },
      T0 + ahead + 2_100,
    );
    expect(right.verdict).toMatchObject({ kind: "applied", verified: true });
    expect(right.time.verifiedBy).toBe("date+block");
    // a wrong block (an RPC 12 h ahead) that the acceptance rules out speaks against nothing: a true Date the
    // acceptance of a push planned on it confirms is verified
    let w = initialTime(0, T0, null);
    w = takeBlock(
      w,
      { timestampSec: (T0 + 43_200_000) / 1000, sentMono: 0, receivedMono: 100 },
      T0 + 100,
    ).time;
    const byVerdict = takeSample(
      accepted(w, T0 + 1_000, 1_000),
      { date: T0 + 1_000, sentMono: 900, receivedMono: 1_100 },
      T0 + 1_100,
    );
    expect(byVerdict.time.verifiedBy).toBe("date+verdict");
  });

  test("error: not a date, or an absurd year, is refused as malformed and changes nothing", () => {
    const t0 = initialTime(0, T0, null);
    for (const [date, reason] of [
      [Number.NaN, "not_a_date"],
      [8.64e15, "out_of_range"],
      [-1, "out_of_range"],
      [Number.POSITIVE_INFINITY, "not_a_date"],
    ] as const) {
      const r = takeSample(t0, { date, sentMono: 0, receivedMono: 10 }, T0 + 10);
      expect(r.verdict).toMatchObject({ kind: "refused", reason });
      expect(r.time).toBe(t0);
    }
  });

  test("behavior: the window is anchored on the last verified time + monotonic time elapsed, not on the local clock", () => {
    const a = takeSample(
      accepted(initialTime(0, T0, null), T0, 0),
      { date: T0, sentMono: 0, receivedMono: 0 },
      T0,
    ).time;
    // the local clock stepped 10 min back: a true Date 60 s later still fits the window, and is applied
    const b = takeSample(a, { date: T0 + 60_000, sentMono: 60_000, receivedMono: 60_000 }, T0 - 540_000);
    expect(b.verdict).toMatchObject({ kind: "applied", verified: true });
    const t = timesAt(b.time, 60_000, T0 - 540_000);
    expect(t.suspect).toBe(true);
    // two witnesses verified it (issue 40): lapses, cancel times and the UTC day on the exchange's time, whatever
    // the local clock says; not ready while the local clock disagrees
    expect(t.act).toBe(T0 + 60_000);
    expect(t.plan).toBe(T0 + 60_000);
    expect(t.day).toBe(T0 + 60_000);
    expect(t.witnessed).toBe(true);
    expect(t.verified).toBe(false);
  });

  test("behavior: readiness is judged on the later of the two clocks, also within the suspect bound", () => {
    // a Date 3 s behind (3.5 s with its truncation to the second): applied and verified (a push planned on it was
    // accepted), so the estimate the switch acts on is 3 s behind the local clock
    const a = takeSample(
      accepted(initialTime(0, T0, null), T0 - 3_000, 0),
      { date: T0 - 3_000, sentMono: 0, receivedMono: 0 },
      T0,
    );
    expect(a.verdict).toMatchObject({ kind: "applied", verified: true });
    const t = timesAt(a.time, 10_000, T0 + 10_000);
    expect(t.suspect).toBe(false);
    expect(t.exchange).toBe(T0 + 10_000 - 2_500);
    // a schedule is as close as the later clock says: readiness on the local clock here, the estimate when ahead
    expect(t.ready).toBe(T0 + 10_000);
    expect(timesAt(a.time, 10_000, T0 + 4_000).ready).toBe(T0 + 10_000 - 2_500);
  });

  test("behavior: repeated expired / too-early refusals switch to the other source", () => {
    // a Date 120 s behind was taken while nothing else was known (within the bridge, the local clock ahead)
    let t = initialTime(0, T0 - 300_000, null);
    t = takeSample(t, { date: T0 - 299_000, sentMono: 0, receivedMono: 0 }, T0 - 300_000).time;
    // the local clock is then found 4 min ahead of the estimate: suspect, bridged on the later
    expect(timesAt(t, 10_000, T0 - 50_000).suspect).toBe(true);
    const once = timeRefused(t, 10_000, T0 - 50_000);
    expect(once.switched).toBe(false);
    const twice = timeRefused(once.time, 11_000, T0 - 49_000);
    expect(twice.switched).toBe(true);
    // the estimate moved to the other source (the local clock): they agree again
    expect(timesAt(twice.time, 11_000, T0 - 49_000).suspect).toBe(false);
  });
});

describe("the machine takes Date samples as events", () => {
  const entry = newEntry(SWITCH_CFG.account, T0, { limit: 10 });

  test("behavior: clock.suspect when the two disagree: not ready, the cancel time ahead of both; clock.agreed after", () => {
    let m = step(initialModel(SWITCH_CFG, entry), { type: "start" }, at(0)).model;
    m = step(m, sample(T0, 0, 0), at(0)).model;
    // the local clock jumps 90 s ahead
    const r = step(m, { type: "tick" }, at(15_000, 90_000));
    expect(logs(r.ready)).toContain("clock.suspect");
    expect(r.ready.events).toContainEqual(expect.objectContaining({ type: "clockSuspect" }));
    expect(status(r.model, at(15_000, 90_000)).clockSuspect).toBe(true);
    const back = step(r.model, { type: "tick" }, at(30_000));
    expect(logs(back.ready)).toContain("clock.agreed");
    expect(timesOf(back.model, at(30_000)).suspect).toBe(false);
    expect(BRIDGE_MS).toBeGreaterThan(90_000);
  });

  test("behavior: nonce too high / too low → the floor is re-derived from the exchange's answer", () => {
    const m = step(initialModel(SWITCH_CFG, entry), { type: "start" }, at(0)).model;
    const high = step(
      m,
      {
        type: "pushFailed",
        id: 1,
        kind: "nonce",
        nonceDetail: "too_high",
        message: `Invalid nonce: nonce too high 1791572677029 > 1791486156858`,
        permanent: false,
        retryable: false,
        outcomeUnknown: false,
      },
      at(100),
    );
    expect(high.ready.nonceFloor).toEqual({ floor: 1791486156858 - 86_400_000, reason: "nonce too_high" });
    expect(logs(high.ready)).toContain("nonce.rederived");
    const nonces = new NonceSource({ now: () => 1791572677029 + 5 }, 1791572677029);
    nonces.rebase(1_776_584_799_101);
    expect(nonces.next()).toBe(1791572677034);
    const low = new NonceSource({ now: () => 1_776_584_283_874 }, 0);
    low.rebase(1_776_584_799_101);
    expect(low.next()).toBe(1_776_584_799_102);
  });

  test("behavior: a push refused as nonce too high bounds the exchange's time from above: a local clock 3 d ahead is no longer a candidate", () => {
    const ahead = 3 * 86_400_000;
    // the local clock 3 d ahead from the start, nothing else known: the first push is planned (and signed) on it
    const m = step(initialModel(SWITCH_CFG, entry), { type: "start" }, at(0, ahead)).model;
    expect(timesOf(m, at(0, ahead)).act).toBe(T0 + ahead);
    // the exchange (its time T0) names its bound: T0 + 1 day
    const high = step(
      m,
      {
        type: "pushFailed",
        id: 1,
        kind: "nonce",
        nonceDetail: "too_high",
        message: `Invalid nonce: nonce too high ${T0 + ahead} > ${T0 + 86_400_000}`,
        permanent: false,
        retryable: false,
        outcomeUnknown: false,
      },
      at(100, ahead),
    );
    const times = timesOf(high.model, at(100, ahead));
    // within the second the verdict allows, both ways: a lapse is no longer judged on the local clock
    expect(times.act).toBeLessThanOrEqual(T0 + 100 + 1_000);
    expect(times.plan).toBeGreaterThanOrEqual(T0 + 100 - 1_000);
    expect(times.verified).toBe(false);
  });

  test("behavior: only nonces on verified time, or accepted by the exchange, may seed a restart", () => {
    let verified = false;
    const n = new NonceSource({ now: () => T0 + 129_600_000 }, 0, () => verified);
    n.next();
    expect(n.lastVerified).toBe(0);
    verified = true;
    const ok = n.next();
    expect(n.lastVerified).toBe(ok);
  });
});

describe("fail-safe step: no event throws out of step", () => {
  const entry = newEntry(SWITCH_CFG.account, T0, { limit: 10 });
  const started = () => step(initialModel(SWITCH_CFG, entry), { type: "start" }, at(0)).model;

  test("error: a malformed event is refused and logged, the model unchanged, and the switch pushes on", () => {
    const m = started();
    for (const ev of [
      { type: "pushConfirmed", id: 1, latencyMs: Number.NaN },
      { type: "clockStep", deltaMs: Number.POSITIVE_INFINITY },
      { type: "nope" },
      null,
      { type: "reconciled", view: null, fired: 3 },
    ] as unknown as Event[]) {
      const r = step(m, ev, at(10));
      expect(r.model).toBe(m);
      expect(logs(r.ready)).toEqual(["switch.event_refused"]);
    }
    const bad = step(m, { type: "tick" }, { mono: Number.NaN, wall: T0 });
    expect(bad.model).toBe(m);
    // the last good model still pushes (its answer is taken)
    const ok = step(m, { type: "pushConfirmed", id: 1, latencyMs: 5 }, at(20));
    expect(logs(ok.ready)).toContain("heartbeat.ok");
  });

  test("error: the Date of the year 275760 (the RangeError of issue 25) is refused, nothing throws", () => {
    const m = started();
    const r = step(m, sample(8.64e15, 0, 5), at(5));
    expect(logs(r.ready)).toContain("clock.date_refused");
    expect(() => status(r.model, at(6))).not.toThrow();
    const next = step(r.model, { type: "tick" }, at(15_000));
    expect(logs(next.ready)).not.toContain("switch.event_refused");
  });
});

describe("issue 40: what a wrong clock wrote is repaired", () => {
  test("behavior: a ledger day ahead of the verified time is set back at verification, the count kept, logged, audited, the record read", () => {
    // a run with the local clock 20 h ahead dated the ledger on Jan 2 and counted a trigger there
    const ahead = { ...newEntry(SWITCH_CFG.account, T0 + 72_000_000, { limit: 10 }), triggersToday: 1 };
    expect(ahead.day).toBe("2026-01-02");
    let m = step(initialModel(SWITCH_CFG, ahead), { type: "start" }, at(0)).model;
    // the exchange accepted a push planned on T0; its Date agrees: two witnesses, the time is verified
    m = { ...m, time: accepted(initialTime(0, T0, null), T0, 0) };
    const r = step(m, sample(T0, 0, 0), at(0));
    expect(logs(r.ready)).toContain("clock.verified");
    expect(logs(r.ready)).toContain("ledger.day_repaired");
    expect(r.ready.events).toContainEqual(
      expect.objectContaining({
        type: "dayRepaired",
        from: "2026-01-02",
        to: "2026-01-01",
        triggersToday: 1,
      }),
    );
    expect(r.model.entry.day).toBe("2026-01-01");
    // never fewer than counted: the record decides the day's count
    expect(r.model.entry.triggersToday).toBe(1);
    expect(r.ready.readRecord).toBeDefined();
    expect(r.ready.entry?.day).toBe("2026-01-01");
    // a ledger day not ahead is left alone
    let ok = step(
      initialModel(SWITCH_CFG, newEntry(SWITCH_CFG.account, T0, { limit: 10 })),
      { type: "start" },
      at(0),
    ).model;
    ok = { ...ok, time: accepted(initialTime(0, T0, null), T0, 0) };
    expect(logs(step(ok, sample(T0, 0, 0), at(0)).ready)).not.toContain("ledger.day_repaired");
  });

  test("behavior: a time floor (the ledger's updatedAt) a wrong clock wrote 20 h ahead is no longer believed once a Date and a block agree: set back, logged, audited", () => {
    const floor = T0 + 72_000_000;
    let m = step(
      initialModel(SWITCH_CFG, newEntry(SWITCH_CFG.account, T0, { limit: 10 }), floor),
      { type: "start" },
      at(0),
    ).model;
    // before: the floor rules out every candidate behind it
    expect(timesOf(m, at(0)).plan).toBeGreaterThanOrEqual(floor);
    m = step(m, { type: "blockSample", timestampSec: T0 / 1000, sentMono: 0, receivedMono: 0 }, at(0)).model;
    const r = step(m, sample(T0, 0, 0), at(0));
    expect(logs(r.ready)).toEqual(expect.arrayContaining(["clock.verified", "clock.floor_repaired"]));
    expect(r.ready.events).toContainEqual(
      expect.objectContaining({ type: "timeFloorRepaired", from: floor }),
    );
    expect(r.model.time!.floor).toBeLessThanOrEqual(T0 + 2_000);
    expect(timesOf(r.model, at(1_000)).plan).toBeLessThan(T0 + 5_000);
    // said once
    const again = step(r.model, sample(T0 + 1_000, 1_000, 1_000), at(1_000));
    expect(logs(again.ready)).not.toContain("clock.floor_repaired");
    // a floor not ahead of the verified time is left alone
    let ok = step(
      initialModel(SWITCH_CFG, newEntry(SWITCH_CFG.account, T0, { limit: 10 }), T0 - 60_000),
      { type: "start" },
      at(0),
    ).model;
    ok = step(
      ok,
      { type: "blockSample", timestampSec: T0 / 1000, sentMono: 0, receivedMono: 0 },
      at(0),
    ).model;
    expect(logs(step(ok, sample(T0, 0, 0), at(0)).ready)).not.toContain("clock.floor_repaired");
  });
});
