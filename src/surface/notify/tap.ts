/**
 * Taps a pino logger: every log call whose object carries an `event` name is also handed, with the child
 * loggers' bindings (module, account), to `onEvent`. The daemon's modules already log each state change as a
 * structured event (docs/daemon.md "Log events"), so notifications and the status page follow them without
 * any module knowing about either. The tap sees events whatever the log level; a throwing listener is
 * ignored (logging must never fail because of it).
 */
import type { Logger } from "../../core/logger.js";

export type LoggedEvent = Record<string, unknown> & {
  event: string;
  level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  msg?: string | undefined;
};

export type EventListener = (event: LoggedEvent) => void;

const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

export function tapLogger(
  logger: Logger,
  onEvent: EventListener,
  bindings: Readonly<Record<string, unknown>> = {},
): Logger {
  const tapped = Object.create(logger) as Logger;
  const makeChild = logger.child.bind(logger) as unknown as (b: object, o?: unknown) => Logger;
  const child = (childBindings: Record<string, unknown>, options?: unknown) =>
    tapLogger(makeChild(childBindings, options), onEvent, { ...bindings, ...childBindings });
  (tapped as unknown as { child: unknown }).child = child;
  for (const level of LEVELS) {
    const write = logger[level].bind(logger) as (...args: unknown[]) => void;
    (tapped as unknown as Record<string, unknown>)[level] = (...args: unknown[]) => {
      write(...args);
      const obj = args[0];
      if (obj === null || typeof obj !== "object" || obj instanceof Error) return;
      const name = (obj as { event?: unknown }).event;
      if (typeof name !== "string") return;
      try {
        onEvent({
          ...bindings,
          ...(obj as Record<string, unknown>),
          event: name,
          level,
          msg: typeof args[1] === "string" ? args[1] : undefined,
        });
      } catch {
        // a listener's failure never breaks logging
      }
    };
  }
  return tapped;
}
