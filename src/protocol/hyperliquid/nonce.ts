import type { Clock } from "../../core/clock.js";

/**
 * Nonces for one signer: `max(now, last + 1)`, so two requests in one millisecond never share a nonce
 * and nonces strictly increase (the exchange keeps the 100 highest per signer and refuses duplicates).
 * Keep one NonceSource per signer address, shared by everything that signs with that key.
 */
export class NonceSource {
  #last = 0;
  #lastVerified = 0;
  readonly #clock: Clock;
  readonly #verified: (() => boolean) | undefined;

  /**
   * `floor`: every nonce handed out is above it (a restart seeds it from the ledger: `nonceFloor`). `verified`:
   * whether the clock's time is verified now; only nonces taken then count in `lastVerified` (what is persisted).
   */
  constructor(clock: Clock, floor = 0, verified?: () => boolean) {
    this.#clock = clock;
    this.#last = Math.max(0, Math.floor(floor));
    this.#lastVerified = this.#last;
    this.#verified = verified;
  }

  next(): number {
    const now = Math.floor(this.#clock.now());
    this.#last = now > this.#last ? now : this.#last + 1;
    if (this.#verified === undefined || this.#verified()) this.#lastVerified = this.#last;
    return this.#last;
  }

  /** The last nonce handed out (0 if none). */
  get last(): number {
    return this.#last;
  }

  /**
   * The last nonce handed out while the clock was verified: the only one that may seed a restart's floor (a nonce
   * taken from an unverified time, a day ahead, would make every later nonce "too high", across restarts).
   */
  get lastVerified(): number {
    return this.#lastVerified;
  }

  /** The exchange accepted `nonce`: it lies in the exchange's own window, so it may seed a restart's floor. */
  accepted(nonce: number): void {
    if (Number.isFinite(nonce) && nonce > this.#lastVerified && nonce <= this.#last)
      this.#lastVerified = nonce;
  }

  /**
   * Re-derives the next nonce from the exchange's own answer (`nonce too low N < MIN`: above MIN; `nonce too high
   * N > MAX`: from MAX − 1 day, the exchange's time): the next nonce is above `floor`, which may be below the last
   * one handed out (those from a clock that ran ahead were refused).
   */
  rebase(floor: number): void {
    if (!Number.isFinite(floor) || floor < 0) return;
    this.#last = Math.floor(floor);
    this.#lastVerified = Math.min(this.#lastVerified, this.#last);
  }
}

/** One NonceSource per signer address (lower-case), created on first use. */
export class NonceRegistry {
  readonly #sources = new Map<string, NonceSource>();
  readonly #clock: Clock;
  constructor(clock: Clock) {
    this.#clock = clock;
  }
  for(signer: string): NonceSource {
    const key = signer.toLowerCase();
    let source = this.#sources.get(key);
    if (!source) {
      source = new NonceSource(this.#clock);
      this.#sources.set(key, source);
    }
    return source;
  }
}

/**
 * What a restart's nonce floor allows for (docs/daemon.md, "The ledger"): a push written ahead is signed within
 * `requestTimeoutMs` of its write; a push the file already covers (src/switch/write-ahead.ts,
 * no write of its own) is signed before the confirmed deadline on disk passes, so within `deadlineMs` more.
 */
export type NonceSpan = { requestTimeoutMs: number; deadlineMs: number };

/**
 * The floor for a restarted daemon's nonces, from the ledger's last write (`updatedAt`, on the exchange's clock)
 * and the highest nonce it recorded (`lastNonce`). Every nonce of the previous run is below it:
 * - those handed out before the write are at most `lastNonce`, and the push written ahead signs right after its
 *   write: `lastNonce + 1`, or the clock within `requestTimeoutMs` of `updatedAt`;
 * - a push the file covered signs at most `updatedAt + requestTimeoutMs + deadlineMs` (`floorCovers` holds the
 *   push to that).
 * Nonces keep increasing across restarts even when the wall clock was stepped back in between. The deadline is
 * added to `updatedAt` only, which follows the clock: restarts in a tight loop move the floor at most
 * `requestTimeoutMs` past the last recorded nonce each, never a deadline each (with it on `lastNonce` too, every
 * quick restart would start its nonces a minute further ahead, until the exchange's one-day window refused them).
 */
export function nonceFloor(
  updatedAt: number | null,
  lastNonce: number | null,
  { requestTimeoutMs, deadlineMs }: NonceSpan,
): number {
  if ((updatedAt ?? 0) <= 0 && (lastNonce ?? 0) <= 0) return 0;
  return Math.max((updatedAt ?? 0) + requestTimeoutMs + deadlineMs, (lastNonce ?? 0) + requestTimeoutMs);
}

/** Leeway for the nonce a push is signed with after its intent is handled (a few event-loop turns at most). */
export const NONCE_SIGN_SLACK_MS = 1_000;

/**
 * Whether a push may be signed with a nonce of at most `upTo` without a write of its own: a restart seeded from
 * the file written at `updatedAt` starts above it (`nonceFloor`'s second case).
 */
export function floorCovers(updatedAt: number | null, span: NonceSpan, upTo: number): boolean {
  return updatedAt !== null && updatedAt > 0 && upTo < updatedAt + span.requestTimeoutMs + span.deadlineMs;
}
