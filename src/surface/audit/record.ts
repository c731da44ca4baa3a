/**
 * The audit trail's records and the rules of its chain (docs/operations.md, "The audit trail"). Pure: no files, no
 * clock. Each record is one line of JSON, a CloudEvents 1.0 event in its JSON format (specversion, id, source, type,
 * time, datacontenttype, data) with two extension attributes: `sequence` (the record's place in the chain, counting
 * from 1, as a decimal string, after the CloudEvents sequence extension) and `prevhash` (the lowercase hex SHA-256 of
 * the previous record's line, or 64 zeros for the first record ever). A record's own hash is the SHA-256 of its line's
 * bytes as written (without the newline), so a changed byte anywhere breaks the link of the record after it.
 *
 * The hash is node's SHA-256 (OpenSSL): no cryptography of our own. The chain proves order and integrity against an
 * accidental or careless change; it is not a signature (whoever can write the state directory can rewrite the whole
 * chain from the changed record on), which is why the newest hash is also printed by `audit verify` for an operator
 * to keep elsewhere.
 */
import { createHash } from "node:crypto";

export const AUDIT_SPEC_VERSION = "1.0";
/** the `prevhash` of the first record ever written in a state directory */
export const GENESIS_HASH = "0".repeat(64);
/** a record's line is bounded: a longer one is refused by the writer and reported by `verify` */
export const MAX_AUDIT_LINE_BYTES = 64 * 1024;
/** CloudEvents types of this trail all start with this (reverse-DNS-like, as the specification suggests) */
export const AUDIT_TYPE_PREFIX = "xyz.hl-deadman.";

export type AuditRecord = {
  readonly specversion: "1.0";
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly time: string;
  readonly datacontenttype: "application/json";
  /** extension: the place in the chain, from 1, as a decimal string */
  readonly sequence: string;
  /** extension: the SHA-256 of the previous record's line (lowercase hex) */
  readonly prevhash: string;
  /** extension: the account the record concerns (lowercase 0x address), when it concerns one */
  readonly account?: string | undefined;
  readonly data: Readonly<Record<string, unknown>>;
};

/** What a writer appends; the chain fields are filled in by `chainRecord`. */
export type AuditEntry = {
  /** the type without the prefix: `switch.armed`, `engine.down`, `control.reset` */
  readonly type: string;
  readonly account?: string | undefined;
  readonly data: Readonly<Record<string, unknown>>;
};

export function sha256Hex(line: string): string {
  return createHash("sha256").update(line, "utf8").digest("hex");
}

/** Where the chain stands: the next record's sequence and prevhash. */
export type ChainHead = { readonly sequence: number; readonly hash: string };
export const GENESIS: ChainHead = { sequence: 0, hash: GENESIS_HASH };

/**
 * Builds the next record after `head` and its line. The field order is fixed (the line is what is hashed, and a
 * reader comparing two trails byte by byte should see the same layout).
 */
export function chainRecord(
  head: ChainHead,
  entry: AuditEntry,
  at: { timeMs: number; source: string },
): { record: AuditRecord; line: string; head: ChainHead } {
  const sequence = head.sequence + 1;
  const record: AuditRecord = {
    specversion: AUDIT_SPEC_VERSION,
    id: `${sequence}`,
    source: at.source,
    type: `${AUDIT_TYPE_PREFIX}${entry.type}`,
    time: new Date(at.timeMs).toISOString(),
    datacontenttype: "application/json",
    sequence: `${sequence}`,
    prevhash: head.hash,
    ...(entry.account === undefined ? {} : { account: entry.account }),
    data: entry.data,
  };
  const line = JSON.stringify(record);
  return { record, line, head: { sequence, hash: sha256Hex(line) } };
}

const HEX64 = /^[0-9a-f]{64}$/;
const REQUIRED = ["specversion", "id", "source", "type", "time", "sequence", "prevhash", "data"] as const;

/** One line read back: the record when it is a well-formed record of this trail, else why not. */
export function parseRecordLine(
  line: string,
): { ok: true; record: AuditRecord } | { ok: false; reason: string } {
  if (Buffer.byteLength(line, "utf8") > MAX_AUDIT_LINE_BYTES)
    return { ok: false, reason: `is longer than ${MAX_AUDIT_LINE_BYTES} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: "is not JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, reason: "is not a JSON object" };
  const r = value as Record<string, unknown>;
  for (const key of REQUIRED) if (!(key in r)) return { ok: false, reason: `has no "${key}"` };
  if (r.specversion !== AUDIT_SPEC_VERSION)
    return { ok: false, reason: `has specversion ${String(r.specversion)}` };
  if (typeof r.sequence !== "string" || !/^[1-9][0-9]{0,15}$/.test(r.sequence))
    return { ok: false, reason: "has no valid sequence" };
  if (typeof r.prevhash !== "string" || !HEX64.test(r.prevhash))
    return { ok: false, reason: "has no valid prevhash (64 lowercase hex digits)" };
  if (typeof r.type !== "string" || !r.type.startsWith(AUDIT_TYPE_PREFIX))
    return { ok: false, reason: `has a type outside ${AUDIT_TYPE_PREFIX}*` };
  if (typeof r.time !== "string" || Number.isNaN(Date.parse(r.time)))
    return { ok: false, reason: "has no valid time" };
  if (typeof r.data !== "object" || r.data === null) return { ok: false, reason: "has no data object" };
  return { ok: true, record: r as unknown as AuditRecord };
}

/** One file of the trail as `verify` reads it: its name and its whole text. */
export type TrailFile = { readonly name: string; readonly text: string };

/** What the manifest says about rotated files that were deleted: where the kept chain must continue from. */
export type ManifestAnchor = {
  /** the last deleted file's last record: the first kept record must follow it */
  readonly lastSequence: number;
  readonly lastHash: string;
};

export type VerifyResult =
  | {
      ok: true;
      records: number;
      files: number;
      /** the chain's newest record: keep its hash elsewhere to detect a rewrite of the whole chain */
      head: ChainHead;
      /** torn final lines left by a crash and recorded as such by the writer when it reopened */
      torn: number;
      /** the current file ends in a line cut short by a crash that the writer has not reopened since */
      tornTail: boolean;
      firstSequence: number | null;
    }
  | {
      ok: false;
      /** the first broken record: its file, line (from 1) and sequence when readable */
      file: string;
      line: number;
      sequence: number | null;
      reason: string;
      /** records checked good before it */
      records: number;
    };

/** A torn line that the writer's `audit.torn` record does not follow: the chain is broken there. */
function tornWithoutRecord(at: { file: string; line: number }, records: number): VerifyResult {
  return {
    ok: false,
    file: at.file,
    line: at.line,
    sequence: null,
    reason: "the line is torn and no torn record follows it",
    records,
  };
}

/** The type of the record a writer appends when it reopens a file whose last line was torn by a crash. */
export const TORN_TYPE = "audit.torn";

/**
 * Checks the chain across `files` (oldest first; the current file last), starting from `anchor` (the manifest's
 * record of deleted files) or from the genesis. Every record must be well formed, follow the one before by
 * sequence + 1 and prevhash = its hash. A line cut short by a crash (the last line of a file before the writer
 * reopened it) is accepted only when the very next record is the writer's `audit.torn` record naming its length
 * and linking to the record before it; anything else is the first broken record.
 */
export function verifyTrail(files: readonly TrailFile[], anchor: ManifestAnchor | null): VerifyResult {
  let head: ChainHead = anchor ? { sequence: anchor.lastSequence, hash: anchor.lastHash } : GENESIS;
  let records = 0;
  let torn = 0;
  let firstSequence: number | null = null;
  let pendingTorn: { file: string; line: number; bytes: number } | null = null;
  let tornTail = false;
  for (const file of files) {
    const lines = file.text.split("\n");
    // a file ends with a newline: the last element is empty; when it is not, the last line was torn
    const endsClean = lines[lines.length - 1] === "";
    if (endsClean) lines.pop();
    for (let i = 0; i < lines.length; i++) {
      const text = lines[i]!;
      const lineNo = i + 1;
      const parsed = parseRecordLine(text);
      if (!parsed.ok) {
        // Torn by a crash: only the last line of a file, or a line directly followed by the writer's torn record.
        const next = lines[i + 1];
        const nextParsed = next === undefined ? null : parseRecordLine(next);
        const isTornBeforeMarker =
          nextParsed?.ok === true &&
          nextParsed.record.type === AUDIT_TYPE_PREFIX + TORN_TYPE &&
          nextParsed.record.data.bytes === Buffer.byteLength(text, "utf8");
        if (isTornBeforeMarker) {
          pendingTorn = { file: file.name, line: lineNo, bytes: Buffer.byteLength(text, "utf8") };
          continue;
        }
        // The current file's last line without its newline: a crash during the write, before the writer reopened
        // the file (it records the torn line then). Not a broken chain; reported.
        if (!endsClean && i === lines.length - 1 && file === files[files.length - 1]) {
          tornTail = true;
          continue;
        }
        return {
          ok: false,
          file: file.name,
          line: lineNo,
          sequence: null,
          reason: `the line ${parsed.reason}`,
          records,
        };
      }
      const r = parsed.record;
      const seq = Number(r.sequence);
      if (pendingTorn && r.type !== AUDIT_TYPE_PREFIX + TORN_TYPE)
        return tornWithoutRecord(pendingTorn, records);
      if (pendingTorn) {
        torn++;
        pendingTorn = null;
      }
      if (seq !== head.sequence + 1)
        return {
          ok: false,
          file: file.name,
          line: lineNo,
          sequence: seq,
          reason: `sequence ${seq} does not follow ${head.sequence}`,
          records,
        };
      if (r.prevhash !== head.hash)
        return {
          ok: false,
          file: file.name,
          line: lineNo,
          sequence: seq,
          reason: `prevhash ${r.prevhash.slice(0, 12)}… is not the hash of record ${head.sequence} (${head.hash.slice(0, 12)}…): a record before it was changed, removed or inserted`,
          records,
        };
      firstSequence ??= seq;
      head = { sequence: seq, hash: sha256Hex(text) };
      records++;
    }
  }
  if (pendingTorn) return tornWithoutRecord(pendingTorn, records);
  return { ok: true, records, files: files.length, head, torn, tornTail, firstSequence };
}
