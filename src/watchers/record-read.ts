/**
 * Reads the exchange's record for one account (explorer `userDetails` + info `historicalOrders`) and turns it
 * into a RecordResult. Every failure is a typed "unavailable" result, never a throw: the caller says so once
 * (`sayUnavailableOnce`) and keeps today's behaviour (docs/exchange-record.md, "When the record is
 * unavailable").
 */

import type { FindingOptions, RecordFinding, RecordResult, RecordUnavailable } from "../core/record.js";
import { HyperliquidApiError } from "../protocol/hyperliquid/errors.js";
import type { ExplorerClient } from "../protocol/hyperliquid/explorer.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";
import type { ExplorerTx, HistoricalOrder } from "../protocol/hyperliquid/schemas.js";

/** The pure reading of what the record lists (src/switch/record.ts `readFinding`). */
export type ReadFinding = (
  txs: ReadonlyArray<ExplorerTx>,
  orders: ReadonlyArray<HistoricalOrder>,
  now: number,
  options?: FindingOptions,
) => RecordFinding;

export type ReadRecordParameters = {
  /** null when no explorer is configured (e.g. a third-party API host without one) */
  explorer: Pick<ExplorerClient, "userDetails"> | null;
  info: Pick<InfoClient, "historicalOrders">;
  /** the account whose switch it is */
  account: string;
  /**
   * The agent that signs, when it is not the account: its transactions are read too and merged by hash
   * (whether the explorer lists an agent-signed action under the master or the agent is not documented).
   */
  signer?: string | undefined;
  now: () => number;
  signal?: AbortSignal | undefined;
  options?: FindingOptions;
  /** what the lists say, handed in by the app or the command: the rule is the switch's, which this room does not see */
  readFinding: ReadFinding;
};

export function unavailableFrom(error: unknown, what: string): RecordUnavailable {
  if (error instanceof HyperliquidApiError) {
    const reason =
      error.kind === "rate_limited"
        ? "rate_limited"
        : error.kind === "malformed_response"
          ? "malformed"
          : error.kind === "bad_request"
            ? "unsupported"
            : "error";
    const hint =
      reason === "unsupported"
        ? " (the host does not serve it: a third-party API host? set --explorer-url, or accept no record)"
        : "";
    return {
      available: false,
      reason,
      detail: `${what}: ${error.kind}${error.status ? ` HTTP ${error.status}` : ""}${hint}`,
    };
  }
  return {
    available: false,
    reason: "error",
    detail: `${what}: ${error instanceof Error ? error.message : String(error)}`,
  };
}

export async function readRecord({
  explorer,
  info,
  account,
  signer,
  now,
  signal,
  options,
  readFinding,
}: ReadRecordParameters): Promise<RecordResult> {
  if (!explorer) {
    return { available: false, reason: "not_configured", detail: "no explorer URL is configured" };
  }
  const users = [account, ...(signer && signer.toLowerCase() !== account.toLowerCase() ? [signer] : [])];
  let txs: ExplorerTx[];
  try {
    txs = (await Promise.all(users.map((user) => explorer.userDetails({ user, signal })))).flat();
  } catch (error) {
    return unavailableFrom(error, "explorer userDetails");
  }
  let orders: Awaited<ReturnType<InfoClient["historicalOrders"]>>;
  try {
    orders = await info.historicalOrders({ user: account, signal });
  } catch (error) {
    return unavailableFrom(error, "info historicalOrders");
  }
  return readFinding(txs, orders, now(), options);
}

/**
 * Says "record unavailable" once per reason until the record is available again (then it may be said again
 * on the next outage). Returns true when the caller should log.
 */
export function createUnavailableGate(): (result: RecordResult) => boolean {
  let last: string | null = null;
  return (result) => {
    if (result.available) {
      last = null;
      return false;
    }
    if (last === result.reason) return false;
    last = result.reason;
    return true;
  };
}
