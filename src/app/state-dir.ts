/**
 * The state directory at `run`'s start (docs/operations.md, "The state directory"): created if missing (mode 0700),
 * then it must be a directory, the daemon's own (owned by its user, not writable by group or others: whoever can
 * write there can rewrite the trigger count or take the lock), and a file must be creatable in it. Anything else
 * stops `run` with exit 73 (EX_CANTCREAT) and a one-line fix, before a lock or a ledger is tried: a daemon running
 * without its ledger assumes the day's triggers spent, and one without its lock lets a second daemon share the
 * ledger. A ledger that turns corrupt or read-only while the daemon runs keeps its own rule (the ledger's).
 */
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { defaultStateDir, LEGACY_STATE_DIR } from "../config/networks.js";
import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";
import { LEDGER_DIR, LEDGER_FILE } from "../switch/ledger.js";
import { inspectStateLock } from "./lock.js";

export class StateDirError extends BaseError {
  override name = "StateDirError";
  readonly exitCode = ExitCode.cantCreat;
  constructor(message: string, fix: string) {
    super(message, { metaMessages: [`Fix: ${fix}`] });
  }
}

/** Creates `dir` when missing and checks it is the daemon's own and writable; throws StateDirError otherwise. */
export function ensureStateDir(dir: string, uid: number | undefined = process.getuid?.()): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    const why =
      code === "ENOTDIR"
        ? "a part of its path is a file, not a directory"
        : code === "EACCES" || code === "EPERM"
          ? "its parent does not let this user create it"
          : code === "EROFS"
            ? "its file system is read-only"
            : code === "EEXIST"
              ? "it exists and is not a directory"
              : code;
    throw new StateDirError(
      `Cannot create the state directory ${dir}: ${why}.`,
      `create it for the daemon's user (install -d -m 700 ${dir}) or choose another with --state-dir or HL_STATE_DIR`,
    );
  }
  const st = statSync(dir);
  if (!st.isDirectory())
    throw new StateDirError(`The state directory ${dir} is not a directory.`, "give --state-dir a directory");
  if (uid !== undefined && st.uid !== uid)
    throw new StateDirError(
      `The state directory ${dir} is owned by uid ${st.uid}, not by this user (uid ${uid}).`,
      `chown it to the daemon's user (chown -R ${uid} ${dir}), or run the daemon as uid ${st.uid}`,
    );
  if ((st.mode & 0o022) !== 0)
    throw new StateDirError(
      `The state directory ${dir} is writable by ${st.mode & 0o002 ? "every user" : "its group"} (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}): others could rewrite the trigger count or take the lock.`,
      `chmod 700 ${dir}`,
    );
  const probe = join(dir, `.hl-deadman-probe-${process.pid}`);
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
    unlinkSync(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new StateDirError(
      `No file can be created in the state directory ${dir} (${code}): the ledger and the lock cannot be written.`,
      code === "ENOSPC"
        ? "free space on its file system"
        : `chmod 700 ${dir} as its owner (and check for a read-only mount)`,
    );
  }
}

/** Where the state directory is, and whether the old default (`./.hl-deadman`) was moved or is used in place. */
export type StateDirChoice = {
  dir: string;
  /** null: the configured or default directory; moved: the old one renamed to the default; used: the old one kept */
  legacy: null | { action: "moved" | "used"; from: string; why: string };
};

/**
 * The state directory for a command: the configured one, else the default (src/config/networks.ts). An existing
 * ledger in the old default `./.hl-deadman` under the working directory (pm2's `cwd` made it real), with none in the
 * new default, is never orphaned: `run` (`move`) renames it to the default, unless a running daemon holds it or the
 * rename cannot be done (another file system): then it is used where it is. Other commands read it where it is.
 * Either way the caller says so; no count starts fresh.
 */
export function chooseStateDir({
  configured,
  cwd,
  env,
  move,
  lockHeld = (dir) => inspectStateLock(dir).state === "held",
}: {
  configured: string | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
  move: boolean;
  lockHeld?: (dir: string) => boolean;
}): StateDirChoice {
  if (configured !== undefined) return { dir: configured, legacy: null };
  const dir = defaultStateDir(env, cwd);
  const old = resolve(cwd, LEGACY_STATE_DIR);
  // a ledger in either layout (ledger.json before issue 41, the ledger/ directory since)
  const hasLedger = (d: string) => existsSync(join(d, LEDGER_FILE)) || existsSync(join(d, LEDGER_DIR));
  if (dir === old || !hasLedger(old) || hasLedger(dir)) return { dir, legacy: null };
  const used = (why: string): StateDirChoice => ({ dir: old, legacy: { action: "used", from: old, why } });
  if (!move) return used(`the old default; \`run\` moves it to ${dir}`);
  if (lockHeld(old)) return used("a running daemon holds it; a later start moves it");
  try {
    mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
    // an empty default (made by hand, or by systemd) gives way; one holding anything else keeps the old in place
    if (existsSync(dir)) rmdirSync(dir);
    renameSync(old, dir);
    return { dir, legacy: { action: "moved", from: old, why: `moved to the new default ${dir}` } };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    return used(`it could not be moved to ${dir} (${code}); move it by hand or set HL_STATE_DIR=${old}`);
  }
}
