import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { DaemonStartError, startDaemon } from "../../app/daemon.js";
import { type ScrubResult, scrubEnvironment } from "../../app/environ.js";
import { acquireStateLock } from "../../app/lock.js";
import { installShutdownHandlers, setProcessTitle } from "../../app/shutdown.js";
import { loadSigningKey, type SigningKey } from "../../config/keys.js";
import {
  ConfigError,
  effectiveStateDir,
  effectiveUrls,
  type LoadedConfig,
  loadConfig,
} from "../../config/load.js";
import { OPTIONS } from "../../config/options.js";
import { createLogger } from "../../core/logger.js";
import { flushLogger } from "../../core/runtime.js";
import { type LocalSigner, localSigner } from "../../protocol/hyperliquid/signing.js";
import type { CliDeps } from "../deps.js";
import { describeSignerAccount, resolveSignerAccount, type SignerAccount } from "../master.js";
import { addConfigFlags, addServiceOptions, SERVICE_KEYS } from "../options.js";

/** Every configuration flag of `run` (also accepted by `config check`), made from the table of options. */
export function addRunOptions(cmd: Command): Command {
  return addConfigFlags(
    addServiceOptions(cmd),
    OPTIONS.map((o) => o.key).filter((k) => !SERVICE_KEYS.includes(k)),
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
  // --sim: a fresh state directory, removed at exit, and the README's status page address 127.0.0.1:9464 unless
  // given, or any free port when another process has it (docs/daemon.md "run --sim").
  let simStateDir: string | undefined;
  let demoPortTaken = false;
  let demoHealth = false;
  if (sim) {
    if (options.stateDir === undefined && !deps.env.HL_STATE_DIR) {
      const dir = mkdtempSync(join(tmpdir(), "hl-deadman-sim-"));
      simStateDir = dir;
      options.stateDir = dir;
      process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    }
    if (options.health === undefined && !deps.env.HL_HEALTH) {
      demoHealth = true;
      demoPortTaken = !(await portIsFree(DEMO_HEALTH_HOST, DEMO_HEALTH_PORT));
      options.health = `${DEMO_HEALTH_HOST}:${demoPortTaken ? 0 : DEMO_HEALTH_PORT}`;
    }
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

  const logger = createLogger({
    level: config.logLevel,
    pretty: opts.json !== true && process.stdout.isTTY === true,
    pid: process.pid,
  });
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

    const start = (cfg: typeof config) =>
      startDaemon({
        config: cfg,
        wallet,
        stateDir,
        logger,
        // the lock's mtime is refreshed on the push loop's wake-ups (src/app/lock.ts)
        onInterval: () => lock.touch(),
        ...(apiUrl ? { apiUrl } : {}),
        ...(explorerUrl ? { explorerUrl } : {}),
      });
    try {
      daemon = await start(config);
    } catch (error) {
      // The demo's port was free a moment ago and another process took it since: a taken health port arms
      // nothing (docs/daemon.md, "Start order and exit"), so start again on any free port.
      const demoPort = demoHealth && !demoPortTaken;
      if (!(demoPort && error instanceof DaemonStartError && error.component === "health")) throw error;
      demoPortTaken = true;
      config = { ...config, health: `${DEMO_HEALTH_HOST}:0` };
      daemon = await start(config);
    }
  } catch (error) {
    await closeSim?.().catch(() => {});
    await flushLogger(logger, 500);
    throw error;
  }
  if (sim && daemon.healthUrl)
    log.warn(
      { event: "sim.ready", statusPage: `${daemon.healthUrl}/`, portTaken: demoPortTaken },
      `status page: ${daemon.healthUrl}/${demoPortTaken ? ` (${DEMO_HEALTH_HOST}:${DEMO_HEALTH_PORT} is taken by another process, so a free port was chosen; --health HOST:PORT picks one)` : ""}`,
    );
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

/** Where `run --sim` serves its status page: the README's address (docs/observability.md, "Status page"). */
export const DEMO_HEALTH_HOST = "127.0.0.1";
export const DEMO_HEALTH_PORT = 9464;

/** Whether `host:port` can be bound now (the demo then takes it; a race with another starter is a plain exit 69). */
function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * 5760 → "5,760" without Intl: the first toLocaleString() maps ICU's locale data, +5 MiB of resident memory for
 * the daemon's whole life (BENCHMARKS.md, memory).
 */
function groupThousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
