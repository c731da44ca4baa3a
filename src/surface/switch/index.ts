/**
 * The one mapping from the switch's typed events (core/switch-events.ts) to what people and dashboards see: each
 * event's log line and metrics from one table (`PUBLISH`, exhaustive: an event type without its row does not
 * compile), written by subscribers of the daemon's bus (`switchLog`, `switchMetrics`). The switch only publishes;
 * the machine decides; this room only words. The rows are in topic files (./clock.ts, ./ledger.ts, ./push.ts,
 * ./engine.ts, ./escalation.ts, ./halted.ts, ./shutdown.ts).
 */
import type { DaemonEvent, DomainEvent, EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { SwitchEvent, SwitchEventType, SwitchPublished } from "../../core/switch-events.js";
import type { Metrics } from "../metrics.js";
import { CLOCK_ROWS } from "./clock.js";
import { ENGINE_ROWS } from "./engine.js";
import { ESCALATION_ROWS } from "./escalation.js";
import { HALTED_ROWS } from "./halted.js";
import { LEDGER_ROWS, ledgerStoreLog } from "./ledger.js";
import type { LogLine, Row, Rows } from "./line.js";
import { PUSH_ROWS } from "./push.js";
import { SHUTDOWN_ROWS } from "./shutdown.js";

export { cancelFailedWords, cancelRetryWords, engineDownWords, engineUpWords } from "./engine.js";
export { ledgerStoreLog } from "./ledger.js";
export type { Level, LogLine } from "./line.js";

export const PUBLISH: Rows<SwitchEventType> = {
  ...CLOCK_ROWS,
  ...LEDGER_ROWS,
  ...PUSH_ROWS,
  ...ENGINE_ROWS,
  ...ESCALATION_ROWS,
  ...HALTED_ROWS,
  ...SHUTDOWN_ROWS,
};

/** The log line of one event (null for a metric-only event). */
export function logLineOf(e: SwitchEvent): LogLine | null {
  const row = PUBLISH[e.type] as Row<SwitchEventType>;
  return row.log ? row.log(e as never) : null;
}

/** The switch's event of one bus event, when it is one (the switch is the only publisher of module `switch`). */
export function switchEventOf(e: DaemonEvent): { account: string; event: SwitchEvent } | null {
  if (e.module !== "switch") return null;
  const { module: _module, account, ...event } = e;
  return { account, event: event as SwitchEvent };
}

/**
 * The switch's log lines, a subscriber of the bus: each switch event's line from the table, on the logger's
 * `{ module: "switch", account }` child (one per account), at its level.
 */
export function switchLog(logger: Logger): EventSubscriber {
  const children = new Map<string, Logger>();
  return (bus) => {
    // a logger that writes nothing (level silent: the property tests' worlds) is spared building every line
    if (!logger.isLevelEnabled("fatal")) return;
    const s = switchEventOf(bus);
    if (!s) return;
    const l = logLineOf(s.event);
    if (!l) return;
    let log = children.get(s.account);
    if (!log) {
      log = logger.child({ module: "switch", account: s.account });
      children.set(s.account, log);
    }
    log[l.level]({ event: l.event, ...l.fields }, l.msg);
  };
}

/** The switch's metrics, a subscriber of the bus: each switch event's metrics from the table. */
export function switchMetrics(metrics: Metrics): EventSubscriber {
  return (bus) => {
    const s = switchEventOf(bus);
    if (!s) return;
    (PUBLISH[s.event.type] as Row<SwitchEventType>).metrics?.(metrics, s.account, s.event as never);
  };
}

/**
 * The switch's log and metrics subscribers and its ledger store's log, on `logger` and `metrics`, in one order (the
 * daemon's bus, a test's).
 */
export function switchSubscribers(logger: Logger, metrics: Metrics): EventSubscriber[] {
  return [switchLog(logger), switchMetrics(metrics), ledgerStoreLog(logger)];
}

/**
 * A switch event described for notifications: its contract name, level, fields and line from the table (the
 * same names and figures its log line carries, so a notification's `event` is the log's), or null for a
 * metric-only event (src/surface/notify/index.ts).
 */
export function describeSwitchEvent(e: SwitchPublished): DomainEvent | null {
  const s = switchEventOf(e);
  const l = s && logLineOf(s.event);
  if (!s || !l) return null;
  return { ...l.fields, event: l.event, level: l.level, msg: l.msg, module: "switch", account: s.account };
}
