/**
 * Process lifecycle, in one place (only this file and bin/ touch `process`):
 * - SIGTERM / SIGINT: run `close` (stop pushing, remove or keep the schedule, flush), then exit 0 — or 1 when
 *   a removal failed. Bounded: at `timeoutMs` the process exits 1 whatever is still running.
 * - A second signal exits at once with 128 + signal number (130 SIGINT, 143 SIGTERM).
 * - An uncaught exception or unhandled rejection is logged at fatal and exits 1 WITHOUT disarming: a crashed
 *   daemon must let the switch fire (the supervisor restarts it; the next start re-arms).
 */
import { basename } from "node:path";
import type { Logger } from "../core/logger.js";
import { flushLogger, systemTimers, type Timers } from "../core/runtime.js";

export type CloseResult = { ok: boolean };

export type InstallShutdownParameters = {
  close: (signal: NodeJS.Signals) => Promise<CloseResult>;
  logger: Logger;
  /** bound for the whole graceful stop (ms) */
  timeoutMs: number;
  /** default process.exit */
  exit?: (code: number) => void;
  /** default process */
  proc?: NodeJS.Process;
  /** the bound's timer (the runtime's; default real timers) */
  timers?: Timers;
};

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15 };

/** A process title with no secret in it (argv never holds one either: there is no key flag). */
export function setProcessTitle(title: string, proc: NodeJS.Process = process): void {
  try {
    proc.title = title;
  } catch {
    // Some platforms refuse; nothing secret is in argv anyway.
  }
}

/**
 * The title of a running daemon, naming its instance so that several daemons on one host tell apart in `ps` and
 * `top`: the config file's name when there is one, else its accounts (the first, and how many more), else `--sim`.
 * Nothing secret: file names and public addresses only.
 */
export function instanceTitle({
  file,
  accounts,
  sim,
}: {
  file?: string | undefined;
  accounts: readonly string[];
  sim?: boolean | undefined;
}): string {
  if (sim) return "hl-deadman run --sim";
  if (file !== undefined) return `hl-deadman run ${basename(file)}`;
  const [first, ...rest] = accounts;
  if (first === undefined) return "hl-deadman run";
  return `hl-deadman run ${first}${rest.length > 0 ? ` +${rest.length}` : ""}`;
}

/** Installs the signal and crash handlers; returns a function that removes them. */
export function installShutdownHandlers({
  close,
  logger,
  timeoutMs,
  exit = (code) => process.exit(code),
  proc = process,
  timers = systemTimers(),
}: InstallShutdownParameters): () => void {
  const log = logger.child({ module: "daemon" });
  let stopping = false;
  let exited = false;
  const finish = async (code: number) => {
    if (exited) return;
    exited = true;
    await flushLogger(logger, 500);
    exit(code);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ event: "shutdown.forced", signal }, `second ${signal}: exiting at once`);
      exited = true;
      exit(128 + (SIGNAL_NUMBERS[signal] ?? 15));
      return;
    }
    stopping = true;
    log.info({ event: "shutdown.start", signal, timeoutMs }, `${signal} received: stopping gracefully`);
    const timer = timers.after(timeoutMs, () => {
      log.error(
        { event: "shutdown.timeout", timeoutMs },
        `graceful stop did not finish within ${timeoutMs} ms: exiting`,
      );
      void finish(1);
    });
    close(signal).then(
      (result) => {
        timer.cancel();
        log.info({ event: "shutdown.done", ok: result.ok }, result.ok ? "stopped" : "stopped with errors");
        void finish(result.ok ? 0 : 1);
      },
      (error: unknown) => {
        timer.cancel();
        log.error({ event: "shutdown.failed", err: error }, "graceful stop failed");
        void finish(1);
      },
    );
  };

  const onCrash = (kind: string) => (error: unknown) => {
    // No disarm: the armed deadline stays, so the exchange cancels the orders if nobody restarts us in time.
    log.fatal(
      { event: "daemon.crash", kind, err: error },
      `${kind}: exiting without removing the schedule (the switch will fire unless the daemon is restarted in time)`,
    );
    void finish(1);
  };
  const onException = onCrash("uncaught exception");
  const onRejection = onCrash("unhandled rejection");

  proc.on("SIGTERM", onSignal);
  proc.on("SIGINT", onSignal);
  proc.on("uncaughtException", onException);
  proc.on("unhandledRejection", onRejection);
  return () => {
    proc.off("SIGTERM", onSignal);
    proc.off("SIGINT", onSignal);
    proc.off("uncaughtException", onException);
    proc.off("unhandledRejection", onRejection);
  };
}
