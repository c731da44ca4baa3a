/**
 * The audit trail's writer: appends hash-chained records (record.ts) to `<stateDir>/audit/audit.jsonl`, fsynced,
 * rotated by size with the chain carried across files, and a manifest that anchors the files it deleted
 * (docs/operations.md, "The audit trail").
 *
 * Rules, and why:
 * - Append-only. Nothing written is ever rewritten or truncated: a crash that cut a line short is recorded by an
 *   `audit.torn` record appended after it when the file is next opened, and `verify` accepts exactly that shape.
 * - Batched: every record appended while a write is on the disk goes into the next single write and fsync, so a
 *   thousand accounts changing state at once cost one fsync, not a thousand.
 * - The chain is built at write time from what is on the disk: a failed write leaves its records queued and the
 *   next write first re-reads the file's end, so the chain never skips a record that did not reach the disk.
 * - Never in the way of the switch: a full disk or a broken file is reported (`onError`), the records wait in a
 *   bounded queue, and the pushes go on. The trail records what happened; it is not a reason to stop protecting.
 * - Rotation: a file that reached `maxFileBytes` is renamed `audit-<first sequence>.jsonl` and a new one begins
 *   with the next sequence and the last hash. Beyond `keepFiles` rotated files, the oldest is deleted, after the
 *   manifest (written atomically) records where the kept chain begins.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/files.js";
import {
  type AuditEntry,
  type AuditRecord,
  type ChainHead,
  chainRecord,
  GENESIS,
  MAX_AUDIT_LINE_BYTES,
  type ManifestAnchor,
  parseRecordLine,
  sha256Hex,
  TORN_TYPE,
  type TrailFile,
  type VerifyResult,
  verifyTrail,
} from "./record.js";

export const AUDIT_DIR = "audit";
export const CURRENT_FILE = "audit.jsonl";
export const MANIFEST_FILE = "audit-manifest.json";
const ROTATED = /^audit-(\d{12})\.jsonl$/;
export const rotatedName = (firstSequence: number) =>
  `audit-${String(firstSequence).padStart(12, "0")}.jsonl`;

/** 8 MiB a file: about 20,000 records; a file is read whole when the writer opens it. */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_KEEP_FILES = 16;
/** Records waiting for the disk beyond this are refused (and counted): the queue never grows without bound. */
export const MAX_QUEUED = 10_000;
/** Records kept in memory for the status page. */
export const RECENT = 50;
/** The manifest keeps the newest deletions only; the anchor is all `verify` needs. */
const MAX_MANIFEST_DELETIONS = 100;

export type Manifest = {
  version: 1;
  /** where the kept chain begins: the last record of the newest deleted file */
  anchor: ManifestAnchor;
  deleted: {
    file: string;
    firstSequence: number;
    lastSequence: number;
    lastHash: string;
    deletedAt: string;
  }[];
};

export type AuditTrailOptions = {
  /** the trail's directory (`<stateDir>/audit`) */
  dir: string;
  /** the CloudEvents `source` of every record */
  source: string;
  now: () => number;
  maxFileBytes?: number | undefined;
  keepFiles?: number | undefined;
  /** a failure to write; the records stay queued and the next append tries again */
  onError?: ((error: Error) => void) | undefined;
  /** test seam: runs before each write (a disk that refuses) */
  beforeWrite?: (() => Promise<void>) | undefined;
};

export class AuditFileError extends Error {
  override name = "AuditFileError";
}

/** Reads the manifest, or null when there is none; a manifest that is not ours is an error naming the file. */
export async function readManifest(dir: string): Promise<Manifest | null> {
  const path = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new AuditFileError(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AuditFileError(`${path} is not JSON`);
  }
  const m = value as Partial<Manifest>;
  const a = m?.anchor;
  if (
    m?.version !== 1 ||
    !a ||
    !Number.isSafeInteger(a.lastSequence) ||
    a.lastSequence < 1 ||
    typeof a.lastHash !== "string" ||
    !/^[0-9a-f]{64}$/.test(a.lastHash) ||
    !Array.isArray(m.deleted)
  )
    throw new AuditFileError(`${path} is not an audit manifest (version 1 with an anchor)`);
  return m as Manifest;
}

/** The trail's files, oldest first: the rotated ones by their first sequence, then the current one if present. */
export async function listTrailFiles(dir: string): Promise<{ name: string; firstSequence: number | null }[]> {
  const names = await readdir(dir);
  const rotated = names
    .map((name) => ({ name, m: ROTATED.exec(name) }))
    .filter((x) => x.m !== null)
    .map((x) => ({ name: x.name, firstSequence: Number(x.m![1]) }))
    .sort((a, b) => a.firstSequence - b.firstSequence);
  return [
    ...rotated,
    ...(names.includes(CURRENT_FILE) ? [{ name: CURRENT_FILE, firstSequence: null as number | null }] : []),
  ];
}

/** The last well-formed record's place in a file's text, and whether the text ends mid-line. */
function tailOf(text: string): { head: ChainHead | null; tornBytes: number; unreadable: number } {
  const lines = text.split("\n");
  const last = lines.pop() ?? "";
  const tornBytes = Buffer.byteLength(last, "utf8");
  let unreadable = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const parsed = parseRecordLine(lines[i]!);
    if (parsed.ok)
      return {
        head: { sequence: Number(parsed.record.sequence), hash: sha256Hex(lines[i]!) },
        tornBytes,
        unreadable,
      };
    unreadable++;
  }
  return { head: null, tornBytes, unreadable };
}

export class AuditTrail {
  readonly #o: Required<Omit<AuditTrailOptions, "onError" | "beforeWrite">> & {
    onError: (e: Error) => void;
    beforeWrite: () => Promise<void>;
  };
  #head: ChainHead = GENESIS;
  #size = 0;
  #fd: Awaited<ReturnType<typeof open>> | null = null;
  /** the file must be re-read before the next write (first write, or after a failed one) */
  #reopen = true;
  #queue: { entry: AuditEntry; timeMs: number }[] = [];
  #writing: Promise<void> | null = null;
  #recent: AuditRecord[] = [];
  #refused = 0;
  #closed = false;
  #unavailable: string | null = null;

  private constructor(options: AuditTrailOptions) {
    this.#o = {
      dir: options.dir,
      source: options.source,
      now: options.now,
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
      keepFiles: options.keepFiles ?? DEFAULT_KEEP_FILES,
      onError: options.onError ?? (() => {}),
      beforeWrite: options.beforeWrite ?? (async () => {}),
    };
  }

  /**
   * A trail that could not be opened (`reason`): it keeps nothing and says why in `unavailable`. The daemon runs on
   * with it: the audit trail is never a reason to stop protecting.
   */
  static unavailable(options: AuditTrailOptions, reason: string): AuditTrail {
    const trail = new AuditTrail(options);
    trail.#closed = true;
    trail.#unavailable = reason;
    return trail;
  }

  /** why the trail keeps nothing (it could not be opened), or null */
  get unavailable(): string | null {
    return this.#unavailable;
  }

  /** Opens the trail in `dir` (created 0700 when missing) and finds where its chain stands. */
  static async open(options: AuditTrailOptions): Promise<AuditTrail> {
    const trail = new AuditTrail(options);
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    await trail.#openCurrent();
    return trail;
  }

  /** the chain's newest record on disk */
  get head(): ChainHead {
    return this.#head;
  }

  /** records refused because the queue was full (the disk refused writes for a long time) */
  get refused(): number {
    return this.#refused;
  }

  /** the newest records written, newest last (at most RECENT) */
  recent(): readonly AuditRecord[] {
    return this.#recent;
  }

  /** Queues a record; it is written with whatever else arrives before the disk is free. */
  append(entry: AuditEntry): void {
    if (this.#closed) return;
    if (this.#queue.length >= MAX_QUEUED) {
      this.#refused++;
      return;
    }
    this.#queue.push({ entry, timeMs: this.#o.now() });
    this.#writing ??= this.#drain();
  }

  /** Resolves when everything appended so far is on the disk (or has failed and stays queued). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
    await this.#fd?.close();
    this.#fd = null;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const ok = await this.#writeBatch();
        if (!ok) return;
      }
    } finally {
      this.#writing = null;
    }
  }

  /** Writes everything queued in one write and one fsync; false when the disk refused (records stay queued). */
  async #writeBatch(): Promise<boolean> {
    try {
      if (this.#reopen) await this.#openCurrent();
      const batch = this.#queue.slice();
      let head = this.#head;
      const lines: string[] = [];
      const records: AuditRecord[] = [];
      for (const { entry, timeMs } of batch) {
        let built = chainRecord(head, entry, { timeMs, source: this.#o.source });
        if (Buffer.byteLength(built.line, "utf8") > MAX_AUDIT_LINE_BYTES)
          built = chainRecord(
            head,
            { type: entry.type, account: entry.account, data: { truncated: true, reason: "data too large" } },
            { timeMs, source: this.#o.source },
          );
        lines.push(built.line);
        records.push(built.record);
        head = built.head;
      }
      const text = `${lines.join("\n")}\n`;
      await this.#o.beforeWrite();
      await this.#fd!.write(text);
      await this.#fd!.datasync();
      this.#queue.splice(0, batch.length);
      this.#head = head;
      this.#size += Buffer.byteLength(text, "utf8");
      this.#recent = [...this.#recent, ...records].slice(-RECENT);
      if (this.#size >= this.#o.maxFileBytes) await this.#rotate();
      return true;
    } catch (error) {
      this.#reopen = true;
      await this.#fd?.close().catch(() => {});
      this.#fd = null;
      this.#o.onError(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
  }

  /**
   * Opens the current file for appending and finds the chain's head: its last record, else the newest rotated
   * file's, else the manifest's anchor, else the genesis. A torn last line gets its newline and an `audit.torn`
   * record naming its length, so that `verify` can tell a crash from a change.
   */
  async #openCurrent(): Promise<void> {
    const dir = this.#o.dir;
    const path = join(dir, CURRENT_FILE);
    let text = "";
    try {
      const st = await lstat(path);
      if (!st.isFile()) throw new AuditFileError(`${path} is not a regular file`);
      if (st.size > this.#o.maxFileBytes * 2 + MAX_AUDIT_LINE_BYTES)
        throw new AuditFileError(
          `${path} is ${st.size} bytes, far above the rotation size: not this trail's file`,
        );
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const tail = tailOf(text);
    let head = tail.head;
    if (head === null) {
      const files = (await listTrailFiles(dir)).filter((f) => f.name !== CURRENT_FILE);
      const newest = files[files.length - 1];
      if (newest) head = tailOf(await readFile(join(dir, newest.name), "utf8")).head;
      head ??= await readManifest(dir).then((m) =>
        m ? { sequence: m.anchor.lastSequence, hash: m.anchor.lastHash } : null,
      );
    }
    this.#head = head ?? GENESIS;
    if (tail.unreadable > 0)
      this.#o.onError(
        new AuditFileError(
          `${path}: the last ${tail.unreadable} complete line(s) are not records of this trail; the chain continues from the last good one and \`hl-deadman audit verify\` names the first broken record`,
        ),
      );
    this.#fd = await open(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    this.#size = Buffer.byteLength(text, "utf8");
    this.#reopen = false;
    if (tail.tornBytes > 0) {
      const torn = chainRecord(
        this.#head,
        {
          type: TORN_TYPE,
          data: { bytes: tail.tornBytes, reason: "the last line was cut short (a crash while writing)" },
        },
        { timeMs: this.#o.now(), source: this.#o.source },
      );
      const add = `\n${torn.line}\n`;
      await this.#fd.write(add);
      await this.#fd.datasync();
      this.#head = torn.head;
      this.#size += Buffer.byteLength(add, "utf8");
      this.#recent = [...this.#recent, torn.record].slice(-RECENT);
    }
  }

  async #rotate(): Promise<void> {
    const dir = this.#o.dir;
    await this.#fd?.close();
    this.#fd = null;
    const firstOfCurrent = await readFile(join(dir, CURRENT_FILE), "utf8").then((t) => {
      const first = parseRecordLine(t.slice(0, t.indexOf("\n")));
      return first.ok ? Number(first.record.sequence) : this.#head.sequence;
    });
    await rename(join(dir, CURRENT_FILE), join(dir, rotatedName(firstOfCurrent)));
    await syncDir(dir);
    this.#reopen = true;
    await this.#prune();
  }

  /** Deletes the oldest rotated files beyond `keepFiles`, each after the manifest anchors the file after it. */
  async #prune(): Promise<void> {
    const dir = this.#o.dir;
    const rotated = (await listTrailFiles(dir)).filter((f) => f.firstSequence !== null);
    while (rotated.length > this.#o.keepFiles) {
      const oldest = rotated.shift()!;
      const next = rotated[0]!;
      const nextText = await readFile(join(dir, next.name), "utf8");
      const first = parseRecordLine(nextText.slice(0, nextText.indexOf("\n")));
      if (!first.ok)
        throw new AuditFileError(
          `${join(dir, next.name)}: its first line is not a record; not deleting ${oldest.name}`,
        );
      const anchor: ManifestAnchor = {
        lastSequence: Number(first.record.sequence) - 1,
        lastHash: first.record.prevhash,
      };
      const previous = await readManifest(dir);
      const manifest: Manifest = {
        version: 1,
        anchor,
        deleted: [
          ...(previous?.deleted ?? []),
          {
            file: oldest.name,
            firstSequence: oldest.firstSequence!,
            lastSequence: anchor.lastSequence,
            lastHash: anchor.lastHash,
            deletedAt: new Date(this.#o.now()).toISOString(),
          },
        ].slice(-MAX_MANIFEST_DELETIONS),
      };
      await writeFileAtomic(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
      await rm(join(dir, oldest.name));
      await syncDir(dir);
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const fd = await open(dir, constants.O_RDONLY);
  try {
    await fd.sync();
  } catch {
    // some filesystems refuse fsync on a directory; the rename is still atomic
  } finally {
    await fd.close();
  }
}

/** A file `verify` reads whole; above this it is not a file of this trail (the rotation size is 8 MiB). */
const MAX_VERIFY_FILE_BYTES = 256 * 1024 * 1024;

/**
 * `hl-deadman audit verify`: checks the chain in `dir` from the manifest's anchor (or the genesis) through every
 * rotated file to the current one. A rotated file whose name does not match its first record's sequence is broken
 * where it starts.
 */
export async function verifyAuditDir(dir: string): Promise<VerifyResult> {
  const manifest = await readManifest(dir);
  const files = await listTrailFiles(dir);
  const read: TrailFile[] = [];
  for (const f of files) {
    const path = join(dir, f.name);
    const st = await lstat(path);
    if (!st.isFile()) throw new AuditFileError(`${path} is not a regular file`);
    if (st.size > MAX_VERIFY_FILE_BYTES)
      throw new AuditFileError(
        `${path} is ${st.size} bytes, above ${MAX_VERIFY_FILE_BYTES}: not this trail's file`,
      );
    const text = await readFile(path, "utf8");
    if (f.firstSequence !== null) {
      const first = parseRecordLine(text.slice(0, Math.max(0, text.indexOf("\n"))));
      if (!first.ok || Number(first.record.sequence) !== f.firstSequence)
        return {
          ok: false,
          file: f.name,
          line: 1,
          sequence: first.ok ? Number(first.record.sequence) : null,
          reason: `the file's name says it starts at record ${f.firstSequence}, its first line ${first.ok ? `is record ${first.record.sequence}` : first.reason}`,
          records: 0,
        };
    }
    read.push({ name: f.name, text });
  }
  return verifyTrail(read, manifest?.anchor ?? null);
}
