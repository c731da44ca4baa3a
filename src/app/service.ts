/**
 * The `run` service's lifecycle, in one place: the process title, the `--sim` state directory and demo port, the
 * state-directory lock, the key (and its removal from the environment), the account an agent key acts for, the
 * logger, the embedded simulator, the daemon's start (with its DaemonStartError and exit code), the signals and
 * the graceful stop (src/app/shutdown.ts). The command line (src/cli/commands/run.ts) parses the options and the
 * configuration and calls `prepareRun` and `runService`; docs/daemon.md, "Start order and exit".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadedSigner, loadSignerKeys, loadSigningKey, type SigningKey } from "../config/keys.js";
import { ConfigError, effectiveUrls, type LoadedConfig } from "../config/load.js";
import { NETWORK_URLS } from "../config/networks.js";
import type { Config } from "../config/schema.js";
import type { Clock } from "../core/clock.js";
import { createLogger } from "../core/logger.js";
import { flushLogger } from "../core/runtime.js";
import { InfoClient } from "../protocol/hyperliquid/info.js";
import { type LocalSigner, localSigner } from "../protocol/hyperliquid/signing.js";
import { type Daemon, DaemonStartError, startDaemon } from "./daemon.js";
import { DEMO_HEALTH_HOST, DEMO_HEALTH_PORT } from "./demo-health.js";
import { type ScrubResult, scrubEnvironment } from "./environ.js";
import { acquireStateLock } from "./lock.js";
import { describeSignerAccount, resolveSignerAccount, type SignerAccount } from "./master.js";
import { installShutdownHandlers, instanceTitle, setProcessTitle } from "./shutdown.js";
import { ensureStateDir, type StateDirChoice } from "./state-dir.js";

export { DEMO_HEALTH_HOST, DEMO_HEALTH_PORT };

/** What `prepareRun` decided for `--sim` before the configuration is loaded. */
export type SimPlan = {
  /** the fresh state directory (removed at exit), when none was given */
  stateDir: string | undefined;
  /** the health address is the demo's (a taken demo port falls back to any free one) */
  demoHealth: boolean;
  /** the demo port was taken when probed */
  demoPortTaken: boolean;
};

/**
 * Sets the process title and, for `--sim`, the options the configuration is then loaded with: a fresh state
 * directory, removed at exit, and the README's status page address 127.0.0.1:9464 unless given, or any free port
 * when another process has it (docs/daemon.md "run --sim").
 */
export async function prepareRun(
  opts: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Promise<{ options: Record<string, unknown>; sim: SimPlan | null }> {
  setProcessTitle("hl-deadman run");
  const options = { ...opts };
  if (opts.sim !== true) return { options, sim: null };
  const sim: SimPlan = { stateDir: undefined, demoHealth: false, demoPortTaken: false };
  if (options.stateDir === undefined && !env.HL_STATE_DIR) {
    const dir = mkdtempSync(join(tmpdir(), "hl-deadman-sim-"));
    sim.stateDir = dir;
    options.stateDir = dir;
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  if (options.health === undefined && !env.HL_HEALTH) {
    sim.demoHealth = true;
    sim.demoPortTaken = !(await portIsFree(DEMO_HEALTH_HOST, DEMO_HEALTH_PORT));
    options.health = `${DEMO_HEALTH_HOST}:${sim.demoPortTaken ? 0 : DEMO_HEALTH_PORT}`;
  }
  return { options, sim };
}

export type RunServiceParameters = {
  loaded: LoadedConfig;
  stateDir: string;
  /** the old default state directory moved or used in place (src/app/state-dir.ts), said at start */
  stateLegacy?: StateDirChoice["legacy"] | undefined;
  /** `prepareRun`'s plan for `--sim`, or null */
  sim: SimPlan | null;
  /** JSON log lines even on a terminal */
  json: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  clock: Clock;
  /**
   * starts the embedded simulator with its demo account (`--sim`; the command line loads src/sim/ only then: the
   * simulator is a program of its own, above which the app does not build)
   */
  startSimulator?: ((network: Config["network"]) => Promise<EmbeddedSimulator>) | undefined;
};

/** What the service needs from the embedded simulator. */
export type EmbeddedSimulator = {
  apiUrl: string;
  explorerUrl: string;
  demo?: { address: string; privateKey: string } | undefined;
  close(): Promise<void>;
};

/** Whether `apiUrl` is hl-deadman's simulator (never asked of the official hosts; any failure reads as no). */
async function isSimulator(apiUrl: string, clock: Clock): Promise<boolean> {
  const url = apiUrl.replace(/\/+$/, "");
  if (Object.values(NETWORK_URLS).some((n) => n.apiUrl === url)) return false;
  const info = new InfoClient({ apiUrl: url, clock, retryLimit: 0, timeoutMs: 2_000 });
  try {
    return (await info.simulatorId()) !== null;
  } finally {
    info.close();
  }
}

/**
 * Runs the daemon until a signal stops it; never returns. Every failure before the daemon runs is thrown with
 * its exit code (the command line prints it and exits): the simulator, when started, is closed and the log
 * flushed first; the daemon has already closed whatever it had started.
 */
export async function runService(p: RunServiceParameters): Promise<never> {
  const { loaded, stateDir, sim, env, cwd } = p;
  let { config } = loaded;
  if (sim && (config.accounts.length > 0 || config.vault || config.signers.length > 0))
    throw new ConfigError(["--sim runs the demo account only; drop accounts / vault / signers"]);
  // One daemon per state directory, taken before anything else (docs/security.md, "State directory"): a second
  // daemon exits 75 naming the holder's pid. Released at process exit.
  ensureStateDir(stateDir);
  const lock = acquireStateLock(stateDir);
  let key: SigningKey | undefined;
  let scrubbed: ScrubResult | undefined;
  let signerAccount: SignerAccount = { kind: "configured" };
  let signers: LoadedSigner[] = [];
  if (!sim && config.signers.length > 0) {
    // Several signers: each names its key and its accounts; no master is looked up (each says its account).
    signers = loadSignerKeys(config.signers, { env, cwd });
    key = signers[0]!;
    // No role is asked at start (60 weight a signer: ten signers' look-ups and a thousand accounts' first pass would
    // not fit one minute of the IP's weight); `hl-deadman doctor` checks each signer's account against its role.
    // The keys leave the environment for real, as HL_PRIVATE_KEY does (docs/security.md).
    const names = signers.flatMap((s) => (s.envName ? [s.envName] : []));
    if (names.length > 0) scrubbed = scrubEnvironment(names, env);
  } else if (!sim) {
    const hadEnvKey = env.HL_PRIVATE_KEY !== undefined;
    key = loadSigningKey({ keyFile: config.keyFile, env, cwd });
    // The key leaves the environment for real: blanked in /proc/PID/environ, never inherited (docs/security.md).
    if (hadEnvKey) scrubbed = scrubEnvironment(["HL_PRIVATE_KEY"], env);
    // An agent key without --account: act for (and name) its master (docs/cli.md, "Agent keys").
    signerAccount = await resolveSignerAccount({
      config,
      signer: key.address,
      apiUrl: effectiveUrls(config).apiUrl,
      clock: p.clock,
    });
    if (signerAccount.kind === "agent") config = { ...config, accounts: [signerAccount.master] };
  }

  // the instance's name in `ps`, now that its accounts are known (an agent key's master included)
  setProcessTitle(
    instanceTitle({
      file: loaded.file,
      accounts: [...config.accounts, ...config.signers.flatMap((s) => s.account ?? [])],
      sim: sim !== null,
    }),
  );
  const logger = createLogger({
    level: config.logLevel,
    pretty: !p.json && process.stdout.isTTY === true,
    pid: process.pid,
  });
  const log = logger.child({ module: "cli" });
  if (lock.warning) log.warn({ event: "state.lock", path: lock.path, held: lock.held }, lock.warning);
  for (const warning of loaded.warnings) log.warn({ event: "config.warning" }, warning);
  log.info(
    { event: "state.dir", path: stateDir },
    `state directory ${stateDir} (the ledger, the lock, the audit trail)`,
  );
  if (p.stateLegacy)
    log.warn(
      { event: "state.legacy", path: stateDir, from: p.stateLegacy.from, action: p.stateLegacy.action },
      `the old default state directory ${p.stateLegacy.from} (its ledger and count kept): ${p.stateLegacy.why}`,
    );
  log.info(
    { event: "config.budget", actionsPerDay: loaded.actionsPerDay },
    `${groupThousands(loaded.actionsPerDay)} scheduleCancel actions per day per account at this interval`,
  );

  let wallet: LocalSigner;
  let apiUrl: string | undefined;
  let explorerUrl: string | undefined;
  let closeSim: (() => Promise<void>) | undefined;
  let demoPortTaken = sim?.demoPortTaken ?? false;
  let daemon: Daemon;
  try {
    if (sim) {
      if (!p.startSimulator) throw new ConfigError(["--sim needs the embedded simulator"]);
      const simulator = await p.startSimulator(config.network);
      closeSim = () => simulator.close();
      apiUrl = simulator.apiUrl;
      explorerUrl = config.explorerUrl ?? simulator.explorerUrl;
      wallet = localSigner(simulator.demo!.privateKey);
      log.warn(
        {
          event: "sim.start",
          apiUrl,
          account: simulator.demo!.address,
          stateDir: sim.stateDir ?? config.stateDir,
        },
        `SIMULATOR: embedded exchange at ${apiUrl}, demo account ${simulator.demo!.address} (a throwaway key for ` +
          `this simulator only; never fund it). Ledger in ${sim.stateDir ?? config.stateDir}. Ctrl+C removes the schedule.`,
      );
    } else {
      wallet = key!.wallet;
      for (const k of signers.length > 0 ? signers : [key!])
        log.info({ event: "key.loaded", signer: k.address, source: k.where }, `signing as ${k.address}`);
      const envNames =
        signers.length > 0 ? signers.flatMap((k) => k.envName ?? []).join(", ") : "HL_PRIVATE_KEY";
      if (scrubbed?.scrubbed === true)
        log.info(
          { event: "key.environment", scrubbed: true },
          `${envNames} removed from the environment (blanked in /proc/PID/environ; children never inherit it)`,
        );
      else if (scrubbed)
        log.warn(
          { event: "key.environment", scrubbed: false, reason: scrubbed.reason },
          `${envNames} unset, but /proc/PID/environ could not be blanked (${scrubbed.reason}): the same user and root can still read it there; prefer a key file or LoadCredential=`,
        );
      const said = describeSignerAccount(key!.address, signerAccount);
      if (signerAccount.kind === "agent")
        log.info({ event: "accounts.master", signer: key!.address, master: signerAccount.master }, said);
      else if (said)
        log.warn({ event: "accounts.master", signer: key!.address, reason: "lookup failed" }, said);
    }

    // Against hl-deadman's simulator (embedded, or `hl-deadman sim` at a custom --api-url) the logs and the page say
    // `simulator`, not the network whose signatures it checks: one info request, only off the official hosts.
    const simulatorLabel =
      sim !== null || (await isSimulator(apiUrl ?? effectiveUrls(config).apiUrl, p.clock));
    const start = (cfg: typeof config) =>
      startDaemon({
        config: cfg,
        wallet,
        ...(signers.length > 0
          ? {
              signers: signers.map((s) => ({
                name: s.name,
                wallet: s.wallet,
                account: s.account,
                vaults: s.vaults,
              })),
            }
          : {}),
        stateDir,
        logger,
        // the lock's mtime is refreshed in the daemon's clock watch, on the push slots (src/app/lock.ts)
        onInterval: () => lock.touch(),
        ...(apiUrl ? { apiUrl } : {}),
        ...(explorerUrl ? { explorerUrl } : {}),
        ...(simulatorLabel ? { networkLabel: "simulator" } : {}),
      });
    try {
      daemon = await start(config);
    } catch (error) {
      // The demo's port was free a moment ago and another process took it since: a taken health port arms
      // nothing (docs/daemon.md, "Start order and exit"), so start again on any free port.
      const demoPort = sim?.demoHealth === true && !demoPortTaken;
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
  const running = daemon;
  return new Promise<never>(() => {
    installShutdownHandlers({
      logger,
      timeoutMs: config.shutdownTimeout,
      close: async (signal) => {
        const result = await running.close({ reason: signal });
        await closeSim?.();
        return result;
      },
    });
  });
}

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
