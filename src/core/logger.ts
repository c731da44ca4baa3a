import { createRequire } from "node:module";
import { type DestinationStream, type LevelWithSilent, type Logger, pino } from "pino";
import type PinoPretty from "pino-pretty";

export type { Logger } from "pino";

/** Module names used for child loggers: one union, so log lines stay greppable. */
export type LoggerModule =
  | "daemon"
  | "switch"
  | "ledger"
  | "exposure"
  | "guard"
  | "health"
  | "chain"
  | "sim"
  | "cli";

export type CreateLoggerParameters = {
  level?: LevelWithSilent | undefined;
  /** Where JSON lines go; defaults to stdout (fd 1, synchronous so nothing is lost on exit). */
  destination?: DestinationStream | undefined;
  /** Pretty-print for people (the CLI says so when stdout is a terminal). Default: JSON lines. */
  pretty?: boolean | undefined;
  /** The `pid` field of every line (the CLI gives the process's). */
  pid?: number | undefined;
  /** Clock for the `time` field; default pino's epoch time. */
  now?: (() => number) | undefined;
};

/**
 * The only place a root logger is made. Paths that could hold a secret are removed, whatever the
 * caller logs; the daemon also never puts keys or RPC URLs into log objects in the first place.
 */
export function createLogger({
  level = "info",
  destination,
  pretty = false,
  pid,
  now,
}: CreateLoggerParameters = {}): Logger {
  const usePretty = pretty && destination === undefined;
  const options = {
    level,
    base: pid === undefined ? {} : { pid },
    redact: {
      paths: [
        "privateKey",
        "*.privateKey",
        "key",
        "*.key",
        "wallet",
        "*.wallet",
        "signature",
        "*.signature",
        "rpcUrl",
        "*.rpcUrl",
        "headers.authorization",
      ],
      remove: true,
    },
    ...(now ? { timestamp: () => `,"time":${now()}` } : {}),
  };
  if (usePretty) {
    // In this thread, not as a pino transport: a transport starts a worker thread that loads pino's files by path,
    // which the bundled CLI (scripts/bundle.mjs) does not have. pino-pretty is loaded only here, for a terminal.
    const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
    return pino(
      options,
      pretty({
        // One line per event for people: the message first, then the fields inline.
        colorize: true,
        translateTime: "SYS:HH:MM:ss.l",
        ignore: "pid,hostname,module",
        singleLine: true,
        sync: true,
      }),
    );
  }
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}
