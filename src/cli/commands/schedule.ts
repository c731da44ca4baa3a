import { type Command, Option } from "commander";
import { EXCHANGE_MIN_LEAD_MS, effectiveUrls, loadConfig } from "../../config/load.js";
import { optionOf } from "../../config/options.js";
import { BareDurationError, formatDuration, parseDurationText } from "../../core/duration.js";
import type { BaseError } from "../../core/errors/base.js";
import { ExitCode } from "../../core/exit-codes.js";
import { HyperliquidApiError } from "../../protocol/hyperliquid/errors.js";
import { policyFor } from "../../protocol/policy.js";
import type { CliDeps } from "../deps.js";
import { CliError, usageError } from "../errors.js";
import { addServiceOptions, configFlag } from "../options.js";

/** `--account` of schedule/unschedule: one account, whose cancel this one command sets or removes. */
function accountFlag(what: "schedule" | "unschedule") {
  const flag = configFlag(optionOf("accounts"));
  flag.description =
    `the account whose scheduled cancel this ${what === "schedule" ? "sets" : "removes"} (one; env HL_ACCOUNTS). ` +
    "Default: the signer's own account, or its master for an API (agent) key (asked with userRole)";
  return flag;
}

function addOneShotOptions(cmd: Command, what: "schedule" | "unschedule"): Command {
  return addServiceOptions(cmd)
    .addOption(accountFlag(what))
    .addOption(configFlag(optionOf("vault")))
    .addOption(configFlag(optionOf("keyFile")))
    .addOption(configFlag(optionOf("requestTimeout")));
}

/** `--at` accepts ISO-8601 or milliseconds since the epoch. */
export function parseAt(value: string): number {
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw usageError(
      `--at ${JSON.stringify(value)} is not an ISO-8601 time (2026-01-01T12:00:00Z) or milliseconds since the epoch.`,
    );
  return ms;
}

async function send(opts: Record<string, unknown>, deps: CliDeps, time: number | undefined): Promise<void> {
  // The key, the signing and the HTTP client are loaded when a command sends (src/cli/program.ts, "Loaded on use").
  const [
    { planAccounts },
    { describeSignerAccount, resolveSignerAccount },
    { loadSigningKey },
    { ExchangeClient },
  ] = await Promise.all([
    import("../../app/daemon.js"),
    import("../../app/master.js"),
    import("../../config/keys.js"),
    import("../../protocol/hyperliquid/exchange.js"),
  ]);
  let { config } = loadConfig({ options: opts, env: deps.env, cwd: deps.cwd });
  const key = loadSigningKey({ keyFile: config.keyFile, env: deps.env, cwd: deps.cwd });
  // An agent key without --account: the exchange applies the push to its master, so name the master (docs/cli.md).
  const found = await resolveSignerAccount({
    config,
    signer: key.address,
    apiUrl: effectiveUrls(config).apiUrl,
    clock: deps.clock,
  });
  if (found.kind === "agent") config = { ...config, accounts: [found.master] };
  const said = describeSignerAccount(key.address, found, time === undefined ? "unschedule" : "schedule");
  if (said) deps.stderr.write(`hl-deadman: ${said}\n`);
  const plan = planAccounts(config, key.address);
  if (plan.length !== 1)
    throw usageError("schedule/unschedule act on one account at a time: give one --account.");
  const { account, vaultAddress } = plan[0]!;
  const client = new ExchangeClient({
    apiUrl: effectiveUrls(config).apiUrl,
    signer: key.wallet,
    isMainnet: config.network === "mainnet",
    clock: deps.clock,
    expiresAfterMs: config.requestTimeout,
    timeoutMs: config.requestTimeout,
  });
  try {
    const result = await client.scheduleCancel({ time, vaultAddress });
    const now = deps.clock.now();
    if (opts.json) {
      deps.stdout.write(
        `${JSON.stringify({ ok: true, account, signer: key.address, vaultAddress: vaultAddress ?? null, time: time ?? null, nonce: result.nonce, latencyMs: result.latencyMs })}\n`,
      );
    } else if (time === undefined) {
      deps.stdout.write(`Removed the scheduled cancel of ${account}.\n`);
    } else {
      deps.stdout.write(
        `Scheduled cancel of ${account} at ${new Date(time).toISOString()} (in ${formatDuration(time - now)}).\n`,
      );
    }
  } catch (error) {
    if (error instanceof HyperliquidApiError) {
      // The exit code is the policy table's (src/core/errors/policy.ts): 69 when the exchange could not be reached or
      // did not answer usefully, 1 when it refused.
      const code = policyFor("hyperliquid", error.kind, error.nonceDetail).exitCode;
      throw new CliError(
        error.serverMessage && code !== ExitCode.unavailable
          ? `The exchange refused (${error.kind}): ${error.serverMessage}`
          : error.shortMessage,
        code,
        { metaMessages: error.metaMessages },
      );
    }
    throw error;
  } finally {
    client.close();
  }
}

export function registerSchedule(program: Command, deps: CliDeps): void {
  addOneShotOptions(program.command("schedule").description("one push of the scheduled cancel"), "schedule")
    .addOption(new Option("--in <duration>", "cancel this far from now (e.g. 60s)"))
    .addOption(new Option("--at <time>", "cancel at this ISO-8601 time or ms since the epoch"))
    .action(async (opts: Record<string, unknown>) => {
      const given = [opts.in, opts.at].filter((v) => v !== undefined).length;
      if (given !== 1) throw usageError("schedule needs exactly one of --in DURATION or --at ISO-8601|ms.");
      const now = deps.clock.now();
      let time: number;
      if (opts.in !== undefined) {
        try {
          time = now + parseDurationText(String(opts.in));
        } catch (error) {
          if (error instanceof BareDurationError)
            throw usageError(`--in ${opts.in} needs a unit: did you mean ${error.suggestion}?`);
          throw usageError(`--in: ${(error as BaseError).shortMessage} Write 500ms, 15s, 2m or 1h.`);
        }
      } else {
        time = parseAt(String(opts.at));
      }
      if (time - now < EXCHANGE_MIN_LEAD_MS)
        throw usageError(
          `The cancel time ${new Date(time).toISOString()} is ${formatDuration(time - now)} from now; the exchange needs at least 5s.`,
        );
      await send(opts, deps, time);
    });
  addOneShotOptions(
    program.command("unschedule").description("remove the scheduled cancel"),
    "unschedule",
  ).action(async (opts: Record<string, unknown>) => {
    await send(opts, deps, undefined);
  });
}
