/**
 * The exchange's time as the switch believes it: a bounded estimate, pure (no clock is read here). The machine
 * (machine.ts) keeps one `TimeModel` and feeds it the `Date` of every answer (with the request's round trip) as an
 * event; the driver only publishes the result (docs/daemon.md, "What the switch believes about time").
 *
 * Two sources, neither trusted blindly:
 * - L, the local wall clock (`now.wall`): may be stepped, may be a day off after a boot;
 * - E, the exchange estimate: monotonic time + `offset`, from the answers' `Date` headers. Answers from one host
 *   are not independent evidence (a proxy or CDN can be wrong on every answer), so a sample is applied only when
 *   it is plausible: within a window around the last verified time plus the monotonic time elapsed since, or in
 *   agreement with the local clock (two independent sources). Anything else (not a date, an absurd year, outside
 *   the window) is refused and logged, never applied.
 *
 * Readiness is always judged on the later of the two (`Times.ready`), so a disagreement below SUSPECT_MS only
 * shortens the protection it reports. When they disagree beyond SUSPECT_MS the switch is `suspect` and takes each
 * decision on the safe side of both: readiness fails; a lapse is counted, and the cancel time and expiresAfter are computed, on the later of the two
 * (ahead of both, so the exchange's 5 s minimum holds on either); the UTC day rolls only on the earlier of the two
 * (both agree it changed); nothing taken from that time is persisted as verified (updatedAt, the nonce floor).
 * A disagreement larger than BRIDGE_MS cannot be bridged without a schedule unreasonably far ahead: one source is
 * used (`source`), and repeated `expired` / `too early` / nonce-window refusals switch to the other one.
 */

/** Local and exchange time disagreeing by more than this: `clock.suspect` (the Date's 1 s resolution + transit). */
export const SUSPECT_MS = 5_000;
/** A disagreement up to this is bridged by taking the later of the two times; beyond it one source is chosen. */
export const BRIDGE_MS = 10 * 60_000;
/** Beyond the sample's own uncertainty, how far a Date may stray from the verified time + elapsed. */
export const WINDOW_SLACK_MS = 2_000;
/** Monotonic clocks drift: 0.1 % of the time elapsed since the anchor is added to the window. */
export const DRIFT_RATIO = 0.001;
/** A correction smaller than this (beyond the sample's uncertainty) is not made (the Date's 1 s resolution). */
export const CORRECTION_THRESHOLD_MS = 1_000;
/** Consecutive refusals that say the time used is wrong before the switch changes source. */
export const SOURCE_SWITCH_REFUSALS = 2;
/** The plausible range of any time (ms): a Date outside it is malformed (`Sat, 13 Sep 275760` is one). */
export const MIN_PLAUSIBLE_MS = Date.UTC(2020, 0, 1);
export const MAX_PLAUSIBLE_MS = Date.UTC(2100, 0, 1);

export type TimeSource = "exchange" | "local";

export type TimeModel = {
  /** the exchange estimate: E = mono + offset */
  offset: number;
  /** E came from an answer (until then it is the local clock at start, floored at the ledger's verified time) */
  sampled: boolean;
  /** monotonic ms of the last verified sample of this run (the window's anchor), or null */
  anchorMono: number | null;
  /** the exchange's time is never before this (the ledger's last verified write, then each verified sample) */
  floor: number;
  /** the offset of the last well-formed sample that was refused (the other source, should E prove wrong) */
  alternative: number | null;
  /** which source decides when the two disagree beyond BRIDGE_MS */
  source: TimeSource;
  suspect: boolean;
  /** consecutive refusals saying the time used is wrong (expired, too early, nonce out of window) */
  refusals: number;
};

export type Sample = { date: number; sentMono: number; receivedMono: number };

export type SampleVerdict =
  | { kind: "applied"; correctionMs: number; verified: boolean }
  | { kind: "refused"; reason: "not_a_date" | "out_of_range" | "outside_window"; detail: string };

/** The times one decision is taken on. */
export type Times = {
  /** the exchange estimate */
  exchange: number;
  /** the local wall clock */
  local: number;
  /** the time the switch acts on: lapse, cancel time, expiresAfter, nonces (the later of the two when bridged) */
  act: number;
  /** the time the UTC day is taken from (the earlier of the two when they disagree) */
  day: number;
  /**
   * the time readiness is judged on: always the later of the two, even within SUSPECT_MS (a Date a few seconds
   * behind, not enough to be suspect, must not make the schedule look further ahead than the local clock says)
   */
  ready: number;
  /** E is verified: sampled, anchored in this run, and not suspect (it may be persisted) */
  verified: boolean;
  suspect: boolean;
  disagreementMs: number;
};

export const isPlausibleTime = (ms: number): boolean =>
  Number.isFinite(ms) && ms >= MIN_PLAUSIBLE_MS && ms < MAX_PLAUSIBLE_MS;

/** The model at start: E is the local clock, never before the ledger's last verified time (`floor`). */
export function initialTime(mono: number, wall: number, floor: number | null): TimeModel {
  const f = floor !== null && Number.isFinite(floor) ? floor : 0;
  const start = Number.isFinite(wall) ? Math.max(wall, f) : f;
  return {
    offset: start - mono,
    sampled: false,
    anchorMono: null,
    floor: f,
    alternative: null,
    source: "exchange",
    suspect: false,
    refusals: 0,
  };
}

/** The times at `now` (pure). A local clock that is not a number is ignored (E alone is used). */
export function timesAt(t: TimeModel, mono: number, wall: number): Times {
  const exchange = Math.floor(mono + t.offset);
  const local = Number.isFinite(wall) ? Math.floor(wall) : exchange;
  const disagreementMs = Math.abs(exchange - local);
  const suspect = disagreementMs > SUSPECT_MS;
  let act = exchange;
  if (suspect)
    act =
      disagreementMs <= BRIDGE_MS ? Math.max(exchange, local) : t.source === "exchange" ? exchange : local;
  const day = suspect ? Math.min(exchange, local) : exchange;
  return {
    exchange,
    local,
    act,
    day,
    ready: Math.max(exchange, local),
    verified: t.sampled && t.anchorMono !== null && !suspect,
    suspect,
    disagreementMs,
  };
}

/**
 * One answer's Date. Applied only when well-formed and plausible: within the window around the last verified time
 * (+ monotonic time elapsed, + drift), or in agreement with the local clock, or (first sample of the run) not before
 * the ledger's verified time and within BRIDGE_MS of the local clock. Otherwise refused; the model keeps its offset
 * (and remembers the refused one as the alternative source).
 */
export function takeSample(
  t: TimeModel,
  s: Sample,
  wall: number,
): { time: TimeModel; verdict: SampleVerdict } {
  if (!Number.isFinite(s.date) || !Number.isFinite(s.sentMono) || !Number.isFinite(s.receivedMono))
    return refused(t, "not_a_date", "the Date header is not a valid HTTP date");
  if (s.receivedMono < s.sentMono) return refused(t, "not_a_date", "the round trip ends before it starts");
  if (!isPlausibleTime(s.date))
    return refused(t, "out_of_range", `the Date header's year is outside 2020..2099 (${s.date} ms)`);
  const midMono = (s.sentMono + s.receivedMono) / 2;
  // The Date truncates to the second: the exchange's time lies in [date, date + 1000) at some point of the trip.
  const mid = s.date + 500;
  const uncertainty = 500 + (s.receivedMono - s.sentMono) / 2;
  const estimate = midMono + t.offset;
  const error = mid - estimate;
  const local = Number.isFinite(wall) ? wall - (s.receivedMono - midMono) : null;
  const agreesWithLocal = local !== null && Math.abs(mid - local) <= SUSPECT_MS + uncertainty;
  const sampleOffset = mid - midMono;
  let verified: boolean;
  if (t.anchorMono !== null) {
    const tolerance = uncertainty + WINDOW_SLACK_MS + DRIFT_RATIO * Math.abs(midMono - t.anchorMono);
    if (Math.abs(error) > tolerance && !agreesWithLocal)
      return refused(
        { ...t, alternative: sampleOffset },
        "outside_window",
        `the Date is ${Math.round(error)} ms off the verified time + elapsed (window ±${Math.round(tolerance)} ms) and off the local clock`,
      );
    verified = true;
  } else {
    if (mid < t.floor - uncertainty - WINDOW_SLACK_MS)
      return refused(
        { ...t, alternative: sampleOffset },
        "outside_window",
        `the Date is before the last verified time in the ledger (${new Date(t.floor).toISOString()})`,
      );
    // Unverified, disagreeing with the local clock: taken only when it moves the time the switch acts on forward
    // (a lapse is then judged earlier, never later), by less than BRIDGE_MS; a Date behind it waits for evidence
    // (the exchange's own refusals switch the source: `timeRefused`).
    const agreesWithE = t.sampled && Math.abs(error) <= uncertainty + WINDOW_SLACK_MS;
    if (
      !agreesWithLocal &&
      !agreesWithE &&
      (local === null || Math.abs(mid - local) > BRIDGE_MS || error < 0)
    )
      return refused(
        { ...t, alternative: sampleOffset },
        "outside_window",
        `the Date is ${Math.round(mid - (local ?? mid))} ms off the local clock, ${Math.round(error)} ms off the estimate, and nothing verified it yet`,
      );
    // the first sample of the run is verified only when the local clock agrees (two independent sources)
    verified = agreesWithLocal;
  }
  const correct = Math.abs(error) > uncertainty + CORRECTION_THRESHOLD_MS;
  const offset = correct ? sampleOffset : t.offset;
  const next: TimeModel = {
    ...t,
    offset,
    sampled: true,
    anchorMono: verified ? midMono : t.anchorMono,
    floor: verified ? Math.max(t.floor, Math.floor(s.date)) : t.floor,
  };
  return { time: next, verdict: { kind: "applied", correctionMs: correct ? error : 0, verified } };
}

function refused(
  t: TimeModel,
  reason: "not_a_date" | "out_of_range" | "outside_window",
  detail: string,
): { time: TimeModel; verdict: SampleVerdict } {
  return { time: t, verdict: { kind: "refused", reason, detail } };
}

/**
 * A refusal that says the time used is wrong (`expired`, `too_early`, a nonce below or above the window). After
 * SOURCE_SWITCH_REFUSALS in a row the other source is taken: the local clock when E was used, else the last refused
 * sample (or the local clock). Returns the model and whether it switched.
 */
export function timeRefused(
  t: TimeModel,
  mono: number,
  wall: number,
): { time: TimeModel; switched: boolean } {
  const refusals = t.refusals + 1;
  if (refusals < SOURCE_SWITCH_REFUSALS) return { time: { ...t, refusals }, switched: false };
  const times = timesAt(t, mono, wall);
  // E is what was used (or both, bridged, with E the later): move E to the other source.
  let offset = t.offset;
  if (t.alternative !== null && Math.abs(t.alternative - t.offset) > SUSPECT_MS) offset = t.alternative;
  else if (Number.isFinite(wall) && times.disagreementMs > SUSPECT_MS) offset = wall - mono;
  const source: TimeSource = t.source === "exchange" ? "local" : "exchange";
  return {
    time: {
      ...t,
      offset,
      alternative: t.offset,
      // the old anchor vouched for the time that is now refused: the window starts again
      anchorMono: null,
      source,
      refusals: 0,
    },
    switched: true,
  };
}

/** An accepted push: the time used was good enough; the refusal streak ends. */
export function timeAccepted(t: TimeModel): TimeModel {
  return t.refusals === 0 ? t : { ...t, refusals: 0 };
}
