/**
 * One daemon per state directory (docs/security.md, "State directory"): `run` takes `<stateDir>/daemon.lock`
 * before anything else and holds it until the process exits. Two daemons sharing a ledger would overwrite each
 * other's counted triggers.
 *
 * The lock file is created atomically with its content (written to a temporary file, then `link(2)`ed into
 * place, which fails with EEXIST when another holder exists). It records the holder's pid and, on Linux, the
 * process start time and boot id, so a pid reused after a crash (PID 1 in every container) is recognised as stale.
 * A stale lock (holder gone) is moved aside and taken over; a live one refuses with exit 75 (EX_TEMPFAIL) naming
 * the holder's pid. A holder on another host name (another container sharing the volume) cannot be checked by
 * pid: it refreshes the file's mtime at least every 20 s and counts as gone after 30 s without. The daemon
 * refreshes it when it wakes for a push anyway (`touch`, once per push interval), so a timer of its own wakes
 * the process only when the pushes are further apart than 15 s. A state directory where no file can be created
 * (read-only, full) cannot hold a lock either: the daemon then runs without one and says so (its ledger cannot
 * be written there anyway).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { type Clock, monotonicOf, systemClock } from "../core/clock.js";
import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";
import { type TimerHandle, type Timers, unrefTimers } from "../core/runtime.js";

export const LOCK_FILE = "daemon.lock";

/** Another live daemon holds the lock. Exit 75 (EX_TEMPFAIL). */
export class StateLockedError extends BaseError {
  override name = "StateLockedError";
  readonly exitCode = ExitCode.tempFail;
  readonly holderPid: number | undefined;
  constructor(path: string, holder: LockHolder | undefined) {
    super(
      holder
        ? `Another hl-deadman (pid ${holder.pid}${holder.host && holder.host !== hostname() ? ` on ${holder.host}` : ""}) holds the state directory lock ${path}.`
        : `Another hl-deadman is taking the state directory lock ${path} right now.`,
      {
        metaMessages: [
          "One daemon per state directory: two would overwrite each other's trigger ledger.",
          "Stop the other daemon, or give this one its own --state-dir.",
        ],
      },
    );
    this.holderPid = holder?.pid;
  }
}

/**
 * The lock path is not a regular file (a symbolic link, a FIFO, a device): never followed, read or removed, since
 * no daemon makes one. Exit 78: the state directory needs an operator's look.
 */
export class LockFileError extends BaseError {
  override name = "LockFileError";
  readonly exitCode = ExitCode.config;
  constructor(path: string, what: string) {
    super(`The state directory lock ${path} is ${what}, not a file hl-deadman writes; it is left as it is.`, {
      metaMessages: [
        `Check who made it; when no hl-deadman runs with this state directory, remove it: rm ${path}`,
      ],
    });
  }
}

export type LockHolder = {
  pid: number;
  start?: string | undefined;
  boot?: string | undefined;
  host?: string;
  at?: string;
};

export type StateLock = {
  readonly path: string;
  /** false when the directory could not hold a lock file (read-only, full): see `warning`. */
  readonly held: boolean;
  /** Why the lock could not be taken, or that a stale lock was taken over; for one log line. */
  readonly warning: string | undefined;
  /**
   * Refreshes the file's mtime if the last refresh is at least LOCK_TOUCH_MIN_MS old, and in any case moves the
   * lock's own refresh timer to LOCK_REFRESH_MS from now: call it from wake-ups that happen anyway (the daemon's
   * push loop), so that timer never fires while they come.
   */
  touch(): void;
  /** Refreshes so far by `touch` and by the lock's own timer (tests, docs/security.md). */
  readonly refreshes: { touched: number; timer: number };
  /** Removes the lock file if it is still ours. Idempotent; also runs at process exit. */
  release(): void;
};

/** The refresh timing (tests shorten it; the defaults are LOCK_REFRESH_MS and LOCK_TOUCH_MIN_MS). */
export type LockTiming = {
  refreshMs?: number;
  touchMinMs?: number;
  /** the wall time written into the lock and its mtime, and the monotonic time between refreshes */
  clock?: Clock;
  /** the lock's own refresh timer (default: timers that do not keep the process alive) */
  timers?: Timers;
};

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or undefined off Linux. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return undefined;
  }
}

/**
 * The holder refreshes the lock file's mtime at least this often, so another host or pid namespace can judge it:
 * by `touch` in the daemon's clock watch (on the push slots, src/app/parts/clock-watch.ts), else by a timer of its own
 * this long after the last refresh.
 */
export const LOCK_REFRESH_MS = 15_000;
/**
 * `touch` writes the mtime at most this often (a push every second need not write it every second); every touch
 * still moves the lock's own timer, so the longest gap between two writes is this + LOCK_REFRESH_MS (20 s).
 */
export const LOCK_TOUCH_MIN_MS = 5_000;
/** A lock from another host (or container) not refreshed for this long is stale: 10 s past the longest gap. */
export const FOREIGN_LOCK_STALE_MS = 30_000;

/**
 * Whether `holder` is a live process (and the same one: start time and boot id match where known). A holder on
 * another host name (another container sharing the volume: its pids are not ours to check) is alive while it keeps
 * refreshing the lock file (`mtimeMs`).
 */
export function holderIsAlive(holder: LockHolder, mtimeMs: number | undefined, now: number): boolean {
  if (holder.host !== undefined && holder.host !== hostname())
    return mtimeMs === undefined || now - mtimeMs < FOREIGN_LOCK_STALE_MS;
  if (holder.pid === process.pid) return false; // an earlier incarnation with our pid (a restarted container)
  if (holder.boot !== undefined && bootId() !== undefined && holder.boot !== bootId()) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (holder.start !== undefined) {
    const start = processStartTime(holder.pid);
    if (start !== undefined && start !== holder.start) return false;
  }
  return true;
}

/** Reads a lock file (never following a symlink, at most 4 KiB); undefined when it holds no readable holder. */
function readHolder(path: string): { raw: string; holder: LockHolder | undefined } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw new LockFileError(path, "a symbolic link");
    return { raw: "", holder: undefined };
  }
  try {
    // A FIFO or a device opens (O_NONBLOCK) but cannot be read as a file: refuse it by name (LockFileError).
    if (!fstatSync(fd).isFile())
      throw new LockFileError(path, "not a regular file (a FIFO, a socket or a device)");
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const raw = buf.subarray(0, n).toString("utf8");
    try {
      const parsed = JSON.parse(raw) as Partial<LockHolder>;
      if (typeof parsed.pid === "number" && Number.isSafeInteger(parsed.pid) && parsed.pid > 0)
        return { raw, holder: parsed as LockHolder };
    } catch {}
    return { raw, holder: undefined };
  } finally {
    closeSync(fd);
  }
}

const CANNOT_LOCK = new Set(["EROFS", "EACCES", "EPERM", "ENOSPC", "EDQUOT"]);

/**
 * Takes `<stateDir>/daemon.lock` (creating the directory, mode 0700). Throws StateLockedError when a live
 * process holds it. Registers its own release at process exit.
 */
export function acquireStateLock(stateDir: string, timing: LockTiming = {}): StateLock {
  const clock = timing.clock ?? systemClock;
  const path = join(stateDir, LOCK_FILE);
  const me: LockHolder = {
    pid: process.pid,
    start: processStartTime(process.pid),
    boot: bootId(),
    host: hostname(),
    at: new Date(clock.now()).toISOString(),
  };
  const content = `${JSON.stringify(me)}\n`;
  const unlocked = (warning: string): StateLock => ({
    path,
    held: false,
    warning,
    touch() {},
    refreshes: { touched: 0, timer: 0 },
    release() {},
  });
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    return unlocked(`cannot create the state directory ${stateDir} (${code}); running without the lock`);
  }
  let warning: string | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    const tmp = join(stateDir, `.${LOCK_FILE}.${process.pid}.${randomBytes(4).toString("hex")}`);
    try {
      const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      try {
        writeSync(fd, content);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      try {
        unlinkSync(tmp);
      } catch {}
      if (CANNOT_LOCK.has(code))
        return unlocked(`cannot create ${path} (${code}); running without the one-daemon lock`);
      throw error;
    }
    try {
      linkSync(tmp, path);
      unlinkSync(tmp);
      return held(path, content, warning, timing);
    } catch (error) {
      try {
        unlinkSync(tmp);
      } catch {}
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EEXIST") {
        if (code && CANNOT_LOCK.has(code))
          return unlocked(`cannot create ${path} (${code}); running without the one-daemon lock`);
        throw error;
      }
    }
    // Someone holds it, or held it.
    const current = readHolder(path);
    if (current === undefined) continue; // gone meanwhile: try again
    const mtimeMs = lstatSync(path, { throwIfNoEntry: false })?.mtimeMs;
    if (current.holder && holderIsAlive(current.holder, mtimeMs, clock.now()))
      throw new StateLockedError(path, current.holder);
    if (!current.holder) {
      // Unreadable content: a lock file is written whole before it appears, so this is damage, not a race;
      // unless it is not a regular file at all, which we refuse to touch.
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (st && !st.isFile()) throw new StateLockedError(path, undefined);
    }
    // Stale: move it aside under a name of our own, and check we moved the file we judged.
    const aside = `${path}.stale-${process.pid}`;
    try {
      renameSync(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    const moved = readHolder(aside);
    if (moved && moved.raw !== current.raw) {
      // Another starter replaced the stale lock between our read and our rename: put theirs back, they win.
      try {
        linkSync(aside, path);
      } catch {}
      try {
        unlinkSync(aside);
      } catch {}
      throw new StateLockedError(path, moved.holder);
    }
    try {
      unlinkSync(aside);
    } catch {}
    warning = `took over a stale lock ${path}${current.holder ? ` left by pid ${current.holder.pid}, which is no longer running` : " with unreadable content"}`;
  }
  throw new StateLockedError(path, undefined);
}

function held(
  path: string,
  content: string,
  warning: string | undefined,
  {
    refreshMs = LOCK_REFRESH_MS,
    touchMinMs = LOCK_TOUCH_MIN_MS,
    clock = systemClock,
    timers = unrefTimers,
  }: LockTiming,
): StateLock {
  let released = false;
  const refreshes = { touched: 0, timer: 0 };
  let last = monotonicOf(clock);
  // The lock's own timer, moved to refreshMs from now at every refresh and touch.
  let timer: TimerHandle = { cancel() {} };
  const arm = () => {
    timer.cancel();
    timer = timers.after(refreshMs, () => {
      refreshes.timer++;
      refresh();
    });
  };
  // Keep the lock visibly alive for daemons that cannot check our pid (another container on the same volume).
  const refresh = () => {
    last = monotonicOf(clock);
    arm();
    try {
      const now = new Date(clock.now());
      utimesSync(path, now, now);
    } catch {}
  };
  arm();
  const release = () => {
    if (released) return;
    released = true;
    timer.cancel();
    process.removeListener("exit", release);
    // Only our own lock: never remove a file another daemon took over (nor one that is no file at all).
    let current: ReturnType<typeof readHolder>;
    try {
      current = readHolder(path);
    } catch {
      return;
    }
    if (current?.raw === content) {
      try {
        unlinkSync(path);
      } catch {}
    }
  };
  process.on("exit", release);
  return {
    path,
    held: true,
    warning,
    touch() {
      if (released) return;
      // Too soon to write again (the timer may just have): still move the timer, or it keeps firing just before
      // each push, on the phase it took once, and every touch finds the mtime fresh.
      if (monotonicOf(clock) - last < touchMinMs) return void arm();
      refreshes.touched++;
      refresh();
    },
    refreshes,
    release,
  };
}

/** What `doctor` sees of a state directory's lock, without taking it (docs/cli.md, "doctor"). */
export type LockView =
  | { state: "free"; path: string }
  /** a live holder: a `run` on this directory would exit 75 naming it */
  | { state: "held"; path: string; holder: LockHolder }
  /** a holder that is gone: the next `run` moves the file aside and takes the lock */
  | { state: "stale"; path: string; holder: LockHolder | undefined }
  /** not a file hl-deadman writes (a symbolic link, a FIFO): `run` exits 78 */
  | { state: "foreign"; path: string; message: string };

/** Reads `<stateDir>/daemon.lock` as `acquireStateLock` would judge it, changing nothing. */
export function inspectStateLock(stateDir: string, now: number = systemClock.now()): LockView {
  const path = join(stateDir, LOCK_FILE);
  let found: ReturnType<typeof readHolder>;
  try {
    found = readHolder(path);
  } catch (error) {
    if (error instanceof LockFileError) return { state: "foreign", path, message: error.shortMessage };
    throw error;
  }
  if (!found) return { state: "free", path };
  let mtimeMs: number | undefined;
  try {
    mtimeMs = lstatSync(path).mtimeMs;
  } catch {}
  if (found.holder && holderIsAlive(found.holder, mtimeMs, now))
    return { state: "held", path, holder: found.holder };
  return { state: "stale", path, holder: found.holder };
}
