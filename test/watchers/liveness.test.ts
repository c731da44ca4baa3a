/**
 * The liveness rule (src/watchers/liveness.ts), pure: silence counts only over time the daemon was awake. A late
 * check postpones the judgement (silence counts again from the wake-up), an on-time check that finds the gap reached
 * asks to read first (confirm), and only the confirming check, on time and with nothing heard, says down.
 */
import { describe, expect, test } from "vitest";
import {
  checked,
  dueAt,
  heard,
  LATE_TOLERANCE_MAX_MS,
  lateToleranceMs,
  livenessStart,
} from "../../src/watchers/liveness.js";

const GAP = 1_000;

describe("liveness rule", () => {
  test("default: silent less than the gap waits until it is due; heard lines move the due time", () => {
    let s = livenessStart(GAP, 0);
    expect(dueAt(s)).toBe(1_000);
    const early = checked(s, 500, 0);
    expect(early.verdict).toEqual({ kind: "wait", at: 1_000, postponed: false });
    s = heard(s, 800);
    expect(dueAt(s)).toBe(1_800);
    expect(checked(s, 1_000, 0).verdict).toEqual({ kind: "wait", at: 1_800, postponed: false });
  });

  test("behavior: the gap reached on time asks to read first; down only on the confirming check", () => {
    const s = livenessStart(GAP, 0);
    const first = checked(s, 1_000, 0);
    expect(first.verdict).toEqual({ kind: "confirm" });
    expect(checked(first.state, 1_001, 1).verdict).toEqual({ kind: "down", silentMs: 1_001 });
  });

  test("behavior: a line read before the confirming check drops the judgement", () => {
    const first = checked(livenessStart(GAP, 0), 1_000, 0);
    const after = heard(first.state, 1_000);
    expect(after.confirming).toBe(false);
    expect(checked(after, 1_000, 0).verdict).toEqual({ kind: "wait", at: 2_000, postponed: false });
  });

  test("behavior: a late wake-up postpones, never judges: silence counts again from the wake-up", () => {
    const s = livenessStart(GAP, 0);
    // due at 1 000, ran at 4 000: the daemon was not running for 3 s
    const late = checked(s, 4_000, 3_000);
    expect(late.verdict).toEqual({ kind: "wait", at: 5_000, postponed: true });
    // a confirming check that runs late is postponed too
    const confirming = checked(s, 1_000, 0).state;
    expect(checked(confirming, 3_000, 2_000).verdict).toEqual({ kind: "wait", at: 4_000, postponed: true });
    // then an awake daemon judges a hung engine within the gap plus the confirming check
    const next = checked(late.state, 5_000, 0);
    expect(next.verdict).toEqual({ kind: "confirm" });
    expect(checked(next.state, 5_000, 0).verdict).toEqual({ kind: "down", silentMs: 1_000 });
  });

  test("behavior: lateness within the tolerance is an on-time check", () => {
    const tol = lateToleranceMs(GAP);
    expect(tol).toBe(250);
    expect(lateToleranceMs(100_000)).toBe(LATE_TOLERANCE_MAX_MS);
    expect(lateToleranceMs(8)).toBe(2);
    const s = livenessStart(GAP, 0);
    expect(checked(s, 1_000 + tol, tol).verdict).toEqual({ kind: "confirm" });
    expect(checked(s, 1_001 + tol, tol + 1).verdict.kind).toBe("wait");
  });
});
