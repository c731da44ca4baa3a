/**
 * The exchange's record as the daemon reads it (docs/exchange-record.md): the explorer (only from an explicit
 * --explorer-url when an API URL was given to the daemon: an official explorer never describes another host's
 * exchange), each account's read (bounded by one request time-out, under its own signer), the start-up
 * reconciliation of an ASSUMED ledger count, and the switches' reads after it (never throwing; awaited on close).
 * Wired by the record component (src/app/parts/record.ts).
 */

import { effectiveExplorerUrl } from "../../config/load.js";
import type { Config } from "../../config/schema.js";
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { ExchangeTime, Runtime } from "../../core/runtime.js";
import { ExplorerClient } from "../../protocol/hyperliquid/explorer.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { Ledger } from "../../switch/ledger.js";
import { type RecordResult, readFinding, reconcileLedger } from "../../switch/record.js";
import { reconcileAtStart } from "../../switch/record-reconcile.js";
import { createReconcileReporter } from "../../watchers/record-log.js";
import { readRecord } from "../../watchers/record-read.js";
import type { StartDaemonParameters } from "../context.js";

export type RecordReads = {
  /** null: no explorer, the record is not read */
  explorer: ExplorerClient | null;
  /** a switch's read (never throws; in flight, it is `track`ed); undefined without an explorer */
  readRecord: ((account: string) => Promise<RecordResult>) | undefined;
  /** each account's record as read at start-up, before the switches start */
  startRecords: Map<string, RecordResult>;
};

export async function openRecord({
  params,
  config,
  runtime,
  time,
  accounts,
  signerOf,
  info,
  ledger,
  log,
  bus,
  track,
}: {
  params: StartDaemonParameters;
  config: Config;
  runtime: Runtime;
  time: ExchangeTime;
  accounts: readonly string[];
  /** the signer an account's requests are signed by (its record is read for that signer too) */
  signerOf: (account: string) => string;
  info: InfoClient;
  ledger: Ledger;
  log: Logger;
  bus: EventBus;
  /** keeps a promise until it settles (the component awaits them on close) */
  track: (work: Promise<unknown>) => void;
}): Promise<RecordReads> {
  const explorerUrl =
    params.explorerUrl ?? (params.apiUrl && !config.explorerUrl ? null : effectiveExplorerUrl(config));
  const explorer = explorerUrl ? new ExplorerClient({ explorerUrl, timeoutMs: config.requestTimeout }) : null;
  const reconcileLog = createReconcileReporter({ bus, reconcile: reconcileLedger });
  const readAccountRecord = async (account: string): Promise<RecordResult> => {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    runtime.signal.addEventListener("abort", onAbort, { once: true });
    const limit = runtime.timers.after(config.requestTimeout, () => controller.abort());
    try {
      const result = await readRecord({
        explorer,
        info,
        account,
        signer: signerOf(account),
        now: () => time.now(),
        signal: controller.signal,
        readFinding,
      });
      reconcileLog.availability(account, result);
      return result;
    } finally {
      limit.cancel();
      runtime.signal.removeEventListener("abort", onAbort);
    }
  };
  // Start-up: read before the switches start; each switch applies its record once it has started. Only an
  // ASSUMED count (an unreadable ledger) is settled here, before the switch reads its entry: a record that
  // covers the whole UTC day replaces the assumption with its count (docs/exchange-record.md).
  const startRecords = new Map<string, RecordResult>();
  await Promise.all(
    accounts.map(async (account) => {
      try {
        const result = await readAccountRecord(account);
        startRecords.set(account, result);
        // what to say and what to apply: decided by a pure rule (src/switch/record-reconcile.ts)
        const start = reconcileAtStart(ledger.get(account), result);
        if (start.say) reconcileLog.assumed(account, start.say, result);
        if (start.apply) ledger.reconcile(account, start.apply, []);
      } catch (error) {
        log.warn({ event: "record.failed", account, err: error }, "reconciling with the record failed");
      }
    }),
  );
  // A switch's read never throws; the reads in flight are awaited on close.
  const read = explorer
    ? (user: string) => {
        const work = readAccountRecord(user).catch(
          (error): RecordResult => ({
            available: false,
            reason: "error",
            detail: error instanceof Error ? error.message : String(error),
          }),
        );
        track(work);
        return work;
      }
    : undefined;
  return { explorer, readRecord: read, startRecords };
}
