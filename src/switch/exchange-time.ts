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
 *
 * Witnesses (issue 40). The local clock is never a witness. The exchange's time is verified when two outside
 * witnesses agree: a Date and the HyperEVM's latest block timestamp (from the chain's consensus, not from the host
 * that answers; `takeBlock`), or a Date and the exchange's acceptance of a push planned on that Date's time
 * (`agreeingVerdict`: the witness of setups with no block, a custom --api-url and no --rpc-url). The exchange's
 * own verdicts bound it: a push accepted says its time was at most cancel time − 5 s
 * when it was taken (`hi`), one refused as too early or expired says it was later (`lo`); a source outside the
 * bounds is no longer a candidate. While nothing is verified and the candidates (local clock, estimate, last Date,
 * last block) disagree, pushes are planned on the EARLIEST candidate (`Times.plan`: the schedule is never more
 * than deadline + one interval ahead under any of them; the exchange's answer then rules out the wrong ones),
 * lapses are judged on the LATEST (over, never under), and the UTC day on the earliest.
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

/**
 * A block timestamp is whole seconds, truncated, and the latest block is up to about a second old when served (small
 * blocks every second, docs/exchange-behaviour.md): the exchange's time at the answer lies in [ts, ts + 2 s + the
 * trip]. The reading is taken at ts + BLOCK_MID_MS, ± BLOCK_UNCERTAINTY_MS + half the round trip.
 */
export const BLOCK_MID_MS = 1_000;
export const BLOCK_UNCERTAINTY_MS = 1_500;
/**
 * Two witnesses agree when their readings of the exchange's time differ by at most the sum of their own
 * uncertainties (a Date ± 0.5 s + half its trip, a block ± 1.5 s + half its trip) + WITNESS_SLACK_MS (scheduling
 * and the monotonic drift between the two readings): at least 4 s for a Date and a block.
 */
export const WITNESS_SLACK_MS = 2_000;
/** A verdict bound is loose by this much (monotonic drift, when within the trip the exchange took it). */
export const BOUND_SLACK_MS = 1_000;
/** The exchange refuses a cancel time less than this ahead of its own time (docs/exchange-behaviour.md). */
export const EXCHANGE_MIN_LEAD_MS = 5_000;

export type TimeSource = "exchange" | "local";

/** One witness's reading: the exchange's time ≈ monotonic + `offset`, ± `uncertainty`, read at `mono`. */
export type Reading = { offset: number; uncertainty: number; mono: number };

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
  /** the last well-formed, plausible Date, applied or refused (a candidate while nothing is verified) */
  date?: Reading | null | undefined;
  /** the last HyperEVM block timestamp (the second witness) */
  block?: Reading | null | undefined;
  /** the exchange's offset is above this (a push refused as too early or expired) */
  lo?: number | null | undefined;
  /** the exchange's offset is at most this (a push accepted: its time was at most cancel time − 5 s) */
  hi?: number | null | undefined;
  /** the witnesses that verified the estimate last (`date+block`, `date+verdict`) */
  verifiedBy?: string | null | undefined;
  /** the time (as an offset) the last push the exchange accepted was planned on: a verdict a Date may agree with */
  accepted?: number | null | undefined;
  /**
   * the floor (the ledger's `updatedAt`) was ahead of the time two witnesses just verified, and was set back: said
   * once by the machine (`timeFloorRepaired`), then cleared
   */
  floorRepaired?: { from: number; to: number } | null | undefined;
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
   * the time pushes are planned on (cancel time, expiresAfter, nonces): the estimate when verified, else the
   * earliest candidate (its schedule is never further ahead than deadline + interval under any candidate)
   */
  plan: number;
  /** the latest candidate not ruled out (the plan's cancel time keeps the exchange's 5 s minimum on it if it can) */
  latest: number;
  /**
   * the time readiness is judged on: always the later of the two, even within SUSPECT_MS (a Date a few seconds
   * behind, not enough to be suspect, must not make the schedule look further ahead than the local clock says)
   */
  ready: number;
  /** E is verified: two witnesses agreed in this run (anchored), the exchange's verdicts allow it, and the local clock agrees */
  verified: boolean;
  /** E is verified by two witnesses, whatever the local clock says (what a day may be repaired on) */
  witnessed: boolean;
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
    date: null,
    block: null,
    lo: null,
    hi: null,
    verifiedBy: null,
    accepted: null,
  };
}

/** Whether an offset (± its uncertainty) lies within the exchange's verdict bounds. */
export function withinBounds(t: TimeModel, offset: number, uncertainty = 0): boolean {
  const slack = uncertainty + BOUND_SLACK_MS;
  if (t.lo != null && offset + slack <= t.lo) return false;
  if (t.hi != null && offset - slack > t.hi) return false;
  return true;
}

/** The candidates' offsets (± their uncertainty) at `mono`: every source the verdicts and the floor leave. */
function candidateOffsets(t: TimeModel, mono: number, wall: number): { offset: number; u: number }[] {
  const all: { offset: number; u: number }[] = [{ offset: t.offset, u: 0 }];
  if (Number.isFinite(wall)) all.push({ offset: wall - mono, u: 0 });
  if (t.date) all.push({ offset: t.date.offset, u: t.date.uncertainty });
  if (t.block) all.push({ offset: t.block.offset, u: t.block.uncertainty });
  return all.filter(
    (c) => withinBounds(t, c.offset, c.u) && mono + c.offset + c.u + WINDOW_SLACK_MS >= t.floor,
  );
}

/**
 * While nothing is verified: the time now on the latest candidate under which the exchange would have taken a push
 * for `cancelAt` asked at `askedMono` (its time then at most cancel time − 5 s, within the candidate's uncertainty
 * + BOUND_SLACK_MS), or null when no candidate would have (the push is refused as too early under every one: it
 * cannot fire). A push in flight planned on the earliest candidate lapses on a candidate that would have taken it,
 * never on a later one that would have refused it (a local clock 2 h behind and a true Date: the push planned on
 * the local clock was counted lapsed on the Date 5 s after it was asked for, with nothing able to fire).
 */
export function acceptingNow(
  t: TimeModel,
  mono: number,
  wall: number,
  cancelAt: number,
  askedMono: number,
): number | null {
  const taking = candidateOffsets(t, mono, wall).filter(
    (c) => askedMono + c.offset - c.u - BOUND_SLACK_MS <= cancelAt - EXCHANGE_MIN_LEAD_MS,
  );
  if (taking.length === 0) return null;
  return Math.floor(mono + Math.max(...taking.map((c) => c.offset)));
}

/** The candidates for the exchange's time at `mono` (ms): every source the verdicts and the floor leave. */
function candidates(t: TimeModel, mono: number, wall: number): number[] {
  const left = candidateOffsets(t, mono, wall).map((c) => Math.floor(mono + c.offset));
  if (left.length > 0) return left;
  // every source is ruled out: the bounds themselves, nearest the estimate
  let o = t.offset;
  if (t.lo != null && o <= t.lo) o = t.lo + 1;
  if (t.hi != null && o > t.hi) o = t.hi;
  return [Math.floor(mono + Math.max(o, t.floor - mono))];
}

/** The times at `now` (pure). A local clock that is not a number is ignored (E alone is used). */
export function timesAt(t: TimeModel, mono: number, wall: number): Times {
  const exchange = Math.floor(mono + t.offset);
  const local = Number.isFinite(wall) ? Math.floor(wall) : exchange;
  const disagreementMs = Math.abs(exchange - local);
  const suspect = disagreementMs > SUSPECT_MS;
  const witnessed = t.sampled && t.anchorMono !== null && withinBounds(t, t.offset);
  if (witnessed)
    return {
      exchange,
      local,
      // two witnesses agree: lapses and the day on their time too, whatever the local clock says
      act: exchange,
      day: exchange,
      // verified: pushes on the estimate, whatever the local clock says
      plan: exchange,
      latest: Math.max(exchange, local),
      ready: Math.max(exchange, local),
      verified: !suspect,
      witnessed,
      suspect,
      disagreementMs,
    };
  // Nothing verified: plan on the earliest candidate, judge lapses on the latest, the day on the earliest.
  const c = candidates(t, mono, wall);
  const earliest = Math.min(...c);
  const latest = Math.max(...c);
  const spread = latest - earliest;
  return {
    exchange,
    local,
    act: latest,
    day: earliest,
    plan: earliest,
    latest,
    ready: Math.max(latest, local),
    verified: false,
    witnessed: false,
    suspect: suspect || spread > SUSPECT_MS,
    disagreementMs: Math.max(disagreementMs, spread),
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
  // Remembered whatever the verdict below: a candidate while nothing is verified, and a witness the block may
  // confirm (`takeBlock`).
  const reading: Reading = { offset: mid - midMono, uncertainty, mono: midMono };
  const withDate = { ...t, date: reading };
  const byBlock = agreeingBlock(withDate, reading) ?? agreeingVerdict(withDate, reading);
  if (byBlock !== null) return byBlock;
  t = withDate;
  const estimate = midMono + t.offset;
  const error = mid - estimate;
  const local = Number.isFinite(wall) ? wall - (s.receivedMono - midMono) : null;
  const agreesWithLocal = local !== null && Math.abs(mid - local) <= SUSPECT_MS + uncertainty;
  const sampleOffset = mid - midMono;
  let verified: boolean;
  if (t.anchorMono !== null) {
    const tolerance = uncertainty + WINDOW_SLACK_MS + DRIFT_RATIO * Math.abs(midMono - t.anchorMono);
    // (the local clock agreeing with it changes nothing: the local clock alone never verifies)
    if (Math.abs(error) > tolerance)
      return refused(
        { ...t, alternative: sampleOffset },
        "outside_window",
        `the Date is ${Math.round(error)} ms off the verified time + elapsed (window ±${Math.round(tolerance)} ms)`,
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
    // Applied as a candidate, never verified by itself nor by the local clock: a second witness must agree (the
    // block, `agreeingBlock`; or the exchange's acceptance of a push planned on it, `agreeingVerdict`).
    verified = false;
  }
  const correct = Math.abs(error) > uncertainty + CORRECTION_THRESHOLD_MS;
  const offset = correct ? sampleOffset : t.offset;
  const next: TimeModel = {
    ...t,
    offset,
    sampled: true,
    anchorMono: verified ? midMono : t.anchorMono,
    floor: verified ? Math.max(t.floor, Math.floor(s.date)) : t.floor,
    verifiedBy: t.verifiedBy,
  };
  return { time: next, verdict: { kind: "applied", correctionMs: correct ? error : 0, verified } };
}

/** Two readings agree: within the sum of their uncertainties + WITNESS_SLACK_MS (see above). */
export function readingsAgree(a: Reading, b: Reading): boolean {
  return Math.abs(a.offset - b.offset) <= a.uncertainty + b.uncertainty + WITNESS_SLACK_MS;
}

/**
 * A Date that the last block agrees with (both within the verdicts' bounds), while nothing is verified: two
 * witnesses, the exchange's time is verified on the Date (the finer of the two), whatever the local clock says.
 */
function agreeingBlock(t: TimeModel, date: Reading): { time: TimeModel; verdict: SampleVerdict } | null {
  if (t.anchorMono !== null || !t.block || !readingsAgree(date, t.block)) return null;
  return verifyOn(t, date, "date+block");
}

/**
 * A Date the exchange's own verdict agrees with, while nothing is verified: the last push it accepted was planned
 * on this Date's time (within its uncertainty + WITNESS_SLACK_MS), and the Date lies within the verdicts' bounds.
 * The acceptance says the exchange's time was at most the plan + the push's lead − 5 s: a Date behind the exchange
 * by more than that would have been refused (too early), and one ahead of the local clock is never the plan (the
 * plan is the earliest candidate). This is the second witness where there is no block (a custom --api-url and no
 * --rpc-url); docs/daemon.md "What the switch believes about time".
 */
function agreeingVerdict(t: TimeModel, date: Reading): { time: TimeModel; verdict: SampleVerdict } | null {
  if (t.anchorMono !== null || t.accepted == null) return null;
  if (Math.abs(date.offset - t.accepted) > date.uncertainty + WITNESS_SLACK_MS) return null;
  // The acceptance bounds the exchange's time from above only: it says the Date is not too far BEHIND, never that
  // it is not ahead. A block that disagrees with the Date, and that the verdicts have not ruled out, is a witness
  // against it that the acceptance cannot overrule: with the local clock and the Date both 20 h ahead and a true
  // block, a push planned on the local clock before the block came was accepted, and the Date agreeing with its
  // plan was verified 20 h ahead (invariant IX). The candidates then decide: the plan moves to the earliest (the
  // block), whose acceptance rules the others out. (A wrong block the verdicts ruled out, a wrong RPC 12 h ahead
  // above an acceptance, 2 h behind below a refusal, speaks against nothing.)
  if (t.block && withinBounds(t, t.block.offset, t.block.uncertainty) && !readingsAgree(date, t.block))
    return null;
  return verifyOn(t, date, "date+verdict");
}

function verifyOn(t: TimeModel, r: Reading, by: string): { time: TimeModel; verdict: SampleVerdict } | null {
  if (!withinBounds(t, r.offset, r.uncertainty)) return null;
  // As `takeSample`: an estimate already within the reading's uncertainty (+ the threshold) is kept; moved onto
  // the reading's middle it could lead the exchange by up to that uncertainty (a lapse counted before it fired).
  const correct = Math.abs(r.offset - t.offset) > r.uncertainty + CORRECTION_THRESHOLD_MS;
  const correctionMs = correct ? r.offset - t.offset : 0;
  // The floor (the ledger's last verified write) ahead of what two witnesses now agree on was written on a wrong
  // clock (a local clock ahead believed before issue 40): set back to the verified time, said once. Left ahead, it
  // would rule out every candidate behind it whenever the verification is lost again, and refuse every Date.
  const low = Math.floor(r.mono + r.offset - r.uncertainty);
  const floorAhead = t.floor > r.mono + r.offset + r.uncertainty + WINDOW_SLACK_MS;
  return {
    time: {
      ...t,
      offset: correct ? r.offset : t.offset,
      sampled: true,
      anchorMono: r.mono,
      floor: floorAhead ? low : Math.max(t.floor, low),
      ...(floorAhead ? { floorRepaired: { from: t.floor, to: low } } : {}),
      verifiedBy: by,
      source: "exchange",
      refusals: 0,
    },
    verdict: { kind: "applied", correctionMs, verified: true },
  };
}

export type BlockSample = { timestampSec: number; sentMono: number; receivedMono: number };

/**
 * The HyperEVM's latest block timestamp (seconds), read over `sentMono..receivedMono`. Malformed or implausible:
 * refused. Otherwise remembered as a candidate; while nothing is verified it verifies the time when the last Date
 * agrees with it (two outside witnesses; the local clock is never one).
 */
export function takeBlock(
  t: TimeModel,
  b: BlockSample,
  wall: number,
): { time: TimeModel; verdict: SampleVerdict } {
  if (!Number.isFinite(b.timestampSec) || !Number.isFinite(b.sentMono) || !Number.isFinite(b.receivedMono))
    return refused(t, "not_a_date", "the block timestamp is not a number");
  if (b.receivedMono < b.sentMono) return refused(t, "not_a_date", "the round trip ends before it starts");
  const ts = b.timestampSec * 1000;
  if (!isPlausibleTime(ts))
    return refused(t, "out_of_range", `the block timestamp's year is outside 2020..2099 (${ts} ms)`);
  const midMono = (b.sentMono + b.receivedMono) / 2;
  const reading: Reading = {
    offset: ts + BLOCK_MID_MS - midMono,
    uncertainty: BLOCK_UNCERTAINTY_MS + (b.receivedMono - b.sentMono) / 2,
    mono: midMono,
  };
  const next = { ...t, block: reading };
  if (t.anchorMono !== null)
    return { time: next, verdict: { kind: "applied", correctionMs: 0, verified: true } };
  if (t.date && readingsAgree(t.date, reading)) {
    const v = verifyOn(next, t.date, "date+block");
    if (v) return v;
  }
  // (the local clock agreeing with the block verifies nothing: the local clock alone never verifies)
  void wall;
  return { time: next, verdict: { kind: "applied", correctionMs: 0, verified: false } };
}

/**
 * The exchange's verdict on a push, as a bound on its time: accepted (its time, when it took the push, was at most
 * cancel time − 5 s; it took it after `askedMono`), or refused as too early (later than cancel time − 5 s) or
 * expired (later than the expiresAfter, at least `than`) when it answered (before `answeredMono`). A bound that
 * contradicts the other one replaces it (the newest verdict wins); an estimate the bounds rule out is no longer
 * verified (the witnesses must agree again).
 */
export function timeVerdict(
  t: TimeModel,
  v:
    | { kind: "accepted"; cancelAt: number; askedMono: number; planMs?: number | undefined }
    | { kind: "later"; than: number; answeredMono: number },
): TimeModel {
  let lo = t.lo ?? null;
  let hi = t.hi ?? null;
  if (v.kind === "accepted") {
    const bound = v.cancelAt - EXCHANGE_MIN_LEAD_MS - v.askedMono;
    if (!Number.isFinite(bound)) return t;
    hi = hi === null ? bound : Math.min(hi, bound);
    if (lo !== null && lo >= hi + BOUND_SLACK_MS) lo = null;
  } else {
    const bound = v.than - v.answeredMono;
    if (!Number.isFinite(bound)) return t;
    lo = lo === null ? bound : Math.max(lo, bound);
    if (hi !== null && lo >= hi + BOUND_SLACK_MS) hi = null;
  }
  let next: TimeModel = { ...t, lo, hi };
  if (v.kind === "accepted" && v.planMs !== undefined && Number.isFinite(v.planMs))
    next = { ...next, accepted: v.planMs - v.askedMono };
  if (next.anchorMono !== null && !withinBounds(next, next.offset))
    return { ...next, anchorMono: null, verifiedBy: null };
  if (next.anchorMono === null && next.date) {
    const byVerdict = agreeingVerdict(next, next.date);
    if (byVerdict) return byVerdict.time;
  }
  return next;
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
  // The exchange's verdicts (bounds, taken before this) may already explain the refusal: when they leave the
  // estimate standing and rule out another candidate, that candidate was the time used (the latest, for nonces and
  // expiresAfter) and is no longer one (`candidates`); moving the estimate to it would adopt the refused time.
  if (
    (t.lo != null || t.hi != null) &&
    withinBounds(t, t.offset) &&
    ((Number.isFinite(wall) && !withinBounds(t, wall - mono)) ||
      (t.date != null && !withinBounds(t, t.date.offset, t.date.uncertainty)) ||
      (t.block != null && !withinBounds(t, t.block.offset, t.block.uncertainty)) ||
      (t.alternative !== null && !withinBounds(t, t.alternative)))
  )
    return { time: { ...t, refusals: 0 }, switched: false };
  const refusals = t.refusals + 1;
  if (refusals < SOURCE_SWITCH_REFUSALS) return { time: { ...t, refusals }, switched: false };
  const times = timesAt(t, mono, wall);
  // E is what was used (or both, bridged, with E the later): move E to the other source.
  let offset = t.offset;
  if (
    t.alternative !== null &&
    Math.abs(t.alternative - t.offset) > SUSPECT_MS &&
    withinBounds(t, t.alternative)
  )
    offset = t.alternative;
  else if (Number.isFinite(wall) && times.disagreementMs > SUSPECT_MS) offset = wall - mono;
  const source: TimeSource = t.source === "exchange" ? "local" : "exchange";
  // the readings that vouched for the refused time are no longer candidates
  const refusedTime = (r: Reading | null | undefined) =>
    r && Math.abs(r.offset - t.offset) <= SUSPECT_MS + r.uncertainty ? null : (r ?? null);
  return {
    time: {
      ...t,
      date: refusedTime(t.date),
      block: refusedTime(t.block),
      verifiedBy: null,
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
