import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { KeyError, loadSigningKey } from "../../src/config/keys.js";

const HEX = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const ADDRESS = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23";

describe("loadSigningKey", () => {
  test("default: order is --key-file, HL_PRIVATE_KEY, $CREDENTIALS_DIRECTORY/hl-private-key", () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-keys-"));
    const file = join(dir, "key");
    writeFileSync(file, `  0x${HEX}\n`, { mode: 0o600 });
    const creds = mkdtempSync(join(tmpdir(), "hl-creds-"));
    writeFileSync(join(creds, "hl-private-key"), HEX);
    chmodSync(join(creds, "hl-private-key"), 0o444);
    const env = { HL_PRIVATE_KEY: `0x${"11".repeat(32)}`, CREDENTIALS_DIRECTORY: creds };
    expect(loadSigningKey({ keyFile: file, env })).toMatchObject({ source: "key-file", address: ADDRESS });
    expect(loadSigningKey({ env }).source).toBe("env");
    const c = loadSigningKey({ env: { CREDENTIALS_DIRECTORY: creds } });
    expect(c).toMatchObject({ source: "credentials", address: ADDRESS });
  });

  test("error: a bad key names the place and never the text", () => {
    for (const text of [HEX.slice(1), `${HEX}00`, "0".repeat(64)]) {
      let error: unknown;
      try {
        loadSigningKey({ env: { HL_PRIVATE_KEY: text } });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(KeyError);
      expect((error as KeyError).exitCode).toBe(78);
      expect((error as Error).message).toContain("env HL_PRIVATE_KEY");
      expect((error as Error).message).not.toContain(text.slice(0, 12));
      expect((error as Error).cause).toBeUndefined();
    }
  });

  test("error: what a bad key holds is said in counts, never in characters; an address is named as one", () => {
    const said = (text: string) => {
      try {
        loadSigningKey({ env: { HL_PRIVATE_KEY: text } });
      } catch (e) {
        return String((e as KeyError).message);
      }
      throw new Error("accepted");
    };
    // 62 digits after 0x: the count is of digits, not of characters (0x included)
    expect(said(`0x${HEX.slice(2)}`)).toContain("(found 62 hexadecimal digits).");
    expect(said(HEX.slice(2))).toContain("(found 62 hexadecimal digits).");
    expect(said(`${HEX.slice(0, 30)} ${HEX.slice(30, 60)}`)).toContain(
      "found 60 hexadecimal digits and 1 other character, with whitespace inside",
    );
    expect(said(`0x${"g".repeat(64)}`)).toContain("found 0 hexadecimal digits and 64 other characters");
    const address = said(ADDRESS);
    expect(address).toContain("that is an address (20 bytes), not a private key");
    expect(address).not.toContain(ADDRESS.slice(2, 14));
  });

  test("error: a key file other users can read is refused with its mode", () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-keys-"));
    const file = join(dir, "key");
    writeFileSync(file, HEX);
    chmodSync(file, 0o604);
    expect(() => loadSigningKey({ keyFile: file, env: {} })).toThrow(`Key file ${file} has mode 604`);
    expect(() => loadSigningKey({ keyFile: join(dir, "nope"), env: {} })).toThrow("does not exist");
  });
});
