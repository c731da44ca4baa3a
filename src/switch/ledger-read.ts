/**
 * The trigger ledger as a state directory holds it, read and validated without changing anything: `status` reads it
 * so, and the store (ledger.ts `Ledger.open`) reads it so before it repairs, migrates or sets aside what it found.
 * The layouts and files: ledger-schema.ts; what the store does with a damaged file: ledger.ts.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { z } from "zod";
import { formatIssues } from "../core/errors/parse.js";
import { checkStateFile } from "../core/files.js";
import {
  ACCOUNT_FILE,
  LEDGER_DIR,
  LEDGER_FILE,
  LEDGER_META_FILE,
  LEDGER_VERSION,
  LedgerAccountFile,
  type LedgerEntry,
  LedgerFile,
  LedgerMeta,
} from "./ledger-schema.js";

export type ReadLedgerResult =
  | { ok: true; file: LedgerFile | null }
  | { ok: false; reason: string; code: "corrupt" | "unreadable" };

/** Reads and validates a state file against `schema` without changing anything. */
async function readChecked<T>(
  path: string,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: z.ZodError } },
): Promise<{ ok: true; value: T | null } | { ok: false; reason: string; code: "corrupt" | "unreadable" }> {
  // A regular file of sane size, checked before it is read (src/core/files.ts; docs/security.md).
  // Anything else (symlink to /dev/zero, FIFO, 38 MB file) is "corrupt": moved aside, limit assumed.
  const checked = await checkStateFile(path);
  if (!checked.ok)
    return {
      ok: false,
      code: checked.code === "unreadable" ? "unreadable" : "corrupt",
      reason: checked.reason,
    };
  if (!checked.exists) return { ok: true, value: null };
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
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      code: "corrupt",
      reason: `has an unexpected shape (${formatIssues(parsed.error).join("; ")})`,
    };
  return { ok: true, value: parsed.data };
}

/** Reads and validates a single-file ledger (`ledger.json`, the layout before issue 41) without changing anything. */
export async function readLedgerFile(path: string): Promise<ReadLedgerResult> {
  const read = await readChecked(path, LedgerFile);
  return read.ok ? { ok: true, file: read.value } : read;
}

/** A file of the ledger that could not be used: which, why, and the account it held (null: file-wide). */
export type LedgerDamage = {
  path: string;
  reason: string;
  code: "corrupt" | "unreadable";
  account: string | null;
};

/**
 * The ledger as a state directory holds it, in either layout, read without changing anything (`status` and the
 * store's `open` use it):
 * - `files`: `ledger/meta.json` exists (the per-account layout is complete): meta.json and every
 *   `ledger/<account>.json`; a `ledger.json` beside it is a migrated leftover (`legacyBeside`) and is not read;
 * - `single`: no meta.json but a `ledger.json` (before issue 41, or a migration a crash interrupted: account files
 *   already in `ledger/` are not read, the migration starts over);
 * - `files` with meta.json damaged: account files without meta.json (and no ledger.json) mean meta.json was lost;
 * - `none`: neither.
 * `file` merges what could be read into the single-file shape; `damaged` lists what could not.
 */
export type LedgerState = {
  layout: "files" | "single" | "none";
  /** the directory of the per-account layout, or ledger.json */
  path: string;
  file: LedgerFile | null;
  damaged: LedgerDamage[];
  legacyBeside: boolean;
};

export async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

export async function accountFileNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => ACCOUNT_FILE.test(n)).sort();
  } catch {
    return [];
  }
}

export async function readLedgerState(stateDir: string): Promise<LedgerState> {
  const dir = join(stateDir, LEDGER_DIR);
  const single = join(stateDir, LEDGER_FILE);
  const metaPath = join(dir, LEDGER_META_FILE);
  const hasMeta = await exists(metaPath);
  const hasSingle = await exists(single);
  if (!hasMeta && hasSingle) {
    const read = await readLedgerFile(single);
    return read.ok
      ? { layout: "single", path: single, file: read.file, damaged: [], legacyBeside: false }
      : {
          layout: "single",
          path: single,
          file: null,
          damaged: [{ path: single, reason: read.reason, code: read.code, account: null }],
          legacyBeside: false,
        };
  }
  const names = await accountFileNames(dir);
  if (!hasMeta && names.length === 0)
    return { layout: "none", path: dir, file: null, damaged: [], legacyBeside: false };
  const damaged: LedgerDamage[] = [];
  let meta: LedgerMeta | null = null;
  if (hasMeta) {
    const read = await readChecked(metaPath, LedgerMeta);
    if (read.ok) meta = read.value;
    else damaged.push({ path: metaPath, reason: read.reason, code: read.code, account: null });
  } else {
    damaged.push({
      path: metaPath,
      reason: `is missing beside ${names.length} account file(s)`,
      code: "corrupt",
      account: null,
    });
  }
  let updatedAt = meta?.updatedAt ?? 0;
  let lastNonce = meta?.lastNonce ?? null;
  const accounts: Record<string, LedgerEntry> = {};
  for (const name of names) {
    const account = (ACCOUNT_FILE.exec(name) as RegExpExecArray)[1] as string;
    const path = join(dir, name);
    const read = await readChecked(path, LedgerAccountFile);
    if (!read.ok) {
      damaged.push({ path, reason: read.reason, code: read.code, account });
      continue;
    }
    if (read.value === null) continue; // removed between the listing and the read
    if (read.value.entry.account !== account) {
      damaged.push({
        path,
        reason: `holds the entry of ${read.value.entry.account}, not of ${account}`,
        code: "corrupt",
        account,
      });
      continue;
    }
    accounts[account] = read.value.entry;
    updatedAt = Math.max(updatedAt, read.value.updatedAt);
    if (read.value.lastNonce !== null) lastNonce = Math.max(lastNonce ?? 0, read.value.lastNonce);
  }
  return {
    layout: "files",
    path: dir,
    file: {
      version: LEDGER_VERSION,
      updatedAt,
      lastNonce,
      assumeLimitOn: meta?.assumeLimitOn ?? null,
      accounts,
      engines: meta?.engines ?? {},
    },
    damaged,
    legacyBeside: hasMeta && hasSingle,
  };
}
