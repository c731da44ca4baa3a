/**
 * The switch's time and its inputs: a refused input, the exchange's time and its witnesses (docs/daemon.md "What
 * the switch believes about time"), the ledger's day and time floor set back, the nonces re-derived.
 * Rows of the switch's one table (./index.ts `PUBLISH`).
 */
import { iso, line, type Rows } from "./line.js";

type Types =
  | "eventRefused"
  | "dateRefused"
  | "clockCorrected"
  | "clockSuspect"
  | "clockAgreed"
  | "clockSourceSwitched"
  | "clockVerified"
  | "clockUnverified"
  | "blockRefused"
  | "dayRepaired"
  | "timeFloorRepaired"
  | "clockStepped"
  | "nonceRederived";

export const CLOCK_ROWS: Rows<Types> = {
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
};
