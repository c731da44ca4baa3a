/**
 * The shape of the switch's one table (./index.ts `PUBLISH`): per event type, its log line (level, the `event`
 * name docs/cli.md promises, its fields, its message) and its metrics. A row without `log` is a metric
 * only. The topic files (clock, ledger, push, engine, escalation, halted, shutdown) hold the rows.
 */
import type { SwitchEvent, SwitchEventType } from "../../core/switch-events.js";
import type { Metrics } from "../metrics.js";

export type Level = "debug" | "info" | "warn" | "error";

export type LogLine = { level: Level; event: string; fields: Record<string, unknown>; msg: string };

export type Of<T extends SwitchEventType> = Extract<SwitchEvent, { type: T }>;

export type Row<T extends SwitchEventType> = {
  log?: (e: Of<T>) => LogLine;
  metrics?: (m: Metrics, account: string, e: Of<T>) => void;
};

/** The rows of some event types, one each. */
export type Rows<T extends SwitchEventType> = { [K in T]: Row<K> };

export const iso = (ms: number) => new Date(ms).toISOString();

/** The fencing token of a gated action (switch/coordination.ts), when there is one. */
export const tok = (e: { token?: string | undefined }) => (e.token !== undefined ? { token: e.token } : {});

export const line = (level: Level, event: string, fields: Record<string, unknown>, msg: string): LogLine => ({
  level,
  event,
  fields,
  msg,
});
