import { readFileSync } from "node:fs";
import { hexlify, id, SigningKey, TypedDataEncoder, Wallet } from "ethers";
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../../src/core/clock.js";
import { NonceSource } from "../../../src/protocol/hyperliquid/nonce.js";
import {
  AGENT_TYPES,
  EXCHANGE_DOMAIN,
  l1ActionDigest,
  l1ActionHash,
  l1ActionPreimage,
  localSigner,
  recoverL1ActionSigner,
  signL1Action,
} from "../../../src/protocol/hyperliquid/signing.js";

type Vector = {
  ref: string;
  privateKey: string;
  action: Record<string, unknown>;
  nonce: number;
  vaultAddress: string | null;
  expiresAfter: number | null;
  isMainnet: boolean;
  msgpackHex: string;
  preimageHex: string;
  connectionId: string;
  eip712Digest: string;
  signature: { r: string; s: string; v: number };
  signer: string;
};

const vectors: Vector[] = JSON.parse(
  readFileSync(new URL("../../fixtures/signing-vectors.json", import.meta.url), "utf8"),
);

/**
 * Fast-cancel vectors: derived by this project from the documented layout (no pinned SDK sends `f`); see the
 * fixture's note and test/protocol/hyperliquid/fast-cancel-signing.test.ts for the hand-written bytes.
 */
const fastCancelVectors: Vector[] = JSON.parse(
  readFileSync(new URL("../../fixtures/fast-cancel-vectors.json", import.meta.url), "utf8"),
).vectors;

describe("signing vectors (test/fixtures/signing-vectors.json, fast-cancel-vectors.json)", () => {
  test("default: the fixtures hold all 27 vectors and the 4 derived fast-cancel ones", () => {
    expect(vectors).toHaveLength(27);
    expect(fastCancelVectors).toHaveLength(4);
    expect(fastCancelVectors.every((v) => v.action.f === true)).toBe(true);
  });

  test.each(
    [...vectors, ...fastCancelVectors].map((v, i) => [
      `${i}: ${v.ref.split("::").pop()} ${v.isMainnet ? "mainnet" : "testnet"}`,
      v,
    ]),
  )("%s", async (_name, v) => {
    const params = {
      action: v.action,
      nonce: v.nonce,
      vaultAddress: v.vaultAddress,
      expiresAfter: v.expiresAfter,
      isMainnet: v.isMainnet,
    };
    expect(hexlify(l1ActionPreimage(params))).toBe(v.preimageHex);
    expect(l1ActionHash(params)).toBe(v.connectionId);
    expect(l1ActionDigest(params)).toBe(v.eip712Digest);

    const fromKey = await signL1Action({ ...params, privateKey: v.privateKey });
    expect(fromKey).toEqual(v.signature);
    // the same wallet object twice: nothing kept from one signature changes the next
    const wallet = new Wallet(v.privateKey);
    for (let round = 0; round < 2; round++)
      expect(await signL1Action({ ...params, wallet })).toEqual(v.signature);
    expect(await signL1Action({ ...params, wallet: localSigner(v.privateKey) })).toEqual(v.signature);
    // and it is ethers' signature of the vector's digest
    const viaEthers = new SigningKey(v.privateKey).sign(v.eip712Digest);
    expect(v.signature).toEqual({ r: viaEthers.r, s: viaEthers.s, v: viaEthers.v });
    expect(fromKey.r).toMatch(/^0x[0-9a-f]{64}$/);
    expect(fromKey.s).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await recoverL1ActionSigner({ ...params, signature: v.signature })).toBe(v.signer);
  });

  test("behavior: the digest equals ethers' own EIP-712 hash of the phantom agent", () => {
    const v = vectors.at(-1)!;
    const digest = TypedDataEncoder.hash(EXCHANGE_DOMAIN, AGENT_TYPES, {
      source: v.isMainnet ? "a" : "b",
      connectionId: v.connectionId,
    });
    expect(digest).toBe(v.eip712Digest);
  });

  test("behavior: the digest, hashed from the fixed Agent struct, equals TypedDataEncoder.hash on both networks", () => {
    // 200 pseudo-random actions (a fixed LCG: deterministic), mainnet and testnet alternately
    let x = 0x2545f491;
    const next = () => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x;
    };
    for (let i = 0; i < 200; i++) {
      const params = {
        action: { type: "scheduleCancel", time: 1_700_000_000_000 + next() },
        nonce: 1_700_000_000_000 + next(),
        isMainnet: i % 2 === 0,
      };
      const expected = TypedDataEncoder.hash(EXCHANGE_DOMAIN, AGENT_TYPES, {
        source: params.isMainnet ? "a" : "b",
        connectionId: l1ActionHash(params),
      });
      expect(l1ActionDigest(params)).toBe(expected);
    }
  });

  test("behavior: a generic EIP-712 signer (signTypedData path) gives the same signature", async () => {
    const v = vectors.find((x) => x.action.type === "scheduleCancel" && x.expiresAfter !== null)!;
    const wallet = new Wallet(v.privateKey);
    const generic = { signTypedData: wallet.signTypedData.bind(wallet) };
    const { privateKey: _unused, ...rest } = v;
    const sig = await signL1Action({ ...rest, wallet: generic });
    expect(sig).toEqual(v.signature);
  });

  test("behavior: time: undefined hashes like an omitted time, time: null does not", () => {
    const base = { nonce: 1735689600000, isMainnet: true };
    const omitted = l1ActionHash({ ...base, action: { type: "scheduleCancel" } });
    expect(l1ActionHash({ ...base, action: { type: "scheduleCancel", time: undefined } })).toBe(omitted);
    expect(l1ActionHash({ ...base, action: { type: "scheduleCancel", time: null } })).not.toBe(omitted);
  });

  test("behavior: key order is part of the hash", () => {
    const base = { nonce: 0, isMainnet: true };
    expect(l1ActionHash({ ...base, action: { type: "scheduleCancel", time: 123456789 } })).not.toBe(
      l1ActionHash({ ...base, action: { time: 123456789, type: "scheduleCancel" } }),
    );
  });

  test("behavior: a tampered signature recovers a different address", async () => {
    const v = vectors.at(-1)!;
    const other = await recoverL1ActionSigner({ ...v, nonce: v.nonce + 1, signature: v.signature });
    expect(other).not.toBe(v.signer);
  });

  test("error: a bad vault address or nonce is refused before hashing", () => {
    expect(() => l1ActionHash({ action: { type: "x" }, nonce: 1, vaultAddress: "0x1234" })).toThrow(
      /vaultAddress/,
    );
    expect(() => l1ActionHash({ action: { type: "x" }, nonce: -1 })).toThrow(/nonce/);
    expect(() => l1ActionHash({ action: { type: "x" }, nonce: 1.5 })).toThrow(/nonce/);
  });
});

describe("keys", () => {
  test("behavior: localSigner's address is the ethers Wallet's (checksummed), for 10 keys", () => {
    for (let i = 0; i < 10; i++) {
      const key = id(`address key ${i}`);
      const wallet = new Wallet(key);
      const signer = localSigner(key);
      expect(signer.address).toBe(wallet.address);
      expect(signer.signingKey.publicKey).toBe(wallet.signingKey.publicKey);
    }
  });

  test("error: a key outside 1..n-1 is refused, and the error never shows it", async () => {
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const params = { action: { type: "scheduleCancel" }, nonce: 1, isMainnet: true };
    for (const key of [`0x${"00".repeat(32)}`, `0x${"ff".repeat(32)}`, `0x${n.toString(16)}`]) {
      const refused = await signL1Action({ ...params, privateKey: key }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(refused).toBeInstanceOf(Error);
      expect(() => localSigner(key)).toThrow();
      let fromLocal: unknown;
      try {
        localSigner(key);
      } catch (e) {
        fromLocal = e;
      }
      for (const error of [refused, fromLocal] as Error[]) {
        const shown = `${error.message} ${error.stack ?? ""} ${JSON.stringify(error)}`;
        expect(shown.toLowerCase()).not.toContain(key.slice(2, 40).toLowerCase());
      }
    }
  });
});

describe("NonceSource", () => {
  test("behavior: a burst in one millisecond yields strictly increasing unique nonces", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const nonces = new NonceSource(clock);
    const burst = Array.from({ length: 1000 }, () => nonces.next());
    expect(new Set(burst).size).toBe(1000);
    for (let i = 1; i < burst.length; i++) expect(burst[i]).toBe(burst[i - 1]! + 1);
    expect(burst[0]).toBe(1_700_000_000_000);
  });

  test("behavior: follows the clock forward, never backwards", () => {
    const clock = new ManualClock(1_000_000);
    const nonces = new NonceSource(clock);
    expect(nonces.next()).toBe(1_000_000);
    clock.advance(50);
    expect(nonces.next()).toBe(1_000_050);
    clock.set(999_000);
    expect(nonces.next()).toBe(1_000_051);
  });
});
