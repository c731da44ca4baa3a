/**
 * Errors never echo secrets (issue 16, item 5): a private key pasted into any setting, from a flag, the
 * environment or the config file, is masked in every message; URL credentials and path keys stay redacted.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { maskSecrets } from "../../src/core/redact.js";
import { cli } from "../helpers/cli.js";

const HEX = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const KEY = `0x${HEX}`;
const tmp = mkdtempSync(path.join(tmpdir(), "hl-secrets-"));

describe("maskSecrets", () => {
  test("default: 64-hex values with or without 0x and URL credentials are masked; addresses are not", () => {
    const address = "0x5b38da6a701c568545dcfcb03fcb875f56beddc4";
    const out = maskSecrets(
      `a ${KEY} b ${HEX.toUpperCase()} c https://bob:hunter22@rpc.example/x ${address}`,
    );
    expect(out).not.toMatch(/[0-9a-fA-F]{64}/);
    expect(out).not.toContain("hunter22");
    expect(out).toContain("https://***@rpc.example/x");
    expect(out).toContain(address);
  });
});

describe("configuration errors never print a pasted key", () => {
  const file = path.join(tmp, "pasted.json");
  writeFileSync(file, JSON.stringify({ accounts: [KEY], apiUrl: KEY }));
  const cases: Array<{ what: string; args: string[]; env?: NodeJS.ProcessEnv; hidden?: boolean }> = [
    { what: "--account", args: ["--account", KEY] },
    { what: "HL_ACCOUNTS", args: [], env: { HL_ACCOUNTS: `0x${"1".repeat(40)},${KEY}` } },
    { what: "config accounts and apiUrl", args: ["--config", file] },
    { what: "--api-url", args: ["--api-url", KEY] },
    { what: "--api-url with a key in the host", args: ["--api-url", `ftp://${HEX}.example`] },
    { what: "HL_INTERVAL", args: [], env: { HL_INTERVAL: KEY } },
    { what: "HL_DEADLINE without 0x", args: [], env: { HL_DEADLINE: HEX } },
    { what: "--vault", args: ["--vault", KEY] },
    // Shown without the credentials at all, or not shown at all:
    { what: "--guard-url", args: ["--guard-url", `ftp://u:${HEX}@host/`], hidden: true },
    { what: "a positional argument", args: [KEY], hidden: true },
  ];
  for (const c of cases) {
    test(`error: ${c.what}`, async () => {
      for (const tty of [true, false]) {
        const r = await cli(["run", ...c.args, "--json"], { env: c.env ?? {}, tty });
        expect(r.code, r.stderr).not.toBe(0);
        const all = r.stdout + r.stderr;
        expect(all.length).toBeGreaterThan(0);
        expect(all.toLowerCase()).not.toContain(HEX);
        if (!c.hidden) expect(all).toContain("[64 hex digits masked]");
      }
    });
  }

  test("error: an RPC URL's credentials and path key stay redacted in errors", async () => {
    const r = await cli([
      "config",
      "check",
      "--no-key",
      "--rpc-url",
      "ftp://alice:s3cretpw@rpc.example/ENDPOINTKEY123/evm",
    ]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("rpcUrl");
    expect(r.stderr).not.toContain("s3cretpw");
    expect(r.stderr).not.toContain("ENDPOINTKEY123");
  });
});
