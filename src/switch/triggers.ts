/**
 * Trigger accounting, a sub-reducer of the switch machine: a lapse counted (once per deadline, the day forward
 * only), the count at the limit said without stopping the pushes, the exchange's record applied where it is fresh,
 * the daily limit reached and reset (docs/daemon.md "What the switch believes about triggers"). Each returns what it
 * decides (context.ts `Decision`), which the step applies.
 */
import { nextUtcMidnight, utcDay } from "../core/clock.js";
import type { SwitchEvent } from "../core/switch-events.js";
import { andThen, type Ctx, type Decision, decided, merge } from "./context.js";
import { acceptingNow, EXCHANGE_MIN_LEAD_MS, type Times } from "./exchange-time.js";
import type { LedgerEntry, TriggerRecord } from "./ledger.js";
import {
  atLimit,
  isExhausted,
  keptLater,
  limitRefused,
  proofCounts,
  TRIGGER_LIST_SIZE,
  type TriggerResult,
  withHistory,
  withIntent,
  withTrigger,
} from "./ledger-model.js";
import {
  inflight,
  lapseDeadline,
  type Now,
  RECORD_MARGIN_MAX_MS,
  RECORD_REREAD_MS,
  recordMargin,
  type SwitchModel,
} from "./model.js";
import { type RecordEvidence, withRecord } from "./record-reconcile.js";

/**
 * Counts a trigger when the earliest possibly-armed deadline has passed, on the step's `times`. Decided, not
 * applied (context.ts `Decision`).
 */
export function checkLapse(m: SwitchModel, now: Now, times: Times, detail?: string): Decision {
  // also while stopping: a deadline that passes while the removal waits has fired
  if (m.phase.name !== "running" && m.phase.name !== "stopping") return {};
  const deadline = lapseDeadline(m);
  if (deadline === null || now.wall < deadline) return {};
  // The push in flight cannot have fired yet while less than the exchange's 5 s minimum lead has passed since it
  // was asked for: had the exchange taken it, its time then was at most cancel time − 5 s, and it took it after
  // `askedMono`. Judged on the monotonic clock, not on a candidate time: the latest candidate (a Date's upper
  // bound, a clock ahead) may already be past a cancel time planned on the earliest (an expedite 5.5 s ahead, a
  // push planned on a Date far behind), and counting it before the answer counted a lapse the exchange then
  // refused as too early (a guess on top of the unknown outcomes' allowance: over, with nothing fired).
  const sending = inflight(m);
  if (
    sending &&
    sending.cancelAt === deadline &&
    m.entry.armedUntil !== deadline &&
    now.mono < sending.askedMono + EXCHANGE_MIN_LEAD_MS
  ) {
    // checked again when it could have fired (or at its answer)
    return { wake: { lapse: sending.askedMono + EXCHANGE_MIN_LEAD_MS } };
  }
  // While nothing is verified, the push in flight lapses on the latest candidate that would have taken it (its
  // time then at most cancel time − 5 s): a later candidate would have refused it as too early, and under no
  // candidate that refuses it can it fire (a push planned on a local clock hours behind, judged on a true Date).
  if (sending && sending.cancelAt === deadline && m.entry.armedUntil !== deadline && !times.witnessed) {
    const at = acceptingNow(m.time!, now.mono, times.local, deadline, sending.askedMono);
    if (at === null || at < deadline) {
      // checked again when it could have fired on that candidate (or at its answer)
      return at !== null ? { wake: { lapse: now.mono + (deadline - at) } } : {};
    }
  }
  // While the two clocks disagree, a lapse is judged on the later of the two, but one on a UTC day that only the
  // local clock has reached waits until the exchange estimate passes it: counting it would roll the day.
  if (times.suspect && times.exchange < deadline && utcDay(deadline) > utcDay(times.day)) {
    // checked again when the estimate reaches it
    return { wake: { lapse: now.mono + (deadline - times.exchange) } };
  }
  // The exchange holds one of the candidates (confirmed, pendingUntil..pendingLatest) and fires at most
  // one: the earliest is counted now. If a candidate lies on a later UTC day, the one that fires may count
  // on that day: a possible trigger stays pending from that day's 00:00 (counted then unless a push is
  // confirmed first), so no day is ever under-counted.
  const { armedUntil, pendingUntil, pendingLatest } = m.entry;
  const latest = Math.max(armedUntil ?? 0, pendingUntil ?? 0, pendingLatest ?? 0);
  // A guess: the other cancel times the exchange may hold instead (pushes without a recorded answer) go with
  // it, so that a record listing one of them accepted in time withdraws it (record-reconcile.ts `withRecord`).
  const alt = [armedUntil, pendingUntil, pendingLatest, inflight(m)?.cancelAt ?? null].filter(
    (d): d is number => d !== null && d > deadline,
  );
  // The UTC day rolls only when both clocks agree it changed (`times.day`, the earlier of two disagreeing
  // ones); a lapse judged on the later one may lie on a day the earlier has not reached (a Date ahead across
  // 00:00). Counting it there would roll the ledger to that day on one clock alone and put today's count, fires
  // included, in the history: it is counted for its own day instead (`later`), where the day starts with it.
  // Nor on a clock nothing verified (issue 40): the local clock alone, a day ahead from the start, reaches a day
  // the exchange has not; the ledger's day moves only as `roll` moves it (on a verified time, or both clocks).
  const forLaterDay =
    utcDay(deadline) > m.entry.day && (utcDay(deadline) > utcDay(times.day) || !times.witnessed);
  const r = forLaterDay
    ? withTriggerForLaterDay(m.entry, { deadline, at: now.wall, detail, alt }, m.cfg.historySize)
    : withTrigger(m.entry, { deadline, at: now.wall, detail, alt }, m.cfg.historySize);
  let entry = r.entry;
  const exchangeNow = Math.min(now.wall, times.exchange);
  if (latest > exchangeNow && utcDay(latest) > utcDay(deadline))
    // (from the exchange estimate's now, not the later of the two clocks: pending from that day's 00:00)
    entry = withIntent(entry, Math.max(nextUtcMidnight(deadline), exchangeNow));
  else if (latest > deadline && utcDay(latest) > utcDay(deadline)) {
    // That later candidate has passed too (a clock corrected across 00:00, a restart on a clock behind): it
    // may be the one that fired, on its own day. Nothing stays pending for it, so it is counted now, as a guess
    // on that day: at once when the ledger is on it, else kept for it (`later`) while the ledger's day (the
    // earlier of two disagreeing clocks) has not reached it. Over by one, never under.
    const guess: TriggerRecord = { deadline: latest, proof: "guess", at: Math.floor(now.wall) };
    if (utcDay(latest) > entry.day) {
      const later = (entry.later ?? []).filter((t) => t.deadline !== latest);
      entry = { ...entry, later: keptLater([...later, guess]) };
    } else if (utcDay(latest) === entry.day && !entry.triggers.some((t) => t.deadline === latest)) {
      entry = {
        ...entry,
        triggersToday: entry.triggersToday + 1,
        triggers: [...entry.triggers, guess].slice(-TRIGGER_LIST_SIZE),
      };
    }
  }
  // A push in flight is still to be answered; its own cancel time is what it arms if it is confirmed.
  if (sending) entry = withIntent(entry, sending.cancelAt);
  const e = entry;
  let d: Decision = { set: { entry }, persist: true };
  const left = Math.max(0, e.limit - e.triggersToday);
  const say = (ev: SwitchEvent) => {
    d = merge(d, { events: [ev] });
  };
  if (r.counted) {
    say({
      type: "triggerCounted",
      triggersToday: e.triggersToday,
      triggerLimit: e.limit,
      triggersLeft: left,
      deadline,
      day: e.day,
      ...(forLaterDay ? { forDay: utcDay(deadline) } : {}),
      ...(detail ? { detail } : {}),
    });
    // A guessed count is checked against the record (when one is configured; the driver says if not).
    d = andThen(m, d, (c) => readRecord(c, "trigger"));
    if (atLimit(e) && !e.assumed) {
      d = andThen(m, d, limitSuspected);
    } else if (left <= m.cfg.triggerWarnRemaining) {
      say({
        type: "triggersLow",
        triggersToday: e.triggersToday,
        triggersLeft: left,
        triggerLimit: e.limit,
      });
    }
  } else {
    say({ type: "triggerSkipped", deadline, ...(detail ? { detail } : {}) });
  }
  return merge(d, {
    ...(m.phase.name === "running" ? { become: { to: "lapsed" } } : {}),
    effects: [{ kind: "pollExposure" }],
  });
}

/**
 * The count reaches the limit without the exchange's own proof (guesses, a record's lapses): said once a day,
 * readiness fails (status `limitSuspected`), and the pushes go on: only the exchange's refusal stops them.
 */
export function limitSuspected(m: SwitchModel): Decision {
  const e = m.entry;
  if (isExhausted(e) || !atLimit(e) || m.limitSuspectedDay === e.day) return {};
  return {
    set: { limitSuspectedDay: e.day },
    events: [
      {
        type: "limitSuspected",
        triggersToday: e.triggersToday,
        triggerLimit: e.limit,
        proofs: proofCounts(e),
      },
    ],
  };
}

/** Asks the driver for the exchange's record (one read at a time). */
export function readRecord(m: SwitchModel, reason: string): Decision {
  if (m.recordReading || (m.phase.name !== "running" && m.phase.name !== "stopping")) return {};
  return { set: { recordReading: true }, effects: [{ kind: "readRecord", reason }] };
}

/**
 * The exchange's record: applied to the ledger in both directions where it is fresh (ledger-model.ts), on the
 * step's `times`. Decided, not applied (context.ts `Decision`).
 */
export function record(
  m: SwitchModel,
  now: Now,
  times: Times,
  evidence: RecordEvidence | null,
  detail: string | undefined,
): Decision {
  const read: Decision = { set: { recordReading: false } };
  if (evidence === null)
    return detail !== undefined ? merge(read, { events: [{ type: "recordSkipped", detail }] }) : read;
  // A record is applied to the ledger's day. Read while only one clock is past 00:00 (the time it was read on is
  // the later of two that disagree), it is dated on the earlier clock when that one is on the ledger's day: it
  // still corrects that day (a lie it had counted included).
  const dated: RecordEvidence =
    utcDay(evidence.at) !== m.entry.day && utcDay(times.day) === m.entry.day
      ? { ...evidence, at: Math.min(evidence.at, times.day) }
      : evidence;
  // Measure the record's lag: the oldest of this run's recent confirmed pushes it does not list yet (bounded).
  const listed = new Set(
    dated.schedules.filter((s) => s.error === null && s.deadline !== null).map((s) => s.deadline),
  );
  const oldestListed = dated.schedules[0]?.txTime ?? Number.POSITIVE_INFINITY;
  const missing = m.ownConfirmed.filter(
    (c) =>
      c.at <= dated.at &&
      c.at >= oldestListed &&
      c.at >= dated.at - RECORD_MARGIN_MAX_MS &&
      !listed.has(c.cancelAt),
  );
  const lag = missing.length === 0 ? 0 : Math.max(0, dated.at - Math.min(...missing.map((c) => c.at)));
  const recordLags = [...m.recordLags, Math.min(lag, RECORD_MARGIN_MAX_MS)].slice(-8);
  let d: Decision = merge(read, { set: { recordLags } });
  const marginMs = recordMargin({ ...m, recordLags });
  const before = m.entry;
  const r = withRecord(before, dated, {
    now: now.wall,
    marginMs,
    sent: m.ownSent,
    confirmed: m.ownConfirmed,
    pushLeadMs: m.cfg.deadlineMs + m.cfg.requestTimeoutMs,
  });
  if (r.entry !== before) {
    d = merge(d, {
      set: { entry: r.entry },
      persist: true,
      events: [
        {
          type: "reconciled",
          changes: r.changes,
          notes: r.notes,
          marginMs,
          proofs: proofCounts(r.entry),
        },
      ],
    });
    const e = r.entry;
    if (isExhausted(e) && !m.wasExhausted && m.phase.name === "running")
      d = andThen(m, d, (c) =>
        exhausted(c, now, "the exchange's scheduledCancel orders prove the daily limit"),
      );
    else if (m.state === "lapsed" && m.phase.name === "running") d = merge(d, { become: { to: "holding" } });
    d = andThen(m, d, limitSuspected);
    // A withdrawn guess leaves the push that replaced it as a possible deadline; when that deadline has already
    // passed (a record read late, after the exchange went silent), it lapsed: counted now, never left uncounted.
    d = andThen(m, d, (c) => checkLapse(c, now, times));
  } else if (r.notes.length > 0) {
    d = merge(d, { events: [{ type: "recordChecked", notes: r.notes }] });
  }
  // Guesses left today: read again later (a lagging record may list the replacing push by then).
  if (decided(m, d).entry.triggers.some((t) => t.proof === "guess") && m.phase.name === "running")
    d = merge(d, { wake: { record: now.mono + RECORD_REREAD_MS } });
  return d;
}

/**
 * The switch's own proof of a fire it asked for (the drill): its own order read back with status `scheduledCancel`
 * at `deadline`. Applied as a record of that one fire with its order (record-reconcile.ts `withRecord`): a guess for the
 * deadline becomes proof `orders`, a deadline not yet counted is counted with it, nothing else changes.
 */
export function ownFire(m: SwitchModel, now: Now, deadline: number, oid: number): Decision {
  const before = m.entry;
  if (utcDay(deadline) !== before.day) return {};
  const r = withRecord(
    before,
    {
      at: now.wall,
      schedules: [],
      fires: [{ deadline, day: utcDay(deadline), cancelledOrders: 1, proof: "orders" }],
      newestTx: null,
    },
    { now: now.wall, marginMs: 0, sent: [], confirmed: [], pushLeadMs: 0 },
  );
  if (r.entry === before) return {};
  const why = `the drill's own order ${oid} ended scheduledCancel at this deadline`;
  const counted: Decision = {
    set: { entry: r.entry },
    persist: true,
    events: [
      {
        type: "reconciled",
        changes: r.changes.map((c) => (c.field === "trigger" ? { ...c, reason: why } : c)),
        notes: [],
        marginMs: recordMargin(m),
        proofs: proofCounts(r.entry),
      },
    ],
  };
  if (isExhausted(r.entry) && !m.wasExhausted && m.phase.name === "running")
    return andThen(m, counted, (c) => exhausted(c, now, "the drill's fire is the day's last trigger"));
  return counted;
}

/** The daily limit reached: exhausted, and said (once until the budget is back: `limitReset`). */
export function exhausted(m: SwitchModel, now: Now, why: string, message?: string): Decision {
  return { ...limitReached(m, now, why, message), become: { to: "exhausted" } };
}

/** The daily limit reached, said once until the budget is back (`limitReset`). */
export function limitReached(m: SwitchModel, now: Now, why: string, message?: string): Decision {
  const e = m.entry;
  return {
    set: { wasExhausted: true },
    events: [
      {
        type: "limitReached",
        triggersToday: e.triggersToday,
        triggerLimit: e.limit,
        resumesAt: nextUtcMidnight(now.wall),
        why,
        ...(message ? { message } : {}),
      },
    ],
  };
}

/**
 * `withTrigger` for a deadline on a later UTC day than the ledger's, which the day clock (the earlier of two
 * disagreeing clocks) has not reached: the guess is kept in `later`, counted on its own day when the ledger rolls
 * there (ledger-model.ts `rollEntry`), and today's count stays as it is. Once per deadline, as `withTrigger`.
 */
function withTriggerForLaterDay(
  entry: LedgerEntry,
  { deadline, at, detail, alt }: { deadline: number; at: number; detail?: string | undefined; alt: number[] },
  size?: number,
): TriggerResult {
  const cleared = { ...entry, armedUntil: null, pendingUntil: null, pendingLatest: null };
  if (entry.lastCountedDeadline === deadline) return { entry: cleared, counted: false, reachedLimit: false };
  const others = [...new Set(alt.filter((d) => d !== deadline))].slice(-8);
  const guess: TriggerRecord = {
    deadline,
    proof: "guess",
    at: Math.floor(at),
    ...(others.length > 0 ? { alt: others } : {}),
  };
  const later = keptLater([...(entry.later ?? []).filter((t) => t.deadline !== deadline), guess]);
  const next = withHistory(
    { ...cleared, later, lastCountedDeadline: deadline },
    {
      at,
      type: "trigger",
      deadline,
      triggersToday: entry.triggersToday,
      detail: `${detail ? `${detail}; ` : ""}on ${utcDay(deadline)}, counted for that day (the earlier clock is still on ${entry.day})`,
    },
    size,
  );
  return { entry: next, counted: true, reachedLimit: atLimit(next) };
}

/** A new UTC day after the limit was reached: the budget is back (said once). */
export function limitReset(m: SwitchModel): Decision {
  const e = m.entry;
  if (!m.wasExhausted || isExhausted(e)) return {};
  return {
    set: { wasExhausted: false },
    events: [{ type: "limitReset", day: e.day, triggersToday: e.triggersToday }],
    ...(m.state === "exhausted" ? { become: { to: "holding" } } : {}),
  };
}

/**
 * The one count that stops the pushes: the exchange's own daily-limit refusal, on its day by both clocks (when
 * either says a new day has begun, a push is harmless and sent; the exchange refuses it again if its day has not
 * changed). A guessed or record-implied count at the limit fails readiness; the pushes go on.
 */
export function limitHolds(ctx: Ctx): boolean {
  const e = ctx.m.entry;
  return limitRefused(e) && utcDay(e.limitRefusedAt!) >= utcDay(Math.max(ctx.times.day, ctx.now.wall));
}
