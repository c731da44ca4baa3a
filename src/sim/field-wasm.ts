/**
 * secp256k1 field arithmetic (mod p = 2^256 − 2^32 − 977) and the mixed point addition of the comb tables
 * (src/hyperliquid/secp256k1.ts), in WebAssembly generated here at run time: no binary, no build step, no
 * toolchain. BigInt arithmetic allocates a heap object per operation (~80 ns per 256-bit product, ~170 ns per
 * reduction on the machine of BENCHMARKS.md); here an element is eight 32-bit limbs in linear memory and a product
 * is 64 exact u32×u32 → u64 multiplications. Used by the simulator's signature checks (src/sim/recover.ts), where
 * the additions are most of the CPU an action costs; signing keeps the BigInt code.
 *
 * Layout of linear memory: scratch elements at 0..SCRATCH_END, then what the caller allocates (tables, the
 * accumulator). An element is 32 bytes, little-endian limbs, always fully reduced (< p). A point is x ‖ y
 * (64 bytes); a Jacobian accumulator X ‖ Y ‖ Z (96 bytes).
 *
 * Every function is checked against the BigInt arithmetic by test/sim/field-wasm.test.ts.
 */

import { P } from "../hyperliquid/secp256k1.js";

const MASK32 = 0xffffffffn;

// ------------------------------------------------------------------------------------------------------------
// A minimal WebAssembly emitter: just the opcodes used below.

function uleb(n: number): number[] {
  const out: number[] = [];
  let v = n >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

function sleb(value: bigint): number[] {
  const out: number[] = [];
  let v = value;
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    const signBit = (byte & 0x40) !== 0;
    if ((v === 0n && !signBit) || (v === -1n && signBit)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const str = (s: string) => [...uleb(s.length), ...Buffer.from(s, "utf8")];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];

const I32 = 0x7f;
const I64 = 0x7e;

/** Instruction builders (each returns bytes). */
const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  i64: (v: bigint | number) => [0x42, ...sleb(BigInt(v))],
  i32: (v: number) => [0x41, ...sleb(BigInt(v))],
  /** i64.load32_u from (local ptr) + offset */
  load: (ptr: number, offset: number) => [...op.get(ptr), 0x35, 0x02, ...uleb(offset)],
  /** i64.store32 to (local ptr) + offset of the value the code leaves on the stack */
  store: (ptr: number, offset: number, value: number[]) => [
    ...op.get(ptr),
    ...value,
    0x3e,
    0x02,
    ...uleb(offset),
  ],
  add: [0x7c],
  sub: [0x7d],
  mul: [0x7e],
  and: [0x83],
  shl: [0x86],
  shrU: [0x88],
  shrS: [0x87],
  eqz: [0x50],
  or: [0x84],
  i32Or: [0x72],
  wrap: [0xa7],
  call: (f: number) => [0x10, ...uleb(f)],
  ifVoid: [0x04, 0x40],
  ifI32: [0x04, I32],
  else: [0x05],
  end: [0x0b],
  ret: [0x0f],
};

type Fn = { params: number[]; results: number[]; locals: number; localType: number; body: number[] };

function moduleBytes(fns: Fn[], exports: [string, number][]): Uint8Array {
  const types = fns.map((f) => [0x60, ...vec(f.params.map((p) => [p])), ...vec(f.results.map((r) => [r]))]);
  const bytes = [
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, vec(types)),
    ...section(3, vec(fns.map((_, i) => uleb(i)))),
    // one memory, 1 page to start; the caller grows it
    ...section(5, vec([[0x00, ...uleb(1)]])),
    ...section(
      7,
      vec([...exports.map(([name, i]) => [...str(name), 0x00, ...uleb(i)]), [...str("memory"), 0x02, 0x00]]),
    ),
    ...section(
      10,
      vec(
        fns.map((f) => {
          const body = [...vec(f.locals > 0 ? [[...uleb(f.locals), f.localType]] : []), ...f.body, ...op.end];
          return [...uleb(body.length), ...body];
        }),
      ),
    ),
  ];
  return Uint8Array.from(bytes);
}

// ------------------------------------------------------------------------------------------------------------
// The functions. Parameters are i32 pointers; locals after the parameters are i64.

/** p's limbs, little-endian. */
const P_LIMBS = Array.from({ length: 8 }, (_, i) => (P >> BigInt(32 * i)) & MASK32);

/** target = (value + carry) mod 2^32, carry = (value + carry) >> 32; `value` is code leaving an i64 (< 2^64 − 2^32). */
function carried(target: number, carry: number, value: number[]): number[] {
  return [
    ...value,
    ...op.get(carry),
    ...op.add,
    ...op.tee(target),
    ...op.i64(32),
    ...op.shrU,
    ...op.set(carry),
    ...op.get(target),
    ...op.i64(0xffffffff),
    ...op.and,
    ...op.set(target),
  ];
}

/**
 * v = a + b limb by limb (`limb(i)` leaves a_i + b_i on the stack), then folded and reduced into out (param 0): the
 * end of add and of sub (which adds p − b).
 */
function sumAndStore(
  limb: (i: number) => number[],
  v: number[],
  top: number,
  carry: number,
  tmp: number[],
): number[] {
  const code: number[] = [...op.i64(0), ...op.set(carry)];
  for (let i = 0; i < 8; i++) code.push(...carried(v[i]!, carry, limb(i)));
  code.push(...op.get(carry), ...op.set(top));
  code.push(...foldAndStore(v, top, carry, tmp, 0));
  return code;
}

/**
 * Straight-line code that takes limbs v[0..7] (locals, each < 2^32 after normalisation) plus a `top` local, folds
 * top·2^256 ≡ top·(2^32 + 977) twice, then subtracts p once if the value is ≥ p; stores the result at out.
 */
function foldAndStore(v: number[], top: number, carry: number, tmp: number[], out: number): number[] {
  const code: number[] = [];
  for (let round = 0; round < 2; round++) {
    // v0 += 977·top; v1 += top; propagate; top = carry out
    code.push(...op.get(v[0]!), ...op.get(top), ...op.i64(977), ...op.mul, ...op.add, ...op.set(v[0]!));
    code.push(...op.get(v[1]!), ...op.get(top), ...op.add, ...op.set(v[1]!));
    code.push(...op.i64(0), ...op.set(carry));
    for (let i = 0; i < 8; i++) code.push(...carried(v[i]!, carry, op.get(v[i]!)));
    code.push(...op.get(carry), ...op.set(top));
  }
  // t = v + (2^256 − p) = v + 2^32 + 977; if that carries out, v ≥ p and t (mod 2^256) = v − p
  code.push(...op.i64(0), ...op.set(carry));
  for (let i = 0; i < 8; i++) {
    const addend = i === 0 ? 977n : i === 1 ? 1n : 0n;
    code.push(...carried(tmp[i]!, carry, [...op.get(v[i]!), ...op.i64(addend), ...op.add]));
  }
  // carry (0 or 1) chooses t over v
  code.push(...op.get(carry), ...op.eqz, ...op.ifVoid);
  for (let i = 0; i < 8; i++) code.push(...op.store(out, 4 * i, op.get(v[i]!)));
  code.push(...op.else);
  for (let i = 0; i < 8; i++) code.push(...op.store(out, 4 * i, op.get(tmp[i]!)));
  code.push(...op.end);
  return code;
}

/** mul(out, a, b): out = a·b mod p. out may be a or b. */
function mulFn(): Fn {
  // params 0 out, 1 a, 2 b; i64 locals: a0..a7 (3..10), b0..b7 (11..18), t0..t15 (19..34), carry 35, tmp 36..43
  const A = (i: number) => 3 + i;
  const B = (i: number) => 11 + i;
  const T = (i: number) => 19 + i;
  const CARRY = 35;
  const TMP = Array.from({ length: 8 }, (_, i) => 36 + i);
  const code: number[] = [];
  for (let i = 0; i < 8; i++) code.push(...op.load(1, 4 * i), ...op.set(A(i)));
  for (let i = 0; i < 8; i++) code.push(...op.load(2, 4 * i), ...op.set(B(i)));
  for (let i = 0; i < 16; i++) code.push(...op.i64(0), ...op.set(T(i)));
  // operand scanning: t[i+j] + a_i·b_j + carry ≤ 2^64 − 1 exactly
  for (let i = 0; i < 8; i++) {
    code.push(...op.i64(0), ...op.set(CARRY));
    for (let j = 0; j < 8; j++)
      code.push(
        ...carried(T(i + j), CARRY, [
          ...op.get(T(i + j)),
          ...op.get(A(i)),
          ...op.get(B(j)),
          ...op.mul,
          ...op.add,
        ]),
      );
    code.push(...op.get(CARRY), ...op.set(T(i + 8)));
  }
  // first fold: u_i = t_i + 977·t_{8+i} + t_{8+i−1}, u_8 = t_15; each < 2^43
  for (let i = 0; i < 8; i++) {
    code.push(...op.get(T(i)), ...op.get(T(8 + i)), ...op.i64(977), ...op.mul, ...op.add);
    if (i > 0) code.push(...op.get(T(7 + i)), ...op.add);
    code.push(...op.set(T(i)));
  }
  // normalise t0..t7 to 32 bits, the carry and t15 into top (reuse T(8))
  code.push(...op.i64(0), ...op.set(CARRY));
  for (let i = 0; i < 8; i++) code.push(...carried(T(i), CARRY, op.get(T(i))));
  code.push(...op.get(T(15)), ...op.get(CARRY), ...op.add, ...op.set(T(8)));
  code.push(...foldAndStore([0, 1, 2, 3, 4, 5, 6, 7].map(T), T(8), CARRY, TMP, 0));
  return { params: [I32, I32, I32], results: [], locals: 41, localType: I64, body: code };
}

/** The i64 locals add and sub share (after their three i32 parameters): v0..v7, top, carry, tmp0..tmp7. */
const SUM = {
  v: Array.from({ length: 8 }, (_, i) => 3 + i),
  top: 11,
  carry: 12,
  tmp: Array.from({ length: 8 }, (_, i) => 13 + i),
  /** locals after the parameters */
  count: 18,
};

/** add(out, a, b): out = a + b mod p (a, b < p). */
function addFn(): Fn {
  const code = sumAndStore(
    (i) => [...op.load(1, 4 * i), ...op.load(2, 4 * i), ...op.add],
    SUM.v,
    SUM.top,
    SUM.carry,
    SUM.tmp,
  );
  return { params: [I32, I32, I32], results: [], locals: SUM.count, localType: I64, body: code };
}

/** sub(out, a, b): out = a − b mod p (a, b < p): a + (p − b), p − b computed limb by limb. */
function subFn(): Fn {
  // i64 locals: SUM's, then borrow
  const TMP = SUM.tmp;
  const BORROW = SUM.count + 3;
  const code: number[] = [...op.i64(0), ...op.set(BORROW)];
  // tmp = p − b (b < p, so no borrow out)
  for (let i = 0; i < 8; i++) {
    code.push(
      ...op.i64(P_LIMBS[i]!),
      ...op.load(2, 4 * i),
      ...op.sub,
      ...op.get(BORROW),
      ...op.sub,
      ...op.tee(TMP[i]!),
    );
    // borrow = (value < 0) = value >>> 63
    code.push(...op.i64(63), ...op.shrU, ...op.set(BORROW));
    code.push(...op.get(TMP[i]!), ...op.i64(0xffffffff), ...op.and, ...op.set(TMP[i]!));
  }
  // v = a + tmp
  code.push(
    ...sumAndStore(
      (i) => [...op.load(1, 4 * i), ...op.get(TMP[i]!), ...op.add],
      SUM.v,
      SUM.top,
      SUM.carry,
      TMP,
    ),
  );
  return { params: [I32, I32, I32], results: [], locals: SUM.count + 1, localType: I64, body: code };
}

/** isZero(a) → 1 when all limbs are 0. */
function isZeroFn(): Fn {
  const code: number[] = [...op.load(0, 0)];
  for (let i = 1; i < 8; i++) code.push(...op.load(0, 4 * i), ...op.or);
  code.push(...op.eqz);
  return { params: [I32], results: [I32], locals: 0, localType: I64, body: code };
}

// scratch elements (32 bytes each)
const S_Z1Z1 = 0;
const S_U2 = 32;
const S_S2 = 64;
const S_H = 96;
const S_HH = 128;
const S_I = 160;
const S_J = 192;
const S_R = 224;
const S_V = 256;
const S_T = 288;
const S_Y2 = 320;
/** An element of zeros (never written). */
const SCRATCH_ZERO = 992;
/** First byte free for the caller. */
export const SCRATCH_END = 1024;

const F_MUL = 0;
const F_ADD = 1;
const F_SUB = 2;
const F_ISZERO = 3;

/**
 * madd(acc, pt, neg) → 0, or 1 when H = 0 (the points' x are equal: doubling or infinity, which the caller
 * hands to the BigInt code). acc: X ‖ Y ‖ Z; pt: x ‖ y, y taken as −y when neg ≠ 0. madd-2007-bl, Z3 = 2·Z1·H:
 * the same formula as addAffine in src/hyperliquid/secp256k1.ts.
 */
function maddFn(): Fn {
  // params: 0 acc, 1 pt, 2 neg (i32); i32 locals: 3 X1, 4 Y1, 5 Z1, 6 x2, 7 y2
  const [ACC, PT, NEG, X1, Y1, Z1, X2, Y2] = [0, 1, 2, 3, 4, 5, 6, 7];
  const c = (f: number, ...args: number[][]) => [...args.flat(), ...op.call(f)];
  const at = (addr: number) => op.i32(addr);
  const g = op.get;
  /** local `to` = local `from` + offset (i32.add) */
  const offsetOf = (to: number, from: number, offset: number) => [
    ...g(from),
    ...op.i32(offset),
    0x6a,
    ...op.set(to),
  ];
  const code: number[] = [
    ...offsetOf(X1, ACC, 0),
    ...offsetOf(Y1, ACC, 32),
    ...offsetOf(Z1, ACC, 64),
    ...offsetOf(X2, PT, 0),
    ...offsetOf(Y2, PT, 32),
    // y2 = neg ? 0 − y : y  (into scratch)
    ...g(NEG),
    ...op.ifVoid,
    ...c(F_SUB, at(S_Y2), at(SCRATCH_ZERO), g(Y2)),
    ...op.i32(S_Y2),
    ...op.set(Y2),
    ...op.end,
    ...c(F_MUL, at(S_Z1Z1), g(Z1), g(Z1)), // Z1Z1 = Z1²
    ...c(F_MUL, at(S_U2), g(X2), at(S_Z1Z1)), // U2 = x2·Z1Z1
    ...c(F_MUL, at(S_S2), g(Y2), g(Z1)), // y2·Z1
    ...c(F_MUL, at(S_S2), at(S_S2), at(S_Z1Z1)), // S2 = y2·Z1·Z1Z1
    ...c(F_SUB, at(S_H), at(S_U2), g(X1)), // H = U2 − X1
    ...c(F_ISZERO, at(S_H)),
    ...op.ifVoid,
    ...op.i32(1),
    ...op.ret,
    ...op.end,
    ...c(F_MUL, at(S_HH), at(S_H), at(S_H)), // HH
    ...c(F_ADD, at(S_I), at(S_HH), at(S_HH)), // 2HH
    ...c(F_ADD, at(S_I), at(S_I), at(S_I)), // I = 4HH
    ...c(F_MUL, at(S_J), at(S_H), at(S_I)), // J = H·I
    ...c(F_SUB, at(S_R), at(S_S2), g(Y1)), // S2 − Y1
    ...c(F_ADD, at(S_R), at(S_R), at(S_R)), // r = 2(S2 − Y1)
    ...c(F_MUL, at(S_V), g(X1), at(S_I)), // V = X1·I
    // Z3 = 2·Z1·H (before Z1 is overwritten; X1, Y1 are still needed below, so Z first)
    ...c(F_MUL, g(Z1), g(Z1), at(S_H)),
    ...c(F_ADD, g(Z1), g(Z1), g(Z1)),
    // X3 = r² − J − 2V
    ...c(F_MUL, at(S_T), at(S_R), at(S_R)),
    ...c(F_SUB, at(S_T), at(S_T), at(S_J)),
    ...c(F_SUB, at(S_T), at(S_T), at(S_V)),
    ...c(F_SUB, at(S_T), at(S_T), at(S_V)),
    // Y3 = r·(V − X3) − 2·Y1·J
    ...c(F_SUB, at(S_V), at(S_V), at(S_T)),
    ...c(F_MUL, at(S_V), at(S_R), at(S_V)),
    ...c(F_MUL, at(S_J), g(Y1), at(S_J)),
    ...c(F_ADD, at(S_J), at(S_J), at(S_J)),
    ...c(F_SUB, g(Y1), at(S_V), at(S_J)),
    // X1 = X3
    ...c(F_ADD, g(X1), at(S_T), at(SCRATCH_ZERO)),
    ...op.i32(0),
  ];
  return { params: [I32, I32, I32], results: [I32], locals: 5, localType: I32, body: code };
}

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
type WasmMemory = { readonly buffer: ArrayBuffer; grow(pages: number): number };
const WebAssemblyApi = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object) => { exports: Record<string, unknown> };
    };
  }
).WebAssembly;

export type FieldWasm = {
  readonly memory: WasmMemory;
  mul(out: number, a: number, b: number): void;
  add(out: number, a: number, b: number): void;
  sub(out: number, a: number, b: number): void;
  madd(acc: number, pt: number, neg: number): number;
  /** out = −a mod p. */
  neg(out: number, a: number): void;
  /** Copies `bytes` from `from` to `to`. */
  copy(to: number, from: number, bytes: number): void;
  /** Writes a (0 ≤ a < p) at `at`. */
  write(at: number, a: bigint): void;
  /** Reads the element at `at`. */
  read(at: number): bigint;
  /** A region of `bytes` (a multiple of 32): a freed region of that size, or new memory. */
  alloc(bytes: number): number;
  /** Gives a region back for a later `alloc` of the same size. */
  free(at: number, bytes: number): void;
};

let instance: FieldWasm | undefined;

/** The module, compiled and instantiated once per process (synchronously: it is ~4 KB). */
export function fieldWasm(): FieldWasm {
  if (instance) return instance;
  const bytes = moduleBytes(
    [mulFn(), addFn(), subFn(), isZeroFn(), maddFn()],
    [
      ["mul", F_MUL],
      ["add", F_ADD],
      ["sub", F_SUB],
      ["madd", 4],
    ],
  );
  const exports = new WebAssemblyApi.Instance(new WebAssemblyApi.Module(bytes)).exports as unknown as {
    memory: WasmMemory;
    mul(out: number, a: number, b: number): void;
    add(out: number, a: number, b: number): void;
    sub(out: number, a: number, b: number): void;
    madd(acc: number, pt: number, neg: number): number;
  };
  const memory = exports.memory;
  let next = SCRATCH_END;
  const freed = new Map<number, number[]>();
  const view = () => new Uint32Array(memory.buffer);
  instance = {
    memory,
    mul: exports.mul,
    add: exports.add,
    sub: exports.sub,
    madd: exports.madd,
    neg: (out, a) => exports.sub(out, SCRATCH_ZERO, a),
    copy(to, from, bytes) {
      view().copyWithin(to >> 2, from >> 2, (from + bytes) >> 2);
    },
    write(at, a) {
      const v = view();
      let x = a;
      for (let i = 0; i < 8; i++) {
        v[(at >> 2) + i] = Number(x & MASK32);
        x >>= 32n;
      }
    },
    read(at) {
      const v = view();
      let x = 0n;
      for (let i = 7; i >= 0; i--) x = (x << 32n) | BigInt(v[(at >> 2) + i]!);
      return x;
    },
    alloc(bytes) {
      const reuse = freed.get(bytes)?.pop();
      if (reuse !== undefined) return reuse;
      const at = next;
      next += bytes;
      const need = Math.ceil(next / 65536) - memory.buffer.byteLength / 65536;
      if (need > 0) memory.grow(need);
      return at;
    },
    free(at, bytes) {
      const list = freed.get(bytes) ?? [];
      list.push(at);
      freed.set(bytes, list);
    },
  };
  return instance;
}
