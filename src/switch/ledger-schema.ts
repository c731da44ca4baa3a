/**
 * The ledger's shapes: what the store (ledger.ts) reads and writes and the pure model (ledger-model.ts) changes.
 * Every read is checked against them; a file that does not match is corrupt (docs/daemon.md, "The trigger ledger").
 *
 * Two layouts. Since issue 41 a directory `<stateDir>/ledger/` holds one file per account (`<account>.json`, a
 * `LedgerAccountFile`) and one for what is file-wide (`meta.json`, a `LedgerMeta`): a push rewrites its own account's
 * file only, so its cost does not grow with the fleet. Before it, one `<stateDir>/ledger.json` (a `LedgerFile`) held
 * everything and was rewritten whole on every push; it is still read (migrated at the first start, and by `status`),
 * and `LedgerFile` stays the shape every reader gets from either layout (ledger.ts `readLedgerState`).
 */
import { z } from "zod";

/** The single-file layout (before issue 41): read, migrated, never written. */
export const LEDGER_FILE = "ledger.json";
export const LEDGER_VERSION = 1;
/** The per-account layout: `<stateDir>/ledger/meta.json` and `<stateDir>/ledger/<account>.json`. */
export const LEDGER_DIR = "ledger";
export const LEDGER_META_FILE = "meta.json";
export const LEDGER_LAYOUT_VERSION = 2;
/** An account's file name in LEDGER_DIR: the lower-case address, `.json`. */
export const ACCOUNT_FILE = /^(0x[0-9a-f]{40})\.json$/;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a UTC day YYYY-MM-DD");
const ms = z.number().int();

export const LedgerEvent = z.object({
  /** clock ms when it happened */
  at: ms,
  type: z.enum(["trigger", "exhausted", "limit_error", "removed", "corrupt", "rollover"]),
  /** the deadline concerned (trigger: the deadline that passed) */
  deadline: ms.nullable().optional(),
  /** triggers counted today after the event */
  triggersToday: z.number().int().nonnegative().optional(),
  /** free text: the server's message, the reason, the file moved aside */
  detail: z.string().optional(),
});
export type LedgerEvent = z.infer<typeof LedgerEvent>;

/**
 * What proves a counted trigger (docs/daemon.md "What the switch believes about triggers"):
 * - `limit_error`: the exchange refused a push with its own daily-limit error (the count is set to the limit);
 * - `orders`: `scheduledCancel` orders in `historicalOrders` at the deadline (the exchange fired);
 * - `record`: a lapse the exchange's record proves while fresh for the deadline (accepted, not replaced);
 * - `guess`: the ledger's own inference (a deadline passed without a newer confirmed push; no record).
 * Only `limit_error` stops the pushes; `limit_error` and `orders` make a proven limit (`exhausted`).
 */
export const TriggerProof = z.enum(["limit_error", "orders", "record", "guess"]);
export type TriggerProof = z.infer<typeof TriggerProof>;

export const TriggerRecord = z.object({
  /** the deadline that fired (null when not known: a count from the exchange's limit error) */
  deadline: ms.nullable(),
  proof: TriggerProof,
  /** exchange-clock ms when it was counted (or its proof last changed) */
  at: ms,
  /**
   * for a guess: the other cancel times the exchange may hold instead of `deadline` (pushes sent without a
   * recorded answer); a record listing one of them accepted before the deadline withdraws the guess
   */
  alt: z.array(ms).max(8).optional(),
  /**
   * the record's fire took the place of a count of unrecorded proof (an older file, the limit error): withdrawn,
   * that count stays, of unrecorded proof again
   */
  slot: z.boolean().optional(),
});
export type TriggerRecord = z.infer<typeof TriggerRecord>;

export const LedgerEntry = z.object({
  account: z.string().regex(/^0x[0-9a-f]{40}$/, "must be a lower-case 0x address"),
  /** the UTC day triggersToday belongs to */
  day,
  triggersToday: z.number().int().nonnegative(),
  limit: z.number().int().positive(),
  /** true when triggersToday is a conservative assumption (the ledger was unreadable), not a count */
  assumed: z.boolean().default(false),
  /** cancel time of the last confirmed push; null when nothing is known to be armed (removed, or fired) */
  armedUntil: ms.nullable(),
  /** when the last push was confirmed (clock ms) */
  lastPushAt: ms.nullable(),
  /**
   * Write-ahead record: the cancel time of a push that was sent but whose confirmation is not recorded (the
   * exchange may have accepted it). Written durably before the request leaves, so a crash between the
   * exchange's acceptance and the ledger write cannot hide an armed deadline from the next start.
   */
  pendingUntil: ms.nullable().default(null),
  /** the latest cancel time among such pushes (the exchange holds one of pendingUntil..pendingLatest) */
  pendingLatest: ms.nullable().default(null),
  /** the last deadline a trigger was counted for (a deadline is never counted twice) */
  lastCountedDeadline: ms.nullable().default(null),
  history: z.array(LedgerEvent).default([]),
  /**
   * Today's counted triggers with their proof, oldest first (an older file has none: its `triggersToday` reads
   * as triggers of unrecorded proof). `triggersToday` may exceed its length: an assumed count, the limit error.
   */
  triggers: z.array(TriggerRecord).max(200).default([]),
  /** exchange-clock ms of the exchange's own daily-limit refusal today; the only thing that stops the pushes */
  limitRefusedAt: ms.nullable().default(null),
  /** the deadlines this daemon removed today (graceful stop): the record never counts them as fires */
  removals: z.array(ms).max(200).default([]),
  /**
   * guesses for deadlines on a later UTC day than `day`, counted while the ledger's day (the earlier of two
   * disagreeing clocks) had not reached theirs: each counts on its own day when the ledger rolls to it
   * (ledger-model.ts `rollEntry`). Only that day's record may settle them.
   */
  later: z.array(TriggerRecord).max(8).optional(),
  /**
   * HALTED (src/escalation/): the escalation started closing the account's positions at `since` for `reason`. Kept
   * across restarts; only an operator's `reset` removes it.
   */
  halted: z
    .object({
      since: ms,
      reason: z.string().max(500),
      /**
       * the closes, written ahead of every pass (`open`) and when one reports the account flat (`done`): a
       * restart finds a pass open and resumes it while the engine is down and a rule holds, or says "closing
       * stopped at restart" with `remaining`
       */
      closing: z.enum(["open", "done"]).optional(),
      /** passes written ahead since the latch */
      pass: z.number().int().nonnegative().optional(),
      /** the positions left at the last pass's last read, as people read them ("BTC 0.25, ETH -3") */
      remaining: z.string().max(500).optional(),
    })
    .optional(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

/** That an engine held an account (LedgerFile `engines`). */
export const EngineHeld = z.object({ since: ms });
export type EngineHeld = z.infer<typeof EngineHeld>;

export const LedgerFile = z.object({
  version: z.literal(LEDGER_VERSION),
  updatedAt: ms,
  /** when set, accounts first seen on this UTC day start at the limit (the previous file was unreadable) */
  assumeLimitOn: day.nullable().default(null),
  accounts: z.record(z.string(), LedgerEntry),
  /** the highest nonce handed out when the file was written: the next run's nonces start above it */
  lastNonce: ms.nullable().default(null),
  /**
   * Per account, that an engine held it (the connection guard saw one name it; `since`: clock ms of the first time).
   * After a restart such an account waits for an engine only `--guard-connect-grace`, then is engine down
   * (src/watchers/connection-guard.ts). Written once per account, never per heartbeat; a file without it (an older
   * version) reads as no engine known.
   */
  engines: z.record(z.string(), EngineHeld).default({}),
});
export type LedgerFile = z.infer<typeof LedgerFile>;

/**
 * `<stateDir>/ledger/meta.json`: what is file-wide. Written when `assumeLimitOn` or `engines` change (at most once
 * per account for `engines`), never per push; its presence marks the per-account layout as complete (a migration
 * writes it last).
 */
export const LedgerMeta = z.object({
  version: z.literal(LEDGER_LAYOUT_VERSION),
  /** as LedgerFile `updatedAt`, when this file was last written: one of the stamps whose maximum is the ledger's */
  updatedAt: ms,
  lastNonce: ms.nullable().default(null),
  assumeLimitOn: day.nullable().default(null),
  engines: z.record(z.string(), EngineHeld).default({}),
});
export type LedgerMeta = z.infer<typeof LedgerMeta>;

/**
 * `<stateDir>/ledger/<account>.json`: one account's entry, with the stamps of the write that carried it. The
 * ledger's `updatedAt` and `lastNonce` (the next run's nonce floor) are the highest over meta.json and every
 * account file: each write stamps the files it writes, so the write that made a push's intent durable also made
 * its stamp durable (the write-ahead rule, src/switch/write-ahead.ts).
 */
export const LedgerAccountFile = z.object({
  version: z.literal(LEDGER_LAYOUT_VERSION),
  updatedAt: ms,
  lastNonce: ms.nullable().default(null),
  entry: LedgerEntry,
});
export type LedgerAccountFile = z.infer<typeof LedgerAccountFile>;
