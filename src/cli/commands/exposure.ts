/**
 * `hl-deadman exposure ADDR... [--dex NAME] [--json]`: one batchClearinghouseStates query per dex, shown as
 * a table per account for people, or (--json) an array with one entry per address in the order given:
 * `{ address, dex, state (as received), derived (AccountFigures) }`.
 *
 * Exit codes: 2 for an invalid address (every bad one is named; nothing is sent), 78 for a bad configuration,
 * 69 when the API cannot answer (unreachable, time-out, 429, 5xx, refused or unreadable answer).
 */
import { type Command, Option } from "commander";
import { loadConfig } from "../../config/load.js";
import { NETWORK_URLS } from "../../config/schema.js";
import { isAddress } from "../../core/address.js";
import { redactUrl } from "../../core/redact.js";
import { HyperliquidApiError } from "../../protocol/hyperliquid/errors.js";
import type { ClearinghouseState } from "../../protocol/hyperliquid/schemas.js";
import { policyFor } from "../../protocol/policy.js";
import { type AccountFigures, deriveFigures, type PositionFigures } from "../../watchers/figures.js";
import type { CliDeps } from "../deps.js";
import { CliError, usageError } from "../errors.js";
import { addServiceOptions, collect, type ServiceOptions } from "../options.js";

export type ExposureEntry = {
  address: string;
  /** perp dex; "" is the first perp dex */
  dex: string;
  /** the clearinghouse state as received */
  state: ClearinghouseState;
  derived: AccountFigures;
};

type ExposureOptions = ServiceOptions & { dex?: string[] };

/** Every invalid address, named with its position; throws a usage error (exit 2) before anything is sent. */
export function checkAddresses(addresses: string[]): string[] {
  const bad = addresses.map((a, i) => [a, i] as const).filter(([a]) => !isAddress(a));
  if (bad.length > 0) {
    const list = bad.map(([a, i]) => `${JSON.stringify(a)} (argument ${i + 1})`).join(", ");
    throw usageError(
      `invalid address${bad.length > 1 ? "es" : ""} ${list}: an address is 0x followed by 40 hexadecimal digits`,
    );
  }
  return addresses.map((a) => a.toLowerCase());
}

// ------------------------------------------------------------------------------------------- the table

const fmtNumber = (n: number | null, digits = 10): string =>
  n === null ? "-" : String(Number(n.toPrecision(digits)));
/** Two decimals, or two significant digits for tiny values (so 0.0001 does not print as 0.00). */
const fix = (n: number): string => (n === 0 || Math.abs(n) >= 0.01 ? n.toFixed(2) : n.toPrecision(2));
const fmtPct = (n: number | null | undefined): string =>
  n === null || n === undefined ? "-" : `${fix(n)} %`;
const fmtLeverage = (n: number | null): string => (n === null ? "-" : `${fix(n)}x`);
const stripSign = (s: string): string => (s.startsWith("-") ? s.slice(1) : s);

function table(rows: string[][], indent: string): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map(
    (r) =>
      indent +
      r
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join("  ")
        .trimEnd(),
  );
}

/** The people's view of one entry. */
export function formatExposure(entry: ExposureEntry): string {
  const f = entry.derived;
  const lines = [`${entry.address}${entry.dex ? `  dex ${entry.dex}` : ""}`];
  lines.push(
    ...table(
      [
        ["account value", `${f.accountValue} USD`],
        ["total notional", `${f.totalNtlPos} USD`],
        ["leverage", fmtLeverage(f.leverage)],
        [
          "margin used",
          `${f.totalMarginUsed} USD (${fmtPct(f.marginUsage === null ? null : f.marginUsage * 100)})`,
        ],
        [
          "maintenance",
          `${entry.state.crossMaintenanceMarginUsed} USD (${fmtPct(
            f.maintenanceMarginRatio === null ? null : f.maintenanceMarginRatio * 100,
          )} of cross value)`,
        ],
        ["withdrawable", `${f.withdrawable} USD`],
      ],
      "  ",
    ),
  );
  if (f.positions.length === 0) {
    lines.push("  no open positions");
    return lines.join("\n");
  }
  const header = ["COIN", "SIDE", "SIZE", "ENTRY", "MARK", "VALUE", "PNL", "LIQ PX", "LIQ DIST", "LEVERAGE"];
  const rows = f.positions.map((p: PositionFigures) => [
    p.coin,
    p.side,
    stripSign(p.szi),
    p.entryPx ?? "-",
    fmtNumber(p.markPx),
    p.positionValue,
    p.unrealizedPnl,
    p.liquidationPx ?? "-",
    fmtPct(p.liquidationDistancePct),
    `${p.leverageValue}x ${p.leverageType}`,
  ]);
  lines.push("  positions:", ...table([header, ...rows], "    "));
  return lines.join("\n");
}

// ------------------------------------------------------------------------------------------- the command

export function registerExposure(program: Command, deps: CliDeps): void {
  addServiceOptions(
    program
      .command("exposure")
      .description(
        "one batchClearinghouseStates query, shown as a table (--json: states as received + figures)",
      )
      .argument("<address...>", "account addresses (not agent addresses)")
      .addOption(
        new Option(
          "--dex <name>",
          'perp dex to query, repeatable; "" is the first perp dex (default: the configured dexes)',
        ).argParser(collect),
      ),
  ).action(async (addresses: string[], opts: ExposureOptions) => {
    const users = checkAddresses(addresses);
    // --dex lands in `dexes` (flag > HL_DEXES > file > [""]), like every other key
    const { config } = loadConfig({ options: { ...opts }, env: deps.env, cwd: deps.cwd });
    const apiUrl = config.apiUrl ?? NETWORK_URLS[config.network].apiUrl;
    const dexes = [...new Set(config.dexes)];
    // The HTTP client is loaded when the command reads (src/cli/program.ts, "Loaded on use").
    const { InfoClient } = await import("../../protocol/hyperliquid/info.js");
    const info = new InfoClient({
      apiUrl,
      clock: deps.clock,
      timeoutMs: config.requestTimeout,
      chunkSize: config.exposureChunkSize,
      concurrency: config.exposureConcurrency,
    });
    const entries: ExposureEntry[] = [];
    try {
      const perDex = new Map<string, ClearinghouseState[]>();
      for (const dex of dexes) {
        perDex.set(dex, await info.batchClearinghouseStates({ users, dex }));
      }
      users.forEach((address, i) => {
        for (const dex of dexes) {
          const state = perDex.get(dex)![i]!;
          entries.push({ address, dex, state, derived: deriveFigures(state) });
        }
      });
    } catch (error) {
      if (error instanceof HyperliquidApiError) {
        // The exit code is the policy table's (src/core/errors/policy.ts): 69 unreachable, 5xx, 429, unreadable.
        throw new CliError(
          `exposure: the API at ${redactUrl(apiUrl)} could not answer (${error.kind}): ${error.shortMessage}`,
          policyFor("hyperliquid", error.kind, error.nonceDetail).exitCode,
          { cause: error },
        );
      }
      throw error;
    } finally {
      info.close();
    }
    if (opts.json) {
      deps.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
      return;
    }
    deps.stdout.write(`${entries.map(formatExposure).join("\n\n")}\n`);
  });
}
