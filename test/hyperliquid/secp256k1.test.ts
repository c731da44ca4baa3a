import { readFileSync } from "node:fs";
import { secp256k1 } from "@noble/curves/secp256k1";
import { id, SigningKey, Wallet } from "ethers";
import { beforeAll, describe, expect, test } from "vitest";
import { ArgumentError } from "../../src/errors/argument.js";
import { invert, precomputeBaseTable, red, Secp256k1Signer } from "../../src/hyperliquid/secp256k1.js";
import { signL1Action } from "../../src/hyperliquid/signing.js";

// The fast signer (src/hyperliquid/secp256k1.ts) must give exactly what ethers/noble give: same RFC 6979 nonce,
// same r, same low s, same recovery bit, for any key and digest.
const keys = ["fast signer key 1", "fast signer key 2", "fast signer key 3"].map((label) => id(label));
const digests = Array.from({ length: 120 }, (_, i) => id(`fast signer digest ${i}`));
const bytes = (hex: string) => Buffer.from(hex.slice(2), "hex");

describe("Secp256k1Signer", () => {
  beforeAll(() => precomputeBaseTable());

  test.each(keys.map((k, i) => [i, k]))(
    "behavior: key %i signs 120 digests exactly as noble does",
    (_i, key) => {
      const signer = new Secp256k1Signer(key);
      for (const digest of digests) {
        const want = secp256k1.sign(bytes(digest), bytes(key), { lowS: true });
        const got = signer.sign(bytes(digest));
        expect({ r: got.r, s: got.s, recovery: got.recovery }).toEqual({
          r: want.r,
          s: want.s,
          recovery: want.recovery,
        });
        expect(got.s <= secp256k1.CURVE.n >> 1n).toBe(true);
      }
    },
  );

  test("behavior: the digits at the edges (all-zero and all-0xff windows) and small keys", () => {
    for (const key of [
      `0x${"00".repeat(31)}01`,
      `0x${"00".repeat(31)}02`,
      `0x${"7f".repeat(16)}${"00".repeat(16)}`,
    ]) {
      const signer = new Secp256k1Signer(key);
      for (const digest of [
        `0x${"00".repeat(32)}`,
        `0x${"ff".repeat(32)}`,
        `0x${"80".repeat(32)}`,
        ...digests.slice(0, 10),
      ]) {
        const want = secp256k1.sign(bytes(digest), bytes(key), { lowS: true });
        const got = signer.sign(bytes(digest));
        expect([got.r, got.s, got.recovery]).toEqual([want.r, want.s, want.recovery]);
      }
    }
  });

  test("behavior: signL1Action with the table built still matches every signing vector and ethers", async () => {
    const vectors = JSON.parse(
      readFileSync(new URL("../fixtures/signing-vectors.json", import.meta.url), "utf8"),
    ) as {
      privateKey: string;
      action: Record<string, unknown>;
      nonce: number;
      vaultAddress: string | null;
      expiresAfter: number | null;
      isMainnet: boolean;
      eip712Digest: string;
      signature: { r: string; s: string; v: number };
    }[];
    const wallets = new Map<string, Wallet>();
    for (const v of vectors) {
      const wallet = wallets.get(v.privateKey) ?? new Wallet(v.privateKey);
      wallets.set(v.privateKey, wallet);
      const params = {
        action: v.action,
        nonce: v.nonce,
        vaultAddress: v.vaultAddress,
        expiresAfter: v.expiresAfter,
        isMainnet: v.isMainnet,
      };
      // the same wallet object twice: the second signature goes through the table for certain
      for (let round = 0; round < 2; round++)
        expect(await signL1Action({ ...params, wallet })).toEqual(v.signature);
      const viaEthers = new SigningKey(v.privateKey).sign(v.eip712Digest);
      expect(v.signature).toEqual({ r: viaEthers.r, s: viaEthers.s, v: viaEthers.v });
    }
  });

  test("error: a key outside 1..n-1 is refused", () => {
    expect(() => new Secp256k1Signer(`0x${"00".repeat(32)}`)).toThrow(ArgumentError);
    expect(() => new Secp256k1Signer(`0x${"ff".repeat(32)}`)).toThrow(ArgumentError);
  });
});

/** The textbook extended Euclid, to check `invert` (Lehmer's variant) against. */
function euclidInverse(a: bigint, m: bigint): bigint {
  let [t, newT, r, newR] = [0n, 1n, m, ((a % m) + m) % m];
  while (newR !== 0n) {
    const q = r / newR;
    [t, newT] = [newT, t - q * newT];
    [r, newR] = [newR, r - q * newR];
  }
  return t < 0n ? t + m : t;
}

describe("invert", () => {
  test("behavior: equals the textbook extended Euclid mod n and mod p, for edge and hashed values", () => {
    const n = secp256k1.CURVE.n;
    const p = secp256k1.CURVE.Fp.ORDER;
    const values = [1n, 2n, 3n, n - 1n, p - 1n, 1n << 200n, (1n << 255n) + 19n, 1n << 52n, (1n << 53n) - 1n];
    for (let i = 0; i < 200; i++) values.push(BigInt(id(`fastInvert ${i}`)));
    for (const m of [n, p]) {
      for (const v of values) {
        const a = v % m;
        if (a === 0n) continue;
        const inv = invert(a, m);
        expect(inv).toBe(euclidInverse(a, m));
        expect((a * inv) % m).toBe(1n);
      }
    }
  });
});

describe("red (reduction mod p without a division)", () => {
  test("behavior: equals the true residue in [0, p) for signed products of values in (−4p, 4p) and at the edges", () => {
    const p = secp256k1.CURVE.Fp.ORDER;
    const mod = (a: bigint) => ((a % p) + p) % p;
    const edges = [0n, 1n, p - 1n, p, p + 1n, 2n * p, (1n << 256n) - 1n, 1n << 256n, 4n * p - 1n];
    const values = [...edges, ...edges.map((e) => -e)];
    for (let i = 0; i < 100; i++) {
      const h = BigInt(id(`red ${i}`));
      values.push(h, -h, h % p, (h * 3n) % (4n * p));
    }
    for (const a of values) {
      for (const b of values) {
        const got = red(a * b);
        expect(got).toBe(mod(a * b));
      }
      expect(red(a)).toBe(mod(a));
      expect(red(a << 1n)).toBe(mod(a << 1n));
    }
  });
});
