import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { type ScrubResult, scrubEnvironment } from "../../config/environ.js";
import { loadSigningKey, type SigningKey } from "../../config/keys.js";
import {
  ConfigError,
  effectiveStateDir,
  effectiveUrls,
  type LoadedConfig,
  loadConfig,
} from "../../config/load.js";
import { startDaemon } from "../../daemon/daemon.js";
import { installShutdownHandlers, setProcessTitle } from "../../daemon/shutdown.js";
import { type LocalSigner, localSigner } from "../../hyperliquid/signing.js";
import { acquireStateLock } from "../../state/lock.js";
import { createLogger, flushLogger } from "../../utils/logger.js";
import type { CliDeps } from "../deps.js";
import { describeSignerAccount, resolveSignerAccount, type SignerAccount } from "../master.js";
import { addServiceOptions, collect } from "../options.js";

/** Every configuration flag of `run` (also accepted by `config check`); each has an HL_* twin (docs/daemon.md). */
export function addRunOptions(cmd: Command): Command {
  return addServiceOptions(cmd)
    .addOption(
      new Option(
        "--account <addr>",
        "account whose schedule is kept (repeatable; env HL_ACCOUNTS)",
      ).argParser(collect),
    )
    .addOption(new Option("--vault <addr>", "act for a vault or subaccount (env HL_VAULT)"))
    .addOption(new Option("--interval <duration>", "push cadence (env HL_INTERVAL; default 15s)"))
    .addOption(
      new Option(
        "--deadline <duration>",
        "how far ahead each push sets the cancel (env HL_DEADLINE; default 60s)",
      ),
    )
    .addOption(
      new Option(
        "--request-timeout <duration>",
        "time-out and expiresAfter window of each push (default 5s)",
      ),
    )
    .addOption(
      new Option(
        "--exposure-interval <duration>",
        "exposure poll cadence, 0 = off (env HL_EXPOSURE_INTERVAL)",
      ),
    )
    .addOption(
      new Option(
        "--exposure-user <addr>",
        "more users to poll (repeatable; env HL_EXPOSURE_USERS)",
      ).argParser(collect),
    )
    .addOption(new Option("--dex <name>", "perp dex to poll (repeatable; env HL_DEXES)").argParser(collect))
    .addOption(new Option("--exposure-chunk-size <n>", "users per batchClearinghouseStates request"))
    .addOption(new Option("--exposure-concurrency <n>", "exposure chunks in flight at once"))
    .addOption(
      new Option(
        "--budget-interval <duration>",
        "how often the address's action budget is read, 0 = off (default 10m)",
      ),
    )
    .addOption(
      new Option("--budget-warn-days <n>", "warn when the action budget lasts fewer days (default 14)"),
    )
    .addOption(
      new Option(
        "--explorer-url <url>",
        "explorer endpoint for the exchange's record (env HL_EXPLORER_URL; default: the network's)",
      ),
    )
    .addOption(
      new Option("--agent-warn-days <n>", "warn daily when the API wallet expires within n days (default 7)"),
    )
    .addOption(
      new Option(
        "--agent-check-interval <duration>",
        "how often the API wallet is checked in extraAgents, 0 = start-up only (default 1h)",
      ),
    )
    .addOption(new Option("--max-leverage <x>", "alert above this leverage"))
    .addOption(new Option("--min-liquidation-distance-pct <pct>", "alert below this distance to liquidation"))
    .addOption(new Option("--max-notional-usd <usd>", "alert above this total notional"))
    .addOption(new Option("--clock-skew-warn <duration>", "warn above this local/exchange clock difference"))
    .addOption(
      new Option(
        "--state-dir <dir>",
        "where the trigger ledger lives (env HL_STATE_DIR, then STATE_DIRECTORY)",
      ),
    )
    .addOption(
      new Option(
        "--health <host:port|off>",
        "health and metrics listener (env HL_HEALTH; default 127.0.0.1:9464)",
      ),
    )
    .addOption(
      new Option("--on-shutdown <mode>", "remove or keep the schedule on a graceful stop").choices([
        "remove",
        "keep",
      ]),
    )
    .addOption(new Option("--shutdown-timeout <duration>", "bound for a graceful stop (default 5s)"))
    .addOption(new Option("--guard-file <file>", "push only while the trading engine keeps touching FILE"))
    .addOption(new Option("--guard-max-age <duration>", "maximum age of the guard file (default 10s)"))
    .addOption(new Option("--guard-url <url>", "push only while the engine's health URL answers 2xx"))
    .addOption(new Option("--guard-interval <duration>", "how often the guard is checked (default 2s)"))
    .addOption(
      new Option("--on-engine-down <mode>", "expedite, lapse or cancel when the guard fails").choices([
        "expedite",
        "lapse",
        "cancel",
      ]),
    )
    .addOption(new Option("--cancel-stops", "with --on-engine-down cancel: cancel trigger orders too"))
    .addOption(
      new Option(
        "--permanent-recheck-interval <duration>",
        "re-check cadence after a permanent refusal (default 5m)",
      ),
    )
    .addOption(new Option("--trigger-limit <n>", "triggers per UTC day the exchange allows (default 10)"))
    .addOption(
      new Option("--trigger-warn-remaining <n>", "warn when this many triggers or fewer remain (default 3)"),
    )
    .addOption(
      new Option(
        "--watch-address <addr>",
        "follow HyperEVM txs from/to ADDR (repeatable; needs --rpc-url)",
      ).argParser(collect),
    )
    .addOption(new Option("--chain-poll-interval <duration>", "chain watch: head poll cadence"))
    .addOption(new Option("--chain-stall-threshold <duration>", "chain watch: stall warning threshold"))
    .addOption(new Option("--chain-max-lag-blocks <n>", "chain watch: skip ahead beyond this lag"))
    .addOption(new Option("--chain-page-size <n>", "chain watch: ots_getBlockTransactions page size"))
    .addOption(
      new Option(
        "--notify-url <url>",
        "POST a JSON document per event that matters to this webhook (repeatable; env HL_NOTIFY_URLS)",
      ).argParser(collect),
    )
    .addOption(
      new Option("--key-file <file>", "the signer's private key file (mode 0600); never the key itself"),
    );
}

/** What `run --help` adds after the options: where the key comes from, examples (docs/cli.md). */
export const RUN_HELP_AFTER = `
The signer's key (never a flag value), the first found wins:
  --key-file FILE       a file of mode 0600 holding the key
  HL_PRIVATE_KEY        the environment (blanked in /proc/PID/environ once read)
  $CREDENTIALS_DIRECTORY/hl-private-key
                        systemd LoadCredential= (recommended)

Durations on flags and in HL_* variables need a unit: 500ms, 15s, 2m, 1h
(0 = off). Exit codes: 0 stopped cleanly, 1 runtime failure, 2 usage,
69 unavailable, 75 another daemon holds the state directory, 78 configuration.

Examples:
  hl-deadman run --sim
      a demo against an embedded simulator (no key, no real orders)
  hl-deadman config check --config /etc/hl-deadman/config.json --no-key
      validate a config file without the key (CI)
  HL_PRIVATE_KEY=0x... hl-deadman run --account 0xMASTER --interval 15s
      keep 0xMASTER's scheduled cancel armed with an agent key. This ARMS A
      REAL CANCEL of all 0xMASTER's open orders if the process stops pushing.
  hl-deadman run --config /etc/hl-deadman/config.json --json
      JSON log lines even on a terminal
`;

export function registerRun(program: Command, deps: CliDeps): void {
  const run = addRunOptions(
    program.command("run").description("run the daemon: keep the scheduled cancel armed"),
  )
    .addOption(
      new Option("--sim", "run against an embedded simulator with a demo account (what npm start runs)"),
    )
    .addHelpText("after", RUN_HELP_AFTER)
    .action(async (opts: Record<string, unknown>) => {
      await runDaemon(opts, deps);
    });
  // For run, --json means JSON log lines (and JSON error lines) even on a terminal.
  const json = run.options.find((o) => o.long === "--json");
  if (json) json.description = "JSON log lines even on a terminal (the default when stdout is not one)";
}

async function runDaemon(opts: Record<string, unknown>, deps: CliDeps): Promise<void> {
  setProcessTitle("hl-deadman run");
  const sim = opts.sim === true;
  const options = { ...opts };
  // --sim: a fresh state directory and a free health port unless given (docs/daemon.md "run --sim").
  let simStateDir: string | undefined;
  if (sim) {
    if (options.stateDir === undefined && !deps.env.HL_STATE_DIR) {
      simStateDir = mkdtempSync(join(tmpdir(), "hl-deadman-sim-"));
      options.stateDir = simStateDir;
    }
    if (options.health === undefined && !deps.env.HL_HEALTH) options.health = "127.0.0.1:0";
  }
  // Nothing reaches stdout before the configuration, the lock and the key are known good (docs/cli.md).
  const loaded: LoadedConfig = loadConfig({ options, env: deps.env, cwd: deps.cwd });
  let { config } = loaded;
  if (sim && (config.accounts.length > 0 || config.vault))
    throw new ConfigError(["--sim runs the demo account only; drop accounts / vault"]);
  const stateDir = effectiveStateDir(config, deps.cwd);
  // One daemon per state directory, taken before anything else (docs/security.md, "State directory"): a second
  // daemon exits 75 naming the holder's pid. Released at process exit.
  const lock = acquireStateLock(stateDir);
  let key: SigningKey | undefined;
  let scrubbed: ScrubResult | undefined;
  let signerAccount: SignerAccount = { kind: "configured" };
  if (!sim) {
    const hadEnvKey = deps.env.HL_PRIVATE_KEY !== undefined;
    key = loadSigningKey({ keyFile: config.keyFile, env: deps.env, cwd: deps.cwd });
    // The key leaves the environment for real: blanked in /proc/PID/environ, never inherited (docs/security.md).
    if (hadEnvKey) scrubbed = scrubEnvironment(["HL_PRIVATE_KEY"], deps.env);
    // An agent key without --account: act for (and name) its master (docs/cli.md, "Agent keys").
    signerAccount = await resolveSignerAccount({
      config,
      signer: key.address,
      apiUrl: effectiveUrls(config).apiUrl,
      clock: deps.clock,
    });
    if (signerAccount.kind === "agent") config = { ...config, accounts: [signerAccount.master] };
  }

  const logger = createLogger({ level: config.logLevel, pretty: opts.json === true ? false : undefined });
  const log = logger.child({ module: "cli" });
  if (lock.warning) log.warn({ event: "state.lock", path: lock.path, held: lock.held }, lock.warning);
  for (const warning of loaded.warnings) log.warn({ event: "config.warning" }, warning);
  log.info(
    { event: "config.budget", actionsPerDay: loaded.actionsPerDay },
    `${groupThousands(loaded.actionsPerDay)} scheduleCancel actions per day per account at this interval`,
  );

  let wallet: LocalSigner;
  let apiUrl: string | undefined;
  let explorerUrl: string | undefined;
  let closeSim: (() => Promise<void>) | undefined;
  // From here a failure closes the simulator (if started) and flushes the log before the CLI exits with its code:
  // startDaemon has already closed whatever it had started (docs/daemon.md, "Start order and exit").
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    if (sim) {
      // The simulator is loaded only for --sim.
      const { startSimulator } = await import("../../sim/server.js");
      const simulator = await startSimulator({ demo: true, network: config.network });
      closeSim = () => simulator.close();
      apiUrl = simulator.apiUrl;
      explorerUrl = config.explorerUrl ?? simulator.explorerUrl;
      wallet = localSigner(simulator.demo!.privateKey);
      log.warn(
        {
          event: "sim.start",
          apiUrl,
          account: simulator.demo!.address,
          stateDir: simStateDir ?? config.stateDir,
        },
        `SIMULATOR: embedded exchange at ${apiUrl}, demo account ${simulator.demo!.address} (a throwaway key for ` +
          `this simulator only; never fund it). Ledger in ${simStateDir ?? config.stateDir}. Ctrl+C removes the schedule.`,
      );
    } else {
      wallet = key!.wallet;
      log.info(
        { event: "key.loaded", signer: key!.address, source: key!.where },
        `signing as ${key!.address}`,
      );
      if (scrubbed?.scrubbed === true)
        log.info(
          { event: "key.environment", scrubbed: true },
          "HL_PRIVATE_KEY removed from the environment (blanked in /proc/PID/environ; children never inherit it)",
        );
      else if (scrubbed)
        log.warn(
          { event: "key.environment", scrubbed: false, reason: scrubbed.reason },
          `HL_PRIVATE_KEY unset, but /proc/PID/environ could not be blanked (${scrubbed.reason}): the same user and root can still read it there; prefer --key-file or LoadCredential=`,
        );
      const said = describeSignerAccount(key!.address, signerAccount);
      if (signerAccount.kind === "agent")
        log.info({ event: "accounts.master", signer: key!.address, master: signerAccount.master }, said);
      else if (said)
        log.warn({ event: "accounts.master", signer: key!.address, reason: "lookup failed" }, said);
    }

    daemon = await startDaemon({
      config,
      wallet,
      stateDir,
      logger,
      ...(apiUrl ? { apiUrl } : {}),
      ...(explorerUrl ? { explorerUrl } : {}),
    });
  } catch (error) {
    await closeSim?.().catch(() => {});
    await flushLogger(logger, 500);
    throw error;
  }
  await new Promise<never>(() => {
    installShutdownHandlers({
      logger,
      timeoutMs: config.shutdownTimeout,
      close: async (signal) => {
        const result = await daemon.close({ reason: signal });
        await closeSim?.();
        return result;
      },
    });
  });
}

/**
 * 5760 → "5,760" without Intl: the first toLocaleString() maps ICU's locale data, +5 MiB of resident memory for
 * the daemon's whole life (BENCHMARKS.md, memory).
 */
function groupThousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
