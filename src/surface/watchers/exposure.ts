/**
 * The exposure poll's events (src/core/events.ts `ExposurePollEvent` and the `exposure` named event;
 * src/watchers/exposure.ts, exposure-report.ts) as log lines and metrics, subscribers of the daemon's bus.
 * - `exposure` (info): the report's line as published, made by a child logger that removes the top-level secret
 *   keys only (no wildcard paths, which pino would walk on every line of every poll);
 * - `exposure.alert` (warn) / `exposure.alert.cleared` (info): once per crossing of a threshold;
 * - `exposure.failed`: a dex's poll failed (warn, counted) or a poll crashed (error); `open_orders.failed` (debug):
 *   a read of an account's open orders (src/watchers/open-orders.ts) failed;
 * - the account and position gauges follow what changed (the report publishes only that), a closed position's
 *   series are removed; the poll's duration and last success.
 */
import type { EventSubscriber, ExposurePollEvent } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";

/** Top-level keys removed from every exposure line (the report removes them from what it publishes too). */
const LINE_REDACT = ["privateKey", "key", "wallet", "signature", "rpcUrl"];

/** A decimal string as a gauge value: the exchange's strings are validated by the report's figures first. */
const gaugeValue = (decimal: string): number => Number(decimal) || 0;

type Alert = Extract<ExposurePollEvent, { type: "exposureAlert" }>;

function alertLine(e: Alert): [Record<string, unknown>, string] {
  const { account, dex, metric, coin, value, limit } = e;
  const fields = {
    event: e.change === "raised" ? "exposure.alert" : "exposure.alert.cleared",
    account,
    ...(dex ? { dex } : {}),
    metric,
    // JSON has no Infinity: leverage without equity is logged as null with a note
    value: value !== null && Number.isFinite(value) ? value : null,
    ...(value === Number.POSITIVE_INFINITY
      ? { note: "account value is zero or negative with open positions" }
      : {}),
    limit,
    ...(coin !== undefined ? { coin } : {}),
  };
  const what = `${metric}${coin ? ` of ${coin}` : ""}`;
  switch (e.change) {
    case "raised":
      return [fields, `${what} is ${value} (limit ${limit}) for ${account}`];
    case "cleared":
      return [fields, `${what} is back within the limit for ${account}`];
    case "noLiquidationPrice":
      return [fields, `${coin} no longer has a liquidation price for ${account}`];
    case "closed":
      return [fields, `${coin} position closed for ${account}`];
  }
}

/** The exposure poll's log lines (on the logger's `{ module: "exposure" }` child). */
export function exposureLog(logger: Logger): EventSubscriber {
  const log = logger.child({ module: "exposure" });
  const lineLog = log.child({}, { redact: { paths: LINE_REDACT, remove: true } });
  return (e) => {
    if (e.module === "exposure") {
      if (e.event !== "exposure") return;
      // the line's fields as the report built them: what the bus adds (level, msg, module) is not a field
      const { level: _level, msg, module: _module, ...fields } = e;
      lineLog.info(fields, msg);
      return;
    }
    if (e.module !== "exposurePoll") return;
    switch (e.type) {
      case "exposureAlert": {
        const [fields, msg] = alertLine(e);
        if (e.change === "raised") log.warn(fields, msg);
        else log.info(fields, msg);
        return;
      }
      case "exposurePollFailed":
        log.warn(
          {
            event: "exposure.failed",
            reason: e.reason,
            ...(e.dex ? { dex: e.dex } : {}),
            kind: e.kind,
            err: e.message,
          },
          `exposure poll failed (${e.kind}); retrying at the next tick`,
        );
        return;
      case "exposurePollCrashed":
        log.error(
          { event: "exposure.failed", reason: e.reason, kind: e.kind, err: e.message },
          "exposure poll crashed",
        );
        return;
      case "openOrdersFailed":
        log.debug(
          { event: "open_orders.failed", account: e.account, err: e.error },
          "reading the open orders failed",
        );
        return;
      case "exposureChanged":
      case "exposurePolled":
        return;
    }
  };
}

/** The exposure metrics: each figure that changed, each poll's duration, failure and last success. */
export function exposureMetrics(metrics: Metrics): EventSubscriber {
  return (e) => {
    if (e.module !== "exposurePoll") return;
    if (e.type === "exposurePollFailed") metrics.pollFailures.inc();
    else if (e.type === "exposurePolled") {
      metrics.pollDuration.observe(e.durationMs / 1000);
      if (e.succeededAt !== null) metrics.lastPoll.set(e.succeededAt / 1000);
    } else if (e.type === "exposureChanged") {
      const labels = { account: e.account, dex: e.dex };
      for (const c of e.changes) {
        switch (c.figure) {
          case "accountValue":
            metrics.accountValue.set(labels, gaugeValue(c.value));
            break;
          case "totalNtlPos":
            metrics.totalNotional.set(labels, gaugeValue(c.value));
            break;
          case "totalMarginUsed":
            metrics.marginUsed.set(labels, gaugeValue(c.value));
            break;
          case "withdrawable":
            metrics.withdrawable.set(labels, gaugeValue(c.value));
            break;
          case "leverage":
            if (c.value === null) metrics.leverage.remove(labels);
            else metrics.leverage.set(labels, c.value);
            break;
          case "szi":
            metrics.positionSize.set({ ...labels, coin: c.coin }, gaugeValue(c.value));
            break;
          case "positionValue":
            metrics.positionValue.set({ ...labels, coin: c.coin }, gaugeValue(c.value));
            break;
          case "liquidationDistancePct":
            // the metric is a ratio (0.05), the figure a percent (5)
            if (c.value === null) metrics.liquidationDistance.remove({ ...labels, coin: c.coin });
            else metrics.liquidationDistance.set({ ...labels, coin: c.coin }, c.value / 100);
            break;
          case "closed": {
            const l = { ...labels, coin: c.coin };
            metrics.positionSize.remove(l);
            metrics.positionValue.remove(l);
            metrics.liquidationDistance.remove(l);
            break;
          }
        }
      }
    }
  };
}
