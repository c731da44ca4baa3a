import { describe, expect, test } from "vitest";
import type { ExplorerTx, HistoricalOrder } from "../../src/protocol/hyperliquid/schemas.js";
import {
  type LedgerView,
  type RecordUnavailable,
  readFinding,
  reconcileLedger,
} from "../../src/switch/record.js";

const USER = "0x1111111111111111111111111111111111111111";
const DAY = Date.parse("2026-11-23T00:00:00Z");
const H = 3_600_000;
let n = 0;

function tx(time: number, action: Record<string, unknown>, error: string | null = null): ExplorerTx {
  n++;
  return {
    action: { type: "scheduleCancel", ...action },
    block: n,
    error,
    hash: `0x${n.toString(16).padStart(64, "0")}`,
    time,
    user: USER,
  };
}
function order(oid: number, status: string, statusTimestamp: number): HistoricalOrder {
  return { order: { coin: "BTC", oid, timestamp: statusTimestamp - 60_000 }, status, statusTimestamp };
}
/** pushes every 15 s from `from`, each setting now + 60 s, the last one at `last` */
function pushes(from: number, last: number): ExplorerTx[] {
  const out: ExplorerTx[] = [];
  for (let t = from; t <= last; t += 15_000) out.push(tx(t, { time: t + 60_000 }));
  return out.reverse(); // the explorer lists newest first
}

describe("readFinding", () => {
  test("default: replaced deadlines do not fire; the last one lapsed and its orders say scheduledCancel", () => {
    const last = DAY + 10 * H;
    const txs = [...pushes(DAY - H, last), tx(DAY - 2 * H, { type: "order" } as never)];
    const orders = [
      order(1, "scheduledCancel", last + 60_000 + 40),
      order(2, "scheduledCancel", last + 60_000 + 40),
      order(3, "canceled", last - 5 * 60_000),
      order(4, "marginCanceled", last - 4 * 60_000),
    ];
    const f = readFinding(txs, orders, last + 5 * 60_000);
    expect(f.fires).toEqual([
      { deadline: last + 60_000, day: "2026-11-23", cancelledOrders: 2, proof: "orders" },
    ]);
    expect(f.firesToday).toBe(1);
    expect(f.lastAccepted?.deadline).toBe(last + 60_000);
    expect(f.armedUntil).toBeNull();
    expect(f.coversDay).toBe(true);
  });

  test("behavior: two fires seconds apart (a lapse, then a drill): each order pairs with the latest deadline before it", () => {
    // a lapse at D1; pushes resume; a drill pushes D2 = D1 + 20 s and lets it fire; each cancels orders at its own time
    const d1 = DAY + 10 * H;
    const d2 = d1 + 20_000;
    const txs = [
      tx(d2 - 8_000, { time: d2 }),
      tx(d1 + 5_000, { time: d1 + 65_000 }),
      tx(d1 - 60_000, { time: d1 }),
    ];
    // (the push at d1 + 5 s for d1 + 65 s was replaced by the drill's at d2 − 8 s)
    const orders = [
      order(1, "scheduledCancel", d1),
      order(2, "scheduledCancel", d1),
      order(3, "scheduledCancel", d2),
      order(4, "scheduledCancel", d2),
      order(5, "scheduledCancel", d2),
    ];
    const f = readFinding(txs, orders, d2 + 60_000);
    expect(f.fires).toEqual([
      { deadline: d1, day: "2026-11-23", cancelledOrders: 2, proof: "orders" },
      { deadline: d2, day: "2026-11-23", cancelledOrders: 3, proof: "orders" },
    ]);
  });

  test("a schedule still in the future is armed, not fired", () => {
    const now = DAY + 5 * H;
    const f = readFinding(pushes(now - 60_000, now - 1_000), [], now);
    expect(f.fires).toEqual([]);
    expect(f.armedUntil).toBe(now + 45_000); // the last push, at now − 15 s, set now + 45 s
  });

  test("a refused push (error string) arms nothing and is counted as refused", () => {
    const now = DAY + 5 * H;
    const refusal =
      "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $0.";
    const f = readFinding([tx(now - 10_000, { time: now - 1_000 }, refusal)], [], now);
    expect(f.fires).toEqual([]);
    expect(f.lastAccepted).toBeNull();
    expect(f.refusedToday).toBe(1);
    expect(f.lastRefusal).toBe(refusal);
  });

  test("a lapse without scheduledCancel orders still counts (the safe side), yesterday's fire does not count today", () => {
    const now = DAY + 2 * H;
    const txs = [tx(DAY - H, { time: DAY - H + 30_000 }), tx(DAY + H, { time: DAY + H + 30_000 })].reverse();
    const f = readFinding(txs, [order(9, "scheduledCancel", DAY - H + 30_500)], now);
    expect(f.fires.map((x) => [x.day, x.proof])).toEqual([
      ["2026-11-22", "orders"],
      ["2026-11-23", "lapse"],
    ]);
    expect(f.firesToday).toBe(1);
  });

  test("a removal (no time) ends the schedule: no fire", () => {
    const now = DAY + 2 * H;
    const f = readFinding(
      [tx(DAY + H, { time: DAY + H + 60_000 }), tx(DAY + H + 10_000, {})].reverse(),
      [],
      now,
    );
    expect(f.fires).toEqual([]);
    expect(f.lastAccepted?.deadline).toBeNull();
    expect(f.coversDay).toBe(false);
  });

  test("scheduledCancel orders no listed schedule explains count as fires, one per cluster", () => {
    const now = DAY + 5 * H;
    const orders = [
      order(1, "scheduledCancel", DAY + H),
      order(2, "scheduledCancel", DAY + H + 300),
      order(3, "scheduledCancel", DAY + 2 * H),
    ];
    const f = readFinding([], orders, now);
    expect(f.fires.map((x) => [x.proof, x.cancelledOrders])).toEqual([
      ["orders-only", 2],
      ["orders-only", 1],
    ]);
    expect(f.firesToday).toBe(2);
    expect(f.coversDay).toBe(false);
  });
});

const base: LedgerView = {
  day: "2026-11-23",
  triggersToday: 0,
  assumed: false,
  armedUntil: null,
  pendingUntil: null,
};

describe("reconcileLedger", () => {
  const now = DAY + 5 * H;
  const oneFire = readFinding(
    [tx(DAY + H, { time: DAY + H + 60_000 })],
    [order(1, "scheduledCancel", DAY + H + 60_010)],
    now,
  );
  const oneFireWholeDay = readFinding(
    [
      tx(DAY + H, { time: DAY + H + 60_000 }),
      tx(DAY - H, { time: DAY - H + 10_000 }),
      tx(DAY - H + 1, {}),
    ].reverse(),
    [order(1, "scheduledCancel", DAY + H + 60_010)],
    now,
  );

  test("default: a deleted ledger (0) is raised to what the record shows", () => {
    const out = reconcileLedger(base, oneFire);
    expect(out.ledger.triggersToday).toBe(1);
    expect(out.changes).toHaveLength(1);
    expect(out.changes[0]).toMatchObject({ field: "triggersToday", from: 0, to: 1 });
    expect(out.changes[0]!.reason).toContain("1 fire(s) today");
  });

  test("a counted ledger is never lowered, even by a record that covers the day", () => {
    const out = reconcileLedger({ ...base, triggersToday: 3 }, oneFireWholeDay);
    expect(out.ledger.triggersToday).toBe(3);
    expect(out.changes).toEqual([]);
  });

  test("an assumed count is lowered only when the record covers the whole day", () => {
    const assumed = { ...base, triggersToday: 10, assumed: true };
    const partial = reconcileLedger(assumed, oneFire);
    expect(partial.ledger).toEqual(assumed);
    expect(partial.notes.join()).toContain("does not reach back to 00:00 UTC");
    const whole = reconcileLedger(assumed, oneFireWholeDay);
    expect(whole.ledger.triggersToday).toBe(1);
    expect(whole.ledger.assumed).toBe(false);
    expect(whole.changes.map((c) => c.field)).toEqual(["triggersToday", "assumed"]);
  });

  test("a guessed count is lowered the same way", () => {
    const out = reconcileLedger({ ...base, triggersToday: 2, guessed: true }, oneFireWholeDay);
    expect(out.ledger.triggersToday).toBe(1);
    expect(out.ledger.guessed).toBe(false);
  });

  test("an unavailable record changes nothing", () => {
    const down: RecordUnavailable = {
      available: false,
      reason: "error",
      detail: "explorer userDetails: transport",
    };
    const view = { ...base, triggersToday: 10, assumed: true };
    const out = reconcileLedger(view, down);
    expect(out.ledger).toEqual(view);
    expect(out.changes).toEqual([]);
    expect(out.notes[0]).toContain("record unavailable (error)");
  });

  test("a pending push the record lists as accepted becomes the armed deadline", () => {
    const deadline = now + 45_000;
    const f = readFinding([tx(now - 15_000, { time: deadline })], [], now);
    const out = reconcileLedger({ ...base, pendingUntil: deadline }, f);
    expect(out.ledger.armedUntil).toBe(deadline);
    expect(out.ledger.pendingUntil).toBeNull();
  });
});
