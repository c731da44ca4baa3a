/**
 * The one mapping from the switch's typed events (events.ts) to what people and dashboards see: each event's
 * log line (level, the `event` name docs/cli.md promises, its fields, its message) and its metrics, written by
 * subscribers of the daemon's bus (`switchLog`, `switchMetrics`); the switch only publishes (`publish`).
 * The machine decides; this file only words. A row without `log` is a metric only.
 */

import {
  createEventBus,
  type DaemonEvent,
  type DomainEvent,
  type EventBus,
  type EventSubscriber,
  type SwitchPublished,
} from "../core/events.js";
import type { Logger } from "../core/logger.js";
import type { Metrics } from "../surface/metrics.js";
import { cancelFailedWords, cancelRetryWords, engineDownWords, engineUpWords } from "./engine-words.js";
import type { SwitchEvent, SwitchEventType } from "./events.js";
import { KILL_AND_RESUME_ROWS } from "./log-halted.js";

export type Level = "debug" | "info" | "warn" | "error";

export type LogLine = { level: Level; event: string; fields: Record<string, unknown>; msg: string };

type Of<T extends SwitchEventType> = Extract<SwitchEvent, { type: T }>;

type Row<T extends SwitchEventType> = {
  log?: (e: Of<T>) => LogLine;
  metrics?: (m: Metrics, account: string, e: Of<T>) => void;
};

const iso = (ms: number) => new Date(ms).toISOString();
/** The fencing token of a gated action (coordination.ts), when there is one. */
const tok = (e: { token?: string | undefined }) => (e.token !== undefined ? { token: e.token } : {});
const line = (level: Level, event: string, fields: Record<string, unknown>, msg: string): LogLine => ({
  level,
  event,
  fields,
  msg,
});

export const PUBLISH: { [T in SwitchEventType]: Row<T> } = {
  eventRefused: {
    log: (e) =>
      line(
        "error",
        "switch.event_refused",
        { eventType: e.eventType, reason: e.reason },
        `a ${e.eventType} event was refused, the switch is unchanged: ${e.reason}`,
      ),
  },
  dateRefused: {
    log: (e) =>
      line(
        "warn",
        "clock.date_refused",
        { reason: e.reason, date: e.date, detail: e.detail },
        `an answer's Date was refused (${e.reason}): ${e.detail}; the exchange's time is unchanged`,
      ),
    metrics: (m, account, e) => m.clockDatesRefused.inc({ account, reason: e.reason }),
  },
  clockCorrected: {
    log: (e) =>
      line(
        "info",
        "clock.corrected",
        { correctionMs: e.correctionMs, verified: e.verified },
        `the exchange's time differs from the estimate by ${e.correctionMs} ms (its Date header): corrected`,
      ),
  },
  clockSuspect: {
    log: (e) =>
      line(
        "warn",
        "clock.suspect",
        {
          localMs: e.localMs,
          exchangeMs: e.exchangeMs,
          disagreementMs: e.disagreementMs,
          actOnMs: e.actOnMs,
          dayOnMs: e.dayOnMs,
        },
        `the local clock and the exchange's time (its witnesses: answers' Date, block time, verdicts) disagree by ${e.disagreementMs} ms: ` +
          "not ready; pushes planned on the verified exchange time, or while nothing is verified on the earliest candidate; lapses on the latest, the UTC day on the earliest",
      ),
    metrics: (m, account) => m.clockSuspect.set({ account }, 1),
  },
  clockAgreed: {
    log: (e) =>
      line(
        "info",
        "clock.agreed",
        { localMs: e.localMs, exchangeMs: e.exchangeMs, disagreementMs: e.disagreementMs },
        "the local clock and the exchange's time agree again",
      ),
    metrics: (m, account) => m.clockSuspect.set({ account }, 0),
  },
  clockSourceSwitched: {
    log: (e) =>
      line(
        "error",
        "clock.source_switched",
        { reason: e.reason, message: e.message, to: e.to },
        `repeated ${e.reason} refusals: the time used is wrong; switching to the other source (${e.to === "local" ? "the local clock" : "the exchange's Date"})`,
      ),
    metrics: (m, account) => m.clockSuspect.set({ account }, 1),
  },
  clockVerified: {
    log: (e) =>
      line(
        "info",
        "clock.verified",
        { by: e.by, exchangeMs: e.exchangeMs, localMs: e.localMs, skewMs: e.localMs - e.exchangeMs },
        `two witnesses agree on the exchange's time (${e.by}): pushes are planned on it; the local clock is ${e.localMs - e.exchangeMs} ms off it`,
      ),
    metrics: (m, account) => m.clockVerified.set({ account }, 1),
  },
  clockUnverified: {
    log: (e) =>
      line(
        "warn",
        "clock.unverified",
        { exchangeMs: e.exchangeMs, localMs: e.localMs },
        "the exchange's verdicts rule out the verified time: not ready until two witnesses agree again; pushes planned on the earliest candidate meanwhile",
      ),
    metrics: (m, account) => m.clockVerified.set({ account }, 0),
  },
  blockRefused: {
    log: (e) =>
      line(
        "warn",
        "clock.block_refused",
        { reason: e.reason, detail: e.detail },
        `the HyperEVM block timestamp was refused (${e.reason}): ${e.detail}`,
      ),
  },
  dayRepaired: {
    log: (e) =>
      line(
        "warn",
        "ledger.day_repaired",
        { from: e.from, to: e.to, triggersToday: e.triggersToday },
        `the ledger's day ${e.from} is ahead of the exchange's verified time (a wrong clock wrote it): set back to ${e.to}, its ${e.triggersToday} trigger(s) kept (never fewer than counted); the exchange's record is read`,
      ),
  },
  timeFloorRepaired: {
    log: (e) =>
      line(
        "warn",
        "clock.floor_repaired",
        { from: iso(e.from), to: iso(e.to), aheadMs: e.from - e.to },
        `the ledger's last verified time ${iso(e.from)} is ahead of the exchange's time two witnesses just verified (a wrong clock wrote it): no longer believed, the exchange's time is taken as not before ${iso(e.to)}; the nonce floor is kept (the ledger carries it in lastNonce: ledger.updated_at_repaired)`,
      ),
  },
  clockStepped: {
    log: (e) =>
      line(
        "warn",
        "switch.clock_step",
        { deltaMs: e.deltaMs },
        "the wall clock was stepped: not ready until a push is confirmed on the corrected clock",
      ),
  },
  nonceRederived: {
    log: (e) =>
      line(
        "warn",
        "nonce.rederived",
        { floor: e.floor, reason: e.reason },
        `the exchange refused the nonce (${e.reason}): the next nonces start above ${e.floor}, from its answer`,
      ),
  },
  dayRolled: {
    log: (e) =>
      line(
        "info",
        "ledger.rollover",
        { from: e.from, to: e.to, previousTriggers: e.previousTriggers },
        "new UTC day: the trigger count is reset",
      ),
  },
  pendingAtStart: {
    log: (e) =>
      line(
        "info",
        "ledger.pending",
        { pendingUntil: e.pendingUntil, confirmedUntil: e.confirmedUntil },
        "a push sent before the last stop has no recorded confirmation: it may be armed, it is not counted as armed",
      ),
  },
  ledgerAssumed: {
    log: (e) =>
      line(
        "error",
        "trigger.exhausted",
        { triggersToday: e.triggersToday, triggerLimit: e.triggerLimit, assumed: true },
        "the trigger ledger was unreadable: assuming the daily limit is used; pushes continue, readiness fails until 00:00 UTC",
      ),
  },
  recordSkipped: {
    log: (e) =>
      line("debug", "record.skipped", { detail: e.detail }, `the record was not applied: ${e.detail}`),
  },
  reconciled: {
    log: (e) =>
      line(
        "info",
        "ledger.reconciled",
        { changes: e.changes, notes: e.notes, marginMs: e.marginMs, proofs: e.proofs },
        e.changes.map((c) => `${c.field} ${String(c.from)} → ${String(c.to)}: ${c.reason}`).join("; "),
      ),
  },
  recordChecked: {
    log: (e) => line("debug", "record.checked", { notes: e.notes }, e.notes.join("; ")),
  },
  triggerCounted: {
    log: (e) =>
      line(
        "warn",
        "trigger.counted",
        {
          triggersToday: e.triggersToday,
          triggerLimit: e.triggerLimit,
          triggersLeft: e.triggersLeft,
          deadline: e.deadline,
          proof: "guess",
          ...(e.forDay !== undefined ? { forDay: e.forDay } : {}),
          ...(e.detail ? { detail: e.detail } : {}),
        },
        e.forDay !== undefined
          ? `the scheduled cancel may have fired at ${iso(e.deadline)} (by the later of two disagreeing clocks): counted for ${e.forDay}, where that day's count starts with it once both clocks reach it (${e.triggersToday}/${e.triggerLimit} on ${e.day}; a guess until the exchange's record proves it)`
          : `the scheduled cancel fired at ${iso(e.deadline)} (${e.triggersToday}/${e.triggerLimit} today; a guess until the exchange's record proves it)`,
      ),
    metrics: (m, account) => m.triggersTotal.inc({ account }),
  },
  triggerSkipped: {
    log: (e) =>
      line(
        "warn",
        "trigger.skipped",
        { deadline: e.deadline, ...(e.detail ? { detail: e.detail } : {}) },
        "a lapsed deadline from an earlier UTC day (or one already counted) is not counted today",
      ),
  },
  triggersLow: {
    log: (e) =>
      line(
        "warn",
        "trigger.low",
        { triggersToday: e.triggersToday, triggersLeft: e.triggersLeft, triggerLimit: e.triggerLimit },
        `only ${e.triggersLeft} scheduled-cancel trigger(s) left today`,
      ),
  },
  limitSuspected: {
    log: (e) =>
      line(
        "error",
        "trigger.limit_suspected",
        { triggersToday: e.triggersToday, triggerLimit: e.triggerLimit, proofs: e.proofs },
        `the count reaches the daily limit (${e.triggersToday}/${e.triggerLimit}) without the exchange's proof: not ready; pushes continue until the exchange itself refuses`,
      ),
  },
  limitReached: {
    log: (e) =>
      line(
        "error",
        "trigger.exhausted",
        {
          triggersToday: e.triggersToday,
          triggerLimit: e.triggerLimit,
          resumesAt: e.resumesAt,
          ...(e.message ? { message: e.message } : {}),
        },
        `daily trigger limit reached (${e.why}): the switch cannot protect until ${iso(e.resumesAt)}`,
      ),
  },
  limitReset: {
    log: (e) =>
      line(
        "info",
        "trigger.reset",
        { day: e.day, triggersToday: e.triggersToday },
        "new UTC day: the trigger budget is back, re-arming",
      ),
  },
  pushConfirmed: {
    log: (e) =>
      e.expedited
        ? line(
            "warn",
            "heartbeat.ok",
            { deadline: e.deadline, latencyMs: e.latencyMs, expedited: true },
            `engine down: the cancel is now scheduled at ${iso(e.deadline)} (5 s minimum)`,
          )
        : line(
            "info",
            "heartbeat.ok",
            { deadline: e.deadline, latencyMs: e.latencyMs },
            `armed until ${iso(e.deadline)}`,
          ),
    metrics: (m, account, e) => {
      m.pushes.inc({ account, outcome: "ok" });
      m.pushLatency.observe({ account }, e.latencyMs / 1000);
    },
  },
  pushFailed: {
    log: (e) => {
      const base = { reason: e.reason, message: e.message, consecutiveFailures: e.consecutiveFailures };
      return e.refused
        ? line("warn", "heartbeat.failed", base, `push refused: ${e.message}`)
        : line(
            "warn",
            "heartbeat.failed",
            { ...base, retryInMs: e.retryInMs ?? null, armedUntil: e.armedUntil ?? null },
            `push failed (${e.reason}): ${e.message}`,
          );
    },
    metrics: (m, account, e) => m.pushes.inc({ account, outcome: e.reason }),
  },
  recovered: {
    log: (e) =>
      line(
        "info",
        "heartbeat.recovered",
        { outageMs: e.outageMs },
        `pushes succeed again after ${e.outageMs} ms of failures`,
      ),
  },
  notProtected: {
    log: (e) =>
      line(
        "error",
        "switch.not_protected",
        { reason: e.reason, message: e.message, recheckInMs: e.recheckInMs },
        `NOT PROTECTED: the exchange refuses the switch for this account (${e.reason}); rechecking every ${Math.round(e.recheckInMs / 1000)} s`,
      ),
  },
  agentInvalid: {
    log: (e) =>
      line(
        "error",
        "switch.not_protected",
        { reason: e.reason, ...(e.message ? { message: e.message } : {}) },
        `NOT PROTECTED: the agent wallet is ${e.state}${e.message ? ` (${e.message})` : ""}; no pushes until it is valid again`,
      ),
  },
  protected: {
    log: (e) =>
      line(
        "info",
        "switch.protected",
        { previousReason: e.previousReason },
        e.by === "agent" ? "the agent wallet is valid again" : "the exchange accepts the switch again",
      ),
  },
  notProtectedGauge: {
    metrics: (m, account, e) => m.notProtected.set({ account, reason: e.reason }, e.value),
  },
  gauge: {
    metrics: (m, account, e) => {
      if (e.name === "armedUntil") m.setArmedUntil(account, e.value);
      else if (e.name === "exhausted") m.exhausted.set({ account }, e.value ? 1 : 0);
      else if (e.name === "halted") m.halted.set({ account }, e.value ? 1 : 0);
      else if (e.name === "proof") m.triggersByProof.set({ account, proof: e.proof }, e.value);
      else m[e.name].set({ account }, e.value as number);
    },
  },
  engineDown: {
    log: (e) =>
      line(
        "warn",
        "engine.down",
        { action: e.action, detail: e.detail, armedUntil: e.armedUntil, cause: e.cause ?? "seen" },
        engineDownWords(e),
      ),
  },
  engineUp: {
    log: (e) => line("info", "engine.up", { action: e.action, detail: e.detail }, engineUpWords(e)),
  },
  ordersCancelled: {
    log: (e) =>
      line(
        // Every pass is said; a further one that found nothing to cancel only at debug level (one per interval).
        e.repeat && e.cancelled === 0 ? "debug" : "warn",
        "engine.orders_cancelled",
        { pass: e.pass, cancelled: e.cancelled, kept: e.kept, ...(e.detail ? { detail: e.detail } : {}) },
        `engine down: ${e.cancelled} open order(s) cancelled, ${e.kept} kept (pass ${e.pass}); the schedule keeps being renewed as the backstop (no trigger spent), and open orders are cancelled again each interval while the engine stays down`,
      ),
    metrics: (m, account) => m.cancelPasses.inc({ account, outcome: "confirmed" }),
  },
  cancelFailed: {
    log: ({ type: _, ...f }) => line("error", "engine.cancel_failed", f, cancelFailedWords(f)),
    metrics: (m, account) => m.cancelPasses.inc({ account, outcome: "failed" }),
  },
  cancelRetry: {
    log: ({ type: _, ...f }) => line("warn", "engine.cancel_retry", f, cancelRetryWords(f)),
    metrics: (m, account) => m.cancelPasses.inc({ account, outcome: "retried" }),
  },
  escalated: {
    log: (e) =>
      line(
        "error",
        "escalation.halted",
        { rule: e.rule, reason: e.reason, ...tok(e) },
        `HALTED: ${e.reason}; cancelling the open orders and closing the positions reduce-only. The switch keeps pushing; only \`hl-deadman reset\` releases the account`,
      ),
  },
  escalationHeld: {
    log: (e) =>
      line(
        e.rule === "halted" ? "error" : "warn",
        "escalation.held",
        { rule: e.rule, reason: e.reason, gate: e.gate },
        `escalation held, not closing here: ${e.reason}; ${e.gate}`,
      ),
  },
  ...KILL_AND_RESUME_ROWS,
  closeOrders: {
    log: (e) =>
      line(
        "warn",
        "escalation.close_orders",
        { pass: e.pass, orders: e.orders, ...tok(e) },
        `HALTED: ${e.orders.length} reduce-only close order(s) in pass ${e.pass}: ${e.orders.map((o) => `${o.side} ${o.size} ${o.coin} @ ${o.price} ${o.status}`).join("; ")}`,
      ),
  },
  closeDone: {
    log: (e) =>
      line(
        "warn",
        "escalation.closed",
        { pass: e.pass, orders: e.orders, filledUsd: e.filledUsd, dust: e.dust },
        `HALTED: the positions are closed (pass ${e.pass}, ${e.orders} order(s), ${e.filledUsd} USD filled${e.dust > 0 ? `, ${e.dust} position(s) left as dust below the $10 minimum` : ""})`,
      ),
    metrics: (m, account) => m.closePasses.inc({ account, outcome: "flat" }),
  },
  closeIncomplete: {
    log: (e) =>
      line(
        "error",
        "escalation.close_incomplete",
        {
          pass: e.pass,
          orders: e.orders,
          filledUsd: e.filledUsd,
          refusal: e.refusal,
          detail: e.detail,
          retryInMs: e.retryInMs,
        },
        `HALTED: the positions are not closed yet (pass ${e.pass}${e.refusal ? `, ${e.refusal}` : ""}${e.detail ? `: ${e.detail}` : ""}); ${e.retryInMs === null ? "no retry while the engine is up: the closes are held" : `trying again in ${Math.round(e.retryInMs / 1000)} s`}`,
      ),
    metrics: (m, account) => m.closePasses.inc({ account, outcome: "incomplete" }),
  },
  haltReleased: {
    log: (e) =>
      line(
        "warn",
        "escalation.reset",
        { by: e.by, since: e.since, reason: e.reason, ...tok(e) },
        `HALTED released by ${e.by} (halted since ${iso(e.since)}: ${e.reason})`,
      ),
  },
  resetRefused: {
    log: (e) =>
      line("warn", "escalation.reset_refused", { by: e.by, reason: e.reason }, `reset refused: ${e.reason}`),
  },
  drillRefused: {
    log: (e) =>
      line(
        "warn",
        "drill.refused",
        { id: e.id, by: e.by, reason: e.reason },
        `drill ${e.id} refused: ${e.reason}`,
      ),
  },
  drillStarted: {
    log: (e) =>
      line(
        "warn",
        "drill.started",
        { id: e.id, by: e.by, triggersLeft: e.triggersLeft, ...tok(e) },
        `drill ${e.id} by ${e.by}: a resting order far from the market, then a cancel a few seconds ahead; it spends 1 of the ${e.triggersLeft} trigger(s) left today`,
      ),
  },
  drillDone: {
    log: (e) =>
      line(
        e.fired ? "warn" : "error",
        e.fired ? "drill.passed" : "drill.failed",
        {
          id: e.id,
          by: e.by,
          fired: e.fired,
          status: e.status,
          statusTimestamp: e.statusTimestamp,
          cancelAt: e.cancelAt,
          detail: e.detail,
        },
        `drill ${e.id}: ${e.detail}; pushing again`,
      ),
  },
  kept: {
    log: (e) =>
      line(
        "info",
        "shutdown.kept",
        { armedUntil: e.armedUntil, ...(e.reason ? { reason: e.reason } : {}) },
        (e.armedUntil === null
          ? "graceful stop: nothing is armed"
          : `graceful stop: the schedule stays armed until ${iso(e.armedUntil)}`) +
          (e.reason ? ` (not removed: ${e.reason})` : ""),
      ),
  },
  removed: {
    log: (e) =>
      line(
        "info",
        "shutdown.removed",
        { previousDeadline: e.previousDeadline, ...tok(e) },
        "graceful stop: the scheduled cancel is removed",
      ),
  },
  nothingArmed: {
    log: (e) =>
      line(
        "info",
        "shutdown.nothing_armed",
        { reason: e.reason, message: e.message },
        e.belowVolumeGate
          ? "graceful stop: nothing is armed (the account is below the exchange's volume gate)"
          : `graceful stop: nothing was armed (no push was accepted), so there is nothing to remove (the removal failed: ${e.reason})`,
      ),
  },
  removalSkipped: {
    log: (e) =>
      line(
        "warn",
        "shutdown.skipped",
        { reason: e.reason, message: e.message },
        "graceful stop: nothing to remove (the exchange refuses the switch for this account)",
      ),
  },
  removalFailed: {
    log: (e) =>
      line(
        "error",
        "shutdown.remove_failed",
        { reason: e.reason, message: e.message, armedUntil: e.armedUntil },
        `graceful stop: could not remove the scheduled cancel (${e.reason}); it fires at the armed deadline`,
      ),
  },
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
  return { account, event: event as unknown as SwitchEvent };
}

/**
 * The switch's log lines, a subscriber of the bus: each switch event's line from the table, on the logger's
 * `{ module: "switch", account }` child (one per account), at its level.
 */
export function switchLog(logger: Logger): EventSubscriber {
  const children = new Map<string, Logger>();
  return (bus) => {
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
 * A switch event described for notifications: its contract name, level, fields and line from the table (the
 * same names and figures its log line carries, so a notification's `event` is the log's), or null for a
 * metric-only event. Handed to the notifier, which cannot see the switch's types (src/surface/notify/index.ts).
 */
export function describeSwitchEvent(e: SwitchPublished): DomainEvent | null {
  const s = switchEventOf(e);
  const l = s && logLineOf(s.event);
  if (!s || !l) return null;
  return { ...l.fields, event: l.event, level: l.level, msg: l.msg, module: "switch", account: s.account };
}

/** A bus for a switch built without the daemon's (tests, the library): its own log and metrics subscribe. */
const ownBuses = new WeakMap<Logger, EventBus>();

/**
 * Publishes one switch event on the bus, and only that: the log line and the metrics are the subscribers'
 * (`switchLog`, `switchMetrics`; the daemon subscribes them once, src/app/parts/io.ts). A switch built without a
 * bus gets one of its own on first use, with those two subscribers on its logger (already the switch's child,
 * bound to its module and account) and metrics, so there is one path either way.
 */
export function publish(
  e: SwitchEvent,
  log: Logger,
  metrics: Metrics,
  account: string,
  bus?: EventBus | undefined,
): void {
  let target = bus ?? ownBuses.get(log);
  if (!target) {
    target = createEventBus(switchOwnLog(log), switchMetrics(metrics));
    ownBuses.set(log, target);
  }
  target.publish({ ...e, module: "switch", account });
}

/** `switchLog` for a logger already bound to the switch's module and account. */
function switchOwnLog(log: Logger): EventSubscriber {
  return (bus) => {
    const s = switchEventOf(bus);
    const l = s && logLineOf(s.event);
    if (l) log[l.level]({ event: l.event, ...l.fields }, l.msg);
  };
}
