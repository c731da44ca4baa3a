/**
 * The status page's two routes on the health listener: `GET /` (the HTML of ./page.ts) and `GET /status.json`
 * (readiness plus what ./model.ts gathered: last push latency, exposure; and the page's figures: the
 * readiness margin, triggers left, the next 00:00 UTC reset). Nothing secret: no key, no URL.
 */

import { nextUtcMidnight } from "../../core/clock.js";
import type { Readiness } from "../../core/status.js";
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

export type StatusRoute = () => { status: number; body: string; headers: Record<string, string> };

export function statusPageRoutes({
  readiness,
  model,
  now,
  intervalMs,
  deadlineMs,
  clockSkewWarnMs,
  network,
  audit,
}: {
  readiness: () => Readiness;
  model: StatusModel;
  now: () => number;
  intervalMs: number;
  deadlineMs: number;
  clockSkewWarnMs: number;
  network: string;
  /** the audit trail's head and newest records (the page shows the last AUDIT_SHOWN) */
  audit?:
    | (() => { head: ChainHead; recent: readonly AuditRecord[]; unavailable?: string | null | undefined })
    | undefined;
}): Record<string, StatusRoute> {
  const statusJson = () => {
    const r = readiness();
    const t = now();
    return {
      now: t,
      version: VERSION,
      network,
      ready: r.ready,
      reasons: r.reasons,
      intervalMs,
      deadlineMs,
      marginMs: defaultMinMarginMs({ intervalMs, deadlineMs }),
      nextResetAt: nextUtcMidnight(t),
      clockSkewMs: r.exposure.clockSkewMs,
      clockSkewWarnMs,
      guard: r.guard,
      exposure: r.exposure,
      audit: auditView(audit?.()),
      accounts: r.accounts.map((a) => ({
        ...a,
        triggersLeft: Math.max(0, a.triggerLimit - a.triggersToday),
        lastLatencyMs: model.lastLatencyMs(a.account),
        exposure: model.exposure(a.account),
      })),
    };
  };
  return {
    "/": () => ({
      status: 200,
      body: STATUS_PAGE_HTML,
      headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": STATUS_PAGE_CSP },
    }),
    "/status.json": () => ({
      status: 200,
      body: `${JSON.stringify(statusJson())}\n`,
      headers: { "content-type": "application/json; charset=utf-8" },
    }),
  };
}
