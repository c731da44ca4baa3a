/**
 * Takes the key out of the process's environment for real (docs/security.md, "Where the key is visible").
 *
 * `delete process.env.HL_PRIVATE_KEY` only unsets libc's copy: the original environment block that the kernel put
 * on the stack at exec, which `/proc/<pid>/environ` and `ps eww` read, still holds `HL_PRIVATE_KEY=0x…`. On Linux a
 * process may write its own memory through `/proc/self/mem`; this overwrites the value bytes of each named
 * variable in that block (between `env_start` and `env_end`, fields 50 and 51 of `/proc/self/stat`) with `*`,
 * leaving `HL_PRIVATE_KEY=****…` of the same length, then unsets the variable so children never inherit it.
 */
import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";

export type ScrubResult =
  /** the block was rewritten (or never held the variable) */
  | { scrubbed: true; entries: number }
  /** the block could not be rewritten (not Linux, /proc not mounted, a hardened kernel): say so */
  | { scrubbed: false; reason: string };

/** Overwrites the values of `names` in this process's original environment block, then deletes them from `env`. */
export function scrubEnvironment(
  names: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ScrubResult {
  for (const name of names) delete env[name];
  // Another environment object (a test's): nothing of ours to rewrite.
  if (env !== process.env) return { scrubbed: true, entries: 0 };
  let fd: number | undefined;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after "(comm) ": index 0 is field 3 (state), so field N is at N - 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start || end - start > 8 << 20)
      return { scrubbed: false, reason: "env_start/env_end not available in /proc/self/stat" };
    fd = openSync("/proc/self/mem", "r+");
    const block = Buffer.alloc(end - start);
    readSync(fd, block, 0, block.length, start);
    let entries = 0;
    for (const name of names) {
      const needle = Buffer.from(`${name}=`);
      let at = block.indexOf(needle);
      while (at >= 0) {
        const valueStart = at + needle.length;
        const nul = block.indexOf(0, valueStart);
        const valueEnd = nul < 0 ? block.length : nul;
        // Only whole entries: at the start of the block or right after a NUL.
        if (at === 0 || block[at - 1] === 0) {
          block.fill(0x2a, valueStart, valueEnd);
          entries++;
        }
        at = block.indexOf(needle, valueEnd);
      }
    }
    if (entries > 0) writeSync(fd, block, 0, block.length, start);
    return { scrubbed: true, entries };
  } catch (error) {
    return { scrubbed: false, reason: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
