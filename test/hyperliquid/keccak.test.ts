import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fc } from "@fast-check/vitest";
import { keccak_256 } from "@noble/hashes/sha3";
import { describe, expect, test } from "vitest";
import { keccak256 } from "../../src/hyperliquid/keccak.js";
import { keccakF } from "../../src/hyperliquid/keccak-f.js";

const root = resolve(import.meta.dirname, "../..");
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const text = (s: string) => new TextEncoder().encode(s);

describe("keccak256", () => {
  test("default: the published Keccak-256 values", () => {
    // Keccak-256 of the empty string (Ethereum's empty code hash) and of "abc"
    expect(hex(keccak256(new Uint8Array(0)))).toBe(
      "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
    );
    expect(hex(keccak256(text("abc")))).toBe(
      "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45",
    );
  });

  test("behavior: the same digest as @noble/hashes on every length around the 136-byte blocks", () => {
    for (let n = 0; n <= 3 * 136 + 1; n++) {
      const message = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n * 7) & 0xff);
      expect(hex(keccak256(message)), `${n} bytes`).toBe(hex(keccak_256(message)));
    }
  });

  test("behavior: the same digest as @noble/hashes on random messages", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1200 }), (message) => {
        expect(hex(keccak256(message))).toBe(hex(keccak_256(message)));
      }),
      { numRuns: 2_000 },
    );
  });

  test("behavior: the permutation of the zero state (the first Keccak-f[1600] output of the reference vectors)", () => {
    // FIPS 202 / the Keccak team's KeccakF-1600-IntermediateValues: lane 0 after one permutation of zeros
    const state = new Uint32Array(50);
    keccakF(state);
    const lane0 = (BigInt(state[1]!) << 32n) | BigInt(state[0]!);
    expect(lane0.toString(16).toUpperCase()).toBe("F1258F7940E1DDE7");
  });

  test("default: src/hyperliquid/keccak-f.ts is what scripts/gen-keccak-f.mjs generates", () => {
    const generated = execFileSync(
      process.execPath,
      [resolve(root, "scripts/gen-keccak-f.mjs"), "--stdout"],
      {
        encoding: "utf8",
      },
    );
    expect(generated).toBe(readFileSync(resolve(root, "src/hyperliquid/keccak-f.ts"), "utf8"));
  });
});
