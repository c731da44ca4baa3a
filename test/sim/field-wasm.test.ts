/**
 * The WebAssembly field arithmetic (src/sim/field-wasm.ts) against BigInt: every product, sum and difference
 * mod p, on edges and on random elements (fast-check, seed printed on failure), and the mixed point addition
 * against noble's point arithmetic. Then signedBy (src/sim/check.ts) without WebAssembly (node --jitless): the BigInt path answers.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { fc } from "@fast-check/vitest";
import { secp256k1 } from "@noble/curves/secp256k1";
import { describe, expect, test } from "vitest";
import { fieldWasm } from "../../src/sim/field-wasm.js";

const P = secp256k1.CURVE.Fp.ORDER;
const mod = (a: bigint) => ((a % P) + P) % P;
const f = fieldWasm();
const A = f.alloc(32);
const B = f.alloc(32);
const O = f.alloc(32);
const element = fc.bigInt({ min: 0n, max: P - 1n });
const EDGES = [
  0n,
  1n,
  2n,
  977n,
  0xffffffffn,
  1n << 32n,
  (1n << 255n) - 1n,
  1n << 255n,
  P - (1n << 32n),
  P - 2n,
  P - 1n,
];

function check(a: bigint, b: bigint): void {
  f.write(A, a);
  f.write(B, b);
  f.mul(O, A, B);
  expect(f.read(O)).toBe(mod(a * b));
  f.add(O, A, B);
  expect(f.read(O)).toBe(mod(a + b));
  f.sub(O, A, B);
  expect(f.read(O)).toBe(mod(a - b));
  // in place: out = a
  f.mul(A, A, B);
  expect(f.read(A)).toBe(mod(a * b));
}

describe("field arithmetic in WebAssembly", () => {
  test("behavior: mul, add and sub equal BigInt's mod p on every pair of edge values", () => {
    for (const a of EDGES) for (const b of EDGES) check(a, b);
  });

  test("behavior: mul, add and sub equal BigInt's mod p on 20,000 random pairs", () => {
    fc.assert(
      fc.property(element, element, (a, b) => {
        check(a, b);
      }),
      { numRuns: 20_000 },
    );
  });

  test("behavior: madd equals noble's P + Q and P − Q from any Jacobian representation, and flags equal x", () => {
    const Point = secp256k1.ProjectivePoint;
    const ACC = f.alloc(96);
    const PT = f.alloc(64);
    const scalar = fc.bigInt({ min: 1n, max: secp256k1.CURVE.n - 1n });
    fc.assert(
      fc.property(
        scalar,
        scalar,
        fc.bigInt({ min: 1n, max: P - 1n }),
        fc.boolean(),
        (k1, k2, z, negative) => {
          const p1 = Point.BASE.multiply(k1);
          const p2 = Point.BASE.multiply(k2);
          const a1 = p1.toAffine();
          const a2 = p2.toAffine();
          f.write(ACC, mod(a1.x * z * z));
          f.write(ACC + 32, mod(a1.y * z * z * z));
          f.write(ACC + 64, z);
          f.write(PT, a2.x);
          f.write(PT + 32, a2.y);
          const special = f.madd(ACC, PT, negative ? 1 : 0);
          if (a1.x === a2.x) {
            expect(special).toBe(1);
            return;
          }
          expect(special).toBe(0);
          const want = (negative ? p1.subtract(p2) : p1.add(p2)).toAffine();
          const Z = f.read(ACC + 64);
          const zi = secp256k1.CURVE.Fp.inv(Z);
          expect(mod(f.read(ACC) * zi * zi)).toBe(want.x);
          expect(mod(f.read(ACC + 32) * zi * zi * zi)).toBe(want.y);
        },
      ),
      { numRuns: 300 },
    );
    // equal x: the same point, and its negation
    const q = Point.BASE.multiply(12345n).toAffine();
    f.write(ACC, q.x);
    f.write(ACC + 32, q.y);
    f.write(ACC + 64, 1n);
    f.write(PT, q.x);
    f.write(PT + 32, q.y);
    expect(f.madd(ACC, PT, 1)).toBe(1);
  });

  test("behavior: without WebAssembly (node --jitless) signedBy checks with BigInt and gives the same answers", () => {
    const root = resolve(import.meta.dirname, "../..");
    const script = `
      const { CombTable } = await import(${JSON.stringify(`${root}/dist/hyperliquid/secp256k1.js`)});
      const { signedBy } = await import(${JSON.stringify(`${root}/dist/sim/check.js`)});
      const { secp256k1 } = await import("@noble/curves/secp256k1");
      const key = secp256k1.utils.randomPrivateKey();
      const pub = secp256k1.ProjectivePoint.fromPrivateKey(key).toAffine();
      const table = new CombTable(pub.x, pub.y);
      const digest = new Uint8Array(32).fill(7);
      const sig = secp256k1.sign(digest, key, { lowS: true });
      const good = signedBy(table, digest, { r: sig.r, s: sig.s, v: 27 + sig.recovery });
      const other = signedBy(table, digest, { r: sig.r, s: sig.s, v: 28 - sig.recovery });
      const bad = signedBy(table, new Uint8Array(32).fill(8), { r: sig.r, s: sig.s, v: 27 + sig.recovery });
      process.stdout.write(JSON.stringify({ wasm: typeof WebAssembly, good, other, bad }));
    `;
    const out = execFileSync(process.execPath, ["--jitless", "--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    expect(JSON.parse(out)).toEqual({ wasm: "undefined", good: true, other: false, bad: false });
  });
});
