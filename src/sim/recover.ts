/**
 * Signer recovery for the simulator's hot path. The answer is always exactly what
 * `recoverL1ActionSignerSync` (ethers' secp256k1 recovery) gives; this only makes the common case cheap.
 *
 * Recovery multiplies by a fresh point R for every signature (≈2 ms of CPU here). But nearly every request
 * comes from a signer we have already seen, so we first check the signature against the cached public keys
 * of recent signers: with per-key precomputed multiplication tables, R' = (z/s)·G + (r/s)·P is two
 * fixed-base multiplications (≈0.6 ms). If R'.x ≡ r and R'.y has the parity that v announces, recovery with
 * that v yields exactly P (Q = r⁻¹(s·R − z·G) = P), so the result is identical; otherwise we fall back to
 * full recovery. Pulled in through @noble/curves 1.2.0, the exact version ethers 6.17 depends on.
 */
import { secp256k1 } from "@noble/curves/secp256k1";
import { SigningKey } from "ethers/crypto";
import {
  l1ActionDigest,
  type RecoverL1ActionSignerParameters,
  recoverL1ActionSignerSync,
} from "../hyperliquid/signing.js";

const Point = secp256k1.ProjectivePoint;
type Point = InstanceType<typeof Point>;
const N = secp256k1.CURVE.n;
const HALF_N = N >> 1n;

/** How many recent signers are tried before a full recovery (each try costs about a third of one). */
const MAX_TRIES = 3;
/** Cached keys (each holds a precomputed table of a few hundred KB). */
const MAX_KEYS = 16;

function mod(a: bigint): bigint {
  const r = a % N;
  return r >= 0n ? r : r + N;
}

function invert(a: bigint): bigint {
  let t = 0n;
  let newT = 1n;
  let r = N;
  let newR = mod(a);
  while (newR !== 0n) {
    const q = r / newR;
    [t, newT] = [newT, t - q * newT];
    [r, newR] = [newR, r - q * newR];
  }
  return mod(t);
}

export class SignerRecovery {
  /** lower-case address → public point, most recently used last */
  readonly #keys = new Map<string, Point>();
  hits = 0;
  misses = 0;

  /** Same contract as recoverL1ActionSignerSync, but returns the lower-case address. */
  recover(params: RecoverL1ActionSignerParameters, remember: (address: string) => boolean): string {
    const fast = this.#tryCached(params);
    if (fast) {
      this.hits++;
      return fast;
    }
    this.misses++;
    const address = recoverL1ActionSignerSync(params).toLowerCase();
    if (remember(address) && !this.#keys.has(address)) this.#learn(params, address);
    return address;
  }

  #tryCached(params: RecoverL1ActionSignerParameters): string | null {
    if (this.#keys.size === 0) return null;
    const { r: rh, s: sh, v } = params.signature;
    if (v !== 27 && v !== 28) return null;
    let r: bigint;
    let s: bigint;
    try {
      r = BigInt(rh);
      s = BigInt(sh);
    } catch {
      return null;
    }
    if (r <= 0n || r >= N || s <= 0n || s > HALF_N) return null;
    const z = mod(BigInt(l1ActionDigest(params)));
    const sInv = invert(s);
    const u1 = mod(z * sInv);
    const u2 = mod(r * sInv);
    const g = u1 === 0n ? Point.ZERO : Point.BASE.multiply(u1);
    const entries = [...this.#keys].reverse().slice(0, MAX_TRIES);
    for (const [address, P] of entries) {
      const R = g.add(P.multiply(u2));
      if (R.equals(Point.ZERO)) continue;
      const { x, y } = R.toAffine();
      if (x === r && Number(y & 1n) === v - 27) {
        this.#keys.delete(address);
        this.#keys.set(address, P);
        return address;
      }
    }
    return null;
  }

  #learn(params: RecoverL1ActionSignerParameters, address: string): void {
    const digest = l1ActionDigest(params);
    const pad = (h: string) => `0x${h.replace(/^0x/i, "").padStart(64, "0")}`;
    const { r, s, v } = params.signature;
    const publicKey = SigningKey.recoverPublicKey(digest, { r: pad(r), s: pad(s), v });
    const P = Point.fromHex(publicKey.slice(2));
    P._setWindowSize(8);
    if (this.#keys.size >= MAX_KEYS) {
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    this.#keys.set(address, P);
  }
}
