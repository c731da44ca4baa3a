/**
 * Keccak-256, the hash of Ethereum and of Hyperliquid's signatures (docs/exchange-behaviour.md §2): the Keccak
 * sponge with a 1088-bit rate and Keccak's original padding (0x01 … 0x80), not SHA3-256's (0x06 … 0x80), which is
 * why node's OpenSSL (sha3-256) cannot compute it.
 *
 * Each signature hashes three short messages (the action, the EIP-712 struct, the digest): one permutation each.
 * The permutation is src/hyperliquid/keccak-f.ts, written for V8's interpreter, where the daemon runs
 * (docs/development.md, "Keccak"); test/hyperliquid/keccak.test.ts holds it to @noble/hashes' keccak_256.
 */
import { keccakF } from "./keccak-f.js";

/** Bytes absorbed per permutation (1600 − 2 × 256 bits). */
const RATE = 136;
const RATE_WORDS = RATE / 4;

/** XORs `RATE` bytes of `bytes` from `at` into the state's first words (little-endian lanes). */
function absorb(state: Uint32Array, bytes: Uint8Array, at: number): void {
  for (let w = 0, i = at; w < RATE_WORDS; w++, i += 4)
    state[w]! ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
  keccakF(state);
}

// The state and the last block, reused by every call (a call runs to its end before another starts): no buffer
// is allocated outside V8's heap per hash.
const state = new Uint32Array(50);
const last = new Uint8Array(RATE);

/** keccak256(data), 32 bytes. */
export function keccak256(data: Uint8Array): Uint8Array {
  state.fill(0);
  let at = 0;
  for (; at + RATE <= data.length; at += RATE) absorb(state, data, at);
  // the last, partial block with Keccak's padding: 0x01 after the message, 0x80 in the block's last byte
  last.fill(0);
  last.set(data.subarray(at));
  last[data.length - at]! ^= 0x01;
  last[RATE - 1]! ^= 0x80;
  absorb(state, last, 0);
  const out = new Uint8Array(32);
  for (let w = 0; w < 8; w++) {
    const v = state[w]!;
    out[4 * w] = v;
    out[4 * w + 1] = v >>> 8;
    out[4 * w + 2] = v >>> 16;
    out[4 * w + 3] = v >>> 24;
  }
  return out;
}
