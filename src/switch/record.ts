/**
 * What the exchange's own record says about an account's switch, as PURE functions (docs/exchange-record.md):
 *
 * - `readFinding(txs, orders, now)`: from the explorer's `userDetails` transactions and `historicalOrders`,
 *   the last accepted `scheduleCancel` (time and deadline), whether each deadline fired, how many fired on
 *   today's UTC day, and whether the record reaches back across 00:00 UTC (covers the whole day).
 * - `reconcileLedger(ledger, finding)`: corrects a ledger view in the conservative direction only where the
 *   record proves it, with a reason per change for the `ledger.reconciled` log line. It lives with the other
 *   decisions of reconciling the record with the ledger, in record-reconcile.ts; re-exported here for the readers
 *   of the record (`status --reconcile`, the app's reporter).
 *
 * How a fire is recognised: an accepted schedule whose deadline came before the next accepted
 * `scheduleCancel` (or before now) lapsed, and the exchange then fires it (one-shot). Orders it cancelled
 * end with status `scheduledCancel` near the deadline; that status does NOT end in `Canceled`, so a suffix
 * check misses it. A lapse without such orders still counts: whether an empty fire increments the count is
 * not documented, and counting it is the safe side (docs/exchange-behaviour.md §3).
 */

import { utcDay } from "../core/clock.js";
import type { FindingOptions, Fire, RecordFinding, ScheduleTx } from "../core/record.js";
import type { ExplorerTx, HistoricalOrder } from "../protocol/hyperliquid/schemas.js";

export { reconcileLedger } from "./record-reconcile.js";

/** The status of an order removed by a fired scheduled cancel (the order-status table of the docs). */
export const SCHEDULED_CANCEL_STATUS = "scheduledCancel";

// The record's shapes live in core/ (src/core/record.ts), where the watchers that read and report it see them too.
export type {
  FindingOptions,
  Fire,
  LedgerChange,
  LedgerView,
  ReconcileOutcome,
  RecordFinding,
  RecordResult,
  RecordUnavailable,
  ScheduleTx,
  UnavailableReason,
} from "../core/record.js";

/** How long after a deadline a `scheduledCancel` status still belongs to that deadline (block time lag). */
export const DEFAULT_FIRE_WINDOW_MS = 60_000;
/** `scheduledCancel` statuses closer than this to each other belong to one fire. */
const CLUSTER_GAP_MS = 2_000;

function dayStart(now: number): number {
  return Date.parse(`${utcDay(now)}T00:00:00.000Z`);
}

/** The scheduleCancel transactions of a `userDetails` list, oldest first (duplicates by hash dropped). */
export function scheduleTxs(txs: ReadonlyArray<ExplorerTx>): ScheduleTx[] {
  const seen = new Set<string>();
  const out: ScheduleTx[] = [];
  for (const tx of txs) {
    if (tx.action.type !== "scheduleCancel" || seen.has(tx.hash)) continue;
    seen.add(tx.hash);
    const time = (tx.action as { time?: unknown }).time;
    out.push({
      txTime: tx.time,
      deadline: typeof time === "number" && Number.isFinite(time) ? time : null,
      hash: tx.hash,
      error: tx.error,
    });
  }
  return out.sort((a, b) => a.txTime - b.txTime);
}

/** PURE: what the record says, at `now`. */
export function readFinding(
  txs: ReadonlyArray<ExplorerTx>,
  orders: ReadonlyArray<HistoricalOrder>,
  now: number,
  { fireWindowMs = DEFAULT_FIRE_WINDOW_MS }: FindingOptions = {},
): RecordFinding {
  const today = utcDay(now);
  const all = scheduleTxs(txs);
  const accepted = all.filter((t) => t.error === null);
  const refusedToday = all.filter((t) => t.error !== null && utcDay(t.txTime) === today);

  // scheduledCancel statuses, oldest first; each is used by at most one fire.
  const cancelled = orders
    .filter((o) => o.status === SCHEDULED_CANCEL_STATUS)
    .map((o) => o.statusTimestamp)
    .sort((a, b) => a - b);
  const used = new Array<boolean>(cancelled.length).fill(false);

  // The deadlines that lapsed: accepted, not replaced (or removed) before their time, and come.
  const lapsed: number[] = [];
  for (let i = 0; i < accepted.length; i++) {
    const tx = accepted[i]!;
    if (tx.deadline === null) continue;
    const next = accepted[i + 1];
    if (next !== undefined && next.txTime < tx.deadline) continue;
    if (tx.deadline > now) continue;
    lapsed.push(tx.deadline);
  }
  // Each scheduledCancel status belongs to the LATEST lapsed deadline at or before it (within the block lag and
  // the fire window): a fire cancels at its own deadline, so an order cancelled 8 s after an earlier fire of the
  // day belongs to the later one (a drill's), never to the earlier one whose window merely still covers it.
  const counts = new Map<number, number>();
  for (let k = 0; k < cancelled.length; k++) {
    const at = cancelled[k]!;
    let best: number | null = null;
    for (const d of lapsed)
      if (at >= d - CLUSTER_GAP_MS && at <= d + fireWindowMs && (best === null || d > best)) best = d;
    if (best === null) continue;
    used[k] = true;
    counts.set(best, (counts.get(best) ?? 0) + 1);
  }
  const fires: Fire[] = [];
  for (const deadline of lapsed) {
    const count = counts.get(deadline) ?? 0;
    // one fire per deadline (a deadline pushed twice and lapsed is one fire)
    if (fires.some((f) => f.deadline === deadline)) continue;
    fires.push({
      deadline,
      day: utcDay(deadline),
      cancelledOrders: count,
      proof: count > 0 ? "orders" : "lapse",
    });
  }
  // scheduledCancel orders no listed schedule explains: the list was cut, or another process armed it.
  let cluster: number[] = [];
  const flush = () => {
    if (cluster.length === 0) return;
    const first = cluster[0]!;
    fires.push({
      deadline: first,
      day: utcDay(first),
      cancelledOrders: cluster.length,
      proof: "orders-only",
    });
    cluster = [];
  };
  for (let k = 0; k < cancelled.length; k++) {
    if (used[k]) continue;
    const at = cancelled[k]!;
    if (cluster.length > 0 && at - cluster[cluster.length - 1]! > CLUSTER_GAP_MS) flush();
    cluster.push(at);
  }
  flush();
  fires.sort((a, b) => a.deadline - b.deadline);

  const lastAccepted = accepted.at(-1) ?? null;
  const fired = lastAccepted?.deadline != null && fires.some((f) => f.deadline === lastAccepted.deadline);
  const armedUntil =
    lastAccepted && lastAccepted.deadline !== null && lastAccepted.deadline > now && !fired
      ? lastAccepted.deadline
      : null;
  const times = txs.map((t) => t.time);
  const oldestTx = times.length > 0 ? Math.min(...times) : null;
  const newestTx = times.length > 0 ? Math.max(...times) : null;
  return {
    available: true,
    at: now,
    day: today,
    lastAccepted,
    armedUntil,
    fires,
    firesToday: fires.filter((f) => f.day === today).length,
    refusedToday: refusedToday.length,
    lastRefusal: refusedToday.at(-1)?.error ?? null,
    oldestTx,
    newestTx,
    schedules: all,
    coversDay: oldestTx !== null && oldestTx < dayStart(now),
  };
}
