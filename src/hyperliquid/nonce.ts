import type { Clock } from "../utils/clock.js";

/**
 * Nonces for one signer: `max(now, last + 1)`, so two requests in one millisecond never share a nonce
 * and nonces strictly increase (the exchange keeps the 100 highest per signer and refuses duplicates).
 * Keep one NonceSource per signer address, shared by everything that signs with that key.
 */
export class NonceSource {
  #last = 0;
  readonly #clock: Clock;

  /** `floor`: every nonce handed out is above it (a restart seeds it from the ledger: `nonceFloor`). */
  constructor(clock: Clock, floor = 0) {
    this.#clock = clock;
    this.#last = Math.max(0, Math.floor(floor));
  }

  next(): number {
    const now = Math.floor(this.#clock.now());
    this.#last = now > this.#last ? now : this.#last + 1;
    return this.#last;
  }

  /** The last nonce handed out (0 if none). */
  get last(): number {
    return this.#last;
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
 * The floor for a restarted daemon's nonces: the highest of the ledger's last write time and the last nonce it
 * recorded, + `spanMs`, the longest a nonce can follow the ledger's last write (`nonceSpanMs`). Every nonce of
 * the previous run is then at most this: nonces keep increasing across restarts even when the wall clock was
 * stepped back in between.
 */
export function nonceFloor(updatedAt: number | null, lastNonce: number | null, spanMs: number): number {
  const base = Math.max(updatedAt ?? 0, lastNonce ?? 0);
  return base <= 0 ? 0 : base + spanMs;
}

/**
 * How long after the ledger's last write the daemon can still sign: a push's write-ahead record is written (with
 * the nonces handed out so far) before the request is signed, within the push's budget (`requestTimeoutMs`);
 * unless the file already covers the push (src/daemon/ledger-model.ts `intentCovered`), which takes a confirmed
 * deadline on disk that has not passed yet, that is within `deadlineMs` of the write that confirmed it.
 */
export function nonceSpanMs({
  requestTimeoutMs,
  deadlineMs,
}: {
  requestTimeoutMs: number;
  deadlineMs: number;
}) {
  return requestTimeoutMs + deadlineMs;
}

/** Leeway for the nonce a push is signed with after its intent is handled (a few event-loop turns at most). */
export const NONCE_SIGN_SLACK_MS = 1_000;

/**
 * Whether a restart, seeded from a file written at `updatedAt` with `lastNonce` (`nonceFloor` with `spanMs`),
 * would start above a nonce of at most `upTo`: only then may a push be signed without a write of its own.
 */
export function floorCovers(
  updatedAt: number | null,
  lastNonce: number | null,
  spanMs: number,
  upTo: number,
): boolean {
  const floor = nonceFloor(updatedAt, lastNonce, spanMs);
  return floor > 0 && upTo < floor;
}
