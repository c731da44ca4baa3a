import { secp256k1 } from "@noble/curves/secp256k1";
import { id, Wallet } from "ethers";
import { describe, expect, test } from "vitest";
import { baseTableBuilt, publicKeyOf, Secp256k1Signer } from "../../src/hyperliquid/secp256k1.js";
import { localSigner } from "../../src/hyperliquid/signing.js";

// A separate file (vitest isolates modules per file): here the comb table of G is never built, so every
// signature is a key's first and takes the native (OpenSSL) k·G path of a cold start.
const bytes = (hex: string) => Buffer.from(hex.slice(2), "hex");

describe("Secp256k1Signer before the table exists (a cold start)", () => {
  test("behavior: a key's first signature matches noble's, for 60 keys", () => {
    for (let i = 0; i < 60; i++) {
      const key = id(`first signature key ${i}`);
      const digest = id(`first signature digest ${i}`);
      const got = new Secp256k1Signer(key).sign(bytes(digest));
      const want = secp256k1.sign(bytes(digest), bytes(key), { lowS: true });
      expect([got.r, got.s, got.recovery]).toEqual([want.r, want.s, want.recovery]);
    }
    expect(baseTableBuilt()).toBe(false);
  });

  test("behavior: localSigner's address and publicKeyOf agree with ethers", () => {
    for (let i = 0; i < 10; i++) {
      const key = id(`address key ${i}`);
      const wallet = new Wallet(key);
      expect(localSigner(key).address).toBe(wallet.address);
      expect(publicKeyOf(key)).toBe(wallet.signingKey.publicKey);
    }
    expect(baseTableBuilt()).toBe(false);
  });
});
