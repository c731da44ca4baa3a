/**
 * The trigger ledger's store: per account and UTC day, the triggers counted, the limit, the deadline of the last
 * confirmed push (armedUntil), the last push time and a short history of notable events (triggers,
 * exhaustion, removals, corrupt-file events; pushes are not history). One file for all accounts,
 * `<stateDir>/ledger.json`, written atomically (temp file in the same directory, fsync, rename, fsync dir).
 * What changes an entry is the pure model in switch/ledger-model.ts; this file only holds entries and writes
 * them. Reading (`get`) never changes or writes anything.
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
import {
  close as closeCallback,
  closeSync,
  fsync,
  mkdirSync,
  open as openCallback,
  rename as renameCallback,
  writeSync,
} from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { type Clock, utcDay } from "../core/clock.js";
import { formatIssues } from "../core/errors/parse.js";
import { checkStateFile } from "../core/files.js";
import type { Logger } from "../core/logger.js";
import { type TimerHandle, type Timers, unrefTimers } from "../core/runtime.js";
import {
  capHistory,
  HISTORY_SIZE,
  newEntry,
  type ReconciledView,
  rollEntry,
  withEngineHeld,
  withReconciled,
} from "./ledger-model.js";
import {
  type EngineHeld,
  LEDGER_FILE,
  LEDGER_VERSION,
  type LedgerEntry,
  LedgerFile,
} from "./ledger-schema.js";

export { HISTORY_SIZE } from "./ledger-model.js";
export {
  EngineHeld,
  LEDGER_FILE,
  LEDGER_VERSION,
  LedgerEntry,
  LedgerEvent,
  LedgerFile,
  TriggerProof,
  TriggerRecord,
} from "./ledger-schema.js";

// The write path's file calls, on libuv's thread pool without FileHandle objects (see Ledger#writeOnce).
const openAsync = promisify(openCallback);
const fsyncAsync = promisify(fsync);
const renameAsync = promisify(renameCallback);
const closeAsync = promisify(closeCallback);
const TMP_PREFIX = `.${LEDGER_FILE}.tmp-`;

export type ReadLedgerResult =
  | { ok: true; file: LedgerFile | null }
  | { ok: false; reason: string; code: "corrupt" | "unreadable" };

/** Reads and validates a ledger file without changing anything (`status` uses this). */
export async function readLedgerFile(path: string): Promise<ReadLedgerResult> {
  // A regular file of sane size, checked before it is read (src/core/files.ts; docs/security.md).
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
  if (entry.day >= today) return entry;
  // guesses counted for a later day before the ledger rolled (`later`) count on that day
  const carried = (entry.later ?? []).filter((t) => t.deadline !== null && utcDay(t.deadline) === today);
  return { ...entry, day: today, triggersToday: carried.length, assumed: false };
}

export type OpenLedgerParameters = {
  stateDir: string;
  clock: Clock;
  logger: Logger;
  triggerLimit: number;
  historySize?: number;
  /** test seam: runs before each fsync of the temp file (a slow disk) */
  beforeSync?: (() => Promise<void>) | undefined;
  /** the last nonce handed out, written as `lastNonce` (it seeds the next run's nonce floor) */
  nonceHint?: (() => number) | undefined;
  /**
   * the exchange's time when it is verified, else 0 (src/core/runtime.ts `ExchangeTime.verifiedNow`): `updatedAt`
   * only moves to a verified time, so a time from a wrong Date or a wrong local clock never seeds a restart's
   * nonce floor (default: `clock`)
   */
  verifiedNow?: (() => number) | undefined;
};

/** How a durable write ended: on disk, failed (logged), or still running when the budget ran out. */
export type Durability = "written" | "failed" | "timeout";

/**
 * The in-memory ledger (authoritative) and its file. Every change schedules one atomic write; writes are
 * serialised and coalesced. `get(account)` is a pure view (rolled to the clock's UTC day, never backwards).
 */
export class Ledger {
  readonly path: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #limit: number;
  readonly #historySize: number;
  readonly #beforeSync: (() => Promise<void>) | undefined;
  readonly #nonceHint: (() => number) | undefined;
  readonly #verifiedNow: (() => number) | undefined;
  #updatedAt = 0;
  #accounts = new Map<string, LedgerEntry>();
  /** the accounts an engine held (the file's `engines`): only ever grows, once per account */
  #engines: Readonly<Record<string, EngineHeld>> = {};
  #assumeLimitOn: string | null = null;
  #writing: Promise<void> | null = null;
  #dirty = false;
  /** counts the changes; a write carries every change up to the count it read when it took its snapshot */
  #changes = 0;
  /** the count the last finished write (on disk or failed) carried */
  #settledChanges = 0;
  /** `durable` callers, each waiting for a write that carries its count */
  #waiters: { upTo: number; done: () => void }[] = [];
  #lastWriteError: string | null = null;
  #writes = 0;
  #pendingCorruptDetail: string | null = null;
  #loadedUpdatedAt: number | null = null;
  #lastNonce: number | null = null;
  /** the state directory, opened at the first write and kept for its fsyncs (closed by `close`) */
  #dirFd: number | null = null;
  #tmpSeq = 0;
  /** this store's part of its temp files' names: two stores (two processes on one volume) never share one */
  readonly #tmpTag = randomBytes(4).toString("hex");
  /** `updatedAt` of the file as last written (a restart seeds its nonces from it: src/protocol/hyperliquid/nonce.ts) */
  #onDiskUpdatedAt: number | null = null;

  private constructor(
    path: string,
    {
      clock,
      logger,
      triggerLimit,
      historySize = HISTORY_SIZE,
      beforeSync,
      nonceHint,
      verifiedNow,
    }: OpenLedgerParameters,
  ) {
    this.#verifiedNow = verifiedNow;
    this.#nonceHint = nonceHint;
    this.path = path;
    this.#clock = clock;
    this.#log = logger;
    this.#limit = triggerLimit;
    this.#historySize = historySize;
    this.#beforeSync = beforeSync;
  }

  /**
   * Opens `<stateDir>/ledger.json` (creating the directory) and removes temp files a crash left behind. A
   * missing file is a fresh ledger; a corrupt or unreadable one is moved aside and the limit is assumed for
   * today (never a silent reset to zero).
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
    await ledger.#removeTempFiles(params.stateDir);
    const read = await readLedgerFile(path);
    const now = params.clock.now();
    if (read.ok) {
      if (read.file) {
        ledger.#assumeLimitOn = read.file.assumeLimitOn;
        ledger.#loadedUpdatedAt = read.file.updatedAt;
        ledger.#updatedAt = read.file.updatedAt;
        ledger.#lastNonce = read.file.lastNonce;
        ledger.#onDiskUpdatedAt = read.file.updatedAt;
        ledger.#engines = read.file.engines;
        for (const [account, entry] of Object.entries(read.file.accounts)) {
          ledger.#accounts.set(account.toLowerCase(), {
            ...entry,
            limit: params.triggerLimit,
            history: capHistory(entry.history, ledger.#historySize),
          });
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

  async #removeTempFiles(dir: string): Promise<void> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names.filter((n) => n.startsWith(TMP_PREFIX))) {
      await rm(join(dir, name), { force: true }).catch(() => undefined);
      this.#log.info(
        { event: "ledger.temp_removed", path: join(dir, name) },
        "removed a temp file a crash left",
      );
    }
  }

  get limit(): number {
    return this.#limit;
  }

  /** `updatedAt` of the file read at open (null when there was none): the exchange's time is not before it. */
  get loadedUpdatedAt(): number | null {
    return this.#loadedUpdatedAt;
  }

  /** The highest nonce the last run recorded (null when unknown): seeds the nonce floor. */
  get loadedLastNonce(): number | null {
    return this.#lastNonce;
  }

  get historySize(): number {
    return this.#historySize;
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

  /** The accounts an engine held, as read at open and recorded since (lower-case). */
  enginesHeld(): string[] {
    return Object.keys(this.#engines);
  }

  /**
   * Records that an engine held `account` (the connection guard saw one name it). Only the first time changes and
   * writes anything: a reconnection or a heartbeat costs nothing. Returns whether it was new.
   */
  markEngineHeld(account: string): boolean {
    const next = withEngineHeld(this.#engines, account, this.#clock.now());
    if (next === this.#engines) return false;
    this.#engines = next;
    this.#markDirty();
    return true;
  }

  /** The entry for `account` as it stands now (a fresh one if unknown). Pure: stores and writes nothing. */
  get(account: string): LedgerEntry {
    return structuredClone(rollEntry(this.#stored(account), this.#clock.now(), this.#historySize).entry);
  }

  /** The stored entry, or the fresh entry an unknown account starts with (not stored). */
  #stored(account: string): LedgerEntry {
    const key = account.toLowerCase();
    const entry = this.#accounts.get(key);
    if (entry) return entry;
    const now = this.#clock.now();
    const assumed = this.#assumeLimitOn === utcDay(now);
    return newEntry(key, now, { limit: this.#limit, assumed, corruptDetail: this.#pendingCorruptDetail });
  }

  /** The entry as the switch starts with it: what is stored, or new (assumed at the limit after corruption). */
  initial(account: string): LedgerEntry {
    return structuredClone(this.#stored(account));
  }

  /** Stores `entry` (as the model computed it) and schedules a write. */
  put(entry: LedgerEntry): void {
    this.#accounts.set(entry.account.toLowerCase(), structuredClone(entry));
    this.#markDirty();
  }

  /**
   * `updatedAt` of the file as last written (null before the first write of a file that did not exist): a
   * restart's nonce floor is seeded from it. The switch reads it once a write is durable (its write-ahead rule).
   */
  get writtenUpdatedAt(): number | null {
    return this.#onDiskUpdatedAt;
  }

  /**
   * Resolves when everything stored so far is on disk ("written"), when the write failed ("failed", logged),
   * or after `budgetMs` ("timeout") with the write still running (it still completes, then cleans up).
   */
  async durable(budgetMs: number, timers: Timers = unrefTimers): Promise<Durability> {
    let budget: TimerHandle | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      budget = timers.after(budgetMs, () => resolve("timeout"));
    });
    // Only the write that carries what was stored before this call is awaited, never the writes of changes made
    // after it: with many accounts some account changes the ledger every few milliseconds, and waiting for the file
    // to go quiet would wait for ever (the push would not be sent: `ledger_slow`).
    const upTo = this.#changes;
    const carried =
      this.#settledChanges >= upTo
        ? Promise.resolve()
        : new Promise<void>((done) => {
            this.#waiters.push({ upTo, done });
            if (!this.#writing && this.#dirty) this.#writing = this.#writeLoop();
          });
    const written = carried.then(() => {
      // the budget's timer is not left to wake the process once the write is done
      budget?.cancel();
      return this.#lastWriteError === null ? ("written" as const) : ("failed" as const);
    });
    return await Promise.race([written, timeout]);
  }

  /**
   * Applies what the exchange's record proved (start-up, before the switch reads its entry): conservative
   * direction only (ledger-model.ts `withReconciled`). Returns the entry and whether it changed.
   */
  reconcile(
    account: string,
    view: ReconciledView,
    fired: number[],
  ): { entry: LedgerEntry; changed: boolean } {
    const current = rollEntry(this.#stored(account), this.#clock.now(), this.#historySize).entry;
    const next = withReconciled(current, view, fired);
    if (next === current) return { entry: structuredClone(current), changed: false };
    this.put(next);
    return { entry: structuredClone(next), changed: true };
  }

  #logRollover(account: string, rolled: { from: string; to: string; was: number }): void {
    this.#log.info(
      { event: "ledger.rollover", account, from: rolled.from, to: rolled.to, previousTriggers: rolled.was },
      "new UTC day: the trigger count is reset",
    );
  }

  /** 00:00 UTC: rolls every stored entry whose day is over (never backwards). Returns the accounts rolled. */
  rollover(): string[] {
    const now = this.#clock.now();
    const today = utcDay(now);
    if (this.#assumeLimitOn !== null && this.#assumeLimitOn < today) {
      this.#assumeLimitOn = null;
      this.#markDirty();
    }
    const out: string[] = [];
    for (const [key, entry] of this.#accounts) {
      const { entry: next, rolled } = rollEntry(entry, now, this.#historySize);
      if (!rolled) continue;
      this.#logRollover(key, rolled);
      this.put(next);
      out.push(key);
    }
    return out;
  }

  /**
   * The whole file as it would be written now, with `accounts` (a copy of the map of stored entries).
   * `updatedAt` only moves forward (a clock stepped back does not move it back); `lastNonce` is the highest nonce
   * handed out so far (the next run's floor; docs/daemon.md). The entries are the stored ones themselves, not
   * copies: a stored entry is never changed, only replaced (`put` stores a copy of what it is given, and every
   * change here builds a new entry), so the snapshot stays as it was written.
   */
  #snapshot(accounts: ReadonlyMap<string, LedgerEntry>): LedgerFile {
    const verified = this.#verifiedNow ? this.#verifiedNow() : this.#clock.now();
    this.#updatedAt = Math.max(this.#updatedAt, Math.floor(verified));
    const hint = this.#nonceHint?.() ?? 0;
    if (hint > 0) this.#lastNonce = Math.max(this.#lastNonce ?? 0, hint);
    return {
      version: LEDGER_VERSION,
      updatedAt: this.#updatedAt,
      lastNonce: this.#lastNonce,
      assumeLimitOn: this.#assumeLimitOn,
      accounts: Object.fromEntries(accounts),
      engines: { ...this.#engines },
    };
  }

  #markDirty(): void {
    this.#dirty = true;
    this.#changes++;
    if (!this.#writing) this.#writing = this.#writeLoop();
  }

  async #writeLoop(): Promise<void> {
    try {
      while (this.#dirty) {
        this.#dirty = false;
        const carries = this.#changes;
        const accounts = new Map(this.#accounts);
        const snapshot = this.#snapshot(accounts);
        const written = await this.#writeOnce(`${JSON.stringify(snapshot, null, 2)}\n`);
        if (written) this.#onDiskUpdatedAt = snapshot.updatedAt;
        this.#settledChanges = carries;
        const ready = this.#waiters.filter((w) => w.upTo <= carries);
        this.#waiters = this.#waiters.filter((w) => w.upTo > carries);
        for (const w of ready) w.done();
      }
    } finally {
      this.#writing = null;
    }
  }

  /**
   * One atomic, durable write: a temp file in the same directory is created, written, fsynced and closed, then
   * renamed over the ledger, then the directory is fsynced. Whatever waits on the disk (creating the file, both
   * fsyncs, the rename) runs on libuv's thread pool, so a hung disk never blocks the event loop: `durable` runs
   * out of budget and the switch says why. Only the write into the page cache and the close after the fsync
   * (nothing left to flush) run inline, and the directory is opened once and kept: four thread-pool trips a
   * write instead of eight, each of which wakes two threads (issue 15: they were most of the daemon's context
   * switches at rest, BENCHMARKS.md "CPU per hour").
   */
  async #writeOnce(text: string): Promise<boolean> {
    const dir = dirname(this.path);
    const tmp = join(dir, `${TMP_PREFIX}${this.#tmpTag}-${this.#tmpSeq++}`);
    try {
      const fd = await openAsync(tmp, "w", 0o600);
      try {
        const bytes = Buffer.from(text, "utf8");
        for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
        if (this.#beforeSync) await this.#beforeSync();
        await fsyncAsync(fd);
      } finally {
        closeSync(fd);
      }
      await renameAsync(tmp, this.path);
      try {
        this.#dirFd ??= await openAsync(dir, "r");
        await fsyncAsync(this.#dirFd);
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
      return true;
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
      return false;
    }
  }

  /** Writes what is pending (as `flush`), then closes the state directory the writes kept open. */
  async close(): Promise<void> {
    await this.flush();
    const fd = this.#dirFd;
    this.#dirFd = null;
    if (fd !== null) await closeAsync(fd).catch(() => undefined);
  }

  /** Resolves once every change so far is written (or its write failed and was logged). */
  async flush(): Promise<void> {
    for (let i = 0; i < 100 && (this.#writing || this.#dirty); i++) {
      if (!this.#writing && this.#dirty) this.#writing = this.#writeLoop();
      await this.#writing;
    }
  }
}
