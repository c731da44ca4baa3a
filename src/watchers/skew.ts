/**
 * Clock-skew estimation (pure): local clock minus exchange clock, from the exchange's answers.
 *
 * Why it matters: nonces are the local time in ms and the exchange refuses them outside (T − 2 d, T + 1 d)
 * of its block time (docs/exchange-behaviour.md §8, §12), and every scheduleCancel deadline is computed from the local
 * clock: a clock that is 20 s fast arms a cancel 20 s earlier than intended (or too close to the 5 s
 * minimum), a slow one later. So the daemon warns when the estimate leaves the configured band.
 *
 * Sources, best first:
 * - the `time` (ms) of the clearinghouse states, taken to be the exchange's time at the midpoint of the
 *   request (sentAt..receivedAt); uncertainty ± half the round trip;
 * - the HTTP `Date` header, which has 1 s resolution (truncated), so the exchange's time lies in
 *   [date, date + 1000): we take date + 500 with an extra ± 500 ms of uncertainty.
 */
import { ArgumentError } from "../core/errors/argument.js";

export type SkewSample = {
  /** local minus exchange, ms */
  skewMs: number;
  /** half-width of the interval the true skew lies in, ms */
  uncertaintyMs: number;
  source: "time" | "date";
};

export type SampleSkewParameters = {
  /** local ms just before the request was sent */
  sentAt: number;
  /** local ms when the response arrived */
  receivedAt: number;
  /** the `time` fields of the states in the response (ms) */
  serverTimes?: readonly number[] | undefined;
  /** the HTTP Date header as ms (1 s resolution), when present */
  serverDate?: number | undefined;
};

/** One skew measurement from one request, or null when the response carried no usable time. */
export function sampleSkew({
  sentAt,
  receivedAt,
  serverTimes = [],
  serverDate,
}: SampleSkewParameters): SkewSample | null {
  if (!Number.isFinite(sentAt) || !Number.isFinite(receivedAt) || receivedAt < sentAt) return null;
  const midpoint = (sentAt + receivedAt) / 2;
  const halfRtt = (receivedAt - sentAt) / 2;
  const times = serverTimes.filter((t) => Number.isFinite(t) && t > 0);
  if (times.length > 0) {
    // the median resists one odd state (chunks answered at different moments share one sentAt..receivedAt)
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const spread = sorted[sorted.length - 1]! - sorted[0]!;
    return { skewMs: midpoint - median, uncertaintyMs: halfRtt + spread / 2, source: "time" };
  }
  if (serverDate !== undefined && Number.isFinite(serverDate) && serverDate > 0) {
    return { skewMs: midpoint - (serverDate + 500), uncertaintyMs: halfRtt + 500, source: "date" };
  }
  return null;
}

export type SkewEstimatorParameters = {
  /** smoothing weight of a new sample (exponential moving average); default 0.3 */
  alpha?: number;
  /** a sample further than this from the estimate replaces it at once (a clock step); default 10 s */
  stepMs?: number;
};

export type SkewEstimate = {
  skewMs: number;
  uncertaintyMs: number;
  source: "time" | "date";
  samples: number;
};

/**
 * A smoothed estimate: an exponential moving average of the samples, so one slow round trip does not
 * swing it. `date` samples are ignored once a `time` sample has been seen (they are ±500 ms coarser), and
 * a sample that differs by more than `stepMs` resets the estimate (the local clock was stepped).
 */
export class SkewEstimator {
  readonly #alpha: number;
  readonly #stepMs: number;
  #estimate: SkewEstimate | null = null;

  constructor({ alpha = 0.3, stepMs = 10_000 }: SkewEstimatorParameters = {}) {
    if (!(alpha > 0 && alpha <= 1)) throw new ArgumentError(`alpha must be in (0, 1], got ${alpha}`);
    this.#alpha = alpha;
    this.#stepMs = stepMs;
  }

  get estimate(): SkewEstimate | null {
    return this.#estimate;
  }

  add(sample: SkewSample | null): SkewEstimate | null {
    if (sample === null) return this.#estimate;
    const current = this.#estimate;
    if (current === null || (current.source === "date" && sample.source === "time")) {
      this.#estimate = { ...sample, samples: 1 };
    } else if (current.source === "time" && sample.source === "date") {
      return current;
    } else if (Math.abs(sample.skewMs - current.skewMs) > this.#stepMs) {
      this.#estimate = { ...sample, samples: 1 };
    } else {
      const a = this.#alpha;
      this.#estimate = {
        skewMs: current.skewMs + a * (sample.skewMs - current.skewMs),
        uncertaintyMs: current.uncertaintyMs + a * (sample.uncertaintyMs - current.uncertaintyMs),
        source: sample.source,
        samples: current.samples + 1,
      };
    }
    return this.#estimate;
  }
}

/**
 * Once-per-crossing state for a warning on |value| > limit: `update` answers "crossed" the first time the
 * value goes beyond the limit, "cleared" the first time it comes back within `clearRatio` × limit (a little
 * hysteresis so a value hovering at the limit does not flap), and null otherwise.
 */
export class CrossingLatch {
  #active = false;
  constructor(
    readonly limit: number,
    readonly clearRatio = 0.9,
  ) {}

  get active(): boolean {
    return this.#active;
  }

  update(magnitude: number): "crossed" | "cleared" | null {
    if (!this.#active && magnitude > this.limit) {
      this.#active = true;
      return "crossed";
    }
    if (this.#active && magnitude <= this.limit * this.clearRatio) {
      this.#active = false;
      return "cleared";
    }
    return null;
  }
}
