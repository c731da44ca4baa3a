/**
 * The `cancel` action is signed byte for byte as the official SDKs sign it. Vectors:
 * hyperliquid-dex/hyperliquid-rust-sdk, src/exchange/exchange_client.rs, `test_cancel_action_hashing`
 * (key e908f86d…688e, cancels [{a:1, o:82382}], nonce 1583838, no vault, no expiresAfter; the SDK prints
 * r‖s‖v as 65 bytes of hex). The msgpack bytes are written out by hand from the msgpack spec, so the encoder
 * is checked against the format, not against itself.
 */
import { hexlify, Wallet } from "ethers";
import { describe, expect, test } from "vitest";
import {
  l1ActionHash,
  l1ActionPreimage,
  recoverL1ActionSigner,
  signL1Action,
} from "../../../src/protocol/hyperliquid/signing.js";

const RUST_KEY = "0xe908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e";
const ACTION = { type: "cancel", cancels: [{ a: 1, o: 82382 }] };
const NONCE = 1583838;

/** r‖s‖v hex as the Rust SDK's `Signature::to_string()` prints it. */
function split(sig65: string): { r: string; s: string; v: number } {
  const h = sig65.replace(/^0x/, "");
  return { r: `0x${h.slice(0, 64)}`, s: `0x${h.slice(64, 128)}`, v: Number.parseInt(h.slice(128), 16) };
}

const RUST_VECTORS = [
  {
    isMainnet: true,
    signature:
      "02f76cc5b16e0810152fa0e14e7b219f49c361e3325f771544c6f54e157bf9fa17ed0afc11a98596be85d5cd9f86600aad515337318f7ab346e5ccc1b03425d51b",
  },
  {
    isMainnet: false,
    signature:
      "6ffebadfd48067663390962539fbde76cfa36f53be65abe2ab72c9db6d0db44457720db9d7c4860f142a484f070c84eb4b9694c3a617c83f0d698a27e55fd5e01c",
  },
];

// fixmap(2) "type" "cancel" "cancels" fixarray(1) fixmap(2) "a" 1 "o" uint32(82382)
const EXPECTED_MSGPACK = [
  "82",
  "a4",
  Buffer.from("type").toString("hex"),
  "a6",
  Buffer.from("cancel").toString("hex"),
  "a7",
  Buffer.from("cancels").toString("hex"),
  "91",
  "82",
  "a161",
  "01",
  "a16f",
  "ce000141ce",
].join("");

describe("cancel action signing (hyperliquid-rust-sdk test_cancel_action_hashing)", () => {
  test("default: msgpack bytes, nonce and the no-vault byte form the preimage", () => {
    const preimage = hexlify(l1ActionPreimage({ action: ACTION, nonce: NONCE }));
    expect(preimage).toBe(`0x${EXPECTED_MSGPACK}${NONCE.toString(16).padStart(16, "0")}00`);
  });

  test.each(RUST_VECTORS)("mainnet=$isMainnet: the signature equals the Rust SDK's", async (vec) => {
    const expected = split(vec.signature);
    const fromKey = await signL1Action({
      action: ACTION,
      nonce: NONCE,
      isMainnet: vec.isMainnet,
      privateKey: RUST_KEY,
    });
    expect(fromKey).toEqual(expected);
    const fromWallet = await signL1Action({
      action: ACTION,
      nonce: NONCE,
      isMainnet: vec.isMainnet,
      wallet: new Wallet(RUST_KEY),
    });
    expect(fromWallet).toEqual(expected);
    const signer = await recoverL1ActionSigner({
      action: ACTION,
      nonce: NONCE,
      isMainnet: vec.isMainnet,
      signature: expected,
    });
    expect(signer).toBe(new Wallet(RUST_KEY).address);
  });

  test("key order is part of the hash: {cancels, type} or {o, a} give another connectionId", () => {
    const good = l1ActionHash({ action: ACTION, nonce: NONCE });
    expect(l1ActionHash({ action: { cancels: ACTION.cancels, type: "cancel" }, nonce: NONCE })).not.toBe(
      good,
    );
    expect(
      l1ActionHash({ action: { type: "cancel", cancels: [{ o: 82382, a: 1 }] }, nonce: NONCE }),
    ).not.toBe(good);
  });
});
