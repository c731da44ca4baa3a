/**
 * The trigger ledger: per account and UTC day, the triggers counted, the limit, the deadline of the last
 * confirmed push (armedUntil), the last push time and a short history of notable events (triggers,
 * exhaustion, removals, corrupt-file events; pushes are not history). One file for all accounts,
 * `<stateDir>/ledger.json`, written atomically (temp file in the same directory, fsync, rename, fsync dir).
 *
 * Conservative rules (docs/daemon.md):
 * - A corrupt, truncated or unreadable ledger is never reset to zero silently: it is logged at error, moved
 *   aside as `ledger.json.corrupt-<ms>`, and every account is assumed to have used the whole limit today
 *   (`assumed: true`). The switch warns loudly and reports not ready, yet keeps pushing (pushing is harmless
 *   and protects); the assumption ends at 00:00 UTC.
 * - A failed write (read-only directory, ENOSPC) is logged at error with the path and the reason; the
 *   in-memory ledger stays authoritative and the daemon keeps protecting. The old file stays intact
 *   (temp + rename), so nothing already written is lost.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { formatIssues } from "../errors/parse.js";
import { checkStateFile } from "../state/files.js"; // issue 16: state-file check
import { type Clock, utcDay } from "../utils/clock.js";
import type { Logger } from "../utils/logger.js";

export const LEDGER_FILE = "ledger.json";
export const LEDGER_VERSION = 1;
export const HISTORY_SIZE = 50;

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
  /** the last deadline a trigger was counted for (a deadline is never counted twice) */
  lastCountedDeadline: ms.nullable().default(null),
  history: z.array(LedgerEvent).default([]),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const LedgerFile = z.object({
  version: z.literal(LEDGER_VERSION),
  updatedAt: ms,
  /** when set, accounts first seen on this UTC day start at the limit (the previous file was unreadable) */
  assumeLimitOn: day.nullable().default(null),
  accounts: z.record(z.string(), LedgerEntry),
});
export type LedgerFile = z.infer<typeof LedgerFile>;

export type ReadLedgerResult =
  | { ok: true; file: LedgerFile | null }
  | { ok: false; reason: string; code: "corrupt" | "unreadable" };

/** Reads and validates a ledger file without changing anything (`status` uses this). */
export async function readLedgerFile(path: string): Promise<ReadLedgerResult> {
  // --- issue 16 (state files): a regular file of sane size, checked before it is read (src/state/files.ts).
  // Anything else (symlink to /dev/zero, FIFO, 38 MB file) is "corrupt": moved aside, limit assumed.
  const checked = await checkStateFile(path);
  if (!checked.ok)
    return {
      ok: false,
      code: checked.code === "unreadable" ? "unreadable" : "corrupt",
      reason: checked.reason,
    };
  if (!checked.exists) return { ok: true, file: null };
  const text = checked.text;
  // --- end issue 16
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      code: "corrupt",
      reason: `is not valid JSON (${(error as Error).message}; ${text.length} bytes)`,
    };
  }
  const parsed = LedgerFile.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      code: "corrupt",
      reason: `has an unexpected shape (${formatIssues(parsed.error).join("; ")})`,
    };
  return { ok: true, file: parsed.data };
}

/** The entry as it stands on `today`: an entry from an earlier day reads as 0 triggers (not assumed). */
export function entryOnDay(entry: LedgerEntry, today: string): LedgerEntry {
  if (entry.day === today) return entry;
  return { ...entry, day: today, triggersToday: 0, assumed: false };
}

export type OpenLedgerParameters = {
  stateDir: string;
  clock: Clock;
  logger: Logger;
  triggerLimit: number;
  historySize?: number;
};

export type CountTriggerResult = { counted: boolean; entry: LedgerEntry; reachedLimit: boolean };

/**
 * The in-memory ledger (authoritative) and its file. Every change schedules one atomic write; writes are
 * serialised and coalesced. Read it with `get(account)`, which rolls the day over lazily.
 */
export class Ledger {
  readonly path: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #limit: number;
  readonly #historySize: number;
  #accounts = new Map<string, LedgerEntry>();
  #assumeLimitOn: string | null = null;
  #writing: Promise<void> | null = null;
  #dirty = false;
  #lastWriteError: string | null = null;
  #writes = 0;

  private constructor(
    path: string,
    { clock, logger, triggerLimit, historySize = HISTORY_SIZE }: OpenLedgerParameters,
  ) {
    this.path = path;
    this.#clock = clock;
    this.#log = logger;
    this.#limit = triggerLimit;
    this.#historySize = historySize;
  }

  /**
   * Opens `<stateDir>/ledger.json` (creating the directory). A missing file is a fresh ledger; a corrupt or
   * unreadable one is moved aside and the limit is assumed for today (never a silent reset to zero).
   */
  static async open(params: OpenLedgerParameters): Promise<Ledger> {
    const path = join(params.stateDir, LEDGER_FILE);
    const ledger = new Ledger(path, params);
    try {
      mkdirSync(params.stateDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      ledger.#log.error(
        {
          event: "ledger.write_failed",
          path: params.stateDir,
          reason: (error as NodeJS.ErrnoException).code,
        },
        "cannot create the state directory; the ledger lives in memory only",
      );
    }
    const read = await readLedgerFile(path);
    const now = params.clock.now();
    if (read.ok) {
      if (read.file) {
        ledger.#assumeLimitOn = read.file.assumeLimitOn;
        for (const [account, entry] of Object.entries(read.file.accounts)) {
          ledger.#accounts.set(account.toLowerCase(), { ...entry, limit: params.triggerLimit });
        }
        ledger.#log.info(
          { event: "ledger.loaded", path, accounts: ledger.#accounts.size },
          `trigger ledger read from ${path}`,
        );
      }
      return ledger;
    }
    // Corrupt or unreadable: keep the damaged file aside, assume the worst for today.
    const aside = `${path}.corrupt-${now}`;
    let moved: string | null = null;
    try {
      await rename(path, aside);
      moved = aside;
    } catch (error) {
      moved = null;
      ledger.#log.error(
        { event: "ledger.corrupt", path, reason: (error as NodeJS.ErrnoException).code },
        "could not move the damaged ledger aside",
      );
    }
    ledger.#assumeLimitOn = utcDay(now);
    ledger.#log.error(
      {
        event: "ledger.corrupt",
        path,
        reason: read.reason,
        movedTo: moved,
        assumedTriggersToday: params.triggerLimit,
      },
      `the trigger ledger ${read.reason}; ${moved ? `moved it to ${moved}; ` : ""}assuming the daily limit ` +
        `(${params.triggerLimit}) is used today: pushes continue, but the switch reports not ready until 00:00 UTC`,
    );
    ledger.#pendingCorruptDetail = `${read.reason}${moved ? `; moved to ${moved}` : ""}`;
    ledger.#markDirty();
    return ledger;
  }

  #pendingCorruptDetail: string | null = null;

  get limit(): number {
    return this.#limit;
  }

  /** The last write error (null when the last write succeeded or none happened). */
  get lastWriteError(): string | null {
    return this.#lastWriteError;
  }

  /** Completed writes. */
  get writes(): number {
    return this.#writes;
  }

  /** Accounts present in the ledger. */
  accounts(): string[] {
    return [...this.#accounts.keys()];
  }

  /** The entry for `account` today (created if new; rolled over lazily when the UTC day changed). */
  get(account: string): LedgerEntry {
    return structuredClone(this.#entry(account));
  }

  #entry(account: string): LedgerEntry {
    const key = account.toLowerCase();
    const now = this.#clock.now();
    const today = utcDay(now);
    let entry = this.#accounts.get(key);
    if (!entry) {
      const assumed = this.#assumeLimitOn === today;
      entry = {
        account: key,
        day: today,
        triggersToday: assumed ? this.#limit : 0,
        limit: this.#limit,
        assumed,
        armedUntil: null,
        lastPushAt: null,
        pendingUntil: null,
        lastCountedDeadline: null,
        history: [],
      };
      if (assumed && this.#pendingCorruptDetail)
        this.#push(entry, { at: now, type: "corrupt", detail: this.#pendingCorruptDetail });
      this.#accounts.set(key, entry);
      this.#markDirty();
    } else if (entry.day !== today) {
      this.#rollEntry(entry, today, now);
    }
    return entry;
  }

  #rollEntry(entry: LedgerEntry, today: string, now: number): void {
    const from = entry.day;
    const was = entry.triggersToday;
    entry.day = today;
    entry.triggersToday = 0;
    entry.assumed = false;
    this.#push(entry, {
      at: now,
      type: "rollover",
      triggersToday: 0,
      detail: `${from} -> ${today} (${was} used)`,
    });
    this.#log.info(
      { event: "ledger.rollover", account: entry.account, from, to: today, previousTriggers: was },
      "new UTC day: the trigger count is reset",
    );
    this.#markDirty();
  }

  /**
   * 00:00 UTC: rolls every entry whose day is over (node-cron calls this; `get` also does it lazily).
   * Returns the accounts rolled.
   */
  rollover(): string[] {
    const now = this.#clock.now();
    const today = utcDay(now);
    if (this.#assumeLimitOn !== null && this.#assumeLimitOn !== today) {
      this.#assumeLimitOn = null;
      this.#markDirty();
    }
    const rolled: string[] = [];
    for (const entry of this.#accounts.values()) {
      if (entry.day !== today) {
        this.#rollEntry(entry, today, now);
        rolled.push(entry.account);
      }
    }
    return rolled;
  }

  /**
   * A push with cancel time `deadline` is about to be sent: record it durably first (write-ahead). Resolves
   * once written, or after `maxWaitMs` (a slow or failing disk must not hold the heartbeat back; a failed write
   * is logged and the in-memory ledger stays authoritative).
   */
  async recordIntent(
    account: string,
    { deadline, maxWaitMs = 1_000 }: { deadline: number; maxWaitMs?: number },
  ): Promise<void> {
    const entry = this.#entry(account);
    if (entry.pendingUntil === null || deadline > entry.pendingUntil) entry.pendingUntil = deadline;
    this.#markDirty();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.flush(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxWaitMs);
        timer.unref?.();
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * The exchange refused the push with cancel time `deadline`: it armed nothing. The record goes back to what
   * it was before that push (an earlier push whose outcome is still unknown stays pending).
   */
  clearIntent(
    account: string,
    { deadline, restoreTo = null }: { deadline: number; restoreTo?: number | null },
  ): void {
    const entry = this.#entry(account);
    if (entry.pendingUntil === deadline) {
      entry.pendingUntil = restoreTo;
      this.#markDirty();
    }
  }

  /** A push was confirmed: the schedule is armed until `deadline`. */
  recordPush(account: string, { deadline, at }: { deadline: number; at: number }): LedgerEntry {
    const entry = this.#entry(account);
    entry.armedUntil = deadline;
    entry.lastPushAt = at;
    // Pushes never overlap and an unknown-outcome push gates the next one until it can no longer land, so a
    // confirmation supersedes every push sent before it (including after a deliberate, earlier expedite).
    entry.pendingUntil = null;
    this.#markDirty();
    return structuredClone(entry);
  }

  /**
   * The confirmed deadline `deadline` passed without a newer confirmed push: count one trigger (once per
   * deadline). Clears armedUntil (the schedule is one-shot, docs/exchange-behaviour.md §3).
   */
  countTrigger(
    account: string,
    { deadline, at, detail }: { deadline: number; at: number; detail?: string },
  ): CountTriggerResult {
    const entry = this.#entry(account);
    if (entry.lastCountedDeadline === deadline) {
      if (entry.armedUntil === deadline) entry.armedUntil = null;
      return { counted: false, entry: structuredClone(entry), reachedLimit: false };
    }
    // The trigger belongs to the UTC day of the deadline; a deadline from an earlier day (daemon down over
    // midnight) is history only.
    const sameDay = utcDay(deadline) === entry.day;
    if (sameDay && !entry.assumed) entry.triggersToday++;
    entry.lastCountedDeadline = deadline;
    if (entry.armedUntil !== null && entry.armedUntil <= deadline) entry.armedUntil = null;
    if (entry.pendingUntil !== null && entry.pendingUntil <= deadline) entry.pendingUntil = null;
    this.#push(entry, {
      at,
      type: "trigger",
      deadline,
      triggersToday: entry.triggersToday,
      ...(detail
        ? { detail: sameDay ? detail : `${detail}; on ${utcDay(deadline)}, not counted today` }
        : {}),
    });
    const reachedLimit = entry.triggersToday >= entry.limit;
    if (reachedLimit && sameDay && !entry.assumed)
      this.#push(entry, { at, type: "exhausted", triggersToday: entry.triggersToday });
    this.#markDirty();
    return { counted: sameDay, entry: structuredClone(entry), reachedLimit };
  }

  /** The exchange answered with the daily-limit error: the count is the limit, whatever we counted. */
  markLimitReached(account: string, { at, message }: { at: number; message: string }): LedgerEntry {
    const entry = this.#entry(account);
    entry.triggersToday = Math.max(entry.triggersToday, entry.limit);
    entry.assumed = false;
    this.#push(entry, { at, type: "limit_error", triggersToday: entry.triggersToday, detail: message });
    this.#markDirty();
    return structuredClone(entry);
  }

  /** The schedule was removed (graceful stop, unschedule): nothing is armed. */
  recordRemoval(account: string, { at }: { at: number }): LedgerEntry {
    const entry = this.#entry(account);
    const was = entry.armedUntil;
    entry.armedUntil = null;
    entry.pendingUntil = null;
    this.#push(entry, { at, type: "removed", deadline: was });
    this.#markDirty();
    return structuredClone(entry);
  }

  /** The whole file as it would be written now. */
  snapshot(): LedgerFile {
    return {
      version: LEDGER_VERSION,
      updatedAt: this.#clock.now(),
      assumeLimitOn: this.#assumeLimitOn,
      accounts: Object.fromEntries([...this.#accounts].map(([k, v]) => [k, structuredClone(v)])),
    };
  }

  #push(entry: LedgerEntry, event: LedgerEvent): void {
    entry.history.push(event);
    if (entry.history.length > this.#historySize)
      entry.history.splice(0, entry.history.length - this.#historySize);
  }

  #markDirty(): void {
    this.#dirty = true;
    if (!this.#writing) this.#writing = this.#writeLoop();
  }

  async #writeLoop(): Promise<void> {
    try {
      while (this.#dirty) {
        this.#dirty = false;
        await this.#writeOnce(`${JSON.stringify(this.snapshot(), null, 2)}\n`);
      }
    } finally {
      this.#writing = null;
    }
  }

  async #writeOnce(text: string): Promise<void> {
    const tmp = join(
      dirname(this.path),
      `.${LEDGER_FILE}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`,
    );
    try {
      const fh = await open(tmp, "w", 0o600);
      try {
        await fh.writeFile(text, "utf8");
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.path);
      try {
        const dir = await open(dirname(this.path), "r");
        try {
          await dir.sync();
        } finally {
          await dir.close();
        }
      } catch {
        // Some filesystems refuse fsync on a directory; the rename is still atomic.
      }
      this.#writes++;
      if (this.#lastWriteError !== null) {
        this.#log.info(
          { event: "ledger.write_recovered", path: this.path },
          "the trigger ledger is written again",
        );
      }
      this.#lastWriteError = null;
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      await rm(tmp, { force: true }).catch(() => undefined);
      if (this.#lastWriteError !== reason) {
        this.#log.error(
          { event: "ledger.write_failed", path: this.path, reason },
          `cannot write the trigger ledger ${this.path} (${reason}); the in-memory ledger stays authoritative, ` +
            "the previous file is intact, protection continues",
        );
      }
      this.#lastWriteError = reason;
    }
  }

  /** Resolves once every change so far is written (or its write failed and was logged). */
  async flush(): Promise<void> {
    for (let i = 0; i < 100 && (this.#writing || this.#dirty); i++) {
      if (!this.#writing && this.#dirty) this.#writing = this.#writeLoop();
      await this.#writing;
    }
  }
}
