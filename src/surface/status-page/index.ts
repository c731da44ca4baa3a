/**
 * The status page's two routes on the health listener: `GET /` (the HTML of ./page.ts) and `GET /status.json`
 * (readiness plus what ./model.ts gathered: last push latency, exposure, open orders; and the page's figures: the
 * readiness margin, triggers left, the next 00:00 UTC reset). Nothing secret: no key, no URL.
 */

import { nextUtcMidnight } from "../../core/clock.js";
import type { GuardStatus, Readiness } from "../../core/status.js";
import { VERSION } from "../../core/version.js";
import type { AuditRecord, ChainHead } from "../audit/record.js";
import { defaultMinMarginMs } from "../health.js";
import type { StatusModel } from "./model.js";
import { STATUS_PAGE_CSP, STATUS_PAGE_HTML } from "./page.js";

export { createStatusModel } from "./model.js";

/** how many of the audit trail's newest records /status.json and the page show */
export const AUDIT_SHOWN = 10;

function auditView(
  a: { head: ChainHead; recent: readonly AuditRecord[]; unavailable?: string | null | undefined } | undefined,
) {
  if (!a) return null;
  return {
    unavailable: a.unavailable ?? null,
    sequence: a.head.sequence,
    hash: a.head.hash,
    last: a.recent
      .slice(-AUDIT_SHOWN)
      .reverse()
      .map((r) => ({ sequence: Number(r.sequence), time: r.time, type: r.type, account: r.account ?? null })),
  };
}

export type StatusRoute = (query: URLSearchParams) => {
  status: number;
  body: string;
  headers: Record<string, string>;
};

/** Accounts a page of /status.json holds by default, and at most (`?per=`): 1,000 accounts stay usable. */
export const STATUS_PAGE_SIZE = 50;
export const STATUS_PAGE_MAX = 200;

type AccountView = Readiness["accounts"][number];

/**
 * How much an account needs a person, highest first: HALTED, not protected or out of triggers, not armed (lapsed,
 * engine down, starting, retrying), protection below the readiness margin, then the rest. The status page lists
 * accounts in this order, so the ones that need attention are on its first page.
 */
export function attentionOf(a: AccountView, now: number, marginMs: number): number {
  if (a.halted) return 5;
  if (a.state === "not_protected" || a.exhausted || a.state === "exhausted") return 4;
  if (a.state !== "armed") return 3;
  if (
    a.armedUntil === null ||
    a.armedUntil - now < marginMs ||
    a.clockSuspect ||
    a.clockUnverified ||
    a.limitSuspected
  )
    return 2;
  return 0;
}

/** One account's engine as the guard sees it: the connection guard's own state, the file or URL guard's for all. */
export type EngineView = "waiting" | "up" | "detached" | "down";

/** The engine of `account`: null without a guard; `waiting` until an engine named it (never "up" before). */
export function engineOf(guard: GuardStatus, account: string): EngineView | null {
  if (!guard.configured) return null;
  if (guard.accounts) return guard.accounts[account] ?? null;
  return guard.up ? "up" : "down";
}

/**
 * The guard in a line, and its colour: the page's "engine guard". The connection guard's accounts are counted by
 * state, worst first; "engine up" only when every account's engine is connected (a waiting one never is: no engine
 * has named it since the daemon started, so nothing would see it die).
 */
export function guardView(guard: GuardStatus): {
  text: string;
  level: "ok" | "warn" | "bad" | "idle";
  counts: Record<EngineView, number> | null;
} {
  if (!guard.configured) return { text: "no guard configured", level: "idle", counts: null };
  const detail = `(${guard.kind ?? "?"}${guard.detail ? `: ${guard.detail}` : ""})`;
  if (!guard.accounts)
    return guard.up
      ? { text: `engine up ${detail}`, level: "ok", counts: null }
      : { text: `ENGINE DOWN ${detail}`, level: "bad", counts: null };
  const counts: Record<EngineView, number> = { down: 0, waiting: 0, detached: 0, up: 0 };
  for (const state of Object.values(guard.accounts)) counts[state]++;
  const total = counts.down + counts.waiting + counts.detached + counts.up;
  const n = (k: number) => `${k} account${k === 1 ? "" : "s"}`;
  if (counts.up === total) return { text: `engine up for ${n(total)} ${detail}`, level: "ok", counts };
  const parts = [
    counts.down > 0 ? `ENGINE DOWN for ${n(counts.down)}` : null,
    counts.waiting > 0 ? `WAITING for the engine to connect for ${n(counts.waiting)}` : null,
    counts.detached > 0 ? `detached (a planned restart) for ${n(counts.detached)}` : null,
    counts.up > 0 ? `connected for ${n(counts.up)}` : null,
  ].filter((p) => p !== null);
  return {
    text: `${parts.join(" · ")} ${detail}`,
    level: counts.down > 0 ? "bad" : "warn",
    counts,
  };
}

export function statusPageRoutes({
  readiness,
  model,
  now,
  intervalMs,
  deadlineMs,
  clockSkewWarnMs,
  network,
  openOrdersRead = true,
  audit,
}: {
  readiness: () => Readiness;
  model: StatusModel;
  now: () => number;
  intervalMs: number;
  deadlineMs: number;
  clockSkewWarnMs: number;
  network: string;
  /**
   * whether the daemon reads the accounts' open orders (src/watchers/open-orders.ts: a few accounts only, with
   * the exposure poll); when not, the page says so instead of showing no orders
   */
  openOrdersRead?: boolean | undefined;
  /** the audit trail's head and newest records (the page shows the last AUDIT_SHOWN) */
  audit?:
    | (() => { head: ChainHead; recent: readonly AuditRecord[]; unavailable?: string | null | undefined })
    | undefined;
}): Record<string, StatusRoute> {
  const statusJson = (query: URLSearchParams) => {
    const r = readiness();
    const t = now();
    const marginMs = defaultMinMarginMs({ intervalMs, deadlineMs });
    const per = Math.min(
      STATUS_PAGE_MAX,
      Math.max(1, Number.parseInt(query.get("per") ?? "", 10) || STATUS_PAGE_SIZE),
    );
    const ranked = r.accounts
      .map((a) => ({ a, attention: attentionOf(a, t, marginMs) }))
      .sort((x, y) => y.attention - x.attention || x.a.account.localeCompare(y.a.account));
    const pages = Math.max(1, Math.ceil(ranked.length / per));
    const page = Math.min(pages, Math.max(1, Number.parseInt(query.get("page") ?? "", 10) || 1));
    const shown = ranked.slice((page - 1) * per, page * per);
    const count = (f: (x: (typeof ranked)[number]) => boolean) => ranked.filter(f).length;
    return {
      now: t,
      version: VERSION,
      network,
      openOrdersRead,
      ready: r.ready,
      intervalMs,
      deadlineMs,
      marginMs,
      nextResetAt: nextUtcMidnight(t),
      clockSkewMs: r.exposure.clockSkewMs,
      clockSkewWarnMs,
      guard: r.guard,
      /** the guard in words for the page (never "engine up" while an account waits for its engine) */
      guardView: guardView(r.guard),
      coordination: r.coordination ?? null,
      exposure: r.exposure,
      audit: auditView(audit?.()),
      summary: {
        accounts: ranked.length,
        attention: count((x) => x.attention > 0),
        halted: count((x) => Boolean(x.a.halted)),
        armed: count((x) => x.a.state === "armed"),
        notProtected: count((x) => x.attention === 4),
        notArmed: count((x) => x.attention === 3),
        lowMargin: count((x) => x.attention === 2),
      },
      paging: { page, pages, per },
      // readiness's reasons name every account; beyond a page they are counted, not listed
      reasons: r.reasons.slice(0, per),
      reasonsOmitted: Math.max(0, r.reasons.length - per),
      accounts: shown.map(({ a, attention }) => ({
        attention,
        ...a,
        engine: engineOf(r.guard, a.account),
        triggersLeft: Math.max(0, a.triggerLimit - a.triggersToday),
        lastLatencyMs: model.lastLatencyMs(a.account),
        exposure: model.exposure(a.account),
        openOrders: model.openOrders(a.account),
      })),
    };
  };
  return {
    "/": () => ({
      status: 200,
      body: STATUS_PAGE_HTML,
      headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": STATUS_PAGE_CSP },
    }),
    "/status.json": (query) => ({
      status: 200,
      body: `${JSON.stringify(statusJson(query))}\n`,
      headers: { "content-type": "application/json; charset=utf-8" },
    }),
  };
}
