/**
 * What the exchange's own record says about an account's switch, and what the ledger believes of it: the shapes
 * shared by the switch (src/switch/record.ts reads and reconciles them, purely), the watchers that read the record
 * and report the reconciliation (src/watchers/record-read.ts, record-log.ts) and their events (core/events.ts).
 * docs/exchange-record.md.
 */

export type ScheduleTx = {
  /** when the transaction was included (the explorer's `time`, ms) */
  txTime: number;
  /** the cancel time it set; null for a removal (no `time`) */
  deadline: number | null;
  hash: string;
  /** null when accepted; the exchange's refusal text otherwise */
  error: string | null;
};

export type Fire = {
  /** the deadline that fired (for `orders-only`: the first `scheduledCancel` status time) */
  deadline: number;
  /** UTC day the trigger counts toward */
  day: string;
  /** orders with status `scheduledCancel` attributed to this fire */
  cancelledOrders: number;
  /**
   * `orders`: a lapsed deadline with `scheduledCancel` orders around it (proven).
   * `lapse`: a lapsed deadline without such orders (counted anyway: the safe side).
   * `orders-only`: `scheduledCancel` orders whose schedule is not in the transaction list.
   */
  proof: "orders" | "lapse" | "orders-only";
};

export type RecordFinding = {
  available: true;
  /** when the finding was computed (ms) */
  at: number;
  day: string;
  /** the newest accepted scheduleCancel (set or removal), if the list shows one */
  lastAccepted: ScheduleTx | null;
  /** the deadline armed right now according to the record (last accepted is a set still in the future) */
  armedUntil: number | null;
  /** every fire the record shows, oldest first */
  fires: Fire[];
  firesToday: number;
  /** scheduleCancel transactions refused today (error not null) */
  refusedToday: number;
  /** the newest refusal text, for the operator */
  lastRefusal: string | null;
  /** the oldest transaction time in the list (any type), or null for an empty list */
  oldestTx: number | null;
  /** the newest transaction time in the list (any type), or null: how far the record is fresh */
  newestTx: number | null;
  /** every scheduleCancel transaction listed, oldest first (the explorer's list is bounded) */
  schedules: ScheduleTx[];
  /** true when the list reaches back before 00:00 UTC today, so nothing of today can be missing from it */
  coversDay: boolean;
};

export type UnavailableReason = "not_configured" | "rate_limited" | "error" | "unsupported" | "malformed";

export type RecordUnavailable = {
  available: false;
  reason: UnavailableReason;
  /** one line for the operator (never a key or a URL with credentials) */
  detail: string;
};

export type RecordResult = RecordFinding | RecordUnavailable;

export type FindingOptions = {
  /** how long after a deadline its `scheduledCancel` orders still belong to it (src/switch/record.ts DEFAULT_FIRE_WINDOW_MS) */
  fireWindowMs?: number;
};

/** What the ledger believes about one account today (the parts the record can correct). */
export type LedgerView = {
  /** the UTC day the count belongs to */
  day: string;
  triggersToday: number;
  /** the count is an assumption (corrupt or unreadable ledger: the whole limit assumed) */
  assumed: boolean;
  /** the count includes triggers guessed without proof (lapses counted while the daemon was not running) */
  guessed?: boolean;
  /** cancel time of the last confirmed push, or null */
  armedUntil: number | null;
  /** a push sent but not confirmed (write-ahead), or null */
  pendingUntil: number | null;
};

export type LedgerChange = {
  field: "triggersToday" | "assumed" | "guessed" | "armedUntil" | "pendingUntil";
  from: number | boolean | null;
  to: number | boolean | null;
  reason: string;
};

export type ReconcileOutcome = {
  ledger: LedgerView;
  changes: LedgerChange[];
  /** things the record could not settle, for the log line (nothing was changed for them) */
  notes: string[];
};
