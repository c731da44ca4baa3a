/**
 * Signer recovery for the simulator's hot path. The answer is always exactly what
 * `recoverL1ActionSignerSync` (ethers' secp256k1 recovery) gives; this only makes the common cases cheap.
 *
 * 1. The same signed action again (a client's retry after a time-out): the signer recovered for that
 *    (digest, r, s, v) is remembered (a bounded map), so a repeat costs one hash.
 * 2. A signer we have seen: recovery multiplies by a fresh point R for every signature (~1.5-2 ms of CPU here).
 *    Nearly every request comes from a known signer, so the signature is first checked against the cached public
 *    keys of recent signers. Each key holds a precomputed comb table (src/hyperliquid/secp256k1.ts), so
 *    R' = (z/s)·G + (r/s)·P is 66 table additions. If R'.x = r and R'.y has the parity that v announces,
 *    recovery with that v yields exactly P (Q = r⁻¹(s·R − z·G) = P), so the result is identical; otherwise
 *    (or on a special case of the arithmetic) we fall back to full recovery.
 */
import { SigningKey } from "ethers/crypto";
import { CombTable, signedBy } from "../hyperliquid/secp256k1.js";
import {
  l1ActionDigestBytes,
  type RecoverL1ActionSignerParameters,
  recoverL1ActionSignerSync,
} from "../hyperliquid/signing.js";

/** How many recent signers are tried before a full recovery (each try costs about a sixth of one). */
const MAX_TRIES = 3;
/** Cached keys (each holds a precomputed table of ~0.4 MiB). */
const MAX_KEYS = 16;
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
  readonly #keys = new Map<string, CombTable>();
  /** digest ‖ r ‖ s ‖ v → lower-case address, oldest first */
  readonly #seen = new Map<string, string>();
  hits = 0;
  misses = 0;

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
    const entries = [...this.#keys].reverse().slice(0, MAX_TRIES);
    for (const [address, table] of entries) {
      const ok = signedBy(table, digest, sig);
      if (ok === null) return null;
      if (ok) {
        this.#keys.delete(address);
        this.#keys.set(address, table);
        return address;
      }
    }
    return null;
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
    this.#keys.set(address, new CombTable(x, y));
  }
}
