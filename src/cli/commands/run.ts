import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { loadSigningKey } from "../../config/keys.js";
import { ConfigError, effectiveStateDir, type LoadedConfig, loadConfig } from "../../config/load.js";
import { startDaemon } from "../../daemon/daemon.js";
import { installShutdownHandlers, setProcessTitle } from "../../daemon/shutdown.js";
import { type LocalSigner, localSigner } from "../../hyperliquid/signing.js";
import { createLogger } from "../../utils/logger.js";
import type { CliDeps } from "../deps.js";
import { unavailableError } from "../errors.js";
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
      new Option("--on-engine-down <mode>", "expedite or lapse when the guard fails").choices([
        "expedite",
        "lapse",
      ]),
    )
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
      new Option("--key-file <file>", "the signer's private key file (mode 0600); never the key itself"),
    );
}

export function registerRun(program: Command, deps: CliDeps): void {
  addRunOptions(program.command("run").description("run the daemon: keep the scheduled cancel armed"))
    .addOption(
      new Option("--sim", "run against an embedded simulator with a demo account (what npm start runs)"),
    )
    .action(async (opts: Record<string, unknown>) => {
      await runDaemon(opts, deps);
    });
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
  const loaded: LoadedConfig = loadConfig({ options, env: deps.env, cwd: deps.cwd });
  const { config } = loaded;
  const logger = createLogger({ level: config.logLevel });
  const log = logger.child({ module: "cli" });
  for (const warning of loaded.warnings) log.warn({ event: "config.warning" }, warning);
  log.info(
    { event: "config.budget", actionsPerDay: loaded.actionsPerDay },
    `${groupThousands(loaded.actionsPerDay)} scheduleCancel actions per day per account at this interval`,
  );

  let wallet: LocalSigner;
  let apiUrl: string | undefined;
  let closeSim: (() => Promise<void>) | undefined;
  if (sim) {
    // The simulator is loaded only for --sim.
    const { startSimulator } = await import("../../sim/server.js");
    const simulator = await startSimulator({ demo: true, network: config.network });
    closeSim = () => simulator.close();
    apiUrl = simulator.apiUrl;
    wallet = localSigner(simulator.demo!.privateKey);
    if (config.accounts.length > 0 || config.vault)
      throw new ConfigError(["--sim runs the demo account only; drop accounts / vault"]);
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
    const key = loadSigningKey({ keyFile: config.keyFile, env: deps.env, cwd: deps.cwd });
    wallet = key.wallet;
    // Children never inherit the key.
    delete deps.env.HL_PRIVATE_KEY;
    log.info({ event: "key.loaded", signer: key.address, source: key.where }, `signing as ${key.address}`);
  }

  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    daemon = await startDaemon({
      config,
      wallet,
      stateDir: effectiveStateDir(config, deps.cwd),
      logger,
      ...(apiUrl ? { apiUrl } : {}),
    });
  } catch (error) {
    await closeSim?.();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL")
      throw unavailableError(
        `Cannot listen on ${config.health} for health and metrics (${code}); use --health HOST:PORT or off.`,
      );
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
