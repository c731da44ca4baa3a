/** The switch's status: a pure projection of its model and its features' (reading never changes anything). */
import type { SwitchStatus } from "../core/status.js";
import { isPlausibleTime } from "./exchange-time.js";
import { featureStatus } from "./features.js";
import { atLimit, limitRefused, proofCounts, rollEntry } from "./ledger-model.js";
import { type Now, reportedDeadline, reportsExhausted, type SwitchModel, timesOf } from "./model.js";

/** Where the switch stands: a pure projection (reading never changes anything). */
export function status(m: SwitchModel, now: Now): SwitchStatus {
  const t = timesOf(m, now);
  // (a projection never throws: a day that is not a time leaves the entry as it is)
  const entry = t.sampled && isPlausibleTime(t.day) ? rollEntry(m.entry, t.day).entry : m.entry;
  return {
    account: m.cfg.account,
    state: m.state,
    armedUntil: reportedDeadline(m),
    lastPushAt: m.lastPushAt,
    consecutiveFailures: m.consecutiveFailures,
    lastError: m.lastError,
    notProtectedReason: m.notProtectedReason,
    day: entry.day,
    triggersToday: entry.triggersToday,
    triggerLimit: entry.limit,
    exhausted: reportsExhausted(entry),
    clockStepped: m.clockStepped,
    limitRefused: limitRefused(entry),
    limitSuspected: atLimit(entry) && !reportsExhausted(entry),
    triggerProofs: proofCounts(entry),
    triggers: entry.triggers.map((t) => ({ deadline: t.deadline, proof: t.proof })),
    clockSuspect: t.suspect,
    clockUnverified: !t.witnessed,
    clockOffMs: t.witnessed ? t.local - t.exchange : t.local - t.plan,
    // the HALTED latch's closes and the drill, as the features say them
    halted: null,
    drill: null,
    ...featureStatus({ ...m, entry }),
  };
}
