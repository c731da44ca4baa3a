/**
 * The simulator's signature check against a known signer's public key (src/sim/recover.ts): u1·G + u2·P from the
 * fixed-base comb tables of src/hyperliquid/secp256k1.ts, the additions in WebAssembly (src/sim/field-wasm.ts)
 * where it is available and in BigInt where it is not (node --jitless). Simulator-only: the daemon's signer
 * neither loads nor evaluates any of it.
 */
import {
  bigIntTo32Bytes,
  bytesToBigInt,
  type CombTable,
  HALF_N,
  invert,
  type Jacobian,
  modN,
  N,
  P,
  precomputeBaseTable,
  SpecialCase,
} from "../hyperliquid/secp256k1.js";
import { type FieldWasm, fieldWasm } from "./field-wasm.js";

/** The WebAssembly field (null where WebAssembly is unavailable, e.g. node --jitless: the BigInt code runs). */
let wasmField: FieldWasm | null | undefined;
function wasmOrNull(): FieldWasm | null {
  if (wasmField === undefined) {
    try {
      wasmField = fieldWasm();
    } catch {
      wasmField = null;
    }
  }
  return wasmField;
}
let wasmAcc: number | undefined;

/** Each table's points in WebAssembly memory (x ‖ y, 64 bytes each), copied on first use. */
const wasmTables = new WeakMap<CombTable, number>();
/** A collected table's region goes back to the allocator. */
const reclaim = new FinalizationRegistry<{ at: number; bytes: number }>(({ at, bytes }) => {
  wasmField?.free(at, bytes);
});

function wasmPoints(f: FieldWasm, table: CombTable): number {
  const known = wasmTables.get(table);
  if (known !== undefined) return known;
  const bytes = table.xs.length * 64;
  const at = f.alloc(bytes);
  for (let i = 0; i < table.xs.length; i++) {
    f.write(at + 64 * i, table.xs[i]!);
    f.write(at + 64 * i + 32, table.ys[i]!);
  }
  wasmTables.set(table, at);
  reclaim.register(table, { at, bytes });
  return at;
}

/**
 * The accumulator at `acc` in WebAssembly memory (X ‖ Y ‖ Z; holding a point when `started`) += k·B, B the
 * table's point, k as 32 big-endian bytes. Returns whether it holds a point afterwards. Throws SpecialCase on
 * equal x (the caller recovers in full).
 */
function addMultipleWasm(
  f: FieldWasm,
  table: CombTable,
  acc: number,
  started: boolean,
  k: Uint8Array,
): boolean {
  const points = wasmPoints(f, table);
  let has = started;
  table.eachDigit(k, (i, negative) => {
    const pt = points + 64 * i;
    if (!has) {
      f.copy(acc, pt, 64);
      if (negative) f.neg(acc + 32, acc + 32);
      f.write(acc + 64, 1n);
      has = true;
    } else if (f.madd(acc, pt, negative ? 1 : 0) !== 0) throw new SpecialCase();
  });
  return has;
}

/**
 * Whether `signature` over `digest` recovers exactly to the public key whose table is `key` (recovery with
 * v = 27/28 takes R = (r, y of v's parity), so this checks u1·G + u2·P = R: x equal to r, not only mod n, and
 * y's parity). `null` when the check hit a special case: the caller must recover in full. `base` is a comb
 * table of G (default: the 8-bit one; the simulator passes a wider one once it is busy).
 */
export function signedBy(
  key: CombTable,
  digest: Uint8Array,
  signature: { r: bigint; s: bigint; v: number },
  base: CombTable = precomputeBaseTable(),
): boolean | null {
  const { r, s, v } = signature;
  if (v !== 27 && v !== 28) return false;
  if (r <= 0n || r >= N || s <= 0n || s > HALF_N) return null;
  const z = modN(bytesToBigInt(digest));
  try {
    const sInv = invert(s, N);
    const u1 = bigIntTo32Bytes(modN(z * sInv));
    const u2 = bigIntTo32Bytes(modN(r * sInv));
    const u1Zero = u1.every((b) => b === 0);
    let acc: Jacobian | undefined;
    const f = wasmOrNull();
    if (f) {
      wasmAcc ??= f.alloc(96);
      let started = u1Zero ? false : addMultipleWasm(f, base, wasmAcc, false, u1);
      started = addMultipleWasm(f, key, wasmAcc, started, u2);
      if (started) acc = { x: f.read(wasmAcc), y: f.read(wasmAcc + 32), z: f.read(wasmAcc + 64) };
    } else {
      acc = u1Zero ? undefined : base.addMultiple(undefined, u1);
      acc = key.addMultiple(acc, u2);
    }
    if (acc === undefined) return false;
    // x = X/Z² equals r iff X = r·Z² (no inversion needed to refuse); y's parity needs the affine y
    const zz = (acc.z * acc.z) % P;
    if ((r * zz) % P !== acc.x) return false;
    const zInv = invert(acc.z, P);
    const y = (((acc.y * zInv) % P) * ((zInv * zInv) % P)) % P;
    return Number(y & 1n) === v - 27;
  } catch (error) {
    if (error instanceof SpecialCase) return null;
    throw error;
  }
}
