/**
 * The watchers' wording and metrics (src/surface/watchers/): the typed events the exposure poll publishes become the
 * contract's lines (docs/cli-contract.md) and series; the cases a poll rarely reaches are published here by hand.
 */
import { Registry } from "prom-client";
import { describe, expect, test } from "vitest";
import { createEventBus } from "../../src/core/events.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { exposureLog, exposureMetrics } from "../../src/surface/watchers/exposure.js";
import { captureLogger } from "../app/helpers.js";

const A = `0x${"a".repeat(40)}`;

function world() {
  const log = captureLogger();
  const metrics = createMetrics({ registry: new Registry(), defaultMetrics: false });
  const bus = createEventBus(exposureLog(log.logger), exposureMetrics(metrics));
  return { log, metrics, bus };
}

describe("the exposure poll's events as lines and series", () => {
  test("behavior: an alert ended by its position's closing or its lost liquidation price says which; Infinity is noted", () => {
    const { log, bus } = world();
    const alert = { module: "exposurePoll", type: "exposureAlert", account: A, dex: "xyz" } as const;
    bus.publish({
      ...alert,
      metric: "leverage",
      value: Number.POSITIVE_INFINITY,
      limit: 2,
      change: "raised",
    });
    bus.publish({
      ...alert,
      metric: "liquidationDistancePct",
      coin: "BTC",
      value: null,
      limit: 5,
      change: "closed",
    });
    bus.publish({
      ...alert,
      metric: "liquidationDistancePct",
      coin: "ETH",
      value: null,
      limit: 5,
      change: "noLiquidationPrice",
    });
    expect(log.lines.map(({ time: _t, pid: _p, hostname: _h, ...l }) => l)).toEqual([
      {
        level: 40,
        module: "exposure",
        event: "exposure.alert",
        account: A,
        dex: "xyz",
        metric: "leverage",
        value: null,
        note: "account value is zero or negative with open positions",
        limit: 2,
        msg: `leverage is Infinity (limit 2) for ${A}`,
      },
      {
        level: 30,
        module: "exposure",
        event: "exposure.alert.cleared",
        account: A,
        dex: "xyz",
        metric: "liquidationDistancePct",
        value: null,
        limit: 5,
        coin: "BTC",
        msg: `BTC position closed for ${A}`,
      },
      {
        level: 30,
        module: "exposure",
        event: "exposure.alert.cleared",
        account: A,
        dex: "xyz",
        metric: "liquidationDistancePct",
        value: null,
        limit: 5,
        coin: "ETH",
        msg: `ETH no longer has a liquidation price for ${A}`,
      },
    ]);
  });

  test("behavior: a crashed poll is an error line, uncounted; a failed open-orders read a debug line", async () => {
    const { log, metrics, bus } = world();
    bus.publish({
      module: "exposurePoll",
      type: "exposurePollCrashed",
      reason: "interval",
      kind: "TypeError",
      message: "x",
    });
    const error = new Error("refused");
    bus.publish({ module: "exposurePoll", type: "openOrdersFailed", account: A, error });
    expect(log.events("exposure.failed")).toMatchObject([
      { level: 50, reason: "interval", kind: "TypeError", err: "x", msg: "exposure poll crashed" },
    ]);
    expect(log.events("open_orders.failed")).toMatchObject([
      { level: 20, account: A, err: { message: "refused" }, msg: "reading the open orders failed" },
    ]);
    expect((await metrics.pollFailures.get()).values[0]?.value ?? 0).toBe(0);
  });

  test("behavior: the changed figures set their gauges; a closed position's series go", async () => {
    const { metrics, bus } = world();
    const changed = { module: "exposurePoll", type: "exposureChanged", account: A, dex: "" } as const;
    bus.publish({
      ...changed,
      changes: [
        { figure: "accountValue", value: "1000.5" },
        { figure: "leverage", value: 2.5 },
        { figure: "szi", coin: "BTC", value: "-0.5" },
        { figure: "positionValue", coin: "BTC", value: "50.0" },
        { figure: "liquidationDistancePct", coin: "BTC", value: 12.5 },
      ],
    });
    const series = async () =>
      (await metrics.registry.getMetricsAsJSON())
        .flatMap((m) => m.values.filter((v) => v.labels.account === A).map((v) => `${m.name} ${v.value}`))
        .sort();
    expect(await series()).toEqual([
      "hl_deadman_account_value_usd 1000.5",
      "hl_deadman_leverage_ratio 2.5",
      "hl_deadman_liquidation_distance_ratio 0.125",
      "hl_deadman_position_size -0.5",
      "hl_deadman_position_value_usd 50",
    ]);
    bus.publish({
      ...changed,
      changes: [
        { figure: "closed", coin: "BTC" },
        { figure: "leverage", value: null },
      ],
    });
    expect(await series()).toEqual(["hl_deadman_account_value_usd 1000.5"]);
  });
});
