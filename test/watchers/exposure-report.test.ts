import { Writable } from "node:stream";
import { describe, expect, test } from "vitest";
import { createLogger } from "../../src/core/logger.js";
import { createMetrics } from "../../src/surface/metrics.js";
import {
  createExposureReporter,
  largestPositions,
  MAX_LOGGED_POSITIONS,
} from "../../src/watchers/exposure-report.js";
import type { FiguresInput } from "../../src/watchers/figures.js";
import { watcherBus } from "../helpers/watcher-bus.js";

const A = `0x${"a".repeat(40)}`;

function capture() {
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split("\n").filter(Boolean)) raw.push(l);
      cb();
    },
  });
  const logger = createLogger({ level: "debug", destination, pretty: false }).child({ module: "exposure" });
  return { logger, raw, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** A state with `n` positions; position i has notional (i * 7919) % n + 1 (a permutation: all distinct). */
function state(n: number, accountValue = "1000000.0"): FiguresInput {
  return {
    assetPositions: Array.from({ length: n }, (_, i) => {
      const notional = ((i * 7919) % n) + 1;
      return {
        position: {
          coin: `C${i}`,
          szi: i % 2 ? "1.0" : "-1.0",
          entryPx: `${notional}.0`,
          positionValue: `${notional}.0`,
          unrealizedPnl: "0.0",
          liquidationPx: null,
          marginUsed: "1.0",
          leverage: { type: "cross", value: 5 },
        },
      };
    }),
    marginSummary: { accountValue, totalNtlPos: "100.0", totalMarginUsed: "10.0" },
    crossMarginSummary: { accountValue },
    crossMaintenanceMarginUsed: "1.0",
    withdrawable: "900.0",
  };
}

async function seriesCount(metrics: ReturnType<typeof createMetrics>, name: string): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values.length ?? 0;
}

describe("exposure log line bound (45,000 positions)", () => {
  test("behavior: the line holds the largest positions only, counts the rest; the metrics keep them all", async () => {
    const { logger, raw, lines } = capture();
    const metrics = createMetrics({ defaultMetrics: false });
    const reporter = createExposureReporter({ bus: watcherBus(logger, metrics) });
    const n = 45_000;
    reporter.report(A, "", state(n), { reason: "interval" });
    expect(raw).toHaveLength(1);
    // a bounded line: 20 positions, not 45,000 (which would be ~12 MB)
    expect(raw[0]!.length).toBeLessThan(16 * 1024);
    const line = lines()[0]!;
    expect(line.event).toBe("exposure");
    const positions = line.positions as { coin: string; positionValue: string }[];
    expect(positions).toHaveLength(MAX_LOGGED_POSITIONS);
    expect(line.positionCount).toBe(n);
    expect(line.positionsOmitted).toBe(n - MAX_LOGGED_POSITIONS);
    // the 20 largest notionals are n, n-1, ..., n-19
    expect(positions.map((p) => Number(p.positionValue)).sort((a, b) => b - a)).toEqual(
      Array.from({ length: MAX_LOGGED_POSITIONS }, (_, i) => n - i),
    );
    expect(String(line.msg)).toContain(`and ${n - 5} more`);
    expect(await seriesCount(metrics, "hl_deadman_position_size")).toBe(n);
  });

  test("default: up to the bound every position is logged, without the count fields", () => {
    const { logger, lines } = capture();
    const reporter = createExposureReporter({ bus: watcherBus(logger) });
    reporter.report(A, "", state(MAX_LOGGED_POSITIONS), { reason: "start" });
    const line = lines()[0]!;
    expect(line.positions).toHaveLength(MAX_LOGGED_POSITIONS);
    expect(line).not.toHaveProperty("positionsOmitted");
    expect(line).not.toHaveProperty("positionCount");
  });

  test("behavior: largestPositions keeps the exchange's order", () => {
    const p = state(6).assetPositions.map((a) => ({
      ...a.position,
      positionValue: a.position.positionValue,
    }));
    const figures = p.map((x) => ({
      ...x,
      side: "long" as const,
      entryPx: null,
      liquidationPx: null,
      marginUsed: null,
      leverageType: "cross",
      leverageValue: 5,
      markPx: null,
    }));
    const top = largestPositions(figures, 3);
    expect(top.map((x) => x.coin)).toEqual(
      figures.filter((x) => Number(x.positionValue) >= 4).map((x) => x.coin),
    );
  });
});

describe("the exposure line's text", () => {
  test("behavior: the whole line is ASCII, so V8 keeps it a one-byte string (one ellipsis made every line two-byte)", () => {
    const { logger, raw } = capture();
    const reporter = createExposureReporter({ bus: watcherBus(logger) });
    reporter.report(A, "", state(3), { reason: "interval" });
    expect(raw).toHaveLength(1);
    expect(raw[0]).toMatch(/^[\x20-\x7e]*$/);
    expect(JSON.parse(raw[0]!).msg).toMatch(/^0xaaaa\.\.\.aaaa: value \$1000000\.0, leverage /);
  });
});

describe("exposure metrics are set only when a value changed", () => {
  test("behavior: an unchanged state sets nothing; a changed value sets that gauge; a closed position is removed", async () => {
    const { logger } = capture();
    const metrics = createMetrics({ defaultMetrics: false });
    const sets = { accountValue: 0, positionSize: 0 };
    const origAv = metrics.accountValue.set.bind(metrics.accountValue);
    const origPs = metrics.positionSize.set.bind(metrics.positionSize);
    metrics.accountValue.set = ((...args: Parameters<typeof origAv>) => {
      sets.accountValue++;
      return origAv(...args);
    }) as typeof metrics.accountValue.set;
    metrics.positionSize.set = ((...args: Parameters<typeof origPs>) => {
      sets.positionSize++;
      return origPs(...args);
    }) as typeof metrics.positionSize.set;
    const reporter = createExposureReporter({ bus: watcherBus(logger, metrics) });
    reporter.report(A, "", state(3), {});
    expect(sets).toEqual({ accountValue: 1, positionSize: 3 });
    reporter.report(A, "", state(3), {});
    expect(sets).toEqual({ accountValue: 1, positionSize: 3 });
    reporter.report(A, "", state(3, "2000000.5"), {});
    expect(sets).toEqual({ accountValue: 2, positionSize: 3 });
    const value = (await metrics.registry.getMetricsAsJSON()).find(
      (m) => m.name === "hl_deadman_account_value_usd",
    );
    expect(value?.values[0]?.value).toBe(2_000_000.5);
    reporter.report(A, "", state(2, "2000000.5"), {});
    expect(await seriesCount(metrics, "hl_deadman_position_size")).toBe(2);
  });
});
