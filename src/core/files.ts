/**
 * What a state file must be before it is read (docs/security.md, "State directory"): a regular file (not a symlink,
 * a FIFO, a device or a directory) of a sane size. `lstat` is checked first, then the file is opened with
 * O_NOFOLLOW | O_NONBLOCK and checked again on the open descriptor, so neither a symlink to /dev/zero nor a FIFO
 * swapped in between can make the read hang or fill the heap.
 */
import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";

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
