/**
 * The trigger ledger as a state directory holds it, read synchronously for tests' assertions: the per-account
 * layout (`ledger/meta.json`, `ledger/<account>.json`) merged into the single-file shape (`accounts`, `engines`,
 * `updatedAt` and `lastNonce` the highest over the files), or an unmigrated `ledger.json`. No checks: the store's
 * own reader (src/switch/ledger.ts `readLedgerState`) is what the daemon and `status` use.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export type LedgerOnDisk = {
  updatedAt: number;
  lastNonce: number | null;
  assumeLimitOn: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: tests read the raw JSON
  accounts: Record<string, any>;
  engines: Record<string, { since: number }>;
};

export function ledgerOnDisk(stateDir: string): LedgerOnDisk {
  const dir = join(stateDir, "ledger");
  const meta = join(dir, "meta.json");
  if (!existsSync(meta)) return JSON.parse(readFileSync(join(stateDir, "ledger.json"), "utf8"));
  const m = JSON.parse(readFileSync(meta, "utf8"));
  const out: LedgerOnDisk = {
    updatedAt: m.updatedAt,
    lastNonce: m.lastNonce ?? null,
    assumeLimitOn: m.assumeLimitOn ?? null,
    accounts: {},
    engines: m.engines ?? {},
  };
  for (const name of readdirSync(dir).filter((n) => /^0x[0-9a-f]{40}\.json$/.test(n))) {
    const f = JSON.parse(readFileSync(join(dir, name), "utf8"));
    out.accounts[f.entry.account] = f.entry;
    out.updatedAt = Math.max(out.updatedAt, f.updatedAt);
    if (f.lastNonce !== null && f.lastNonce !== undefined)
      out.lastNonce = Math.max(out.lastNonce ?? 0, f.lastNonce);
  }
  return out;
}
