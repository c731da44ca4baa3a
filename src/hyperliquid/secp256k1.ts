/**
 * Deterministic secp256k1 signing (RFC 6979, low-s), byte for byte what ethers' `SigningKey.sign` gives (it calls
 * @noble/curves 1.2.0's `secp256k1.sign(digest, key, { lowS: true })`), only faster for the one thing the daemon
 * does all day: sign a 32-byte digest with the same key.
 *
 * Where the time goes and what this changes (BENCHMARKS.md, signing):
 * - k·G: noble multiplies with a window-8 wNAF table in projective coordinates and adds a "fake" point for every
 *   zero digit (64 complete additions). Here a fixed-base comb over signed 8-bit digits reads one affine point per
 *   window from a table (33 windows × 128 points = k·G in 33 mixed Jacobian+affine additions, 7M+4S each). The
 *   table is built once 64 signatures have been made (~20 ms once, ~0.4 MiB). Until then k·G comes from OpenSSL
 *   (node:crypto ECDH, ~0.25 ms, no table), so a cold start pays for neither this table nor noble's.
 * - RFC 6979's HMAC-DRBG runs on node:crypto's native HMAC-SHA256 instead of a JavaScript SHA-256.
 * - The private key is parsed once per key.
 * A point addition that meets a special case (equal or opposite points: probability ~2^-250) falls back to noble.
 *
 * Timing: like noble's, this is JavaScript BigInt arithmetic and not constant-time; the table lookups depend on the
 * nonce's digits. The daemon signs a few actions a minute and sends them over the network, where a microsecond
 * difference is lost in the noise; do not use this to sign for a party that can time it precisely.
 */
import { createECDH, createHmac } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1";
import { ArgumentError } from "../errors/argument.js";

/** The field prime p = 2^256 − 2^32 − 977, the group order n, and n/2 (low-s). */
export const P = secp256k1.CURVE.Fp.ORDER;
export const N = secp256k1.CURVE.n;
export const HALF_N = N >> 1n;
const GX = secp256k1.CURVE.Gx;
const GY = secp256k1.CURVE.Gy;

/** A recoverable signature: r and s as integers, the recovery bit as noble defines it (0..3). */
export type RawSignature = { r: bigint; s: bigint; recovery: number };

function modP(a: bigint): bigint {
  const r = a % P;
  return r < 0n ? r + P : r;
}

export function modN(a: bigint): bigint {
  const r = a % N;
  return r < 0n ? r + N : r;
}

/** Raised when the fast path meets a case it does not handle (the caller uses noble instead). */
export class SpecialCase extends Error {}

/**
 * a⁻¹ mod m (a ≠ 0 mod m) by Lehmer's variant of extended Euclid: the quotients are found on the leading 52 bits
 * in double arithmetic and applied to the BigInts a few dozen steps at a time, about half the time of one BigInt
 * division per step. The result is checked (a·a⁻¹ ≡ 1); a failed check (it should not happen) throws SpecialCase,
 * which the signer answers with noble and the simulator's check with a full recovery.
 */
export function invert(a: bigint, m: bigint): bigint {
  let v = a % m;
  if (v < 0n) v += m;
  const reduced = v;
  let u = m;
  let x1 = 0n; // u ≡ x1·a (mod m)
  let x2 = 1n; // v ≡ x2·a (mod m)
  while (v !== 0n) {
    const shift = Math.max(0, u.toString(16).length * 4 - 52);
    const bShift = BigInt(shift);
    let uh = Number(u >> bShift);
    let vh = Number(v >> bShift);
    let A = 1;
    let B = 0;
    let C = 0;
    let D = 1;
    for (;;) {
      if (vh + C === 0 || vh + D === 0) break;
      const q = Math.floor((uh + A) / (vh + C));
      if (q !== Math.floor((uh + B) / (vh + D))) break;
      let t = A - q * C;
      A = C;
      C = t;
      t = B - q * D;
      B = D;
      D = t;
      t = uh - q * vh;
      uh = vh;
      vh = t;
    }
    if (B === 0) {
      const q = u / v;
      const t = u - q * v;
      u = v;
      v = t;
      const tx = x1 - q * x2;
      x1 = x2;
      x2 = tx;
    } else {
      const bA = BigInt(A);
      const bB = BigInt(B);
      const bC = BigInt(C);
      const bD = BigInt(D);
      const nu = bA * u + bB * v;
      v = bC * u + bD * v;
      u = nu;
      const nx = bA * x1 + bB * x2;
      x2 = bC * x1 + bD * x2;
      x1 = nx;
    }
  }
  let r = x1 % m;
  if (r < 0n) r += m;
  if ((r * reduced) % m !== 1n) throw new SpecialCase();
  return r;
}

/** Jacobian point (x = X/Z², y = Y/Z³), mutable accumulator. */
export type Jacobian = { x: bigint; y: bigint; z: bigint };

/** 2^256 mod P (P = 2^256 − 2^32 − 977). */
const P_FOLD = (1n << 32n) + 977n;
const LOW_256 = (1n << 256n) - 1n;

/**
 * a mod P in [0, P) for |a| < 2^516 (a product of two values in (−4P, 4P)), without a division: a = hi·2^256 + lo
 * ≡ lo + hi·(2^32 + 977), twice (BigInt's >> floors and & takes the two's complement, so this holds for negative
 * a too), then one correction. About 15% cheaper than `% P` plus a sign fix.
 */
export function red(a: bigint): bigint {
  let r = (a & LOW_256) + (a >> 256n) * P_FOLD;
  r = (r & LOW_256) + (r >> 256n) * P_FOLD;
  if (r >= P) return r - P;
  if (r < 0n) return r + P;
  return r;
}

/**
 * acc += (x2, y2) (affine; y2 may be given as −y), madd-2007-bl with Z3 = 2·Z1·H. One reduction per product and
 * none per sum: the differences stay in (−2P, 2P) until they meet a product, which `red` takes signed.
 */
function addAffine(acc: Jacobian, x2: bigint, y2: bigint): void {
  const X1 = acc.x;
  const Y1 = acc.y;
  const Z1 = acc.z;
  const Z1Z1 = red(Z1 * Z1);
  const H = red(x2 * Z1Z1) - X1; // (−P, P): zero iff x2 ≡ X1/Z1²
  if (H === 0n) throw new SpecialCase();
  const r = (red(red(y2 * Z1) * Z1Z1) - Y1) << 1n; // (−2P, 2P)
  const I = red(H * H) << 2n; // [0, 4P)
  const J = red(H * I);
  const V = red(X1 * I);
  const X3 = red(r * r - J - (V << 1n));
  acc.x = X3;
  acc.y = red(r * (V - X3) - (red(Y1 * J) << 1n));
  acc.z = red((Z1 * H) << 1n);
}

/** 2·acc (dbl-2009-l, a = 0). */
function double(acc: Jacobian): void {
  const { x: X1, y: Y1, z: Z1 } = acc;
  const A = (X1 * X1) % P;
  const B = (Y1 * Y1) % P;
  const C = (B * B) % P;
  const D = modP(2n * ((X1 + B) * (X1 + B) - A - C));
  const E = (3n * A) % P;
  const F = (E * E) % P;
  const X3 = modP(F - 2n * D);
  acc.x = X3;
  acc.y = modP(E * (D - X3) - 8n * C);
  acc.z = (2n * ((Y1 * Z1) % P)) % P;
}

/** The window width of the tables the signer uses (signed 8-bit digits: 33 windows × 128 points, ~0.4 MiB). */
const SIGNER_BITS = 8;

/** Bits [offset, offset + bits) of a 256-bit integer given as 32 big-endian bytes (bits ≤ 16; zero past bit 255). */
function windowValue(k: Uint8Array, offset: number, bits: number): number {
  const low = offset >> 3;
  let v = 0;
  for (let i = 2; i >= 0; i--) {
    const byte = low + i;
    v = v * 256 + (byte < 32 ? k[31 - byte]! : 0);
  }
  return (v >>> (offset & 7)) & ((1 << bits) - 1);
}

/**
 * A fixed-base comb table of a point B over signed `bits`-bit digits: point (j+1)·2^(bits·w)·B at index
 * w·2^(bits−1) + j, affine, for the ⌊256/bits⌋ + 1 windows of a 256-bit scalar (one more window than the
 * digits need, for the last carry). Each window costs one mixed addition per scalar multiplication and
 * 2^(bits−1) points of memory: 8 bits = 33 windows × 128 points (~15 ms to build, ~0.4 MiB); 12 bits =
 * 22 windows × 2048 points (~0.25 s, ~4.5 MiB).
 */
export class CombTable {
  readonly bits: number;
  readonly windows: number;
  readonly points: number;
  readonly xs: bigint[];
  readonly ys: bigint[];

  constructor(x: bigint, y: bigint, bits = SIGNER_BITS) {
    if (!Number.isInteger(bits) || bits < 2 || bits > 16)
      throw new ArgumentError("comb width must be 2..16 bits");
    const WINDOWS = Math.floor(256 / bits) + 1;
    const POINTS = 1 << (bits - 1);
    this.bits = bits;
    this.windows = WINDOWS;
    this.points = POINTS;
    this.xs = new Array(WINDOWS * POINTS);
    this.ys = new Array(WINDOWS * POINTS);
    let bx = x;
    let by = y;
    const jac: Jacobian[] = new Array(POINTS);
    const prefix: bigint[] = new Array(POINTS);
    for (let w = 0; w < WINDOWS; w++) {
      const acc: Jacobian = { x: bx, y: by, z: 1n };
      jac[0] = { ...acc };
      for (let j = 1; j < POINTS; j++) {
        if (j === 1) double(acc);
        else addAffine(acc, bx, by);
        jac[j] = { ...acc };
      }
      // batch normalisation (Montgomery's trick): one inversion for the window's points
      let running = 1n;
      for (let j = 0; j < POINTS; j++) {
        prefix[j] = running;
        running = (running * jac[j]!.z) % P;
      }
      let inv = invert(running, P);
      for (let j = POINTS - 1; j >= 0; j--) {
        const zInv = (inv * prefix[j]!) % P;
        inv = (inv * jac[j]!.z) % P;
        const zInv2 = (zInv * zInv) % P;
        this.xs[w * POINTS + j] = (jac[j]!.x * zInv2) % P;
        this.ys[w * POINTS + j] = (((jac[j]!.y * zInv2) % P) * zInv) % P;
      }
      // next window's base: 2^bits·B = 2·(2^(bits−1)·B)
      const next: Jacobian = { ...jac[POINTS - 1]! };
      double(next);
      const zInv = invert(next.z, P);
      const zInv2 = (zInv * zInv) % P;
      bx = (next.x * zInv2) % P;
      by = (((next.y * zInv2) % P) * zInv) % P;
    }
  }

  /** acc + k·B, k as 32 big-endian bytes; returns the new accumulator (undefined = the point at infinity). */
  addMultiple(acc: Jacobian | undefined, k: Uint8Array): Jacobian | undefined {
    const { xs, ys } = this;
    let out = acc;
    this.eachDigit(k, (i, negative) => {
      const x = xs[i]!;
      if (out === undefined) out = { x, y: negative ? P - ys[i]! : ys[i]!, z: 1n };
      else addAffine(out, x, negative ? -ys[i]! : ys[i]!);
    });
    return out;
  }

  /**
   * k's signed digits, one window each, low first: calls `visit` with the table index of |digit|·(window's base)
   * and the digit's sign, for each non-zero digit.
   */
  eachDigit(k: Uint8Array, visit: (index: number, negative: boolean) => void): void {
    const { bits, windows, points } = this;
    const full = points * 2;
    let carry = 0;
    for (let w = 0; w < windows; w++) {
      let digit = windowValue(k, w * bits, bits) + carry;
      if (digit > points) {
        digit -= full;
        carry = 1;
      } else carry = 0;
      if (digit !== 0) visit(w * points + (digit > 0 ? digit : -digit) - 1, digit < 0);
    }
    // unreachable for k < 2^256 (the last window only takes the carry), kept as a guard
    if (carry !== 0) throw new SpecialCase();
  }
}

/** The affine point of a Jacobian accumulator. */
function toAffine(acc: Jacobian): { x: bigint; y: bigint } {
  const zInv = invert(acc.z, P);
  const zInv2 = (zInv * zInv) % P;
  return { x: (acc.x * zInv2) % P, y: (((acc.y * zInv2) % P) * zInv) % P };
}

/** Tables of G by comb width, each built once, on demand (the signer's 8-bit one; the simulator's wide one). */
const BASE_TABLES = new Map<number, CombTable>();

/** Whether the table of G of this width has been built (tests). */
export function baseTableBuilt(bits = SIGNER_BITS): boolean {
  return BASE_TABLES.has(bits);
}

/** The table of G of this width, built now if it was not (the signer's is normally built on its 65th signature). */
export function precomputeBaseTable(bits = SIGNER_BITS): CombTable {
  let table = BASE_TABLES.get(bits);
  if (!table) {
    table = new CombTable(GX, GY, bits);
    BASE_TABLES.set(bits, table);
  }
  return table;
}

type MultiplyBase = (k: Uint8Array) => { x: bigint; y: bigint };

/** k·G in affine coordinates, from the 32 big-endian bytes of k (1 ≤ k < n), with the comb table. */
function combMultiplyBase(k: Uint8Array): { x: bigint; y: bigint } {
  const acc = precomputeBaseTable().addMultiple(undefined, k);
  if (acc === undefined) throw new SpecialCase();
  return toAffine(acc);
}

let ecdh: ReturnType<typeof createECDH> | undefined;

/** k·G by OpenSSL (node:crypto): no table to build, for the first signatures. */
function nativeMultiplyBase(k: Uint8Array): { x: bigint; y: bigint } {
  ecdh ??= createECDH("secp256k1");
  ecdh.setPrivateKey(k);
  const point = ecdh.getPublicKey(); // 0x04 ‖ x ‖ y
  return { x: bytesToBigInt(point.subarray(1, 33)), y: bytesToBigInt(point.subarray(33, 65)) };
}

/** The uncompressed public key (0x04 ‖ x ‖ y, hex with 0x) of a private key, by OpenSSL: no table. */
export function publicKeyOf(privateKey: string): string {
  const key = createECDH("secp256k1");
  key.setPrivateKey(Buffer.from(privateKey.replace(/^0x/i, ""), "hex"));
  return `0x${key.getPublicKey("hex", "uncompressed")}`;
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`);
}

export function bigIntTo32Bytes(n: bigint): Buffer {
  return Buffer.from(n.toString(16).padStart(64, "0"), "hex");
}

function hmac(key: Uint8Array, ...parts: Uint8Array[]): Buffer {
  const h = createHmac("sha256", key);
  for (const p of parts) h.update(p);
  return h.digest();
}

const ZERO = Uint8Array.of(0);
const ONE = Uint8Array.of(1);

/**
 * Signatures (by any key) before the comb table of G is built. The table costs ~20 ms of CPU once and saves
 * ~0.15 ms per signature over OpenSSL's k·G: worth it for bursts (and the benchmark), not for the first minutes of
 * a daemon that pushes every 15 s (BENCHMARKS.md, CPU per hour).
 */
const TABLE_AFTER = 64;
let signaturesMade = 0;

/** One private key, parsed once; signs 32-byte digests. */
export class Secp256k1Signer {
  readonly #d: bigint;
  readonly #dBytes: Buffer;
  readonly #hexKey: string;

  /** `privateKey`: 0x + 64 hex digits (what ethers' SigningKey.privateKey holds). */
  constructor(privateKey: string) {
    this.#hexKey = privateKey;
    this.#dBytes = Buffer.from(privateKey.slice(2), "hex");
    this.#d = bytesToBigInt(this.#dBytes);
    if (this.#dBytes.length !== 32 || this.#d <= 0n || this.#d >= N)
      throw new ArgumentError("invalid private key");
  }

  /** Signs a 32-byte digest: RFC 6979 nonce, low-s, exactly as noble 1.2.0 / ethers 6 do. */
  sign(digest: Uint8Array): RawSignature {
    // Until a key has signed TABLE_AFTER times, k·G comes from OpenSSL: no table to build on a cold start, and
    // none at all for a daemon that signs a few times a minute (the table costs ~20 ms of CPU once).
    signaturesMade++;
    const multiply =
      !baseTableBuilt() && signaturesMade <= TABLE_AFTER ? nativeMultiplyBase : combMultiplyBase;
    try {
      return this.#sign(digest, multiply);
    } catch (error) {
      if (error instanceof SpecialCase) return this.#noble(digest);
      throw error;
    }
  }

  #noble(digest: Uint8Array): RawSignature {
    const sig = secp256k1.sign(digest, this.#hexKey.slice(2), { lowS: true });
    return { r: sig.r, s: sig.s, recovery: sig.recovery };
  }

  #sign(digest: Uint8Array, multiplyBase: MultiplyBase): RawSignature {
    if (digest.length !== 32) throw new ArgumentError("digest must be 32 bytes");
    const d = this.#d;
    // bits2int_modN(digest): the digest is exactly 256 bits, so no shift, then mod n
    const m = modN(bytesToBigInt(digest));
    const seed = Buffer.concat([this.#dBytes, bigIntTo32Bytes(m)]);
    // HMAC-DRBG (RFC 6979 §3.2), as noble's createHmacDrbg: V = 0x01…, K = 0x00…
    let v: Uint8Array = Buffer.alloc(32, 1);
    let key: Uint8Array = Buffer.alloc(32, 0);
    key = hmac(key, v, ZERO, seed);
    v = hmac(key, v);
    key = hmac(key, v, ONE, seed);
    v = hmac(key, v);
    for (;;) {
      v = hmac(key, v);
      const k = bytesToBigInt(v);
      if (k > 0n && k < N) {
        const q = multiplyBase(v);
        const r = modN(q.x);
        if (r !== 0n) {
          const s = modN(invert(k, N) * modN(m + r * d));
          if (s !== 0n) {
            let recovery = (q.x === r ? 0 : 2) | Number(q.y & 1n);
            let normS = s;
            if (s > HALF_N) {
              normS = N - s;
              recovery ^= 1;
            }
            return { r, s: normS, recovery };
          }
        }
      }
      // reseed without a seed (noble: k = h(0x00), v = h())
      key = hmac(key, v, ZERO);
      v = hmac(key, v);
    }
  }
}
