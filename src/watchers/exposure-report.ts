/**
 * What one polled clearinghouse state turns into, published on the bus: the `exposure` line (a named event: the
 * log, the status page and the escalating switches follow it), the figures that changed (`exposureChanged`: the
 * metrics follow it) and the crossings of the thresholds (`exposureAlert`: `exposure.alert` /
 * `exposure.alert.cleared`). Their wording and metrics are subscribers (src/surface/watchers/exposure.ts). The
 * poller (exposure.ts) owns the cadence and the requests; this module owns the figures' way out, and keeps it cheap,
 * since it runs once per account per poll (1,000 accounts every 30 s is a normal configuration; BENCHMARKS.md,
 * exposure):
 *
 * - Only what changed since the last poll is published as changed (the exchange's decimal strings are compared);
 *   a closed position is published as closed, so its series are removed.
 * - The line carries at most `maxLoggedPositions` positions: the largest by notional (|positionValue|), with
 *   `positionCount` and `positionsOmitted` when there are more. An account with 45,000 positions would otherwise
 *   write a multi-MB line every poll; the changes keep every position.
 * - Alerts are indexed by account and dex, so clearing one never walks every other account's alerts.
 */

import type { EventBus, ExposureAlertMetric, ExposureChange } from "../core/events.js";
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

type AlertMetric = ExposureAlertMetric;

/** The last values published of one account and dex (exchange strings, and the derived numbers). */
type SeriesCache = {
  accountValue: string;
  totalNtlPos: string;
  totalMarginUsed: string;
  withdrawable: string;
  leverage: number | null | undefined;
  positions: Map<string, { szi: string; positionValue: string; liquidationDistance: number | undefined }>;
};

export type ExposureReporter = {
  /**
   * Derives the figures of one account's state and publishes its line, what changed and its alerts. Throws on bad
   * decimals.
   */
  report(account: string, dex: string, state: FiguresInput, extra: Record<string, unknown>): AccountFigures;
};

export type CreateExposureReporterParameters = {
  /** the daemon's event bus: the lines, changes and alerts are published there */
  bus: EventBus;
  thresholds?: ExposureReportThresholds;
  maxLoggedPositions?: number;
};

/** A decimal string as a gauge value: the exchange's strings are validated by deriveFigures first. */
const gaugeValue = (decimal: string): number => Number(decimal) || 0;

/**
 * Top-level keys removed from every published exposure line (defence in depth: the fields are the figures built
 * here, never a key or URL; the log's subscriber removes them again).
 */
export const LINE_REDACT = ["privateKey", "key", "wallet", "signature", "rpcUrl"];

const withoutSecrets = (extra: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(extra).filter(([k]) => !LINE_REDACT.includes(k)));

export function createExposureReporter({
  bus,
  thresholds = {},
  maxLoggedPositions = MAX_LOGGED_POSITIONS,
}: CreateExposureReporterParameters): ExposureReporter {
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
    const alert = {
      module: "exposurePoll",
      type: "exposureAlert",
      account,
      dex,
      metric,
      coin,
      value,
      limit,
    } as const;
    if (now) {
      let map = alerts.get(group);
      if (!map) {
        map = new Map();
        alerts.set(group, map);
      }
      map.set(id, coin !== undefined ? { metric, coin } : { metric });
      bus.publish({ ...alert, change: "raised" });
    } else {
      const map = alerts.get(group);
      map?.delete(id);
      if (map?.size === 0) alerts.delete(group);
      bus.publish({ ...alert, change: "cleared" });
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
      bus.publish({
        module: "exposurePoll",
        type: "exposureAlert",
        account,
        dex,
        metric: key.metric,
        coin: key.coin,
        value: null,
        limit: minDistance,
        change: pos ? "noLiquidationPrice" : "closed",
      });
    }
    if (active.size === 0) alerts.delete(group);
  }

  // ------------------------------------------------------------------------------------------ changes

  /** What changed since the last poll of this account and dex; empty when nothing did. */
  function changesOf(account: string, dex: string, f: AccountFigures): ExposureChange[] {
    const key = `${account}|${dex}`;
    let cache = series.get(key);
    const changes: ExposureChange[] = [];
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
      changes.push({ figure: "accountValue", value: f.accountValue });
      cache.accountValue = f.accountValue;
    }
    if (cache.totalNtlPos !== f.totalNtlPos) {
      changes.push({ figure: "totalNtlPos", value: f.totalNtlPos });
      cache.totalNtlPos = f.totalNtlPos;
    }
    if (cache.totalMarginUsed !== f.totalMarginUsed) {
      changes.push({ figure: "totalMarginUsed", value: f.totalMarginUsed });
      cache.totalMarginUsed = f.totalMarginUsed;
    }
    if (cache.withdrawable !== f.withdrawable) {
      changes.push({ figure: "withdrawable", value: f.withdrawable });
      cache.withdrawable = f.withdrawable;
    }
    if (cache.leverage !== f.leverage) {
      changes.push({ figure: "leverage", value: f.leverage });
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
      const coin = p.coin;
      if (!last || last.szi !== p.szi) changes.push({ figure: "szi", coin, value: p.szi });
      if (!last || last.positionValue !== p.positionValue)
        changes.push({ figure: "positionValue", coin, value: p.positionValue });
      if (!last || last.liquidationDistance !== distance)
        changes.push({ figure: "liquidationDistancePct", coin, value: distance ?? null });
      if (last) {
        last.szi = p.szi;
        last.positionValue = p.positionValue;
        last.liquidationDistance = distance;
      } else
        before.set(p.coin, { szi: p.szi, positionValue: p.positionValue, liquidationDistance: distance });
    }
    // closed positions: their series go, so dashboards do not show a stale size
    if (before.size !== f.positions.length) {
      const open = new Set(f.positions.map((p) => p.coin));
      for (const coin of before.keys()) {
        if (open.has(coin)) continue;
        changes.push({ figure: "closed", coin });
        before.delete(coin);
      }
    }
    return changes;
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
      // One object, built once: the line's fields in their order, then what the bus adds (the log's subscriber takes
      // those three off). A secret key in `extra` is left out here rather than deleted after (a delete turns the
      // object into a slow dictionary, on every line of every poll).
      const line = {
        event: "exposure",
        account,
        ...(LINE_REDACT.some((k) => Object.hasOwn(extra, k)) ? withoutSecrets(extra) : extra),
        accountValue: f.accountValue,
        totalNtlPos: f.totalNtlPos,
        totalMarginUsed: f.totalMarginUsed,
        withdrawable: f.withdrawable,
        leverage: f.leverage,
        marginUsage: f.marginUsage,
        maintenanceMarginRatio: f.maintenanceMarginRatio,
        positions: shown.map(loggedPosition),
        ...(omitted > 0 ? { positionCount: f.positions.length, positionsOmitted: omitted } : {}),
        level: "info" as const,
        msg: exposureSummary(account, f),
        module: "exposure" as const,
      };
      bus.publish(line);
      const changes = changesOf(account, dex, f);
      if (changes.length > 0)
        bus.publish({ module: "exposurePoll", type: "exposureChanged", account, dex, changes });
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
