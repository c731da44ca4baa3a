/**
 * `hl-deadman doctor` (docs/cli.md, "doctor"): everything a go-live needs, checked for each signer and each account
 * it would arm, changing nothing — unless `probe` asks for one signed `noop` per signer, the only proof of the
 * network. Returns the rows in order (the host's checks, then per signer its own and its accounts'); the command
 * line prints them and exits with `exitCodeOf` (src/app/doctor/report.ts).
 */
import { type LoadedSigner, loadSignerKeys, loadSigningKey, type SigningKey } from "../../config/keys.js";
import { effectiveExplorerUrl, effectiveUrls, type LoadedConfig } from "../../config/load.js";
import { configuredAccounts } from "../../config/weight.js";
import type { Clock } from "../../core/clock.js";
import { ExitCode } from "../../core/exit-codes.js";
import { createLogger, type Logger } from "../../core/logger.js";
import { ExchangeClient } from "../../protocol/hyperliquid/exchange.js";
import { ExplorerClient } from "../../protocol/hyperliquid/explorer.js";
import { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { UserRateLimit } from "../../protocol/hyperliquid/schemas.js";
import { demoSeedOf } from "../../protocol/hyperliquid/simulator-id.js";
import { planSigners } from "../daemon.js";
import {
  checkAgent,
  checkBudget,
  checkClock,
  checkClockWitness,
  checkExplorer,
  checkGuard,
  checkHealth,
  checkLock,
  checkPlan,
  checkRole,
  checkStateDir,
  checkVolume,
  checkWeight,
  lockView,
  probeNetwork,
  reasonOf,
  roleRow,
} from "./checks.js";
import { type CheckResult, fail, ok, warn } from "./report.js";

export { type CheckResult, exitCodeOf, formatTable, SEVERITY, summaryLine } from "./report.js";

export type DoctorParameters = {
  loaded: LoadedConfig;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  clock: Clock;
  /** send one signed noop per signer (the network's proof) */
  probe: boolean;
  /** the explorer the daemon would read (null: none); default the configuration's */
  explorerUrl?: string | null | undefined;
};

/**
 * The signers `run` would sign with, loaded in this one place: the config's `signers` (each with its accounts), else
 * the one key (the configuration's key file, the environment or the credentials directory).
 */
export function loadSigners(
  p: Pick<DoctorParameters, "loaded" | "env" | "cwd">,
): (SigningKey | LoadedSigner)[] {
  const { config } = p.loaded;
  if (config.signers.length > 0) return loadSignerKeys(config.signers, { env: p.env, cwd: p.cwd });
  return [loadSigningKey({ keyFile: config.keyFile, env: p.env, cwd: p.cwd })];
}

const isListed = (key: SigningKey | LoadedSigner): key is LoadedSigner => "vaults" in key;

/**
 * A signer of the `signers` block arms what it names (no master is looked up); its `account`, pushed without
 * vaultAddress, is protected only if it is the signer's own user: the signer itself, or the master of an agent key.
 */
function signerPlan(key: LoadedSigner, master: string | undefined) {
  const plan = planSigners([key]);
  const user = master ?? key.address;
  const rows = plan.map(({ account, vaultAddress }) =>
    vaultAddress === undefined && account !== user
      ? fail(
          "account",
          account,
          `signer ${key.name} (${key.address}) would push for ${account} without vaultAddress, but such a push protects ${user}${master ? ", the agent's master" : ", the signer's own account"}`,
          `set the signer's account to ${user}, or list ${account} under vaults if it is a subaccount or vault of ${user}`,
          ExitCode.config,
        )
      : ok(
          "account",
          account,
          `run arms ${account}${vaultAddress ? " (sent as vaultAddress)" : ""}, signed by ${key.name}`,
        ),
  );
  return { rows, plan };
}

export async function runDoctor(p: DoctorParameters): Promise<CheckResult[]> {
  const { config } = p.loaded;
  const { apiUrl } = effectiveUrls(config);
  const explorerUrl = p.explorerUrl === undefined ? effectiveExplorerUrl(config) : p.explorerUrl;
  // The checks' own log lines (the agent watch's, the guard's) are not the report: kept silent.
  const logger: Logger = createLogger({ level: "silent" });
  const rows: CheckResult[] = [];
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;

  // The host: the state directory, its lock, the health port, the guard.
  const stateDir = checkStateDir(p.stateDir, uid);
  rows.push(stateDir);
  const lock = lockView(p.stateDir, p.clock.now());
  // a lock in a directory that failed says nothing: "free" beside an unusable directory would read as good news
  rows.push(
    stateDir.status === "fail"
      ? warn("lock", null, "not checked: the state directory failed", "fix the state directory first")
      : checkLock(lock),
  );
  rows.push(await checkHealth(config.health, lock));
  rows.push(await checkGuard(config, p.clock));

  let signers: SigningKey[];
  try {
    signers = loadSigners(p);
  } catch (error) {
    rows.push(fail("key", null, reasonOf(error), "see docs/security.md, Keys", ExitCode.config));
    rows.push(checkWeight(config, configuredAccounts(config)));
    return rows;
  }

  const info = new InfoClient({ apiUrl, clock: p.clock, timeoutMs: config.requestTimeout, retryLimit: 1 });
  // The simulator's demo keys are public: one signing for anything but the simulator signs for anyone.
  for (const key of signers) {
    const seed = demoSeedOf(key.address);
    if (seed === null) continue;
    const sim = await info.simulatorId();
    rows.push(
      sim
        ? ok("key", null, `the simulator's demo key (seed ${seed}) against the simulator at ${apiUrl}`)
        : fail(
            "key",
            null,
            `${key.address} is the simulator's public demo key (seed ${seed}), and ${apiUrl} is not the simulator: anyone can sign with this key`,
            "use a key of your own (docs/operations.md, Keys)",
            ExitCode.config,
          ),
    );
  }
  const explorer = explorerUrl ? new ExplorerClient({ explorerUrl, timeoutMs: config.requestTimeout }) : null;
  let accounts = 0;
  let clocked = false;
  try {
    // The network's probe, the clock (once), the agent, and per account the volume gate, the budget and the record.
    const checkSigner = async (
      key: SigningKey,
      master: string | undefined,
      plan: { account: string; vaultAddress: string | undefined }[] | null,
    ) => {
      const signer = key.address;
      const exchange = p.probe
        ? new ExchangeClient({
            apiUrl,
            signer: key.wallet,
            isMainnet: config.network === "mainnet",
            clock: p.clock,
            expiresAfterMs: config.requestTimeout,
            timeoutMs: config.requestTimeout,
          })
        : null;
      let probe: Awaited<ReturnType<typeof probeNetwork>>;
      try {
        probe = await probeNetwork(exchange, signer, config.network, apiUrl);
      } finally {
        exchange?.close();
      }
      rows.push(probe.row);
      if (!plan) return;
      accounts += plan.length;

      // The signer's user (an agent's master, else the signer) and the account pushed without vaultAddress, which
      // is that user: its volume gates every push, vaults' and subaccounts' included (their volume is the master's).
      const user = master ?? signer;
      const direct = plan.find((a) => a.vaultAddress === undefined)?.account ?? user;
      const limits = new Map<string, { limit: UserRateLimit | null; error?: unknown }>();
      const readLimit = async (user: string) => {
        if (!limits.has(user))
          limits.set(
            user,
            await info.userRateLimit({ user }).then(
              (limit) => ({ limit }),
              (error: unknown) => ({ limit: null, error }),
            ),
          );
        return limits.get(user)!;
      };

      if (!clocked) {
        clocked = true;
        const sentAt = p.clock.now();
        const date = await info.batchClearinghouseStatesWithMeta({ users: [direct] }).then(
          (r) => ({ date: r.serverDate, sentAt, receivedAt: r.receivedAt }),
          (error: unknown) => ({ error }),
        );
        rows.push(
          "error" in date
            ? checkClock(null, config.clockSkewWarn, date.error)
            : checkClock(date, config.clockSkewWarn),
        );
        // the second witness, the HyperEVM block time, against that Date (issue 40)
        rows.push(await checkClockWitness({ config, clock: p.clock, date: "error" in date ? null : date }));
      }
      rows.push(
        await checkAgent({
          info,
          signer,
          master: master ?? direct,
          warnDays: config.agentWarnDays,
          clock: p.clock,
          logger,
        }),
      );
      for (const { account } of plan) {
        const gate = await readLimit(direct);
        rows.push(checkVolume(account, direct, gate.limit, gate.error));
        const own = await readLimit(account);
        rows.push(checkBudget(account, own.limit, p.loaded.actionsPerDay, config.budgetWarnDays, own.error));
        rows.push(
          await checkExplorer({
            explorer,
            account,
            signer,
            probeSentAt: account === direct ? probe.sentAt : null,
            clock: p.clock,
          }),
        );
      }
    };
    for (const key of signers) {
      const signer = key.address;
      rows.push(ok("key", null, `${key.where} -> signer ${signer} (the key itself is never shown)`));
      // The plan asks userRole when it must (no --account, or one naming the signer): its answer is the role
      // row too, so the 60 weight of userRole is spent once.
      if (isListed(key)) {
        const role = await checkRole(info, signer);
        rows.push(role.row);
        const planned = signerPlan(key, role.master);
        rows.push(...planned.rows);
        await checkSigner(key, role.master, planned.plan);
        continue;
      }
      const planned = await checkPlan({ config, signer, apiUrl, clock: p.clock });
      const found = planned.plan ? planned.found : null;
      const role =
        found?.kind === "agent"
          ? { row: roleRow(signer, { role: "agent", data: { user: found.master } }), master: found.master }
          : found?.kind === "self"
            ? { row: roleRow(signer, { role: found.role }), master: undefined }
            : await checkRole(info, signer);
      rows.push(role.row);
      rows.push(...planned.rows);

      await checkSigner(key, role.master, planned.plan);
    }
  } finally {
    info.close();
    explorer?.close();
  }
  rows.push(checkWeight(config, Math.max(1, accounts)));
  return rows;
}
