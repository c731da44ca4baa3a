/**
 * The signer's private key comes only from, in order: --key-file FILE, $HL_PRIVATE_KEY, or
 * $CREDENTIALS_DIRECTORY/hl-private-key (systemd LoadCredential=). It is never a flag value, never logged,
 * never in an error message (errors name the place and the rule, never the text), never written to disk.
 */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";
import { type LocalSigner, localSigner } from "../protocol/hyperliquid/signing.js";
import type { SignerConfig } from "./options.js";

export type KeySource = "key-file" | "env" | "credentials";

export const CREDENTIAL_NAME = "hl-private-key";

/** The key is missing, unreadable, too open, or not a key. Exit 78. Never carries the key text. */
export class KeyError extends BaseError {
  override name = "KeyError";
  readonly exitCode = ExitCode.config;
}

export type LoadSigningKeyParameters = {
  /** --key-file (or the config's keyFile) */
  keyFile?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** default: env.CREDENTIALS_DIRECTORY */
  credentialsDirectory?: string | undefined;
  cwd?: string;
};

export type SigningKey = {
  wallet: LocalSigner;
  source: KeySource;
  /** For people: `key file /etc/hl/key`, `env HL_PRIVATE_KEY`, `credentials /run/credentials/x/hl-private-key`. */
  where: string;
  /** The signer's address, lower-case. */
  address: string;
};

const KEY_RE = /^(0x)?[0-9a-fA-F]{64}$/;

/**
 * What a text that is not a key holds, in counts only (never a character of it): the hexadecimal digits after an
 * optional 0x, anything else, and whether it is the shape of an address (the mistake of pasting the wallet's address,
 * 40 digits, where its private key belongs).
 */
export function describeKeyText(text: string): string {
  const body = text.replace(/^0x/i, "");
  let hex = 0;
  let other = 0;
  for (const c of body) /[0-9a-fA-F]/.test(c) ? hex++ : other++;
  if (other === 0 && hex === 40)
    return "found 40 hexadecimal digits: that is an address (20 bytes), not a private key; give the key that signs for it";
  const digits = `found ${hex} hexadecimal digit${hex === 1 ? "" : "s"}`;
  const rest = other > 0 ? ` and ${other} other character${other === 1 ? "" : "s"}` : "";
  return `${digits}${rest}${/\s/.test(text) ? ", with whitespace inside" : ""}`;
}

/** Checks the text is a 32-byte hex key and builds the wallet; the message names `where`, never the text. */
export function walletFromKeyText(text: string, where: string): LocalSigner {
  const trimmed = text.trim();
  if (!KEY_RE.test(trimmed)) {
    throw new KeyError(`The key in ${where} is not a private key.`, {
      metaMessages: [
        `A private key is 32 bytes written as 64 hexadecimal digits, with or without 0x (${describeKeyText(trimmed)}).`,
      ],
    });
  }
  try {
    return localSigner(trimmed.startsWith("0x") ? trimmed : `0x${trimmed}`);
  } catch {
    // No cause: ethers' message would echo the value.
    throw new KeyError(
      `The key in ${where} is not a valid secp256k1 private key (zero or above the curve order).`,
    );
  }
}

/** Refuses a key file that group or others may read or write (mode & 0o077), as ssh does. */
export function checkKeyFileMode(path: string, mode: number): void {
  if ((mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(3, "0");
    throw new KeyError(`Key file ${path} has mode ${octal}: group or others can read it.`, {
      metaMessages: [`Run: chmod 600 ${path}`],
    });
  }
}

function readKeyFile(path: string, { checkMode }: { checkMode: boolean }): string {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new KeyError(
      code === "ENOENT" ? `Key file ${path} does not exist.` : `Key file ${path} cannot be read (${code}).`,
    );
  }
  if (!stat.isFile()) throw new KeyError(`Key file ${path} is not a regular file.`);
  if (checkMode) checkKeyFileMode(path, Number(stat.mode));
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new KeyError(`Key file ${path} cannot be read (${(error as NodeJS.ErrnoException).code}).`);
  }
}

/**
 * Loads the signer's key from the first place that has one. Throws KeyError (exit 78) when none has one
 * (saying where it looked), when the key file is group/other-readable, or when the text is not a key.
 * The systemd credential is not mode-checked: systemd owns that directory and its permissions.
 */
export function loadSigningKey({
  keyFile,
  env = {},
  credentialsDirectory = env.CREDENTIALS_DIRECTORY,
  cwd = ".",
}: LoadSigningKeyParameters = {}): SigningKey {
  const done = (wallet: LocalSigner, source: KeySource, where: string): SigningKey => ({
    wallet,
    source,
    where,
    address: wallet.address.toLowerCase(),
  });
  if (keyFile) {
    const path = isAbsolute(keyFile) ? keyFile : resolve(cwd, keyFile);
    const where = `key file ${path}`;
    return done(walletFromKeyText(readKeyFile(path, { checkMode: true }), where), "key-file", where);
  }
  const fromEnv = env.HL_PRIVATE_KEY;
  if (fromEnv !== undefined && fromEnv !== "") {
    const where = "env HL_PRIVATE_KEY";
    return done(walletFromKeyText(fromEnv, where), "env", where);
  }
  if (credentialsDirectory) {
    const path = join(credentialsDirectory, CREDENTIAL_NAME);
    let exists = true;
    try {
      statSync(path);
    } catch {
      exists = false;
    }
    if (exists) {
      const where = `credentials ${path}`;
      return done(walletFromKeyText(readKeyFile(path, { checkMode: false }), where), "credentials", where);
    }
  }
  throw new KeyError("No signing key found.", {
    metaMessages: [
      "Looked for, in order: --key-file FILE (or keyFile / HL_KEY_FILE), the environment variable HL_PRIVATE_KEY, " +
        `and $CREDENTIALS_DIRECTORY/${CREDENTIAL_NAME}${credentialsDirectory ? ` (${join(credentialsDirectory, CREDENTIAL_NAME)}: absent)` : " (CREDENTIALS_DIRECTORY is not set)"}.`,
      "The key is never accepted as a flag value.",
    ],
  });
}

/** One signer of a daemon carrying several (config `signers`), its key loaded. */
export type LoadedSigner = SigningKey & {
  name: string;
  /** the account pushed without vaultAddress, if any */
  account: string | undefined;
  /** the subaccounts and vaults pushed with vaultAddress */
  vaults: string[];
  /** the environment variable the key came from (the service blanks it), when it came from one */
  envName: string | undefined;
};

/**
 * Loads every signer's key from its own place, by the same rules as the single key (a key file mode-checked, an
 * environment variable, a systemd credential unchecked), each message naming the signer and the place, never the
 * text. Two signers with the same key are refused: one key has one nonce sequence, which two signers would split.
 */
export function loadSignerKeys(
  signers: readonly SignerConfig[],
  { env = {}, credentialsDirectory = env.CREDENTIALS_DIRECTORY, cwd = "." }: LoadSigningKeyParameters = {},
): LoadedSigner[] {
  const loaded: LoadedSigner[] = [];
  const named = <T>(label: string, read: () => T): T => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof KeyError) || error.shortMessage.startsWith(label)) throw error;
      throw new KeyError(`${label}: ${error.shortMessage}`, { metaMessages: error.metaMessages });
    }
  };
  for (const s of signers) {
    const label = `Signer ${s.name}`;
    let key: SigningKey;
    if (s.keyFile !== undefined) {
      const path = isAbsolute(s.keyFile) ? s.keyFile : resolve(cwd, s.keyFile);
      const where = `key file ${path} (signer ${s.name})`;
      const text = named(label, () => readKeyFile(path, { checkMode: true }));
      key = signingKey(walletFromKeyText(text, where), "key-file", where);
    } else if (s.keyEnv !== undefined) {
      const text = env[s.keyEnv];
      const where = `env ${s.keyEnv} (signer ${s.name})`;
      if (text === undefined || text === "")
        throw new KeyError(`${label}: no key: the environment variable ${s.keyEnv} is not set.`);
      key = signingKey(walletFromKeyText(text, where), "env", where);
    } else {
      const name = s.credential!;
      if (!credentialsDirectory)
        throw new KeyError(
          `${label}: no key: credential ${name} needs systemd's CREDENTIALS_DIRECTORY (LoadCredential=), which is not set.`,
        );
      const path = join(credentialsDirectory, name);
      const where = `credentials ${path} (signer ${s.name})`;
      key = signingKey(
        walletFromKeyText(readKeyFile(path, { checkMode: false }), where),
        "credentials",
        where,
      );
    }
    const twin = loaded.find((l) => l.address === key.address);
    if (twin)
      throw new KeyError(`Signers ${twin.name} and ${s.name} hold the same key (${key.address}).`, {
        metaMessages: [
          "One key has one nonce sequence: give each signer its own key (an agent key per signer).",
        ],
      });
    loaded.push({ ...key, name: s.name, account: s.account, vaults: [...s.vaults], envName: s.keyEnv });
  }
  return loaded;
}

function signingKey(wallet: LocalSigner, source: KeySource, where: string): SigningKey {
  return { wallet, source, where, address: wallet.address.toLowerCase() };
}
