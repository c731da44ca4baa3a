/**
 * utcDay (src/core/clock.ts) remembers the last day it named: it must name the same day as
 * the Date's ISO string, at every 00:00 UTC and the millisecond before it, and take any other time as the Date does.
 */
import { describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";

const DAY = 86_400_000;
const byDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("utcDay", () => {
  test("the Date's day at each 00:00 UTC and the millisecond before, 1970-2200 every day, to 9999 every 7th", () => {
    const last = Date.UTC(9999, 11, 31);
    let wrong: string | null = null;
    for (let d = 0; d * DAY <= last && wrong === null; d += d < 84_000 ? 1 : 7)
      for (const ms of [d * DAY, d * DAY + DAY - 1, d * DAY + 0.5, d * DAY + 43_200_000])
        if (utcDay(ms) !== byDate(ms)) wrong = `${ms}: ${utcDay(ms)}, the Date ${byDate(ms)}`;
    expect(wrong).toBeNull();
  });

  test("every day of a leap year, the centuries 2100 (not leap) and 2000, 2400 (leap)", () => {
    for (const year of [2024, 2100, 2000, 2400, 9999])
      for (let ms = Date.UTC(year, 0, 1); ms < Date.UTC(year + 1, 0, 1); ms += DAY)
        expect(utcDay(ms)).toBe(byDate(ms));
  });

  test("before 1970, from the year 10000 and no time at all: as the Date says, or its RangeError", () => {
    for (const ms of [-1, -DAY, -8.64e15, 253_402_300_800_000, 8.64e15, -0, 0.4])
      expect(utcDay(ms)).toBe(byDate(ms));
    for (const ms of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1])
      expect(() => utcDay(ms)).toThrow(RangeError);
  });
});
