/**
 * The machine's time block: each step takes the clock and block samples and the exchange's verdicts into
 * `m.time` (exchange-time.ts, pure) before any decision, and repairs what a wrong clock wrote once two witnesses
 * verify the time (issue 40; docs/daemon.md "What the switch believes about time").
 */
import { utcDay } from "../core/clock.js";
import type { SwitchEvent } from "../core/switch-events.js";
import type { Ctx } from "./context.js";
import {
  EXCHANGE_MIN_LEAD_MS,
  isPlausibleTime,
  type Sample,
  takeBlock,
  takeSample,
  timeVerdict,
} from "./exchange-time.js";
import { type Event, inflight, type Now, type SwitchModel } from "./model.js";
import { readRecord } from "./triggers.js";

/**
 * What a wrong clock wrote is repaired (issue 40): a ledger day ahead of the time two witnesses just verified was
 * dated on a clock ahead (the local clock alone, a day or more ahead). Its day is set back to the verified one, its
 * count kept as it is (never fewer than counted: the guesses stay until the exchange's record, read now, says
 * otherwise; the day's count then follows the record), logged and audited (`ledger.day_repaired`). The nonce floor
 * is not touched: the exchange keeps the nonces a signer used, and `nonce.rederived` is the way forward.
 */
export function repairDay(ctx: Ctx) {
  const m = ctx.m;
  // the time floor too (exchange-time.ts `verifyOn`), said once
  const f = m.time?.floorRepaired;
  if (m.time && f) {
    m.time = { ...m.time, floorRepaired: null };
    ctx.emit({ type: "timeFloorRepaired", from: f.from, to: f.to });
  }
  const day = utcDay(ctx.times.exchange);
  if (!(m.entry.day > day)) return;
  const from = m.entry.day;
  m.entry = { ...m.entry, day };
  ctx.persist = true;
  ctx.emit({ type: "dayRepaired", from, to: day, triggersToday: m.entry.triggersToday });
  ctx.apply(readRecord(m, "the ledger's day was repaired"));
}

/**
 * The exchange's verdict on the push in flight, as a bound on its time (exchange-time.ts `timeVerdict`), taken
 * before the step's times: an accepted push rules out the candidates later than its cancel time − 5 s, a push
 * refused as too early or expired those earlier than what it said.
 */
export function verdictOf(m: SwitchModel, ev: Event, now: Now) {
  if (ev.type !== "pushConfirmed" && ev.type !== "pushFailed") return;
  const f = inflight(m);
  if (!f || f.id !== ev.id) return;
  if (ev.type === "pushConfirmed")
    m.time = timeVerdict(m.time!, {
      kind: "accepted",
      cancelAt: f.cancelAt,
      askedMono: f.askedMono,
      planMs: f.planMs,
    });
  else if (ev.kind === "too_early")
    m.time = timeVerdict(m.time!, {
      kind: "later",
      than: f.cancelAt - EXCHANGE_MIN_LEAD_MS,
      answeredMono: now.mono,
    });
  else if (ev.kind === "expired" && f.planMs !== undefined)
    // expiresAfter was signed at the plan's time when it left, no earlier than when it was asked for
    m.time = timeVerdict(m.time!, {
      kind: "later",
      than: f.planMs + m.cfg.requestTimeoutMs,
      answeredMono: now.mono,
    });
  else if (ev.kind === "nonce" && ev.nonceDetail === "too_high") {
    // "nonce too high N > MAX" names MAX = T + 1 day, T the exchange's time when it judged the request, after it
    // was asked for: the exchange's time then was at most T, as a push it accepted for T + 5 s would say. Taken
    // here, while the push in flight is known (its `askedMono`); the lower bound is taken with the refusal
    // (context.ts `timeRefusal`). Without it a local clock 3 d ahead, whose nonces the exchange refused as too
    // high, stayed the latest candidate: every push planned on the Date was counted lapsed at once on it (seed
    // 20261129 with the start offsets drawn).
    const max = nonceBound(ev.message);
    if (max !== null)
      m.time = timeVerdict(m.time!, {
        kind: "accepted",
        cancelAt: max - NONCE_AHEAD_MS + EXCHANGE_MIN_LEAD_MS,
        askedMono: f.askedMono,
      });
  }
}

/** How far ahead of its time the exchange takes a nonce: "nonce too high N > MAX" names its time + this. */
const NONCE_AHEAD_MS = 86_400_000;

/** The bound a nonce refusal names ("nonce too high N > MAX", "nonce too low N < MIN"), or null. */
function nonceBound(message: string): number | null {
  const bound = /(?:<|>)\s*(\d{10,16})/.exec(message);
  const b = bound ? Number(bound[1]) : Number.NaN;
  return isPlausibleTime(b) ? b : null;
}

/** Takes one block timestamp into `m.time` (exchange-time.ts). Returns whether it was applied. */
export function takeBlockTime(
  m: SwitchModel,
  ev: Extract<Event, { type: "blockSample" }>,
  now: Now,
  out: SwitchEvent[],
): boolean {
  const { time, verdict } = takeBlock(
    m.time!,
    { timestampSec: ev.timestampSec, sentMono: ev.sentMono, receivedMono: ev.receivedMono },
    now.wall,
  );
  m.time = time;
  if (verdict.kind === "refused") {
    out.push({ type: "blockRefused", reason: verdict.reason, detail: verdict.detail });
    return false;
  }
  return true;
}

/** Takes one Date sample into `m.time` (exchange-time.ts). Returns whether it was applied. */
export function takeDate(
  m: SwitchModel,
  ev: Extract<Event, { type: "clockSample" }>,
  now: Now,
  out: SwitchEvent[],
): boolean {
  const sample: Sample = { date: ev.date, sentMono: ev.sentMono, receivedMono: ev.receivedMono };
  const { time, verdict } = takeSample(m.time!, sample, now.wall);
  m.time = time;
  if (verdict.kind === "refused") {
    out.push({
      type: "dateRefused",
      reason: verdict.reason,
      date: Number.isFinite(ev.date) ? ev.date : null,
      detail: verdict.detail,
    });
    return false;
  }
  if (verdict.correctionMs !== 0 && m.time.sampled)
    out.push({
      type: "clockCorrected",
      correctionMs: Math.round(verdict.correctionMs),
      verified: verdict.verified,
    });
  return true;
}
