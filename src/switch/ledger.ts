/**
 * The trigger ledger's store: per account and UTC day, the triggers counted, the limit, the deadline of the last
 * confirmed push (armedUntil), the last push time and a short history of notable events (triggers,
 * exhaustion, removals, corrupt-file events; pushes are not history). One file per account,
 * `<stateDir>/ledger/<account>.json`, and one for what is file-wide, `<stateDir>/ledger/meta.json`
 * (ledger-schema.ts), each written atomically (temp file in the same directory, fsync, rename, fsync dir): a push
 * rewrites its own account's file only, so its cost does not grow with the number of accounts (issue 41). Files
 * rather than an append-only log: each write is the atomic replace the store always made (no torn tail to
 * recover, no compaction to run beside the pushes), a damaged file costs only its own account, and one account's
 * day is rewritten by rewriting its file. The single `ledger.json` of earlier versions is migrated at the first
 * start (`open`).
 * What changes an entry is the pure model in switch/ledger-model.ts (and what the exchange's record changes,
 * record-reconcile.ts); this file only holds entries and decides when they are written. The files are read by
 * ledger-read.ts (without changing anything) and written by ledger-files.ts (atomic, durable writes). Reading
 * (`get`) never changes or writes anything.
 *
 * Conservative rules (docs/daemon.md):
 * - A corrupt, truncated or unreadable ledger file is never reset to zero silently: it is logged at error, moved
 *   aside as `<file>.corrupt-<ms>`, and its account (an account's file), or every account not stored (meta.json, the
 *   old ledger.json), is assumed to have used the whole limit today (`assumed: true`). The switch warns loudly and reports not ready, yet keeps pushing (pushing is harmless
 *   and protects); the assumption ends at 00:00 UTC.
 * - A failed write (read-only directory, ENOSPC) is logged at error with the path and the reason; the
 *   in-memory ledger stays authoritative and the daemon keeps protecting. The old files stay intact
 *   (temp + rename), so nothing already written is lost; a failed account is written again with the next round.
 */

import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type Clock, utcDay } from "../core/clock.js";
import { createEventBus, type EventBus } from "../core/events.js";
import type { LedgerStoreEvent, LedgerStoreFact } from "../core/ledger-events.js";
import { type TimerHandle, type Timers, unrefTimers } from "../core/runtime.js";
import type { NonceSpan } from "../protocol/hyperliquid/nonce.js";
import { LedgerDirectory } from "./ledger-files.js";
import { capHistory, HISTORY_SIZE, newEntry, rollEntry, withEngineHeld } from "./ledger-model.js";
import { accountFileNames, type LedgerDamage, readLedgerState } from "./ledger-read.js";
import {
  ACCOUNT_FILE,
  type EngineHeld,
  LEDGER_DIR,
  LEDGER_LAYOUT_VERSION,
  LEDGER_META_FILE,
  type LedgerAccountFile,
  type LedgerEntry,
  type LedgerFile,
  type LedgerMeta,
} from "./ledger-schema.js";
import { type ReconciledView, withReconciled } from "./record-reconcile.js";

export { entryOnDay, HISTORY_SIZE } from "./ledger-model.js";
export {
  type LedgerDamage,
  type LedgerState,
  type ReadLedgerResult,
  readLedgerFile,
  readLedgerState,
} from "./ledger-read.js";
export {
  EngineHeld,
  LEDGER_DIR,
  LEDGER_FILE,
  LEDGER_META_FILE,
  LEDGER_VERSION,
  LedgerAccountFile,
  LedgerEntry,
  LedgerEvent,
  LedgerFile,
  LedgerMeta,
  TriggerProof,
  TriggerRecord,
} from "./ledger-schema.js";

/** At most this many account files are written at once in a round (the thread pool has 4 threads). */
const ROUND_PARALLEL = 16;

export type OpenLedgerParameters = {
  stateDir: string;
  clock: Clock;
  /**
   * the daemon's event bus, where the store publishes what it read, repaired and failed to write (its log lines
   * are a subscriber: src/surface/switch/ledger.ts `ledgerStoreLog`); without one (`kill --alone`), told no one
   */
  bus?: EventBus | undefined;
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
  /**
   * what a restart's nonce floor allows for (src/protocol/hyperliquid/nonce.ts): with it, an `updatedAt` ahead of
   * the verified time is set back to it, the nonce floor it seeded carried into `lastNonce` (`#repairUpdatedAt`)
   */
  nonceSpan?: NonceSpan | undefined;
};

/** `updatedAt` further ahead of the verified time than this was written on a wrong clock (exchange-time.ts SUSPECT_MS). */
export const UPDATED_AT_AHEAD_MS = 5_000;

/** How a durable write ended: on disk, failed (logged), or still running when the budget ran out. */
export type Durability = "written" | "failed" | "timeout";

/**
 * The in-memory ledger (authoritative) and its file. Every change schedules one atomic write; writes are
 * serialised and coalesced. `get(account)` is a pure view (rolled to the clock's UTC day, never backwards).
 */
export class Ledger {
  /** the ledger's directory, `<stateDir>/ledger` (logged at start as `ledger`) */
  readonly path: string;
  readonly #clock: Clock;
  readonly #publish: (e: LedgerStoreFact) => void;
  readonly #limit: number;
  readonly #historySize: number;
  readonly #dir: LedgerDirectory;
  readonly #nonceHint: (() => number) | undefined;
  readonly #verifiedNow: (() => number) | undefined;
  readonly #nonceSpan: NonceSpan | undefined;
  #updatedAt = 0;
  #accounts = new Map<string, LedgerEntry>();
  /** the accounts changed since the last round took its list (or whose write failed): the next round writes them */
  #dirtyAccounts = new Set<string>();
  /** meta.json's fields changed (engines, assumeLimitOn), or it is not on disk yet */
  #metaDirty = false;
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
  /** `updatedAt` of the file as last written (a restart seeds its nonces from it: src/protocol/hyperliquid/nonce.ts) */
  #onDiskUpdatedAt: number | null = null;

  private constructor(
    path: string,
    {
      clock,
      bus = createEventBus(),
      triggerLimit,
      historySize = HISTORY_SIZE,
      beforeSync,
      nonceHint,
      verifiedNow,
      nonceSpan,
    }: OpenLedgerParameters,
  ) {
    this.#verifiedNow = verifiedNow;
    this.#nonceSpan = nonceSpan;
    this.#nonceHint = nonceHint;
    this.path = path;
    this.#clock = clock;
    this.#publish = (e) => bus.publish({ ...e, module: "ledger" } as LedgerStoreEvent);
    this.#limit = triggerLimit;
    this.#historySize = historySize;
    this.#dir = new LedgerDirectory(path, this.#publish, beforeSync);
  }

  /**
   * Opens the ledger of `stateDir` (creating the directories) and removes temp files a crash left behind. Nothing
   * there is a fresh ledger. A `ledger.json` without a complete per-account layout is migrated: every account's file
   * is written, then meta.json (last: its presence says the migration is complete), then ledger.json is renamed
   * `ledger.json.migrated-<ms>` and kept (docs/operations.md "State files"); a crash before meta.json is written
   * starts the migration over at the next start. A corrupt or unreadable file is moved aside as `<file>.corrupt-<ms>`
   * and the limit is assumed for today: for its account (an account's file), or for every account not stored
   * (meta.json, ledger.json): never a silent reset to zero.
   */
  static async open(params: OpenLedgerParameters): Promise<Ledger> {
    const path = join(params.stateDir, LEDGER_DIR);
    const ledger = new Ledger(path, params);
    ledger.#dir.make();
    await ledger.#dir.removeTempFiles(params.stateDir);
    await ledger.#dir.removeTempFiles(path);
    const state = await readLedgerState(params.stateDir);
    const now = params.clock.now();
    if (state.file) ledger.#load(state.file, state.layout === "files" ? path : state.path);
    for (const damage of state.damaged) await ledger.#setAside(damage, now);
    if (state.legacyBeside)
      await ledger.#dir.renameLegacy(
        now,
        "a ledger.json beside a complete per-account ledger",
        ledger.#accounts.size,
      );
    if (state.layout === "files" && state.damaged.length === 0) return ledger;
    // a migration, a fresh ledger, or a damaged meta.json: meta.json is (re)written now, in the same round as every
    // account file and after them (a round writes meta.json last: a migration is complete only once it is there)
    if (state.layout === "single") {
      // account files an interrupted migration left for accounts not in this ledger.json are not this ledger's
      for (const name of await accountFileNames(path)) {
        const account = (ACCOUNT_FILE.exec(name) as RegExpExecArray)[1] as string;
        if (!ledger.#accounts.has(account))
          await rm(join(path, name), { force: true }).catch(() => undefined);
      }
      for (const account of ledger.#accounts.keys()) ledger.#dirtyAccounts.add(account);
    }
    ledger.#metaDirty = true;
    ledger.#markDirty();
    await ledger.flush();
    if (state.layout === "single" && state.file !== null) {
      if (ledger.#lastWriteError === null) await ledger.#dir.renameLegacy(now, null, ledger.#accounts.size);
      else
        ledger.#publish({
          type: "ledgerMigrationFailed",
          stage: "write",
          path: state.path,
          dir: path,
          reason: ledger.#lastWriteError,
        });
    }
    return ledger;
  }

  #load(file: LedgerFile, from: string): void {
    this.#assumeLimitOn = file.assumeLimitOn;
    this.#loadedUpdatedAt = file.updatedAt;
    this.#updatedAt = file.updatedAt;
    this.#lastNonce = file.lastNonce;
    this.#onDiskUpdatedAt = file.updatedAt;
    this.#engines = file.engines;
    for (const [account, entry] of Object.entries(file.accounts)) {
      this.#accounts.set(account.toLowerCase(), {
        ...entry,
        limit: this.#limit,
        history: capHistory(entry.history, this.#historySize),
      });
    }
    this.#publish({ type: "ledgerLoaded", path: from, accounts: this.#accounts.size });
  }

  /** A damaged file: moved aside, the limit assumed today for its account, or for every account not stored. */
  async #setAside(damage: LedgerDamage, now: number): Promise<void> {
    const moved = await this.#dir.moveAside(damage.path, now);
    const detail = `${damage.reason}${moved ? `; moved to ${moved}` : ""}`;
    this.#publish({
      type: "ledgerCorrupt",
      path: damage.path,
      account: damage.account,
      reason: damage.reason,
      movedTo: moved,
      assumedTriggersToday: this.#limit,
    });
    if (damage.account === null) {
      this.#assumeLimitOn = utcDay(now);
      this.#pendingCorruptDetail = detail;
      this.#metaDirty = true;
      this.#markDirty();
      return;
    }
    this.put(newEntry(damage.account, now, { limit: this.#limit, assumed: true, corruptDetail: detail }));
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
    this.#metaDirty = true;
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
    const key = entry.account.toLowerCase();
    this.#accounts.set(key, structuredClone(entry));
    this.#dirtyAccounts.add(key);
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
   * direction only (record-reconcile.ts `withReconciled`). Returns the entry and whether it changed.
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
    this.#publish({
      type: "ledgerRolled",
      account,
      from: rolled.from,
      to: rolled.to,
      previousTriggers: rolled.was,
    });
  }

  /** 00:00 UTC: rolls every stored entry whose day is over (never backwards). Returns the accounts rolled. */
  rollover(): string[] {
    const now = this.#clock.now();
    const today = utcDay(now);
    if (this.#assumeLimitOn !== null && this.#assumeLimitOn < today) {
      this.#assumeLimitOn = null;
      this.#metaDirty = true;
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
   * The stamps a round writes into every file it writes: `updatedAt` only moves forward (a clock stepped back does
   * not move it back) and only to a verified time; `lastNonce` is the highest nonce handed out so far (the next
   * run's floor; docs/daemon.md). A restart takes the highest of each over all the files (`readLedgerState`).
   */
  /**
   * `updatedAt` ahead of the verified time (issue 40): a wrong clock ahead wrote it (the local clock believed before
   * the two witnesses). As a time it is no longer believed: set back to the verified time, in every file (a restart
   * takes the highest of them), logged (`ledger.updated_at_repaired`; the switch says and audits the time floor it
   * seeded: `clock.floor_repaired`). The nonce floor it seeded is never lowered (the exchange keeps the nonces a
   * signer used): carried into `lastNonce`, so that `nonceFloor` gives a restart at least what it gave before
   * (`updatedAt + requestTimeout + deadline` ≤ `lastNonce + requestTimeout`); `nonce.rederived` stays the way
   * forward when the exchange names its window. Only with a verified time and the nonce span.
   */
  #repairUpdatedAt(): void {
    if (!this.#verifiedNow || !this.#nonceSpan) return;
    const verified = Math.floor(this.#verifiedNow());
    if (!(verified > 0) || !(this.#updatedAt > verified + UPDATED_AT_AHEAD_MS)) return;
    const from = this.#updatedAt;
    const lastNonceBefore = this.#lastNonce;
    this.#lastNonce = Math.max(this.#lastNonce ?? 0, from + this.#nonceSpan.deadlineMs);
    this.#updatedAt = verified;
    for (const account of this.#accounts.keys()) this.#dirtyAccounts.add(account);
    this.#metaDirty = true;
    this.#publish({
      type: "ledgerUpdatedAtRepaired",
      from,
      to: verified,
      lastNonce: this.#lastNonce,
      lastNonceBefore,
    });
  }

  #stamp(): { updatedAt: number; lastNonce: number | null } {
    const verified = this.#verifiedNow ? this.#verifiedNow() : this.#clock.now();
    this.#updatedAt = Math.max(this.#updatedAt, Math.floor(verified));
    const hint = this.#nonceHint?.() ?? 0;
    if (hint > 0) this.#lastNonce = Math.max(this.#lastNonce ?? 0, hint);
    return { updatedAt: this.#updatedAt, lastNonce: this.#lastNonce };
  }

  #markDirty(): void {
    this.#dirty = true;
    this.#changes++;
    if (!this.#writing) this.#writing = this.#writeLoop();
  }

  /**
   * Rounds of writes until nothing is dirty. A round writes the files of the accounts changed since the last round
   * (and those whose write failed), then meta.json if it changed, then fsyncs the directory once: a push costs its
   * own account's file, whatever the number of accounts. The entries written are the stored ones themselves, not
   * copies: a stored entry is never changed, only replaced (`put` stores a copy of what it is given, and every
   * change here builds a new entry).
   */
  async #writeLoop(): Promise<void> {
    try {
      while (this.#dirty) {
        this.#dirty = false;
        this.#repairUpdatedAt();
        const carries = this.#changes;
        const accounts = [...this.#dirtyAccounts];
        this.#dirtyAccounts.clear();
        const meta = this.#metaDirty;
        this.#metaDirty = false;
        const stamp = this.#stamp();
        const written = await this.#writeRound(accounts, meta, stamp);
        if (written) this.#onDiskUpdatedAt = stamp.updatedAt;
        this.#settledChanges = carries;
        const ready = this.#waiters.filter((w) => w.upTo <= carries);
        this.#waiters = this.#waiters.filter((w) => w.upTo > carries);
        for (const w of ready) w.done();
      }
    } finally {
      this.#writing = null;
    }
  }

  async #writeRound(
    accounts: string[],
    meta: boolean,
    stamp: { updatedAt: number; lastNonce: number | null },
  ): Promise<boolean> {
    const failures: string[] = [];
    const fileOf = async (name: string, value: unknown) => {
      const reason = await this.#dir.writeFile(name, `${JSON.stringify(value, null, 2)}\n`);
      if (reason !== null) failures.push(reason);
      return reason === null;
    };
    for (let at = 0; at < accounts.length; at += ROUND_PARALLEL) {
      await Promise.all(
        accounts.slice(at, at + ROUND_PARALLEL).map(async (account) => {
          const entry = this.#accounts.get(account);
          if (entry === undefined) return;
          const file: LedgerAccountFile = { version: LEDGER_LAYOUT_VERSION, ...stamp, entry };
          // a failed account is written again with the next round (its entry is still the latest)
          if (!(await fileOf(`${account}.json`, file))) this.#dirtyAccounts.add(account);
        }),
      );
    }
    if (meta) {
      const file: LedgerMeta = {
        version: LEDGER_LAYOUT_VERSION,
        ...stamp,
        assumeLimitOn: this.#assumeLimitOn,
        engines: { ...this.#engines },
      };
      if (!(await fileOf(LEDGER_META_FILE, file))) this.#metaDirty = true;
    }
    if (failures.length === 0 && (accounts.length > 0 || meta)) {
      // the renames are durable once the directory is
      await this.#dir.syncDir(this.path);
    }
    if (failures.length > 0) {
      const reason = failures[0] as string;
      if (this.#lastWriteError !== reason) {
        this.#publish({ type: "ledgerWriteFailed", stage: "round", path: this.path, reason });
      }
      this.#lastWriteError = reason;
      return false;
    }
    this.#writes++;
    if (this.#lastWriteError !== null) {
      this.#publish({ type: "ledgerWriteRecovered", path: this.path });
    }
    this.#lastWriteError = null;
    return true;
  }

  /** Writes what is pending (as `flush`), then closes the state directory the writes kept open. */
  async close(): Promise<void> {
    await this.flush();
    await this.#dir.close();
  }

  /** Resolves once every change so far is written (or its write failed and was logged). */
  async flush(): Promise<void> {
    for (let i = 0; i < 100 && (this.#writing || this.#dirty); i++) {
      if (!this.#writing && this.#dirty) this.#writing = this.#writeLoop();
      await this.#writing;
    }
  }
}
