import { describe, expect, test } from "vitest";
import { ArgumentError } from "../../src/core/errors/argument.js";
import { CrossingLatch, SkewEstimator, sampleSkew } from "../../src/watchers/skew.js";

describe("sampleSkew", () => {
  test("default", () => {
    // local clock 3 s fast: request sent at local 10_000, answered at local 10_200; exchange said 7_100
    expect(sampleSkew({ sentAt: 10_000, receivedAt: 10_200, serverTimes: [7_100] })).toEqual({
      skewMs: 3_000,
      uncertaintyMs: 100,
      source: "time",
    });
  });

  test("behavior: the median of several states' times is used, the spread widens the uncertainty", () => {
    const s = sampleSkew({ sentAt: 0, receivedAt: 100, serverTimes: [40, 60, 50, 1_000_000] })!;
    expect(s.skewMs).toBe(50 - 60);
    expect(s.uncertaintyMs).toBe(50 + (1_000_000 - 40) / 2);
  });

  test("behavior: falls back to the Date header with ±500 ms more uncertainty", () => {
    // Date "…:07 GMT" = 7_000 means the exchange time was in [7_000, 8_000)
    expect(sampleSkew({ sentAt: 10_000, receivedAt: 10_200, serverTimes: [], serverDate: 7_000 })).toEqual({
      skewMs: 10_100 - 7_500,
      uncertaintyMs: 600,
      source: "date",
    });
  });

  test("behavior: nothing usable gives null", () => {
    expect(sampleSkew({ sentAt: 1, receivedAt: 2 })).toBeNull();
    expect(sampleSkew({ sentAt: 5, receivedAt: 2, serverTimes: [3] })).toBeNull();
  });
});

describe("SkewEstimator", () => {
  test("default", () => {
    const e = new SkewEstimator({ alpha: 0.5 });
    expect(e.estimate).toBeNull();
    e.add({ skewMs: 1000, uncertaintyMs: 10, source: "time" });
    expect(e.add({ skewMs: 2000, uncertaintyMs: 30, source: "time" })).toEqual({
      skewMs: 1500,
      uncertaintyMs: 20,
      source: "time",
      samples: 2,
    });
  });

  test("behavior: one slow outlier only moves the estimate by alpha", () => {
    const e = new SkewEstimator({ alpha: 0.3 });
    for (let i = 0; i < 5; i++) e.add({ skewMs: 3000, uncertaintyMs: 5, source: "time" });
    expect(e.add({ skewMs: 4000, uncertaintyMs: 900, source: "time" })!.skewMs).toBeCloseTo(3300, 6);
  });

  test("behavior: date samples are ignored once a time sample exists, and replaced by the first one", () => {
    const e = new SkewEstimator();
    e.add({ skewMs: 2600, uncertaintyMs: 600, source: "date" });
    expect(e.add({ skewMs: 3000, uncertaintyMs: 50, source: "time" })!.skewMs).toBe(3000);
    expect(e.add({ skewMs: -5000, uncertaintyMs: 600, source: "date" })!.skewMs).toBe(3000);
  });

  test("behavior: a clock step beyond stepMs resets the estimate at once", () => {
    const e = new SkewEstimator({ stepMs: 10_000 });
    e.add({ skewMs: 0, uncertaintyMs: 5, source: "time" });
    expect(e.add({ skewMs: 60_000, uncertaintyMs: 5, source: "time" })).toMatchObject({
      skewMs: 60_000,
      samples: 1,
    });
  });

  test("error: alpha outside (0, 1]", () => {
    expect(() => new SkewEstimator({ alpha: 0 })).toThrow(ArgumentError);
  });
});

describe("CrossingLatch", () => {
  test("default", () => {
    const latch = new CrossingLatch(2000);
    expect([1000, 2500, 3000, 1900, 1700, 2100, 2200].map((v) => latch.update(v))).toEqual([
      null,
      "crossed",
      null,
      null, // 1900 is within 10 % hysteresis of the limit
      "cleared",
      "crossed",
      null,
    ]);
  });
});
