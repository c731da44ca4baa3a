import { describe, expect, test } from "vitest";
import { createMetrics } from "../../src/surface/metrics.js";
import {
  type LedgerView,
  type RecordFinding,
  readFinding,
  reconcileLedger,
} from "../../src/switch/record.js";
import { cancelReporter, createReconcileReporter } from "../../src/watchers/record-log.js";
import { captureLogger } from "../app/helpers.js";
import { watcherBus } from "../helpers/watcher-bus.js";

const USER = "0x1111111111111111111111111111111111111111";
const DAY = Date.parse("2026-11-23T00:00:00Z");
const view: LedgerView = {
  day: "2026-11-23",
  triggersToday: 0,
  assumed: false,
  armedUntil: null,
  pendingUntil: null,
};
const finding: RecordFinding = readFinding(
  [
    {
      action: { type: "scheduleCancel", time: DAY + 60_000 },
      block: 1,
      error: null,
      hash: "0x01",
      time: DAY,
      user: USER,
    },
  ],
  [
    {
      order: { coin: "BTC", oid: 1, timestamp: DAY },
      status: "scheduledCancel",
      statusTimestamp: DAY + 60_000,
    },
  ],
  DAY + 3_600_000,
);

describe("reconcile log lines", () => {
  test("default: ledger.reconciled says what changed and why; unavailable is said once per outage", () => {
    const log = captureLogger();
    const reconcile = createReconcileReporter({ bus: watcherBus(log.logger), reconcile: reconcileLedger });
    expect(reconcile(USER, view, finding).ledger.triggersToday).toBe(1);
    const line = log.events("ledger.reconciled")[0]!;
    expect(line.account).toBe(USER);
    expect(String(line.msg)).toMatch(/^triggersToday 0 → 1: the record shows 1 fire\(s\) today/);
    const down = {
      available: false as const,
      reason: "error" as const,
      detail: "explorer userDetails: transport",
    };
    reconcile(USER, view, down);
    reconcile(USER, view, down);
    expect(log.events("record.unavailable")).toHaveLength(1);
    reconcile(USER, { ...view, triggersToday: 1 }, finding);
    expect(log.events("record.available")).toHaveLength(1);
    reconcile(USER, view, down);
    expect(log.events("record.unavailable")).toHaveLength(2);
  });

  test("orders.cancelled: counted and logged; not confirmed is an error", async () => {
    const log = captureLogger();
    const metrics = createMetrics({ defaultMetrics: false });
    const onReport = cancelReporter(watcherBus(log.logger, metrics));
    onReport({
      account: USER,
      targeted: [],
      kept: [{ coin: "BTC", oid: 2, orderType: "Stop Market" }],
      statuses: [
        { asset: 0, oid: 1, ok: true },
        {
          asset: 0,
          oid: 3,
          ok: false,
          error: "Order was never placed, already canceled, or filled. asset=0",
        },
      ],
      stillOpen: [],
      confirmed: true,
    });
    onReport({
      account: USER,
      targeted: [],
      kept: [],
      statuses: [],
      stillOpen: [5],
      confirmed: false,
      detail: "1 still open",
    });
    const lines = log.events("orders.cancelled");
    expect(lines.map((l) => [l.level, l.cancelled, l.kept])).toEqual([
      [30, 1, 1],
      [50, 0, 0],
    ]);
    expect((await metrics.ordersCancelled.get()).values[0]!.value).toBe(1);
    expect((await metrics.ordersKept.get()).values[0]!.value).toBe(1);
  });
});
