/**
 * Whether a configuration ran before (src/config/weight.ts `deathRoomVerdict`): its state directory's ledger holds
 * an entry for every account the configuration names, and at least as many as it arms, in either layout (the
 * per-account files of `ledger/`, or a `ledger.json` not yet migrated). Read only; an unreadable or absent ledger is a
 * new configuration.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/options.js";
import { configuredAccounts } from "../config/weight.js";
import { checkStateFile } from "../core/files.js";
import { ACCOUNT_FILE, LEDGER_DIR, LEDGER_FILE } from "../switch/ledger-schema.js";

/** The addresses a configuration names itself (its accounts, vault, signers' accounts and vaults), lower-case. */
export function namedAccounts(config: Config): string[] {
  const named =
    config.signers.length > 0
      ? config.signers.flatMap((s) => [...(s.account ? [s.account] : []), ...s.vaults])
      : [...config.accounts, ...(config.vault ? [config.vault] : [])];
  return [...new Set(named.map((a) => a.toLowerCase()))];
}

/** The accounts the per-account ledger holds a file for; none when the folder is absent or unreadable. */
function accountsInFiles(stateDir: string): string[] {
  try {
    return readdirSync(join(stateDir, LEDGER_DIR)).flatMap((n) => ACCOUNT_FILE.exec(n)?.[1] ?? []);
  } catch {
    return [];
  }
}

export async function configRanBefore(stateDir: string, config: Config): Promise<boolean> {
  const files = accountsInFiles(stateDir);
  if (files.length > 0) {
    const held = new Set(files);
    return held.size >= configuredAccounts(config) && namedAccounts(config).every((a) => held.has(a));
  }
  // Read as the ledger reads it (src/core/files.ts): a symlink (to /dev/zero), a FIFO or a huge file is not read
  // (a plain read would never end or never return, before the ledger could move it aside and assume the limit).
  const checked = await checkStateFile(join(stateDir, LEDGER_FILE));
  if (!checked.ok || !checked.exists) return false;
  let accounts: Record<string, unknown>;
  try {
    const parsed = JSON.parse(checked.text) as { accounts?: unknown };
    if (typeof parsed.accounts !== "object" || parsed.accounts === null) return false;
    accounts = parsed.accounts as Record<string, unknown>;
  } catch {
    return false;
  }
  const held = new Set(Object.keys(accounts).map((a) => a.toLowerCase()));
  return held.size >= configuredAccounts(config) && namedAccounts(config).every((a) => held.has(a));
}
