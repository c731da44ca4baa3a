/**
 * The status page at a desk's scale (issue 30, "Usable at scale"): /status.json at 1,000 accounts gives a summary
 * first, the accounts that need attention on its first page, and pages of bounded size.
 */
import { describe, expect, test } from "vitest";
import { EXPOSURE_OFF, NO_GUARD, type SwitchStatus } from "../../src/core/status.js";
import { computeReadiness } from "../../src/surface/health.js";
import {
  createStatusModel,
  STATUS_PAGE_MAX,
  STATUS_PAGE_SIZE,
  statusPageRoutes,
} from "../../src/surface/status-page/index.js";

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const addr = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;

function account(i: number): SwitchStatus {
  const base: SwitchStatus = {
    account: addr(i),
    state: "armed",
    armedUntil: NOW + 50_000,
    lastPushAt: NOW - 5_000,
    consecutiveFailures: 0,
    lastError: null,
    notProtectedReason: null,
    day: "2026-11-26",
    triggersToday: 0,
    triggerLimit: 10,
    exhausted: false,
  };
  // every 97th HALTED, every 89th refused permanently, every 83rd retrying, every 79th with little protection left
  if (i % 97 === 0) return { ...base, halted: { since: NOW - 60_000, reason: "engine down" } };
  if (i % 89 === 0) return { ...base, state: "not_protected", notProtectedReason: "volume_gate" };
  if (i % 83 === 0) return { ...base, state: "retrying", consecutiveFailures: 2 };
  if (i % 79 === 0) return { ...base, armedUntil: NOW + 1_000 };
  return base;
}

function statusJson(query: string) {
  const accounts = Array.from({ length: 1000 }, (_, i) => account(i + 1));
  const readiness = () =>
    computeReadiness({
      now: NOW,
      accounts,
      exposure: EXPOSURE_OFF,
      guard: NO_GUARD,
      intervalMs: 15_000,
      deadlineMs: 60_000,
    });
  const routes = statusPageRoutes({
    readiness,
    model: createStatusModel({ now: () => NOW }),
    now: () => NOW,
    intervalMs: 15_000,
    deadlineMs: 60_000,
    clockSkewWarnMs: 2_000,
    network: "mainnet",
  });
  const r = routes["/status.json"]!(new URLSearchParams(query));
  return { body: r.body, doc: JSON.parse(r.body) };
}

describe("/status.json at 1,000 accounts", () => {
  test("a summary first, the accounts that need attention on the first page, bounded pages", () => {
    const { body, doc } = statusJson("");
    // 1..1000: 10 multiples of 97, 11 of 89 (one of them 89·... none shared), 12 of 83, 12 of 79
    expect(doc.summary).toEqual({
      accounts: 1000,
      attention: 10 + 11 + 12 + 12,
      halted: 10,
      armed: 1000 - 11 - 12,
      notProtected: 11,
      notArmed: 12,
      lowMargin: 12,
    });
    expect(doc.paging).toEqual({ page: 1, pages: 20, per: STATUS_PAGE_SIZE });
    expect(doc.accounts).toHaveLength(STATUS_PAGE_SIZE);
    // attention first: all 45 that need it are on page 1, HALTED at the top
    expect(doc.accounts.slice(0, 10).every((a: { halted: unknown }) => a.halted)).toBe(true);
    expect(doc.accounts.filter((a: { attention: number }) => a.attention > 0)).toHaveLength(45);
    expect(doc.accounts[45].attention).toBe(0);
    // readiness's reasons are bounded by the page size, the rest counted
    const all = doc.reasons.length + doc.reasonsOmitted;
    expect(all).toBeGreaterThan(10);
    const ten = statusJson("per=10").doc;
    expect(ten.reasons).toHaveLength(10);
    expect(ten.reasonsOmitted).toBe(all - 10);
    expect(Buffer.byteLength(body)).toBeLessThan(100_000);
  });

  test("pages: the last one holds the rest; ?per is capped; a page past the end is the last", () => {
    expect(statusJson("page=20").doc.accounts).toHaveLength(50);
    const big = statusJson(`per=${STATUS_PAGE_MAX * 5}`).doc;
    expect(big.paging).toEqual({ page: 1, pages: 5, per: STATUS_PAGE_MAX });
    expect(statusJson("page=999&per=300").doc.paging).toEqual({ page: 5, pages: 5, per: STATUS_PAGE_MAX });
    expect(statusJson("page=abc").doc.paging.page).toBe(1);
  });
});
