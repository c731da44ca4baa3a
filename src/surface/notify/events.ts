/**
 * Which named events become notifications (a switch's as src/surface/switch/ describes them, the protection
 * watch's), and the document each one posts (docs/observability.md
 * "Notifications"): `event`, `severity`, `account`, a one-line human `text` (a Slack or Mattermost incoming
 * webhook shows it as is), `time` / `timeMs`, `host`, `version` and the event's `figures`.
 */
import type { DomainEvent } from "../../core/events.js";

export type Severity = "critical" | "warning" | "info";

export type Notification = {
  event: string;
  severity: Severity;
  /** lower-case 0x address, or null for a daemon-wide event */
  account: string | null;
  text: string;
  /** when the daemon noticed, ISO-8601 UTC */
  time: string;
  timeMs: number;
  host: string;
  version: string;
  figures: Record<string, string | number | boolean | null>;
};

/** The events that notify, by contract name (the log's), with their severity. Everything else is ignored. */
export const NOTIFY_EVENTS: Readonly<Record<string, Severity>> = Object.freeze({
  "trigger.counted": "critical",
  "trigger.low": "warning",
  "trigger.exhausted": "critical",
  "trigger.limit_suspected": "critical",
  "trigger.reset": "info",
  "switch.not_protected": "critical",
  "switch.protected": "info",
  "protection.low": "critical",
  "protection.restored": "info",
  "engine.down": "critical",
  "engine.up": "info",
  "shutdown.removed": "info",
  "shutdown.kept": "warning",
  "shutdown.remove_failed": "critical",
  "escalation.held": "critical",
  "escalation.stopped_at_restart": "critical",
  "kill.started": "critical",
});

const iso = (ms: unknown) =>
  typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;

/** Figures copied from the event when present (scalars only; never a URL, key or error object). */
const FIGURE_KEYS = [
  "triggersToday",
  "triggerLimit",
  "triggersLeft",
  "proof",
  "reason",
  "previousReason",
  "message",
  "action",
  "detail",
  "day",
  "assumed",
  "protectionLeftMs",
  "marginMs",
  "consecutiveFailures",
] as const;
/** Millisecond timestamps, sent as ISO-8601 strings. */
const TIME_KEYS = ["deadline", "resumesAt", "armedUntil", "previousDeadline"] as const;

function figuresOf(e: DomainEvent): Notification["figures"] {
  const out: Notification["figures"] = {};
  for (const k of FIGURE_KEYS) {
    const v = e[k];
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[k] = v;
    else if (v === null) out[k] = null;
  }
  for (const k of TIME_KEYS) if (k in e) out[k] = iso(e[k]);
  return out;
}

const seconds = (ms: unknown) => (typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "?");
const at = (ms: unknown) => iso(ms) ?? "(unknown time)";

/** The one-line text per event: what happened, to which account, what it means. */
function textOf(e: DomainEvent, who: string): string {
  switch (e.event) {
    case "trigger.counted":
      return `TRIGGER on ${who}: the scheduled cancel fired at ${at(e.deadline)}; the exchange cancelled its open orders (positions stay open). ${e.triggersToday}/${e.triggerLimit} triggers today, ${e.triggersLeft} left${e.proof === "guess" ? " (counted without proof: a push may have landed unanswered; the exchange's record is checked)" : ""}.`;
    case "trigger.low":
      return `${who}: only ${e.triggersLeft} scheduled-cancel trigger(s) left today (${e.triggersToday}/${e.triggerLimit} used).`;
    case "trigger.exhausted":
      return `${who}: daily trigger limit reached (${e.triggersToday}/${e.triggerLimit}); NOT PROTECTED until ${at(e.resumesAt)}.`;
    case "trigger.limit_suspected":
      return `${who}: the trigger count reaches the daily limit (${e.triggersToday}/${e.triggerLimit}) without the exchange's proof (guessed or record-implied); NOT READY, but the switch keeps pushing until the exchange itself refuses.`;
    case "trigger.reset":
      return `${who}: new UTC day ${e.day ?? ""}, the trigger budget is back; protecting again.`;
    case "switch.not_protected":
      return `NOT PROTECTED: the exchange refuses the dead man's switch for ${who} (${e.reason}): ${e.message ?? ""}`.trim();
    case "switch.protected":
      return `${who} is protected again (the exchange accepts the switch; was ${e.previousReason ?? "refused"}).`;
    case "protection.low":
      return `${who}: only ${seconds(e.protectionLeftMs)} of protection left (margin ${seconds(e.marginMs)}), ${e.consecutiveFailures ?? 0} push failure(s) in a row; the cancel fires at ${at(e.armedUntil)} unless a push lands.`;
    case "protection.restored":
      return `${who}: protection back above the margin (${seconds(e.protectionLeftMs)} left).`;
    // what the policy does next is the switch's own line (src/surface/switch/engine.ts), never guessed here
    case "engine.down":
      return `${who}: the trading engine is DOWN (${e.detail ?? "guard failed"}); ${String(e.msg ?? "").replace(/^trading engine down: /, "") || "the engine-down policy applies"}.`;
    case "engine.up":
      return `${who}: the trading engine is back; ${String(e.msg ?? "").replace(/^trading engine back: /, "") || "pushing again"}.`;
    case "shutdown.removed":
      return `${who}: hl-deadman stopped and removed the scheduled cancel (orders stay open, unprotected).`;
    case "shutdown.kept":
      return `${who}: hl-deadman stopped and kept the scheduled cancel armed until ${at(e.armedUntil)}; orders are cancelled then unless it is restarted.`;
    case "shutdown.remove_failed":
      return `${who}: hl-deadman stopped but could NOT remove the scheduled cancel (${e.reason}); it fires at ${at(e.armedUntil)}.`;
    case "escalation.held":
      return `${who}: closing positions is HELD: ${e.reason ?? ""}. ${e.gate ?? ""}`;
    case "escalation.stopped_at_restart":
      return `${who} is HALTED and its closing stopped at restart (pass ${e.pass ?? "?"} was open)${e.remaining ? `; positions left at the last read: ${e.remaining}` : ""}; the closes resume when the engine is down and a rule holds.`;
    case "kill.started":
      return `KILL on ${who} by ${e.by ?? "?"}: HALTED, every resting order being cancelled${e.close === true ? " and the positions closed" : ""}; only hl-deadman reset releases it.`;
    default:
      return `${who}: ${e.msg ?? e.event}`;
  }
}

const shortAccount = (a: string) => (a.length > 12 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a);

/** The notification for a named event, or null when the event does not notify. */
export function toNotification(
  e: DomainEvent,
  { now, host, version }: { now: number; host: string; version: string },
): Notification | null {
  const severity = NOTIFY_EVENTS[e.event];
  if (!severity) return null;
  const account = typeof e.account === "string" ? e.account.toLowerCase() : null;
  const who = account ? `account ${shortAccount(account)}` : "hl-deadman";
  const text = `[hl-deadman ${severity}] ${textOf(e, who)}`.replace(/\s+/g, " ");
  return {
    event: e.event,
    severity,
    account,
    text,
    time: new Date(now).toISOString(),
    timeMs: now,
    host,
    version,
    figures: figuresOf(e),
  };
}
