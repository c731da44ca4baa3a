/**
 * Hyperliquid L1-action signing, exactly as docs/exchange-behaviour.md §2 describes and as the official
 * Python SDK (hyperliquid/utils/signing.py, action_hash / construct_phantom_agent / l1_payload) does it:
 *
 *   connectionId = keccak256( msgpack(action) ‖ nonce:u64be ‖ (0x00 | 0x01 ‖ vault:20B) ‖ [0x00 ‖ expiresAfter:u64be] )
 *   EIP-712 domain { name "Exchange", version "1", chainId 1337, verifyingContract 0x0 },
 *   primary type Agent { source: string ("a" mainnet, "b" testnet), connectionId: bytes32 }.
 *
 * Pinned byte for byte by test/fixtures/signing-vectors.json (the official SDKs' vectors plus generated
 * scheduleCancel cases).
 */

// ethers' subpath entry points: the root "ethers" also loads providers, contracts and wordlists (~10 MiB of
// resident memory the daemon never uses; BENCHMARKS.md, import cost).
// All cryptography is the libraries' (docs/security.md, "Signing"): keccak256 is @noble/hashes' keccak_256 through
// ethers, signing is @noble/curves' secp256k1 (RFC 6979, low-s; its HMAC node's, below), recovery is ethers'
// (the same noble curve), and TypedDataEncoder is ethers' EIP-712.
import { createHmac } from "node:crypto";
import { Encoder } from "@msgpack/msgpack";
import { weierstrass } from "@noble/curves/abstract/weierstrass";
import { secp256k1 } from "@noble/curves/secp256k1";
import { keccak256, Signature, SigningKey } from "ethers/crypto";
import { id, TypedDataEncoder } from "ethers/hash";
import { computeAddress, recoverAddress } from "ethers/transaction";
import { concat, getBytes, hexlify } from "ethers/utils";
import { BaseError } from "../../core/errors/base.js";

export type Hex = `0x${string}`;

/**
 * A private key and its address: all the daemon needs to sign (an ethers Wallet fits this shape too, but
 * loading the wallet module costs memory for features we do not use).
 */
export type LocalSigner = { readonly address: string; readonly signingKey: SigningKey };

/** Builds a LocalSigner from a 0x-prefixed 32-byte hex key (throws ethers' error on an invalid key). */
export function localSigner(privateKey: string): LocalSigner {
  const signingKey = new SigningKey(privateKey);
  return Object.freeze({ address: addressOfKey(signingKey), signingKey });
}

/**
 * The address of a key, its public key computed on the same curve object that signs (`curve` below): the curve's
 * precomputed multiples of the generator are built once, by whichever comes first, not once more for ethers'
 * `SigningKey.publicKey` (~57 ms of CPU under `--jitless`, at start-up, before the first push).
 */
export function addressOfKey(key: SigningKey): string {
  return computeAddress(hexlify(curve.getPublicKey(getBytes(key.privateKey), false)));
}

/** `{ r, s, v }` as the exchange expects it: r and s as 0x + 64 lower-case hex digits, v 27 or 28. */
export type L1Signature = { r: Hex; s: Hex; v: 27 | 28 };

/** Anything that can sign: an ethers Wallet / SigningKey, or any EIP-712 signer. */
export type L1Signer =
  | { signingKey: SigningKey }
  | SigningKey
  | {
      signTypedData(
        domain: typeof EXCHANGE_DOMAIN,
        types: typeof AGENT_TYPES,
        value: Record<string, unknown>,
      ): Promise<string>;
    };

export const EXCHANGE_DOMAIN = Object.freeze({
  name: "Exchange",
  version: "1",
  chainId: 1337,
  verifyingContract: "0x0000000000000000000000000000000000000000",
});

/** No EIP712Domain entry here: ethers v6 derives it and throws on an unused type. */
export const AGENT_TYPES = Object.freeze({
  Agent: [
    { name: "source", type: "string" },
    { name: "connectionId", type: "bytes32" },
  ],
});

// The EIP-712 digest of Agent { source, connectionId } is keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(Agent)),
// hashStruct(Agent) = keccak256(typeHash ‖ keccak256(source) ‖ connectionId) (EIP-712: a string member is encoded as
// the hash of its bytes, a bytes32 member as itself). Everything but connectionId is fixed, so ethers' EIP-712 encoder
// computes the domain separator, the type hash and both source hashes once, here; each action then costs two
// keccak256 calls instead of TypedDataEncoder.hash's three (a keccak under the shipped --jitless costs ~0.6 ms of CPU
// and ~70 KiB of boxed numbers, each push signs one: BENCHMARKS.md, CPU per hour). test/hyperliquid/signing.test.ts
// checks this against TypedDataEncoder.hash on random connectionIds, and the vectors pin it byte for byte.
const AGENT_ENCODER = TypedDataEncoder.from({ Agent: [...AGENT_TYPES.Agent] });
/** 0x1901 ‖ domainSeparator ‖ (32 bytes for hashStruct(Agent)), the first 34 bytes fixed. */
const DIGEST_PREIMAGE_HEAD = getBytes(concat(["0x1901", TypedDataEncoder.hashDomain(EXCHANGE_DOMAIN)]));
/** typeHash ‖ keccak256(source) for mainnet ("a") and testnet ("b"); connectionId follows. */
const STRUCT_HEAD = {
  mainnet: getBytes(concat([id(AGENT_ENCODER.encodeType("Agent")), id("a")])),
  testnet: getBytes(concat([id(AGENT_ENCODER.encodeType("Agent")), id("b")])),
};

/** The EIP-712 digest of Agent { source: "a" | "b", connectionId } (equal to ethers' TypedDataEncoder.hash). */
function agentDigest(connectionId: Hex, isMainnet: boolean): Hex {
  const id32 = getBytes(connectionId);
  if (id32.length !== 32) throw new SigningError(`connectionId must be 32 bytes, got ${id32.length}.`);
  const struct = new Uint8Array(96);
  struct.set(isMainnet ? STRUCT_HEAD.mainnet : STRUCT_HEAD.testnet, 0);
  struct.set(id32, 64);
  const digest = new Uint8Array(66);
  digest.set(DIGEST_PREIMAGE_HEAD, 0);
  digest.set(getBytes(keccak256(struct)), 34);
  return keccak256(digest) as Hex;
}

// Default msgpack options (smallest integer encoding; no useBigInt64, see docs/exchange-behaviour.md §2). `undefined`
// values are dropped so that `{ type, time: undefined }` hashes as `{ type }`, just as JSON.stringify sends it.
const encoder = new Encoder({ ignoreUndefined: true });

export class SigningError extends BaseError {
  override name = "SigningError";
}

export type L1ActionHashParameters = {
  action: Record<string, unknown>;
  nonce: number | bigint;
  vaultAddress?: string | null | undefined;
  expiresAfter?: number | bigint | null | undefined;
};

function checkU64(value: number | bigint, what: string): void {
  const bad = () => new SigningError(`${what} must be an unsigned 64-bit integer, got ${String(value)}.`);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || value < 0) throw bad();
  } else if (value < 0n || value > 0xffff_ffff_ffff_ffffn) throw bad();
}

/** Writes an unsigned 64-bit big-endian integer (validated by checkU64). */
function writeU64(view: DataView, offset: number, value: number | bigint): void {
  if (typeof value === "bigint") view.setBigUint64(offset, value, false);
  else {
    view.setUint32(offset, Math.floor(value / 0x1_0000_0000), false);
    view.setUint32(offset + 4, value >>> 0, false);
  }
}

const VAULT_RE = /^0x[0-9a-fA-F]{40}$/;

/** The bytes that are hashed into the connectionId (exported for tests and tooling). */
export function l1ActionPreimage({
  action,
  nonce,
  vaultAddress,
  expiresAfter,
}: L1ActionHashParameters): Uint8Array {
  checkU64(nonce, "nonce");
  if (vaultAddress && !VAULT_RE.test(vaultAddress)) {
    throw new SigningError(
      `vaultAddress must be a 42-character hex address, got ${JSON.stringify(vaultAddress)}.`,
    );
  }
  const expires = expiresAfter !== undefined && expiresAfter !== null;
  if (expires) checkU64(expiresAfter, "expiresAfter");
  // one buffer, written in place: the encoder's shared view is copied once, straight into it
  const packed = encoder.encodeSharedRef(action);
  const out = new Uint8Array(packed.length + 8 + (vaultAddress ? 21 : 1) + (expires ? 9 : 0));
  out.set(packed, 0);
  const view = new DataView(out.buffer);
  let at = packed.length;
  writeU64(view, at, nonce);
  at += 8;
  if (vaultAddress) {
    out[at++] = 1;
    out.set(Buffer.from(vaultAddress.slice(2), "hex"), at);
    at += 20;
  } else out[at++] = 0;
  if (expires) {
    out[at++] = 0;
    writeU64(view, at, expiresAfter);
  }
  return out;
}

/** connectionId = keccak256(preimage). */
export function l1ActionHash(params: L1ActionHashParameters): Hex {
  return keccak256(l1ActionPreimage(params)) as Hex;
}

/** The EIP-712 digest that is signed for an L1 action. */
export function l1ActionDigest(params: L1ActionHashParameters & { isMainnet: boolean }): Hex {
  return agentDigest(l1ActionHash(params), params.isMainnet);
}

export type SignL1ActionParameters = L1ActionHashParameters & {
  isMainnet: boolean;
} & ({ privateKey: string; wallet?: undefined } | { wallet: L1Signer; privateKey?: undefined });

function toL1Signature(sig: Signature): L1Signature {
  return { r: sig.r.toLowerCase() as Hex, s: sig.s.toLowerCase() as Hex, v: sig.v as 27 | 28 };
}

/**
 * secp256k1 exactly as @noble/curves defines it (the copy ethers runs; `secp256k1.CURVE` is its whole definition),
 * with one of the curve's documented parameters supplied by node: the HMAC-SHA256 behind RFC 6979's deterministic
 * nonce, which is OpenSSL's instead of noble's JavaScript. The nonce, and so every signature, is the same by
 * construction (RFC 6979 fixes both inputs of each HMAC); under the shipped `--jitless` noble's HMAC was most of a
 * signature's CPU time (docs/development.md, "Cryptography").
 */
const curve = weierstrass({
  ...secp256k1.CURVE,
  hmac: (key: Uint8Array, ...messages: Uint8Array[]): Uint8Array => {
    const mac = createHmac("sha256", key);
    for (const m of messages) mac.update(m);
    return new Uint8Array(mac.digest());
  },
});

const hex32 = (x: bigint) => `0x${x.toString(16).padStart(64, "0")}` as Hex;

/** `{ r, s, v }` of a digest: RFC 6979 nonce, low s, v 27 or 28 (what ethers' SigningKey.sign returns). */
function signDigest(key: SigningKey, digest: Hex): L1Signature {
  const sig = curve.sign(getBytes(digest), getBytes(key.privateKey), { lowS: true });
  return { r: hex32(sig.r), s: hex32(sig.s), v: sig.recovery === 1 ? 28 : 27 };
}

/** Signs an L1 action; resolves to `{ r, s, v }` exactly as the official SDKs produce it. */
export async function signL1Action(params: SignL1ActionParameters): Promise<L1Signature> {
  // ethers validates the key (its error redacts the value) before anything is hashed
  if (params.privateKey !== undefined)
    return signDigest(new SigningKey(params.privateKey), l1ActionDigest(params));
  const wallet = params.wallet;
  if (wallet instanceof SigningKey) return signDigest(wallet, l1ActionDigest(params));
  if ("signingKey" in wallet && wallet.signingKey instanceof SigningKey) {
    return signDigest(wallet.signingKey, l1ActionDigest(params));
  }
  if ("signTypedData" in wallet) {
    const connectionId = l1ActionHash(params);
    const raw = await wallet.signTypedData(EXCHANGE_DOMAIN, AGENT_TYPES, {
      source: params.isMainnet ? "a" : "b",
      connectionId,
    });
    return toL1Signature(Signature.from(raw));
  }
  throw new SigningError("wallet must be an ethers Wallet, a SigningKey, or an EIP-712 signer.");
}

export type RecoverL1ActionSignerParameters = L1ActionHashParameters & {
  isMainnet: boolean;
  signature: { r: string; s: string; v: number };
};

/** Recovers the checksummed address that signed an L1 action (what the exchange does to find the user). */
export async function recoverL1ActionSigner(params: RecoverL1ActionSignerParameters): Promise<string> {
  return recoverL1ActionSignerSync(params);
}

/**
 * Synchronous form, for the simulator: a full public-key recovery by ethers (noble's secp256k1) on every call.
 * Throws SigningError on an unusable signature.
 */
export function recoverL1ActionSignerSync(params: RecoverL1ActionSignerParameters): string {
  const digest = l1ActionDigest(params);
  const { r, s, v } = params.signature;
  try {
    // Python's SDK may send unpadded r/s; pad to 32 bytes before recovery.
    const pad = (h: string) => `0x${h.replace(/^0x/i, "").padStart(64, "0")}`;
    return recoverAddress(digest, Signature.from({ r: pad(r), s: pad(s), v }));
  } catch (cause) {
    throw new SigningError("Unable to recover signer.", { cause });
  }
}
