/**
 * `doctor`'s checks (docs/cli.md, "doctor"): each a small function that asks one question and returns its rows
 * (src/app/doctor/report.ts), never throws for what it finds, and changes nothing — except `probeNetwork`, which
 * sends one signed `noop` when `--probe` asks for it. They reuse the daemon's own pieces: the weight arithmetic
 * (src/config/weight.ts), the account plan (planAccounts, resolveSignerAccount), the agent watch, the budget's
 * arithmetic, the switch's model of the exchange's time, the guard and the state-directory lock.
 */
import { closeSync, constants, lstatSync, openSync, statfsSync, statSync, unlinkSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { ConfigError } from "../../config/errors.js";
import { parseGuardSocket, parseListenAddress } from "../../config/listen.js";
import type { Config } from "../../config/schema.js";
import { deathRoom, describeDeathRoom, describeWeightPlan, weightPlan } from "../../config/weight.js";
import type { Clock } from "../../core/clock.js";
import { formatDuration } from "../../core/duration.js";
import { BaseError } from "../../core/errors/base.js";
import { ExitCode } from "../../core/exit-codes.js";
import type { Logger } from "../../core/logger.js";
import { redactUrl } from "../../core/redact.js";
import { createRuntime, systemTimers } from "../../core/runtime.js";
import { HyperliquidApiError } from "../../protocol/hyperliquid/errors.js";
import type { ExchangeClient } from "../../protocol/hyperliquid/exchange.js";
import type { ExplorerClient } from "../../protocol/hyperliquid/explorer.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { UserRateLimit, UserRole } from "../../protocol/hyperliquid/schemas.js";
import { createMetrics } from "../../surface/metrics.js";
import { initialTime, takeSample, timesAt } from "../../switch/exchange-time.js";
import { VOLUME_GATE_USD } from "../../switch/model.js";
import { createAgentWatch } from "../../watchers/agent-watch.js";
import { createGuard } from "../../watchers/guard.js";
import { sampleSkew } from "../../watchers/skew.js";
import { planAccounts } from "../daemon.js";
import { inspectStateLock, type LockView } from "../lock.js";
import { resolveSignerAccount, type SignerAccount } from "../master.js";
import { type CheckResult, fail, ok, warn } from "./report.js";

/** Below this much free space in the state directory the ledger may not be written: fail; below WARN, warn. */
export const STATE_FREE_FAIL_BYTES = 1024 * 1024;
export const STATE_FREE_WARN_BYTES = 64 * 1024 * 1024;

/** A failure's one line: the exchange's or our error's short message, never a stack. */
export function reasonOf(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage;
  return error instanceof Error ? error.message : String(error);
}

/** 69 when the exchange could not be reached or answered nothing useful, 1 when it refused. */
function exchangeCode(error: unknown): ExitCode {
  if (error instanceof HyperliquidApiError)
    return error.retryable || error.kind === "malformed_response" ? ExitCode.unavailable : ExitCode.runtime;
  return ExitCode.unavailable;
}

/** Whole dollars, rounded down (a volume just below the gate never reads as the gate), or up for what is missing. */
const usd = (n: number, round: (x: number) => number = Math.floor) => `$${round(n).toLocaleString("en-US")}`;

// ---------------------------------------------------------------------------------------------- the signer

/** The signer's role at the exchange (`userRole`): master (user), agent of whom, vault, subaccount, or unknown. */
export function roleRow(signer: string, role: UserRole | { role: string }): CheckResult {
  switch (role.role) {
    case "agent": {
      const master = "data" in role && role.data && "user" in role.data ? role.data.user : undefined;
      return ok(
        "role",
        null,
        `the signer ${signer} is an API (agent) wallet of ${master ?? "an unnamed master"}`,
      );
    }
    case "user":
      return ok(
        "role",
        null,
        `the signer ${signer} is a user's own key (a master)`,
        "a dedicated API (agent) wallet is the recommended key for the daemon (docs/operations.md, Keys)",
      );
    case "subAccount": {
      const master = "data" in role && role.data && "master" in role.data ? ` of ${role.data.master}` : "";
      return ok("role", null, `the signer ${signer} is a subaccount${master}`);
    }
    case "vault":
      return ok("role", null, `the signer ${signer} is a vault`);
    default:
      return fail(
        "role",
        null,
        `the exchange knows no user or API wallet ${signer} (role "${role.role}")`,
        "an expired or deregistered agent, an account never funded, or the other network (--network): approve a new agent or check the key",
        ExitCode.config,
      );
  }
}

/** Asks `userRole` (60 IP weight) and judges it; a failed read fails the row with the transport's code. */
export async function checkRole(
  info: Pick<InfoClient, "userRole">,
  signer: string,
): Promise<{ row: CheckResult; master: string | undefined }> {
  try {
    const role = await info.userRole({ user: signer });
    const master = role.role === "agent" && "data" in role && role.data ? role.data.user : undefined;
    return { row: roleRow(signer, role), master };
  } catch (error) {
    return {
      master: undefined,
      row: fail(
        "role",
        null,
        `userRole of ${signer} could not be read: ${reasonOf(error)}`,
        "check --api-url and the network",
        exchangeCode(error),
      ),
    };
  }
}

/** The account plan `run` would arm for this signer: resolveSignerAccount, then planAccounts, exactly as `run`. */
export async function checkPlan(p: { config: Config; signer: string; apiUrl: string; clock: Clock }): Promise<
  | {
      rows: CheckResult[];
      plan: Array<{ account: string; vaultAddress: string | undefined }>;
      /** what resolveSignerAccount found: the role when it asked (no --account, or one naming the signer) */
      found: SignerAccount;
    }
  | { rows: CheckResult[]; plan: null }
> {
  let config = p.config;
  try {
    const found = await resolveSignerAccount(p);
    if (found.kind === "agent") config = { ...config, accounts: [found.master] };
    const plan = planAccounts(config, p.signer);
    const rows = plan.map(({ account, vaultAddress }) =>
      found.kind === "unknown"
        ? warn(
            "account",
            account,
            `run would arm ${account}, the signer's own address: whether the signer is an agent could not be asked (${found.reason})`,
            "with an agent key, pass --account 0xMASTER",
          )
        : ok(
            "account",
            account,
            `run arms ${account}${vaultAddress ? " (sent as vaultAddress)" : ""}${found.kind === "agent" ? `, the master of the agent ${p.signer}` : ""}`,
          ),
    );
    return { rows, plan, found };
  } catch (error) {
    // The agent given as its own --account, or an agent the exchange names no master for: `run` exits 78.
    if (error instanceof ConfigError)
      return {
        plan: null,
        rows: [
          fail(
            "account",
            p.config.vault ?? p.config.accounts[0] ?? p.signer,
            error.issues.join("; ") || reasonOf(error),
            "give the master's address as --account (or none): an agent holds no orders",
            ExitCode.config,
          ),
        ],
      };
    throw error;
  }
}

/**
 * The network, proven by one signed `noop` (`--probe`): the exchange recovers the signer from the signature over
 * the chain it runs; a refusal naming another address means the signature was made for the other network (or with
 * another key). Without --probe nothing is sent and the row says so.
 */
export async function probeNetwork(
  exchange: Pick<ExchangeClient, "noop"> | null,
  signer: string,
  network: Config["network"],
  apiUrl: string,
): Promise<{ row: CheckResult; sentAt: number | null }> {
  if (!exchange)
    return {
      sentAt: null,
      row: warn(
        "network",
        null,
        `not proven: only a signed action shows which chain ${redactUrl(apiUrl)} recovers signatures on`,
        "hl-deadman doctor --probe sends one noop (it changes nothing but one unit of the address budget)",
      ),
    };
  try {
    const r = await exchange.noop();
    return {
      sentAt: r.nonce,
      row: ok(
        "network",
        null,
        `a signed noop was accepted: ${redactUrl(apiUrl)} recovers ${signer} on ${network}`,
      ),
    };
  } catch (error) {
    if (error instanceof HyperliquidApiError && error.hint)
      return {
        sentAt: null,
        row: fail(
          "network",
          null,
          `wrong network: ${error.hint}`,
          `use --network ${network === "mainnet" ? "testnet" : "mainnet"} or an API URL of ${network}`,
          ExitCode.config,
        ),
      };
    if (error instanceof HyperliquidApiError && /does not exist/i.test(error.serverMessage ?? ""))
      return {
        sentAt: null,
        row: fail(
          "network",
          null,
          `the exchange recovered ${signer} but knows no such user or API wallet: ${error.serverMessage}`,
          "approve the key as an API wallet of the master (or fund the account) on this network",
          ExitCode.config,
        ),
      };
    return {
      sentAt: null,
      row: fail(
        "network",
        null,
        `the noop failed: ${reasonOf(error)}`,
        "check --api-url",
        exchangeCode(error),
      ),
    };
  }
}

/** The agent's expiry (`extraAgents`, through the daemon's own agent watch); a master's own key has none. */
export async function checkAgent(p: {
  info: Pick<InfoClient, "extraAgents" | "userRole">;
  signer: string;
  master: string;
  warnDays: number;
  clock: Clock;
  logger: Logger;
}): Promise<CheckResult> {
  if (p.signer === p.master)
    return ok("agent", p.master, "the signer is the account's own key: no agent expiry to watch");
  const runtime = createRuntime({ clock: p.clock, timers: systemTimers() });
  try {
    const watch = createAgentWatch({
      info: p.info,
      account: p.master,
      signer: p.signer,
      runtime,
      logger: p.logger,
      warnDays: p.warnDays,
      intervalMs: 0,
      onAgentState: () => {},
    });
    const state = await watch.checkNow();
    if (state === null)
      return fail(
        "agent",
        p.master,
        `extraAgents of ${p.master} could not be read`,
        "check --api-url",
        ExitCode.unavailable,
      );
    if (state.state !== "ok")
      return fail(
        "agent",
        p.master,
        `${state.state}: ${state.detail}`,
        "approve a new agent and give its key",
        ExitCode.config,
      );
    if (state.validUntil === null)
      return ok("agent", p.master, `the signer is an API wallet of ${p.master} (unnamed: no expiry listed)`);
    const left = state.validUntil - p.clock.now();
    const until = `${new Date(state.validUntil).toISOString()} (in ${formatDuration(left)})`;
    return left < p.warnDays * 86_400_000
      ? warn(
          "agent",
          p.master,
          `the API wallet ${p.signer} expires ${until}`,
          `approve a new agent before then (agentWarnDays ${p.warnDays})`,
        )
      : ok("agent", p.master, `the API wallet ${p.signer} is valid until ${until}`);
  } finally {
    runtime.abort("doctor");
  }
}

// -------------------------------------------------------------------------------------------- the accounts

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

// ------------------------------------------------------------------------------------------------ the host

/** The IP's weight the configuration spends a minute (the same arithmetic the daemon refuses a start on). */
export function checkWeight(config: Config, accounts: number): CheckResult {
  const plan = weightPlan(config, Math.max(1, accounts));
  const text = describeWeightPlan(plan).split("\n").at(-1)!.trim();
  // the room for a death of every guarded engine at once: a configuration that ran before this version starts
  // without it (loudly), and doctor fails it until it is changed
  const room = deathRoom(config, Math.max(1, accounts));
  if (plan.fits && room !== null && !room.fits)
    return fail(
      "weight",
      null,
      `${accounts} account(s): ${text}; but no room for a death of every guarded engine at once:\n${describeDeathRoom(room)}`,
      "lengthen the interval or the deadline, or split the accounts over IPs",
      ExitCode.config,
    );
  if (plan.fits)
    return ok(
      "weight",
      null,
      `${accounts} account(s): ${text}${room ? `; ${room.reserve} weight kept for a death of every guarded engine` : ""}`,
    );
  return fail(
    "weight",
    null,
    `${accounts} account(s): ${text}`,
    plan.fittingIntervalMs === null
      ? "lengthen exposureInterval or budgetInterval, or split the accounts over IPs"
      : `--interval ${plan.fittingIntervalMs / 1000}s or more, or split the accounts over IPs`,
    ExitCode.config,
  );
}

// issue 40: the second witness (the HyperEVM block time) against the Date, in its own file
export { checkClockWitness } from "./clock-witness.js";

/**
 * The exchange's time from one answer's Date, judged by the switch's own model (src/switch/exchange-time.ts): a
 * Date refused as implausible, or a disagreement with the local clock that makes the switch `suspect` (readiness
 * fails), fails; one beyond clockSkewWarn warns.
 */
export function checkClock(
  sample: { date: number | undefined; sentAt: number; receivedAt: number } | null,
  warnMs: number,
  error?: unknown,
): CheckResult {
  if (!sample)
    return fail(
      "clock",
      null,
      `no answer to read the time from: ${reasonOf(error)}`,
      "check --api-url",
      exchangeCode(error),
    );
  if (sample.date === undefined)
    return warn(
      "clock",
      null,
      "the exchange's answer carried no Date header: the skew cannot be measured",
      "",
    );
  // One sample on the local clock's scale: the model's monotonic axis is the wall clock here (a one-shot).
  const model = initialTime(sample.sentAt, sample.sentAt, null);
  const { time, verdict } = takeSample(
    model,
    { date: sample.date, sentMono: sample.sentAt, receivedMono: sample.receivedAt },
    sample.receivedAt,
  );
  // The figure people read: the skew estimate of the clock watch (src/watchers/skew.ts), ± its uncertainty.
  const est = sampleSkew({ sentAt: sample.sentAt, receivedAt: sample.receivedAt, serverDate: sample.date });
  const skew = Math.round(est?.skewMs ?? sample.receivedAt - sample.date);
  const said = `the local clock is ${formatDuration(Math.abs(skew))} ${skew >= 0 ? "ahead of" : "behind"} the exchange's Date (± ${formatDuration(Math.round(est?.uncertaintyMs ?? 1000))})`;
  if (verdict.kind === "refused")
    return fail(
      "clock",
      null,
      `${said}: the Date was refused (${verdict.detail}); readiness would fail (/readyz 503) while the local clock is this far off`,
      "fix the host's time sync (chrony/NTP), or the proxy in front of the exchange",
      ExitCode.runtime,
    );
  const t = timesAt(time, sample.receivedAt, sample.receivedAt);
  if (t.suspect)
    return fail(
      "clock",
      null,
      `${said}: beyond the clock.suspect limit (5 s): readiness would fail (/readyz 503) while the daemon runs on this host`,
      "fix the host's time sync (chrony/NTP), or the proxy in front of the exchange",
      ExitCode.runtime,
    );
  if (t.disagreementMs > warnMs)
    return warn(
      "clock",
      null,
      said,
      `fix the host's time sync (above clockSkewWarn ${formatDuration(warnMs)})`,
    );
  return ok("clock", null, said);
}

/** The state directory: its owner, its mode, that a file can be created in it, and its free space. */
export function checkStateDir(dir: string, uid: number | undefined): CheckResult {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      return fail(
        "state-dir",
        null,
        `${dir}: ${(error as Error).message}`,
        "fix the path or its parent's permissions",
        ExitCode.cantCreat,
      );
    // `run` creates it (mode 0700): its nearest existing parent must let us.
    let parent = dirname(dir);
    while (parent !== dirname(parent)) {
      try {
        statSync(parent);
        break;
      } catch {
        parent = dirname(parent);
      }
    }
    return writable(parent)
      ? ok("state-dir", null, `${dir} does not exist yet: run creates it (mode 0700) in ${parent}`)
      : fail(
          "state-dir",
          null,
          `${dir} does not exist and ${parent} is not writable`,
          `create it: install -d -m 700 ${dir}`,
          ExitCode.cantCreat,
        );
  }
  if (!st.isDirectory())
    return fail(
      "state-dir",
      null,
      `${dir} is not a directory`,
      "give --state-dir a directory",
      ExitCode.cantCreat,
    );
  if (uid !== undefined && st.uid !== uid)
    return fail(
      "state-dir",
      null,
      `${dir} is owned by uid ${st.uid}, not by this user (uid ${uid})`,
      `chown it to the daemon's user, or run as uid ${st.uid}`,
      ExitCode.cantCreat,
    );
  if (!writable(dir))
    return fail(
      "state-dir",
      null,
      `no file can be created in ${dir}: the ledger and the lock cannot be written`,
      `chmod 700 ${dir} (and check a read-only mount)`,
      ExitCode.cantCreat,
    );
  let free: number | null = null;
  try {
    const fs = statfsSync(dir);
    free = Number(fs.bavail) * Number(fs.bsize);
  } catch {}
  const mode = (Number(st.mode) & 0o777).toString(8).padStart(4, "0");
  if (free !== null && free < STATE_FREE_FAIL_BYTES)
    return fail(
      "state-dir",
      null,
      `${dir} has ${free} bytes free: the ledger cannot be written`,
      "free space on its file system",
      ExitCode.cantCreat,
    );
  const said = `${dir}: ours, mode ${mode}, writable${free === null ? "" : `, ${Math.floor(free / 1024 / 1024)} MiB free`}`;
  if (free !== null && free < STATE_FREE_WARN_BYTES)
    return warn("state-dir", null, said, "free space on its file system");
  if ((Number(st.mode) & 0o022) !== 0)
    return fail(
      "state-dir",
      null,
      `${dir} is writable by its group or others (mode ${mode}): run refuses it (exit 73)`,
      `chmod 700 ${dir}`,
      ExitCode.cantCreat,
    );
  if ((Number(st.mode) & 0o077) !== 0)
    return warn(
      "state-dir",
      null,
      said,
      `chmod 700 ${dir}: the ledger and the audit trail are the daemon's alone`,
    );
  return ok("state-dir", null, said);
}

/** Whether a file can be created (and removed) in `dir`: the only honest test of a writable directory. */
function writable(dir: string): boolean {
  const probe = join(dir, `.hl-deadman-doctor-${process.pid}`);
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
    unlinkSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** The state directory's lock: free, stale (taken over at start), or held by a running daemon, which it names. */
export function checkLock(view: LockView): CheckResult {
  switch (view.state) {
    case "free":
      return ok("lock", null, `${view.path} is free`);
    case "stale":
      return ok(
        "lock",
        null,
        `${view.path} is stale${view.holder ? ` (pid ${view.holder.pid} is gone)` : ""}: run takes it over`,
      );
    case "foreign":
      return fail(
        "lock",
        null,
        view.message,
        `remove it when no hl-deadman runs: rm ${view.path}`,
        ExitCode.config,
      );
    case "held":
      return fail(
        "lock",
        null,
        `held by a running hl-deadman, pid ${view.holder.pid}${view.holder.host ? ` on ${view.holder.host}` : ""}${view.holder.at ? ` (since ${view.holder.at})` : ""}: a second run on this state directory exits 75`,
        "stop it first, or give this one its own --state-dir",
        ExitCode.tempFail,
      );
  }
}

/** Reads the lock without taking it (src/app/lock.ts). */
export function lockView(stateDir: string, now: number): LockView {
  return inspectStateLock(stateDir, now);
}

/** Whether `host:port` can be bound now (what the health server will do at start). */
export function canListen(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error) => resolve(error as NodeJS.ErrnoException));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** The health and metrics port: free (run binds it), or taken (run exits 69; by the lock's holder, when held). */
export async function checkHealth(health: string, lock: LockView): Promise<CheckResult> {
  const address = parseListenAddress(health);
  if (address === null)
    return warn(
      "health",
      null,
      "health is off: no /readyz for the engine or orchestrator, no metrics",
      "set --health 127.0.0.1:9464",
    );
  if (address.port === 0) return ok("health", null, `${health}: any free port`);
  const error = await canListen(address.host, address.port);
  if (!error) return ok("health", null, `${address.host}:${address.port} is free`);
  const holder =
    lock.state === "held" ? ` (the lock's holder, pid ${lock.holder.pid}, is probably listening there)` : "";
  return fail(
    "health",
    null,
    `cannot listen on ${address.host}:${address.port} (${error.code ?? error.message})${holder}: run would exit 69`,
    "free the port or choose --health HOST:PORT (or off)",
    ExitCode.unavailable,
  );
}

/** The engine guard: configured, and the engine alive by it (file fresh, URL answering, socket free to listen on). */
export async function checkGuard(config: Config, clock: Clock, logger: Logger): Promise<CheckResult> {
  if (config.guardSocket) {
    const address = parseGuardSocket(config.guardSocket);
    if (address.kind === "tcp") {
      const error = await canListen(address.host, address.port);
      return error
        ? fail(
            "guard",
            null,
            `guard socket ${config.guardSocket} cannot be listened on (${error.code ?? error.message})`,
            "free it or choose another --guard-socket",
            ExitCode.unavailable,
          )
        : ok(
            "guard",
            null,
            `guard socket ${config.guardSocket} is free: the engine connects once run listens`,
          );
    }
    const existing = (() => {
      try {
        return lstatSync(address.path);
      } catch {
        return null;
      }
    })();
    if (existing && !existing.isSocket())
      return fail(
        "guard",
        null,
        `guard socket ${address.path} exists and is not a socket`,
        "remove it or choose another path",
        ExitCode.config,
      );
    if (!writable(dirname(address.path)))
      return fail(
        "guard",
        null,
        `no socket can be made in ${dirname(address.path)}`,
        `create it for the daemon's user: install -d -m 750 ${dirname(address.path)}`,
        ExitCode.config,
      );
    return ok("guard", null, `guard socket ${address.path}: the engine connects once run listens`);
  }
  if (!config.guardFile && !config.guardUrl)
    return warn(
      "guard",
      null,
      "no engine guard: a dead or hung engine is not seen, the pushes go on while the daemon lives",
      "set --guard-socket, --guard-url or --guard-file (docs/daemon.md, Engine guard)",
    );
  const runtime = createRuntime({ clock, timers: systemTimers() });
  const guard = createGuard({
    file: config.guardFile,
    url: config.guardUrl,
    maxAgeMs: config.guardMaxAge,
    intervalMs: config.guardInterval,
    runtime,
    logger,
    metrics: createMetrics(),
    onChange: () => {},
  });
  try {
    const up = await guard!.check();
    const what = config.guardFile
      ? `guard file ${config.guardFile}`
      : `guard URL ${redactUrl(config.guardUrl!)}`;
    const status = guard!.status();
    return up
      ? ok("guard", null, `${what}: the engine is alive`)
      : fail(
          "guard",
          null,
          `${what}: the engine is not alive${status.detail ? ` (${status.detail})` : ""}`,
          "start the engine (or fix the guard's path/URL) before going live",
          ExitCode.unavailable,
        );
  } finally {
    guard!.stop();
    runtime.abort("doctor");
  }
}
