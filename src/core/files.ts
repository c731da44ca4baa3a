/**
 * What a state file must be before it is read (docs/security.md, "State directory"): a regular file (not a symlink,
 * a FIFO, a device or a directory) of a sane size. `lstat` is checked first, then the file is opened with
 * O_NOFOLLOW | O_NONBLOCK and checked again on the open descriptor, so neither a symlink to /dev/zero nor a FIFO
 * swapped in between can make the read hang or fill the heap.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";

/** 1 MiB: a ledger holds at most 50 history entries per account, about 6 KB each account. */
export const MAX_STATE_FILE_BYTES = 1024 * 1024;

export type StateFileCheck =
  | { ok: true; exists: false }
  | { ok: true; exists: true; text: string }
  | { ok: false; code: "not_regular" | "too_large" | "unreadable"; reason: string };

function kindOf(stat: {
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isDirectory(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isDirectory()) return "a directory";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Checks and reads `path` as a state file of at most `maxBytes`. A missing file is `{ ok: true, exists: false }`;
 * anything but a regular file of sane size is `{ ok: false }` with a reason naming what it is (callers move it
 * aside and apply their conservative rule). Never follows a symlink, never blocks on a FIFO.
 */
export async function checkStateFile(path: string, maxBytes = MAX_STATE_FILE_BYTES): Promise<StateFileCheck> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ok: true, exists: false };
    return { ok: false, code: "unreadable", reason: `cannot be read (${code ?? (error as Error).message})` };
  }
  if (!st.isFile()) return { ok: false, code: "not_regular", reason: `is ${kindOf(st)}, not a regular file` };
  if (st.size > maxBytes)
    return {
      ok: false,
      code: "too_large",
      reason: `is ${st.size} bytes, above the ${maxBytes}-byte limit for a state file`,
    };
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const fst = await fh.stat();
    if (!fst.isFile())
      return { ok: false, code: "not_regular", reason: `is ${kindOf(fst)}, not a regular file` };
    if (fst.size > maxBytes)
      return {
        ok: false,
        code: "too_large",
        reason: `is ${fst.size} bytes, above the ${maxBytes}-byte limit for a state file`,
      };
    // Read at most maxBytes + 1: a file growing under us is still bounded.
    const buf = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, length, buf.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length >= buf.length) break;
    }
    if (length > maxBytes)
      return {
        ok: false,
        code: "too_large",
        reason: `grew above the ${maxBytes}-byte limit for a state file while read`,
      };
    return { ok: true, exists: true, text: buf.subarray(0, length).toString("utf8") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ok: true, exists: false };
    if (code === "ELOOP")
      return { ok: false, code: "not_regular", reason: "is a symbolic link, not a regular file" };
    return { ok: false, code: "unreadable", reason: `cannot be read (${code ?? (error as Error).message})` };
  } finally {
    await fh?.close();
  }
}

/**
 * Writes `text` to `path` atomically and durably: a temp file in the same directory (0600, O_NOFOLLOW), fsync,
 * rename over `path`, fsync the directory (a filesystem that refuses a directory fsync still renamed atomically).
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${randomBytes(6).toString("hex")}`;
  const fd = await open(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await fd.write(text);
    await fd.sync();
  } finally {
    await fd.close();
  }
  try {
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  const dir = await open(dirname(path), constants.O_RDONLY);
  try {
    await dir.sync();
  } catch {
    // some filesystems refuse fsync on a directory; the rename is still atomic
  } finally {
    await dir.close();
  }
}
