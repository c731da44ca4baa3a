/**
 * What one polled clearinghouse state turns into: the `exposure` log line, the exposure metrics, and the
 * `exposure.alert` / `exposure.alert.cleared` crossings. The poller (exposure.ts) owns the cadence and the
 * requests; this module owns the figures' way out, and keeps it cheap, since it runs once per account per poll
 * (1,000 accounts every 30 s is a normal configuration; BENCHMARKS.md, exposure):
 *
 * - Metrics are set only when a value changed since the last poll (the exchange's decimal strings are compared,
 *   and converted to numbers only when they differ); a closed position's series are removed.
 * - The log line carries at most `maxLoggedPositions` positions: the largest by notional (|positionValue|), with
 *   `positionCount` and `positionsOmitted` when there are more. An account with 45,000 positions would otherwise
 *   write a multi-MB line every poll; the metrics keep every position.
 * - The exposure log lines are made by a child logger that removes the top-level secret keys only (no wildcard
 *   paths, which pino would walk on every line): the fields are the figures built here, never a key or URL.
 * - Alerts are indexed by account and dex, so clearing one never walks every other account's alerts.
 */

import type { EventBus } from "../core/events.js";
import type { Logger } from "../core/logger.js";
import type { Metrics } from "../surface/metrics.js";
import { type AccountFigures, deriveFigures, type FiguresInput, type PositionFigures } from "./figures.js";

/** Positions written into one `exposure` log line at most (the largest by notional). */
export const MAX_LOGGED_POSITIONS = 20;
/** Positions named in the line's human-readable message at most. */
const MAX_SUMMARY_POSITIONS = 5;

export type ExposureReportThresholds = {
  maxLeverage?: number | undefined;
  minLiquidationDistancePct?: number | undefined;
  maxNotionalUsd?: number | undefined;
};

type AlertMetric = "leverage" | "totalNtlPos" | "liquidationDistancePct";

/** The last values written to the metrics of one account and dex (exchange strings, and the derived numbers). */
type SeriesCache = {
  accountValue: string;
  totalNtlPos: string;
  totalMarginUsed: string;
  withdrawable: string;
  leverage: number | null | undefined;
  positions: Map<string, { szi: string; positionValue: string; liquidationDistance: number | undefined }>;
};

export type ExposureReporter = {
  /** Derives the figures of one account's state, logs its line, updates metrics and alerts. Throws on bad decimals. */
  report(account: string, dex: string, state: FiguresInput, extra: Record<string, unknown>): AccountFigures;
};

export type CreateExposureReporterParameters = {
  /** the poller's logger (module "exposure") */
  log: Logger;
  metrics: Metrics;
  thresholds?: ExposureReportThresholds;
  maxLoggedPositions?: number;
  /** the daemon's event bus: each exposure line is also published there (the status page subscribes) */
  bus?: EventBus | undefined;
};

/** A decimal string as a gauge value: the exchange's strings are validated by deriveFigures first. */
const gaugeValue = (decimal: string): number => Number(decimal) || 0;

/** Top-level keys removed from every exposure line (defence in depth; see the module comment). */
const LINE_REDACT = ["privateKey", "key", "wallet", "signature", "rpcUrl"];

export function createExposureReporter({
  log,
  metrics,
  thresholds = {},
  maxLoggedPositions = MAX_LOGGED_POSITIONS,
  bus,
}: CreateExposureReporterParameters): ExposureReporter {
  const lineLog = log.child({}, { redact: { paths: LINE_REDACT, remove: true } });
  const series = new Map<string, SeriesCache>();
  /** active alerts by account|dex, then by metric|coin */
  const alerts = new Map<string, Map<string, { metric: AlertMetric; coin?: string }>>();

  // ------------------------------------------------------------------------------------------ alerts

  function checkAlert(
    account: string,
    dex: string,
    metric: AlertMetric,
    coin: string | undefined,
    value: number | null,
    limit: number | undefined,
    outside: (value: number, limit: number) => boolean,
  ) {
    if (limit === undefined) return;
    const group = `${account}|${dex}`;
    const id = `${metric}|${coin ?? ""}`;
    const active = alerts.get(group)?.has(id) === true;
    const now = value !== null && outside(value, limit);
    if (now === active) return;
    const fields = {
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
    if (now) {
      let map = alerts.get(group);
      if (!map) {
        map = new Map();
        alerts.set(group, map);
      }
      map.set(id, coin !== undefined ? { metric, coin } : { metric });
      log.warn(
        { event: "exposure.alert", ...fields },
        `${metric}${coin ? ` of ${coin}` : ""} is ${value} (limit ${limit}) for ${account}`,
      );
    } else {
      const map = alerts.get(group);
      map?.delete(id);
      if (map?.size === 0) alerts.delete(group);
      log.info(
        { event: "exposure.alert.cleared", ...fields },
        `${metric}${coin ? ` of ${coin}` : ""} is back within the limit for ${account}`,
      );
    }
  }

  function checkThresholds(account: string, dex: string, f: AccountFigures) {
    // no equity with open notional is as leveraged as it gets: report it as an infinite leverage
    const notional = gaugeValue(f.totalNtlPos);
    const leverage = f.leverage ?? (notional > 0 ? Number.POSITIVE_INFINITY : null);
    checkAlert(account, dex, "leverage", undefined, leverage, thresholds.maxLeverage, (v, l) => v > l);
    checkAlert(account, dex, "totalNtlPos", undefined, notional, thresholds.maxNotionalUsd, (v, l) => v > l);
    const minDistance = thresholds.minLiquidationDistancePct;
    if (minDistance === undefined) return;
    for (const p of f.positions) {
      if (p.liquidationDistancePct === undefined) continue;
      checkAlert(
        account,
        dex,
        "liquidationDistancePct",
        p.coin,
        p.liquidationDistancePct,
        minDistance,
        (v, l) => v < l,
      );
    }
    // a position that closed (or lost its liquidation price) while alerting: clear its alert
    const group = `${account}|${dex}`;
    const active = alerts.get(group);
    if (!active) return;
    for (const [id, key] of active) {
      if (key.metric !== "liquidationDistancePct") continue;
      const pos = f.positions.find((p) => p.coin === key.coin);
      if (pos && pos.liquidationDistancePct !== undefined) continue;
      active.delete(id);
      log.info(
        {
          event: "exposure.alert.cleared",
          account,
          ...(dex ? { dex } : {}),
          metric: key.metric,
          value: null,
          limit: minDistance,
          coin: key.coin,
        },
        `${key.coin} ${pos ? "no longer has a liquidation price" : "position closed"} for ${account}`,
      );
    }
    if (active.size === 0) alerts.delete(group);
  }

  // ------------------------------------------------------------------------------------------ metrics

  function setMetrics(account: string, dex: string, f: AccountFigures) {
    const key = `${account}|${dex}`;
    let cache = series.get(key);
    const labels = { account, dex };
    if (!cache) {
      cache = {
        accountValue: "",
        totalNtlPos: "",
        totalMarginUsed: "",
        withdrawable: "",
        leverage: undefined,
        positions: new Map(),
      };
      series.set(key, cache);
    }
    if (cache.accountValue !== f.accountValue) {
      metrics.accountValue.set(labels, gaugeValue(f.accountValue));
      cache.accountValue = f.accountValue;
    }
    if (cache.totalNtlPos !== f.totalNtlPos) {
      metrics.totalNotional.set(labels, gaugeValue(f.totalNtlPos));
      cache.totalNtlPos = f.totalNtlPos;
    }
    if (cache.totalMarginUsed !== f.totalMarginUsed) {
      metrics.marginUsed.set(labels, gaugeValue(f.totalMarginUsed));
      cache.totalMarginUsed = f.totalMarginUsed;
    }
    if (cache.withdrawable !== f.withdrawable) {
      metrics.withdrawable.set(labels, gaugeValue(f.withdrawable));
      cache.withdrawable = f.withdrawable;
    }
    if (cache.leverage !== f.leverage) {
      if (f.leverage === null) metrics.leverage.remove(labels);
      else metrics.leverage.set(labels, f.leverage);
      cache.leverage = f.leverage;
    }
    const before = cache.positions;
    for (const p of f.positions) {
      const last = before.get(p.coin);
      const distance = p.liquidationDistancePct;
      if (
        last &&
        last.szi === p.szi &&
        last.positionValue === p.positionValue &&
        last.liquidationDistance === distance
      )
        continue;
      const l = { account, dex, coin: p.coin };
      if (!last || last.szi !== p.szi) metrics.positionSize.set(l, gaugeValue(p.szi));
      if (!last || last.positionValue !== p.positionValue)
        metrics.positionValue.set(l, gaugeValue(p.positionValue));
      if (!last || last.liquidationDistance !== distance) {
        if (distance === undefined) metrics.liquidationDistance.remove(l);
        else metrics.liquidationDistance.set(l, distance / 100);
      }
      if (last) {
        last.szi = p.szi;
        last.positionValue = p.positionValue;
        last.liquidationDistance = distance;
      } else
        before.set(p.coin, { szi: p.szi, positionValue: p.positionValue, liquidationDistance: distance });
    }
    // closed positions: drop their series so dashboards do not show a stale size
    if (before.size !== f.positions.length) {
      const open = new Set(f.positions.map((p) => p.coin));
      for (const coin of before.keys()) {
        if (open.has(coin)) continue;
        const l = { account, dex, coin };
        metrics.positionSize.remove(l);
        metrics.positionValue.remove(l);
        metrics.liquidationDistance.remove(l);
        before.delete(coin);
      }
    }
  }

  // ------------------------------------------------------------------------------------------ the line

  function loggedPosition(p: PositionFigures) {
    return {
      coin: p.coin,
      szi: p.szi,
      entryPx: p.entryPx,
      positionValue: p.positionValue,
      unrealizedPnl: p.unrealizedPnl,
      liquidationPx: p.liquidationPx,
      leverageType: p.leverageType,
      leverageValue: p.leverageValue,
      markPx: p.markPx,
      ...(p.liquidationDistancePct !== undefined ? { liquidationDistancePct: p.liquidationDistancePct } : {}),
    };
  }

  return {
    report(account, dex, state, extra) {
      const f = deriveFigures(state);
      const shown = largestPositions(f.positions, maxLoggedPositions);
      const omitted = f.positions.length - shown.length;
      const fields = {
        event: "exposure",
        account,
        ...extra,
        accountValue: f.accountValue,
        totalNtlPos: f.totalNtlPos,
        totalMarginUsed: f.totalMarginUsed,
        withdrawable: f.withdrawable,
        leverage: f.leverage,
        marginUsage: f.marginUsage,
        maintenanceMarginRatio: f.maintenanceMarginRatio,
        positions: shown.map(loggedPosition),
        ...(omitted > 0 ? { positionCount: f.positions.length, positionsOmitted: omitted } : {}),
      };
      const msg = exposureSummary(account, f);
      lineLog.info(fields, msg);
      if (bus) {
        const published: Record<string, unknown> = { ...fields };
        for (const k of LINE_REDACT) delete published[k];
        bus.publish({ ...published, event: "exposure", level: "info", msg, module: "exposure", account });
      }
      setMetrics(account, dex, f);
      checkThresholds(account, dex, f);
      return f;
    },
  };
}

/**
 * The `limit` positions with the largest notional (|positionValue|), in the exchange's order; all of them when
 * there are no more than `limit`. O(n·limit) without sorting the whole list.
 */
export function largestPositions(positions: readonly PositionFigures[], limit: number): PositionFigures[] {
  if (positions.length <= limit) return positions as PositionFigures[];
  const notional = (p: PositionFigures) => Math.abs(Number(p.positionValue) || 0);
  // indices of the current top `limit`, kept with their notional; replace the smallest when a larger one comes
  const top: { index: number; value: number }[] = [];
  let smallest = -1;
  for (let i = 0; i < positions.length; i++) {
    const value = notional(positions[i]!);
    if (top.length < limit) {
      top.push({ index: i, value });
      if (top.length === limit) smallest = indexOfSmallest(top);
    } else if (value > top[smallest]!.value) {
      top[smallest] = { index: i, value };
      smallest = indexOfSmallest(top);
    }
  }
  return top.sort((a, b) => a.index - b.index).map((t) => positions[t.index]!);
}

function indexOfSmallest(top: readonly { value: number }[]): number {
  let at = 0;
  for (let i = 1; i < top.length; i++) if (top[i]!.value < top[at]!.value) at = i;
  return at;
}

/**
 * One line for people (the structured fields carry the exact figures): value, leverage, margin usage and the
 * largest positions with their side, size, unrealised PnL and distance to liquidation (five at most, then a count).
 * ASCII only: one non-ASCII character (an ellipsis) made V8 hold the whole log line as a two-byte string, and
 * pino's write transcode it, on every line of every poll: 7% of the reporter's CPU (BENCHMARKS.md, exposure).
 */
export function exposureSummary(account: string, f: AccountFigures): string {
  const pct = (x: number | null) => (x === null ? "n/a" : `${(x * 100).toFixed(1)}%`);
  const lev = f.leverage === null ? "n/a" : `${f.leverage.toFixed(2)}x`;
  const named = largestPositions(f.positions, MAX_SUMMARY_POSITIONS);
  const positions = named.map((p) => {
    const liq =
      p.liquidationDistancePct === undefined
        ? "no liq. price"
        : `liq. ${p.liquidationDistancePct.toFixed(1)}% away`;
    return `${p.coin} ${p.side} ${p.szi.replace(/^-/, "")} (PnL ${p.unrealizedPnl}, ${liq})`;
  });
  const more = f.positions.length - named.length;
  if (more > 0) positions.push(`and ${more} more`);
  return (
    `${account.slice(0, 6)}...${account.slice(-4)}: value $${f.accountValue}, leverage ${lev}, margin used ${pct(f.marginUsage)}` +
    (positions.length > 0 ? `; ${positions.join("; ")}` : "; no positions")
  );
}
