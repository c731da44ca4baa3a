/**
 * `doctor`'s checks of each account (docs/cli.md, "doctor"): the exchange's volume gate (on the user that signs),
 * the address budget and the days it lasts at this cadence (the budget monitor's arithmetic), and the explorer.
 */
import type { Clock } from "../../core/clock.js";
import { formatDuration } from "../../core/duration.js";
import { ExitCode } from "../../core/exit-codes.js";
import type { ExplorerClient } from "../../protocol/hyperliquid/explorer.js";
import type { UserRateLimit } from "../../protocol/hyperliquid/schemas.js";
import { VOLUME_GATE_USD } from "../../switch/model.js";
import { type CheckResult, exchangeCode, fail, ok, reasonOf, usd, warn } from "./report.js";

/** The $1,000,000 volume gate, on the volume of the user that signs (a subaccount's or vault's gate is its master's). */
export function checkVolume(
  account: string,
  gateUser: string,
  limit: UserRateLimit | null,
  error?: unknown,
): CheckResult {
  if (!limit)
    return fail(
      "volume",
      account,
      `userRateLimit of ${gateUser} could not be read: ${reasonOf(error)}`,
      "check --api-url",
      exchangeCode(error),
    );
  const volume = Number(limit.cumVlm);
  const whose = gateUser === account ? "" : ` (the gate is ${gateUser}'s volume)`;
  if (!(volume >= VOLUME_GATE_USD))
    return fail(
      "volume",
      account,
      `cumulative volume ${usd(volume)} is below the exchange's ${usd(VOLUME_GATE_USD)} requirement${whose}: every scheduleCancel is refused`,
      `trade ${usd(VOLUME_GATE_USD - volume, Math.ceil)} more on ${gateUser} before going live`,
      ExitCode.runtime,
    );
  return ok("volume", account, `cumulative volume ${usd(volume)} ≥ ${usd(VOLUME_GATE_USD)}${whose}`);
}

/** The address budget and the days it lasts at this cadence (the budget monitor's arithmetic). */
export function checkBudget(
  account: string,
  limit: UserRateLimit | null,
  actionsPerDay: number,
  warnDays: number,
  error?: unknown,
): CheckResult {
  if (!limit)
    return fail(
      "budget",
      account,
      `userRateLimit of ${account} could not be read: ${reasonOf(error)}`,
      "check --api-url",
      exchangeCode(error),
    );
  const cap = limit.nRequestsCap + (limit.nRequestsSurplus ?? 0);
  const left = Math.max(0, cap - limit.nRequestsUsed);
  const days = actionsPerDay > 0 ? left / actionsPerDay : Number.POSITIVE_INFINITY;
  const said = `${left.toLocaleString("en-US")} of ${cap.toLocaleString("en-US")} actions left: ${Number.isFinite(days) ? `${days.toFixed(1)} days` : "no end"} at ${actionsPerDay.toLocaleString("en-US")} pushes a day`;
  if (left === 0)
    return fail(
      "budget",
      account,
      `the address budget is used up (${limit.nRequestsUsed} of ${cap}): pushes are throttled to one per 10 s`,
      "trade volume (1 action per USDC) or reserveRequestWeight before going live",
      ExitCode.runtime,
    );
  if (days < warnDays) return warn("budget", account, said, "lengthen --interval or add volume");
  return ok("budget", account, said);
}

/**
 * The explorer reachable, and fresh: after a probe, its noop must be listed (the explorer's lag is not documented;
 * a record that lags only delays the reconciliation, so it warns).
 */
export async function checkExplorer(p: {
  explorer: Pick<ExplorerClient, "userDetails"> | null;
  account: string;
  signer: string;
  probeSentAt: number | null;
  clock: Clock;
}): Promise<CheckResult> {
  if (!p.explorer)
    return warn(
      "explorer",
      p.account,
      "no explorer URL: the exchange's record (lapses, refusals) is not read",
      "set --explorer-url (a third-party API host has none by default)",
    );
  try {
    const users = p.signer === p.account ? [p.account] : [p.account, p.signer];
    const txs = (await Promise.all(users.map((user) => p.explorer!.userDetails({ user })))).flat();
    const newest = txs.length > 0 ? Math.max(...txs.map((t) => t.time)) : null;
    const age =
      newest === null
        ? "no transactions listed"
        : `newest transaction ${formatDuration(Math.max(0, p.clock.now() - newest))} ago`;
    if (p.probeSentAt === null) return ok("explorer", p.account, `reachable; ${age}`);
    const listed = txs.some((t) => t.action.type === "noop" && t.time >= p.probeSentAt! - 5_000);
    return listed
      ? ok("explorer", p.account, `reachable and fresh: the probe's noop is listed; ${age}`)
      : warn(
          "explorer",
          p.account,
          `reachable but behind: the probe's noop is not listed yet; ${age}`,
          "the record lags: reconciliation waits for it (docs/exchange-record.md)",
        );
  } catch (error) {
    return fail(
      "explorer",
      p.account,
      `explorer userDetails failed: ${reasonOf(error)}`,
      "check --explorer-url",
      ExitCode.unavailable,
    );
  }
}
