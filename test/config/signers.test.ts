/**
 * The `signers` block of the config file: its schema, its cross-field rules and its key loading. Each signer's key
 * follows the single key's rules (a file mode-checked, a variable, a systemd credential) and is never echoed.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { planSigners } from "../../src/app/daemon.js";
import { KeyError, loadSignerKeys } from "../../src/config/keys.js";
import { loadConfig } from "../../src/config/load.js";
import { configuredAccounts } from "../../src/config/weight.js";
import { issuesOf } from "./helpers.js";

const KEY_A = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const ADDRESS_A = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23";
const KEY_B = "11".repeat(32);
const ACCOUNT = "0x1111111111111111111111111111111111111111";
const VAULT = "0x2222222222222222222222222222222222222222";
const OTHER = "0x3333333333333333333333333333333333333333";

function withFile(data: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), "hl-signers-"));
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify(data));
  return { dir, file, load: () => loadConfig({ options: { config: file }, env: {}, cwd: dir }) };
}

const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("did not throw");
};

describe("config: signers", () => {
  test("behavior: a file's signers are read, relative key files resolved, accounts counted for the weight", () => {
    const { dir, load } = withFile({
      signers: [
        { name: "a", keyFile: "keys/a", account: ACCOUNT, vaults: [VAULT.toUpperCase().replace("0X", "0x")] },
        { name: "b", keyEnv: "HL_KEY_B", vaults: [OTHER] },
      ],
    });
    const { config, sources } = load();
    expect(config.signers).toEqual([
      { name: "a", keyFile: join(dir, "keys/a"), account: ACCOUNT, vaults: [VAULT] },
      { name: "b", keyEnv: "HL_KEY_B", vaults: [OTHER] },
    ]);
    expect(sources.signers).toMatch(/^file /);
    expect(configuredAccounts(config)).toBe(3);
    expect(
      planSigners(config.signers.map((s, i) => ({ ...s, address: `0x${String(i).repeat(40)}` }))),
    ).toEqual([
      { account: ACCOUNT, vaultAddress: undefined, signer: `0x${"0".repeat(40)}` },
      { account: VAULT, vaultAddress: VAULT, signer: `0x${"0".repeat(40)}` },
      { account: OTHER, vaultAddress: OTHER, signer: `0x${"1".repeat(40)}` },
    ]);
  });

  test("error: each signer needs exactly one key source and something to arm", () => {
    const issues = issuesOf(
      withFile({
        signers: [
          { name: "none", account: ACCOUNT },
          { name: "two", keyFile: "/k", keyEnv: "HL_K", account: VAULT },
          { name: "empty", keyEnv: "HL_K" },
        ],
      }).load,
    );
    expect(issues).toEqual([
      expect.stringMatching(/^signers\.0 .*needs exactly one of keyFile, keyEnv, credential \(found 0\)/),
      expect.stringMatching(/^signers\.1 .*needs exactly one of keyFile, keyEnv, credential \(found 2\)/),
      expect.stringMatching(/^signers\.2 .*arms nothing: give account, vaults or both/),
    ]);
  });

  test("error: a key written in the file is refused without being echoed, wherever it was put", () => {
    const issues = issuesOf(
      withFile({
        signers: [
          { name: "a", privateKey: `0x${KEY_A}`, account: ACCOUNT },
          { name: "b", keyEnv: `0x${KEY_B}`, account: VAULT },
        ],
      }).load,
    );
    const text = issues.join("\n");
    expect(text).toContain("signers.0");
    expect(text).toContain("unknown key privateKey");
    expect(text).toContain("the key itself is never written in the config");
    expect(text).toContain("signers.1.keyEnv");
    expect(text).not.toContain(KEY_A.slice(0, 12));
    expect(text).not.toContain(KEY_B.slice(0, 12));
  });

  test("error: signers exclude keyFile, accounts and vault; names are unique; an account has one signer", () => {
    const { file, dir } = withFile({
      keyFile: "/etc/k",
      accounts: [OTHER],
      signers: [
        { name: "a", keyEnv: "HL_A", account: ACCOUNT },
        { name: "a", keyEnv: "HL_B", vaults: [ACCOUNT] },
      ],
    });
    const issues = issuesOf(() => loadConfig({ options: { config: file }, env: {}, cwd: dir }));
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^keyFile .*with signers, each signer names its own key and accounts; drop keyFile/,
        ),
        expect.stringMatching(/^accounts .*with signers, each signer names its own accounts; drop accounts/),
        "signers.1.name = a: another signer has this name",
        `signers.1 (a): account ${ACCOUNT} is already armed by signer a`,
      ]),
    );
  });
});

describe("loadSignerKeys", () => {
  test("behavior: each signer's key from its own place: a key file, a variable, a systemd credential", () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-signer-keys-"));
    writeFileSync(join(dir, "a.key"), `0x${KEY_A}\n`, { mode: 0o600 });
    const creds = mkdtempSync(join(tmpdir(), "hl-signer-creds-"));
    writeFileSync(join(creds, "hl-key-c"), `${"22".repeat(32)}`);
    chmodSync(join(creds, "hl-key-c"), 0o444);
    const loaded = loadSignerKeys(
      [
        { name: "a", keyFile: "a.key", account: ACCOUNT, vaults: [] },
        { name: "b", keyEnv: "HL_KEY_B", vaults: [VAULT] },
        { name: "c", credential: "hl-key-c", account: OTHER, vaults: [] },
      ],
      { env: { HL_KEY_B: KEY_B, CREDENTIALS_DIRECTORY: creds }, cwd: dir },
    );
    expect(loaded.map((k) => [k.name, k.source, k.envName])).toEqual([
      ["a", "key-file", undefined],
      ["b", "env", "HL_KEY_B"],
      ["c", "credentials", undefined],
    ]);
    expect(loaded[0]).toMatchObject({ address: ADDRESS_A, account: ACCOUNT, vaults: [] });
    expect(loaded[1]!.where).toBe("env HL_KEY_B (signer b)");
  });

  test("error: each failure names the signer and the place, never the key; exit 78", () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-signer-keys-"));
    writeFileSync(join(dir, "open.key"), KEY_A, { mode: 0o644 });
    chmodSync(join(dir, "open.key"), 0o644);
    const cases: [Parameters<typeof loadSignerKeys>[0][number], Record<string, string>, RegExp][] = [
      [
        { name: "f", keyFile: join(dir, "open.key"), vaults: [VAULT] },
        {},
        /^Signer f: Key file .* has mode 644/,
      ],
      [
        { name: "m", keyFile: join(dir, "missing"), vaults: [VAULT] },
        {},
        /^Signer m: Key file .* does not exist/,
      ],
      [
        { name: "e", keyEnv: "HL_NONE", vaults: [VAULT] },
        {},
        /^Signer e: no key: the environment variable HL_NONE/,
      ],
      [
        { name: "c", credential: "x", vaults: [VAULT] },
        {},
        /^Signer c: no key: credential x needs systemd's/,
      ],
      [
        { name: "t", keyEnv: "HL_T", vaults: [VAULT] },
        { HL_T: `${KEY_B}00` },
        /env HL_T \(signer t\) is not a/,
      ],
    ];
    for (const [signer, env, message] of cases) {
      const error = thrown(() => loadSignerKeys([signer], { env, cwd: dir }));
      expect(error).toBeInstanceOf(KeyError);
      expect((error as KeyError).exitCode).toBe(78);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain(KEY_A.slice(0, 12));
      expect(error.message).not.toContain(KEY_B.slice(0, 12));
    }
  });

  test("error: two signers with one key are refused (one key, one nonce sequence)", () => {
    const error = thrown(() =>
      loadSignerKeys(
        [
          { name: "a", keyEnv: "HL_A", account: ACCOUNT, vaults: [] },
          { name: "b", keyEnv: "HL_B", account: VAULT, vaults: [] },
        ],
        { env: { HL_A: KEY_A, HL_B: `0x${KEY_A}` } },
      ),
    );
    expect(error.message).toContain(`Signers a and b hold the same key (${ADDRESS_A}).`);
    expect(error.message).toContain("give each signer its own key");
  });
});
