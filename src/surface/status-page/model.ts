/**
 * What the status page shows beyond readiness, gathered from the daemon's events on its bus (src/core/events.ts):
 * each account's last push latency (the switch's `pushConfirmed`), its latest exposure (`exposure`, first perp dex and
 * others) and its open orders (`open_orders`, src/watchers/open-orders.ts: what a fire would cancel). Only figures: no key, URL or error object is kept.
 */
import type { DaemonEvent } from "../../core/events.js";

export type PositionView = {
  coin: string;
  dex: string;
  szi: string | null;
  positionValue: string | null;
  markPx: number | null;
  liquidationPx: string | null;
  /** percent; null when the position cannot be liquidated */
  liquidationDistancePct: number | null;
};

export type ExposureView = {
  /** local ms of the poll */
  at: number | null;
  accountValue: string | null;
  totalNtlPos: string | null;
  leverage: number | null;
  positions: PositionView[];
};

/** What a fire would cancel: the account's open orders at `at` (trigger and reduce-only may overlap). */
export type OpenOrdersView = { at: number | null; total: number; trigger: number; reduceOnly: number };

export type StatusModel = {
  onEvent(e: DaemonEvent): void;
  lastLatencyMs(account: string): number | null;
  exposure(account: string): ExposureView | null;
  openOrders(account: string): OpenOrdersView | null;
};

const str = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : null);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

export function createStatusModel({ now }: { now: () => number }): StatusModel {
  const latency = new Map<string, number>();
  /** account -> dex -> view */
  const exposure = new Map<string, Map<string, ExposureView>>();
  const openOrders = new Map<string, OpenOrdersView>();
  return {
    onEvent(e) {
      // a confirmed push's latency (the switch's `pushConfirmed`), an account's exposure (the exposure report's)
      if (e.module === "switch") {
        if (e.type === "pushConfirmed" && typeof e.latencyMs === "number")
          latency.set(e.account.toLowerCase(), e.latencyMs);
        return;
      }
      if (e.module !== "exposure") return;
      const account = typeof e.account === "string" ? e.account.toLowerCase() : null;
      if (!account) return;
      if (e.event === "open_orders") {
        const total = num(e.total);
        if (total === null) return;
        openOrders.set(account, {
          at: num(e.at),
          total,
          trigger: num(e.trigger) ?? 0,
          reduceOnly: num(e.reduceOnly) ?? 0,
        });
        return;
      }
      if (e.event === "exposure") {
        const dex = typeof e.dex === "string" ? e.dex : "";
        const positions = Array.isArray(e.positions) ? (e.positions as Record<string, unknown>[]) : [];
        const view: ExposureView = {
          at: now(),
          accountValue: str(e.accountValue),
          totalNtlPos: str(e.totalNtlPos),
          leverage: num(e.leverage),
          positions: positions.map((p) => ({
            coin: str(p.coin) ?? "?",
            dex,
            szi: str(p.szi),
            positionValue: str(p.positionValue),
            markPx: num(p.markPx),
            liquidationPx: str(p.liquidationPx),
            liquidationDistancePct: num(p.liquidationDistancePct),
          })),
        };
        const byDex = exposure.get(account) ?? new Map<string, ExposureView>();
        byDex.set(dex, view);
        exposure.set(account, byDex);
      }
    },
    lastLatencyMs: (account) => latency.get(account) ?? null,
    openOrders: (account) => openOrders.get(account) ?? null,
    exposure(account) {
      const byDex = exposure.get(account);
      if (!byDex) return null;
      const views = [...byDex.values()];
      const first = byDex.get("") ?? views[0]!;
      return {
        at: Math.max(...views.map((v) => v.at ?? 0)) || null,
        accountValue: first.accountValue,
        totalNtlPos: first.totalNtlPos,
        leverage: first.leverage,
        positions: views.flatMap((v) => v.positions),
      };
    },
  };
}
