/**
 * Signer recovery for the simulator's hot path. The answer is always exactly what
 * `recoverL1ActionSignerSync` (ethers' secp256k1 recovery) gives; this only makes the common cases cheap.
 *
 * 1. The same signed action again (a client's retry after a time-out): the signer recovered for that
 *    (digest, r, s, v) is remembered (a bounded map), so a repeat costs one hash.
 * 2. A signer we have seen: recovery multiplies by a fresh point R for every signature (~1.5-2 ms of CPU here).
 *    Nearly every request comes from a known signer, so the signature is first checked against the cached public
 *    keys of recent signers. Each key holds a precomputed comb table (src/hyperliquid/secp256k1.ts), so
 *    R' = (z/s)·G + (r/s)·P is 66 table additions (44 once the tables are widened, see BASE_BITS). If R'.x = r and R'.y has the parity that v announces,
 *    recovery with that v yields exactly P (Q = r⁻¹(s·R − z·G) = P), so the result is identical; otherwise
 *    (or on a special case of the arithmetic) we fall back to full recovery. The additions run in WebAssembly
 *    (src/sim/field-wasm.ts: ~0.9 µs each against ~4.5 µs in BigInt) wherever WebAssembly is available.
 */

import { SigningKey } from "ethers/crypto";
import { CombTable, precomputeBaseTable } from "../hyperliquid/secp256k1.js";
import {
  l1ActionDigestBytes,
  type RecoverL1ActionSignerParameters,
  recoverL1ActionSignerSync,
} from "../hyperliquid/signing.js";
import { signedBy } from "./check.js";

/** How many recent signers are tried before a full recovery (each try costs about a sixth of one). */
const MAX_TRIES = 3;
/** Cached keys (each holds a precomputed table, see KEY_BITS). */
const MAX_KEYS = 16;
/**
 * Comb widths (src/hyperliquid/secp256k1.ts): a check costs one mixed addition per window of G's table plus one per
 * window of the key's. Until a table has earned its keep, the narrow 8-bit ones are used (33 windows; G's is the
 * signer's, shared): a simulator in a test that sees a few signatures builds nothing more. After WIDEN_AFTER fast
 * checks, G gets its own 12-bit table (22 windows × 2048 points, ~4.5 MiB, ~0.25 s of CPU once) and, after
 * WIDEN_AFTER fast checks of the same key, that key a 12-bit one too (~4.5 MiB, ~0.2 s once): 44 additions per
 * check instead of 66. Measured (issue 15, in-process, 1,000 checks): 10-bit key tables 205-265 µs per check,
 * 12-bit 187-231 µs; 13-bit tables (twice the memory and build time) were within the noise of 12-bit ones. At
 * most MAX_KEYS busy signers hold a wide table (16 × 4.5 MiB).
 */
const BASE_BITS = 12;
/** The signer's width (src/hyperliquid/secp256k1.ts), the default table of G. */
const NARROW_BITS = 8;
const KEY_BITS = 12;
const WIDEN_AFTER = 64;

type CachedKey = { table: CombTable; checks: number };

/** Remembered (digest, signature) → signer answers. */
const MAX_SIGNATURES = 4096;

const pad = (h: string) => `0x${h.replace(/^0x/i, "").padStart(64, "0")}`;

function parseSignature(signature: {
  r: string;
  s: string;
  v: number;
}): { r: bigint; s: bigint; v: number } | null {
  try {
    return { r: BigInt(signature.r), s: BigInt(signature.s), v: signature.v };
  } catch {
    return null;
  }
}

export class SignerRecovery {
  /** lower-case address → comb table of its public key, most recently used last */
  readonly #keys = new Map<string, CachedKey>();
  /** digest ‖ r ‖ s ‖ v → lower-case address, oldest first */
  readonly #seen = new Map<string, string>();
  readonly #widenAfter: number;
  /** fast checks made; past `widenAfter`, G's wide table (one per process, precomputeBaseTable) is used */
  #fastChecks = 0;
  hits = 0;
  misses = 0;

  /** `widenAfter`: fast checks before the wide tables are built (default WIDEN_AFTER; tests use 0). */
  constructor(options: { widenAfter?: number } = {}) {
    this.#widenAfter = options.widenAfter ?? WIDEN_AFTER;
  }

  /** Comb widths of the tables the next check of `address` would use (tests). */
  tableBits(address: string): { base: number; key: number } | null {
    const key = this.#keys.get(address.toLowerCase());
    if (!key) return null;
    return { base: this.#baseBits(this.#fastChecks + 1), key: key.table.bits };
  }

  /** Same contract as recoverL1ActionSignerSync, but returns the lower-case address. */
  recover(params: RecoverL1ActionSignerParameters, remember: (address: string) => boolean): string {
    const digest = l1ActionDigestBytes(params);
    const { r, s, v } = params.signature;
    const id = `${Buffer.from(digest).toString("hex")}|${r}|${s}|${v}`;
    const seen = this.#seen.get(id);
    if (seen !== undefined) {
      this.hits++;
      return seen;
    }
    const fast = this.#tryCached(digest, params.signature);
    if (fast) {
      this.hits++;
      this.#remember(id, fast);
      return fast;
    }
    this.misses++;
    const address = recoverL1ActionSignerSync(params).toLowerCase();
    if (remember(address)) {
      if (!this.#keys.has(address)) this.#learn(digest, params.signature, address);
      this.#remember(id, address);
    }
    return address;
  }

  #remember(id: string, address: string): void {
    if (this.#seen.size >= MAX_SIGNATURES) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
    this.#seen.set(id, address);
  }

  #tryCached(digest: Uint8Array, signature: { r: string; s: string; v: number }): string | null {
    if (this.#keys.size === 0) return null;
    const sig = parseSignature(signature);
    if (!sig) return null;
    const base = precomputeBaseTable(this.#baseBits(++this.#fastChecks));
    // most recently used first
    const entries = this.#keys.size === 1 ? [...this.#keys] : [...this.#keys].reverse().slice(0, MAX_TRIES);
    for (const [address, key] of entries) {
      const ok = signedBy(key.table, digest, sig, base);
      if (ok === null) return null;
      if (ok) {
        this.#keys.delete(address);
        this.#keys.set(address, key);
        if (++key.checks >= this.#widenAfter && key.table.bits < KEY_BITS) {
          // the table's first point is 1·P
          key.table = new CombTable(key.table.xs[0]!, key.table.ys[0]!, KEY_BITS);
        }
        return address;
      }
    }
    return null;
  }

  /** Comb width of G's table for fast check number `n`: 8 bits until `widenAfter` checks were made, then wide. */
  #baseBits(n: number): number {
    return n > this.#widenAfter ? BASE_BITS : NARROW_BITS;
  }

  #learn(digest: Uint8Array, signature: { r: string; s: string; v: number }, address: string): void {
    const { r, s, v } = signature;
    const publicKey = SigningKey.recoverPublicKey(digest, { r: pad(r), s: pad(s), v });
    // 0x04 ‖ x ‖ y
    const x = BigInt(`0x${publicKey.slice(4, 68)}`);
    const y = BigInt(`0x${publicKey.slice(68, 132)}`);
    if (this.#keys.size >= MAX_KEYS) {
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    this.#keys.set(address, { table: new CombTable(x, y), checks: 0 });
  }
}
