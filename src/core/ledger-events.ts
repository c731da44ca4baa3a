/**
 * The trigger ledger's store (src/switch/ledger.ts, ledger-files.ts): what it read, repaired, migrated, set aside
 * and failed to write, as typed events on the daemon's bus. The store words nothing: its log lines (module `ledger`)
 * are a subscriber in src/surface/switch/ledger.ts (`ledgerStoreLog`). `path` is the file or directory concerned;
 * `dir` the ledger's directory, `<stateDir>/ledger`.
 */
/** What the store tells, without its `module` (the store's own `publish` adds it). */
export type LedgerStoreFact =
  | { readonly type: "ledgerLoaded"; readonly path: string; readonly accounts: number }
  | {
      /** a damaged file: moved aside (`movedTo`, null when gone or not moved), the limit assumed today */
      readonly type: "ledgerCorrupt";
      readonly path: string;
      /** the account of an account's file; null: meta.json or ledger.json (every account not stored) */
      readonly account: string | null;
      readonly reason: string;
      readonly movedTo: string | null;
      readonly assumedTriggersToday: number;
    }
  | {
      /** a damaged file that could not be moved aside */
      readonly type: "ledgerAsideFailed";
      readonly path: string;
      readonly reason: string | undefined;
    }
  | {
      /** the old ledger.json renamed aside: after a migration (`why` null), or a leftover beside the per-account ledger */
      readonly type: "ledgerMigrated";
      readonly from: string;
      readonly to: string;
      readonly kept: string;
      readonly accounts: number;
      readonly why: string | null;
    }
  | {
      /** `write`: the per-account files could not be written (ledger.json kept); `rename`: ledger.json not renamed */
      readonly type: "ledgerMigrationFailed";
      readonly stage: "write" | "rename";
      readonly path: string;
      readonly dir: string;
      readonly reason: string | undefined;
    }
  | {
      readonly type: "ledgerRolled";
      readonly account: string;
      readonly from: string;
      readonly to: string;
      readonly previousTriggers: number;
    }
  | {
      /** `updatedAt` (ms) a wrong clock wrote ahead, set back to the verified time `to` (ms) */
      readonly type: "ledgerUpdatedAtRepaired";
      readonly from: number;
      readonly to: number;
      readonly lastNonce: number | null;
      readonly lastNonceBefore: number | null;
    }
  | {
      /** `round`: a round of writes failed (first of a streak); `directory`: the directory could not be made */
      readonly type: "ledgerWriteFailed";
      readonly stage: "round" | "directory";
      readonly path: string;
      readonly reason: string | undefined;
    }
  | { readonly type: "ledgerWriteRecovered"; readonly path: string }
  | { readonly type: "ledgerTempRemoved"; readonly path: string };

export type LedgerStoreEvent = { readonly module: "ledger" } & LedgerStoreFact;
