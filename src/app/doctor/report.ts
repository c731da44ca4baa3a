/**
 * `doctor`'s findings and the one exit code they make (docs/cli.md, "doctor"). Pure: every check returns rows of
 * this shape; `exitCodeOf` picks the most severe failure's code, so a script reads one number and a person the
 * table.
 *
 * Each failure carries the exit code the contract already gives that kind of cause (docs/cli.md, "Exit codes"):
 * 78 what only a change of the set-up fixes (the key, the account, the network, the weight, the agent, the state
 * directory), 1 what the exchange would refuse (the volume gate, a used-up budget) or a clock that makes the
 * switch suspect, 69 what could not be reached (the exchange, the explorer, the health port, the engine), 75 a
 * state directory held by a running daemon. When several fail, the most severe wins, in this order: 78 first (it
 * never clears by itself), then 1 (the account must change: trade volume, buy budget, fix time sync), then 69
 * (may come back by itself), then 75 (clears when the other daemon stops).
 */
import { BaseError } from "../../core/errors/base.js";
import { ExitCode } from "../../core/exit-codes.js";
import { HyperliquidApiError } from "../../protocol/hyperliquid/errors.js";

export type CheckStatus = "ok" | "warn" | "fail";

export type CheckResult = {
  /** the check's name: `key`, `role`, `account`, `volume`, … */
  check: string;
  /** the account it is about, or null for the signer's or the host's checks */
  account: string | null;
  status: CheckStatus;
  /** what was found, one line */
  finding: string;
  /** what to do about it (empty when nothing) */
  action: string;
  /** the exit code this failure maps onto (0 unless `fail`) */
  exitCode: ExitCode;
};

/** The failures' exit codes, most severe first. */
export const SEVERITY: readonly ExitCode[] = Object.freeze([
  ExitCode.config,
  ExitCode.cantCreat,
  ExitCode.runtime,
  ExitCode.unavailable,
  ExitCode.tempFail,
]);

/** A passing row. */
export const ok = (check: string, account: string | null, finding: string, action = ""): CheckResult => ({
  check,
  account,
  status: "ok",
  finding,
  action,
  exitCode: ExitCode.ok,
});

/** A row that passes but wants a look (it never changes the exit code). */
export const warn = (
  check: string,
  account: string | null,
  finding: string,
  action: string,
): CheckResult => ({
  check,
  account,
  status: "warn",
  finding,
  action,
  exitCode: ExitCode.ok,
});

/** A failing row with the exit code of its kind of cause. */
export const fail = (
  check: string,
  account: string | null,
  finding: string,
  action: string,
  exitCode: ExitCode,
): CheckResult => ({ check, account, status: "fail", finding, action, exitCode });

/** 0 when no row fails; else the most severe failing row's code (SEVERITY's order; any other code counts as 1). */
export function exitCodeOf(results: readonly CheckResult[]): ExitCode {
  const codes = new Set(
    results
      .filter((r) => r.status === "fail")
      .map((r) => (SEVERITY.includes(r.exitCode) ? r.exitCode : ExitCode.runtime)),
  );
  return SEVERITY.find((c) => codes.has(c)) ?? ExitCode.ok;
}

/** The table for people: one row per check per account, the columns padded (a finding and an action may wrap). */
export function formatTable(results: readonly CheckResult[]): string {
  const head = ["check", "account", "status", "finding", "what to do"];
  const rows = results.map((r) => [
    r.check,
    r.account ?? "-",
    r.status === "fail" ? `FAIL (${r.exitCode})` : r.status === "warn" ? "warn" : "ok",
    r.finding,
    r.action,
  ]);
  const widths = [0, 1, 2].map((i) => Math.max(head[i]!.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `${cells
      .slice(0, 3)
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")}  ${cells[3]}${cells[4] ? ` -> ${cells[4]}` : ""}`;
  return [line(head.slice(0, 4).concat([""])).trimEnd(), ...rows.map(line)].join("\n");
}

/** The one line under the table. */
export function summaryLine(results: readonly CheckResult[]): string {
  const failed = results.filter((r) => r.status === "fail").length;
  const warned = results.filter((r) => r.status === "warn").length;
  const code = exitCodeOf(results);
  return failed === 0
    ? `all ${results.length} checks pass${warned ? ` (${warned} warning${warned > 1 ? "s" : ""})` : ""}: ready to go live`
    : `${failed} of ${results.length} checks fail${warned ? `, ${warned} warn` : ""}: exit ${code}`;
}

/** A failure's one line: the exchange's or our error's short message, never a stack. */
export function reasonOf(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage;
  return error instanceof Error ? error.message : String(error);
}

/** 69 when the exchange could not be reached or answered nothing useful, 1 when it refused. */
export function exchangeCode(error: unknown): ExitCode {
  if (error instanceof HyperliquidApiError)
    return error.retryable || error.kind === "malformed_response" ? ExitCode.unavailable : ExitCode.runtime;
  return ExitCode.unavailable;
}

/** Whole dollars, rounded down (a volume just below the gate never reads as the gate), or up for what is missing. */
export const usd = (n: number, round: (x: number) => number = Math.floor) =>
  `$${round(n).toLocaleString("en-US")}`;
