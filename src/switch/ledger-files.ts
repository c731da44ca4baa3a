/**
 * The ledger's directory on disk, for the store (ledger.ts `Ledger`): atomic, durable file writes (temp file in
 * the same directory, fsync, rename; the directory fsynced once per round and kept open), the temp files a crash
 * left, and the renames of a damaged file or a migrated `ledger.json` set aside. It decides nothing: what is
 * written, and when, is the store's.
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
import { lstat, readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { LedgerStoreFact } from "../core/ledger-events.js";
import { LEDGER_FILE } from "./ledger-schema.js";

// The write path's file calls, on libuv's thread pool without FileHandle objects (see LedgerDirectory#writeFile).
const openAsync = promisify(openCallback);
const fsyncAsync = promisify(fsync);
const renameAsync = promisify(renameCallback);
const closeAsync = promisify(closeCallback);
/** A temp file's name starts with `.`, then the name it will take, then this (`.0xab….json.tmp-<tag>-<n>`). */
const TMP_MARK = ".tmp-";

const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

export class LedgerDirectory {
  /** the ledger's directory, `<stateDir>/ledger` */
  readonly path: string;
  /** where the store's events go (the ledger's bus, module `ledger`) */
  readonly #publish: (e: LedgerStoreFact) => void;
  /** test seam: runs before each fsync of a temp file (a slow disk) */
  readonly #beforeSync: (() => Promise<void>) | undefined;
  /** the ledger's directory, opened at the first write and kept for its fsyncs (closed by `close`) */
  #dirFd: number | null = null;
  #tmpSeq = 0;
  /** this store's part of its temp files' names: two stores (two processes on one volume) never share one */
  readonly #tmpTag = randomBytes(4).toString("hex");

  constructor(
    path: string,
    publish: (e: LedgerStoreFact) => void,
    beforeSync: (() => Promise<void>) | undefined,
  ) {
    this.path = path;
    this.#publish = publish;
    this.#beforeSync = beforeSync;
  }

  /** Creates the directory (and the state directory); a failure is logged: the ledger then lives in memory only. */
  make(): void {
    try {
      mkdirSync(this.path, { recursive: true, mode: 0o700 });
    } catch (error) {
      this.#publish({
        type: "ledgerWriteFailed",
        stage: "directory",
        path: this.path,
        reason: (error as NodeJS.ErrnoException).code,
      });
    }
  }

  /** Removes the temp files a crash left in `dir` (the ledger's directory, or the state directory). */
  async removeTempFiles(dir: string): Promise<void> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names.filter((n) => n.startsWith(".") && n.includes(`.json${TMP_MARK}`))) {
      await rm(join(dir, name), { force: true }).catch(() => undefined);
      this.#publish({ type: "ledgerTempRemoved", path: join(dir, name) });
    }
  }

  /** A damaged file moved aside as `<file>.corrupt-<ms>`: where it went, or null (gone, or the rename failed: logged). */
  async moveAside(path: string, now: number): Promise<string | null> {
    const aside = `${path}.corrupt-${now}`;
    try {
      if (await exists(path)) {
        await rename(path, aside);
        return aside;
      }
    } catch (error) {
      this.#publish({ type: "ledgerAsideFailed", path, reason: (error as NodeJS.ErrnoException).code });
    }
    return null;
  }

  /**
   * ledger.json → ledger.json.migrated-<ms> (kept: a copy of what the migration read), then the directory fsynced;
   * `why` null: after a migration of `accounts` accounts, else why the leftover is renamed.
   */
  async renameLegacy(now: number, why: string | null, accounts: number): Promise<void> {
    const single = join(dirname(this.path), LEDGER_FILE);
    const aside = `${single}.migrated-${now}`;
    try {
      await rename(single, aside);
      await this.syncDir(dirname(this.path));
      this.#publish({ type: "ledgerMigrated", from: single, to: this.path, kept: aside, accounts, why });
    } catch (error) {
      this.#publish({
        type: "ledgerMigrationFailed",
        stage: "rename",
        path: single,
        dir: this.path,
        reason: (error as NodeJS.ErrnoException).code,
      });
    }
  }

  /** fsync of the ledger's directory (kept open) or another one; some filesystems refuse it (the rename is atomic). */
  async syncDir(dir: string): Promise<void> {
    try {
      if (dir === this.path) {
        this.#dirFd ??= await openAsync(dir, "r");
        await fsyncAsync(this.#dirFd);
      } else {
        const fd = await openAsync(dir, "r");
        try {
          await fsyncAsync(fd);
        } finally {
          closeSync(fd);
        }
      }
    } catch {
      // Some filesystems refuse fsync on a directory; the rename is still atomic.
    }
  }

  /**
   * One atomic, durable file of the ledger's directory, but for the directory's fsync (the round does it once): a
   * temp file in the same directory is created, written, fsynced and closed, then renamed over `name`. Whatever
   * waits on the disk (creating the file, the fsync, the rename) runs on libuv's thread pool, so a hung disk never
   * blocks the event loop: `durable` runs out of budget and the switch says why. Only the write into the page cache
   * and the close after the fsync (nothing left to flush) run inline, and the directory is opened once and kept:
   * four thread-pool trips a push instead of eight, each of which wakes two threads (issue 15: they were most of
   * the daemon's context switches at rest, BENCHMARKS.md "CPU per hour"). Returns null, or the failure's reason.
   */
  async writeFile(name: string, text: string): Promise<string | null> {
    const tmp = join(this.path, `.${name}${TMP_MARK}${this.#tmpTag}-${this.#tmpSeq++}`);
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
      await renameAsync(tmp, join(this.path, name));
      return null;
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => undefined);
      return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    }
  }

  /** Closes the directory the writes kept open. */
  async close(): Promise<void> {
    const fd = this.#dirFd;
    this.#dirFd = null;
    if (fd !== null) await closeAsync(fd).catch(() => undefined);
  }
}
