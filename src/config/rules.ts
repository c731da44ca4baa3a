/**
 * The cross-field rules: what no single key's type can say (deadline against interval and requestTimeout, one
 * guard, vault against accounts...). Errors fail the configuration (exit 78); warnings are logged at start.
 */
import { formatDuration } from "../core/duration.js";
import { ConfigError } from "./errors.js";
import { NETWORK_URLS } from "./networks.js";
import type { Config } from "./options.js";
import { show } from "./values.js";
import { describeWeightPlan, weightPlan } from "./weight.js";

/** Whether the configuration talks to the official API, whose weight limit (1,200 a minute) the plan counts on. */
export function officialApi(config: Config, simulator = false): boolean {
  return (
    !simulator &&
    (!config.apiUrl ||
      Object.values(NETWORK_URLS).some((n) => n.apiUrl === config.apiUrl!.replace(/\/+$/, "")))
  );
}

/** Where each effective value came from: `default`, `file <path>`, `env HL_X`, `flag --x`. */
export type ConfigSources = Record<string, string>;

/** The exchange refuses a scheduleCancel time less than 5 s ahead (docs/exchange-behaviour.md §3). */
export const EXCHANGE_MIN_LEAD_MS = 5_000;
/** Extra room on top of the 5 s minimum for clock skew between us and the exchange. */
export const SKEW_MARGIN_MS = 1_000;
/** Absolute floor for the deadline: 5 s exchange minimum + 5 s safety margin. */
export const MIN_DEADLINE_MS = 10_000;
/** Margin kept between the last retry's latest landing and the deadline (see the interval rule). */
export const RETRY_MARGIN_MS = 5_000;
export const MIN_INTERVAL_MS = 1_000;
export const MIN_REQUEST_TIMEOUT_MS = 100;
/** The shortest `guardConnectGrace`: a live engine reconnecting to a restarted daemon needs a moment. */
export const MIN_CONNECT_GRACE_MS = 1_000;

/**
 * How long after a restart the connection guard waits for an engine to name an account an engine held before
 * (`guardConnectGrace`, default deadline - interval: no longer than the exchange's own schedule would have stood
 * after the last push of the daemon that died).
 */
export const guardConnectGraceOf = (
  config: Pick<Config, "guardConnectGrace" | "deadline" | "interval">,
): number => config.guardConnectGrace ?? Math.max(MIN_CONNECT_GRACE_MS, config.deadline - config.interval);

/** scheduleCancel actions per day per account at `intervalMs` (docs/exchange-behaviour.md §10 table). */
export const actionsPerDay = (intervalMs: number): number =>
  intervalMs > 0 ? Math.round(86_400_000 / intervalMs) : 0;

const fmt = (ms: number) => formatDuration(ms);
const at = (sources: ConfigSources, key: string) => (sources[key] ? ` (${sources[key]})` : "");

/**
 * The cross-field rules (errors) and the warnings. The numbers are written down in docs/daemon.md:
 * - deadline >= max(10 s, 5 s + requestTimeout + 1 s): the exchange refuses a time < 5 s ahead
 *   (docs/exchange-behaviour.md §3) and a push may take up to requestTimeout to land, plus 1 s for clock skew;
 * - deadline >= interval + 2 x requestTimeout + 5 s and interval <= deadline / 2: when a push fails, at least
 *   two retries (each bounded by requestTimeout) still fit before the confirmed deadline lapses.
 */
export function checkConfigRules(
  config: Config,
  sources: ConfigSources = {},
  { simulator = false }: { simulator?: boolean } = {},
): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const { interval, deadline, requestTimeout } = config;

  if (interval < MIN_INTERVAL_MS)
    errors.push(
      `interval = ${fmt(interval)}${at(sources, "interval")}: must be at least ${fmt(MIN_INTERVAL_MS)}`,
    );
  if (requestTimeout < MIN_REQUEST_TIMEOUT_MS)
    errors.push(
      `requestTimeout = ${fmt(requestTimeout)}${at(sources, "requestTimeout")}: must be at least ${fmt(MIN_REQUEST_TIMEOUT_MS)}`,
    );
  const minDeadline = Math.max(MIN_DEADLINE_MS, EXCHANGE_MIN_LEAD_MS + requestTimeout + SKEW_MARGIN_MS);
  if (deadline < minDeadline)
    errors.push(
      `deadline = ${fmt(deadline)}${at(sources, "deadline")}: must be at least ${fmt(minDeadline)} ` +
        `(the exchange's 5s minimum + requestTimeout ${fmt(requestTimeout)} + 1s skew margin, and never below 10s)`,
    );
  const retryRoom = interval + 2 * requestTimeout + RETRY_MARGIN_MS;
  if (deadline < retryRoom)
    errors.push(
      `deadline = ${fmt(deadline)}${at(sources, "deadline")}: must be at least interval + 2 x requestTimeout + 5s = ` +
        `${fmt(retryRoom)} so that two retries fit before the deadline lapses; lower interval or requestTimeout, or raise deadline`,
    );
  if (interval * 2 > deadline)
    errors.push(
      `interval = ${fmt(interval)}${at(sources, "interval")}: must be at most half the deadline (${fmt(deadline / 2)})`,
    );
  if (config.exposureInterval !== 0 && config.exposureInterval < 1_000)
    errors.push(
      `exposureInterval = ${fmt(config.exposureInterval)}${at(sources, "exposureInterval")}: must be 0 (off) or at least 1s`,
    );
  // The coordination lease (docs/operations.md "High availability", the timing rule): etcd grants whole seconds;
  // at least 5 s: the lease's remaining life is read in whole seconds, rounded down, and etcd3 renews it every TTL / 3, so below 5 s a renewed lease could read as under the 1 s margin and the holder flap; at most deadline - interval, so
  // that a replica that died stops counting as a live candidate before the last schedule it pushed can fire
  // (that schedule stands at least deadline - interval after its death): a candidate counted alive always still
  // has a schedule of its own standing.
  if (config.coordinate !== undefined) {
    const ttl = config.coordinateTtl;
    if (ttl % 1_000 !== 0 || ttl < 5_000 || ttl > 60_000)
      errors.push(
        `coordinateTtl = ${fmt(ttl)}${at(sources, "coordinateTtl")}: must be whole seconds from 5s to 60s (etcd grants leases in seconds)`,
      );
    else if (ttl > deadline - interval)
      errors.push(
        `coordinateTtl = ${fmt(ttl)}${at(sources, "coordinateTtl")}: must be at most deadline - interval = ${fmt(deadline - interval)}, so that a replica that died stops counting as alive before the last schedule it pushed can fire`,
      );
  } else if (config.actAlone)
    warnings.push(
      "actAlone is set without coordinate: it has no effect (a replica alone takes every action)",
    );
  if (config.shutdownTimeout < 500)
    errors.push(
      `shutdownTimeout = ${fmt(config.shutdownTimeout)}${at(sources, "shutdownTimeout")}: must be at least 500ms`,
    );
  if (config.guardInterval < 100)
    errors.push(
      `guardInterval = ${fmt(config.guardInterval)}${at(sources, "guardInterval")}: must be at least 100ms`,
    );
  if (config.guardFile && config.guardUrl)
    errors.push(
      `guardFile and guardUrl${at(sources, "guardFile")}: set one engine guard, not both (got ${show(config.guardFile)} and ${show(config.guardUrl, "guardUrl")})`,
    );
  // One engine guard: the connection guard sees a crash at once and a hang through its heartbeat gap; a file or
  // URL guard beside it would be a second, slower opinion on the same engine that can only add false downs.
  if (config.guardSocket && (config.guardFile || config.guardUrl))
    errors.push(
      `guardSocket${at(sources, "guardSocket")}: set one engine guard, not a socket beside ${config.guardFile ? "guardFile" : "guardUrl"} (the socket sees a crash at once and a hang through guardHeartbeatGap)`,
    );
  if (config.guardHeartbeatGap !== 0 && config.guardHeartbeatGap < 100)
    errors.push(
      `guardHeartbeatGap = ${fmt(config.guardHeartbeatGap)}${at(sources, "guardHeartbeatGap")}: must be 0 (off) or at least 100ms`,
    );
  if (config.guardHeartbeatGap !== 0 && !config.guardSocket)
    errors.push(
      `guardHeartbeatGap${at(sources, "guardHeartbeatGap")}: only the connection guard (guardSocket) hears heartbeats`,
    );
  // The connect grace: long enough for a live engine to reconnect to a restarted daemon (hl-deadman/engine retries
  // every 200 ms), no longer than the deadline, so that the restarted daemon's pushes never keep a dead engine's
  // orders resting longer than the schedule the daemon that died had armed.
  if (config.guardConnectGrace !== undefined) {
    if (!config.guardSocket)
      errors.push(
        `guardConnectGrace${at(sources, "guardConnectGrace")}: only the connection guard (guardSocket) knows which engine held an account`,
      );
    else if (config.guardConnectGrace < MIN_CONNECT_GRACE_MS || config.guardConnectGrace > deadline)
      errors.push(
        `guardConnectGrace = ${fmt(config.guardConnectGrace)}${at(sources, "guardConnectGrace")}: must be from ${fmt(MIN_CONNECT_GRACE_MS)} (time for a live engine to reconnect) to the deadline (${fmt(deadline)})`,
      );
  }
  if (config.guardFile && config.guardMaxAge < config.guardInterval)
    errors.push(
      `guardMaxAge = ${fmt(config.guardMaxAge)}${at(sources, "guardMaxAge")}: must be at least guardInterval (${fmt(config.guardInterval)})`,
    );
  // The escalation stands on the cancel path (step 1), and needs a rule to act on.
  if (config.escalateAccounts.length > 0) {
    if (config.onEngineDown !== "cancel")
      errors.push(
        `escalateAccounts${at(sources, "escalateAccounts")}: the escalation builds on onEngineDown cancel (its step 1), not ${config.onEngineDown}`,
      );
    const rules = [
      config.escalateAfter > 0,
      config.escalateLiquidationPct !== undefined,
      config.escalateDrawdownPct !== undefined,
      config.escalateNotionalUsd !== undefined,
    ];
    if (!rules.some(Boolean))
      errors.push(
        `escalateAccounts${at(sources, "escalateAccounts")}: set at least one rule (escalateAfter, escalateLiquidationPct, escalateDrawdownPct or escalateNotionalUsd)`,
      );
    const armed = new Set(config.accounts);
    const stranger = config.escalateAccounts.filter((a) => armed.size > 0 && !armed.has(a));
    if (stranger.length > 0)
      errors.push(
        `escalateAccounts${at(sources, "escalateAccounts")}: ${stranger.join(", ")} not among the accounts the daemon arms`,
      );
    const polled = config.exposureInterval > 0;
    const needsPoll =
      config.escalateLiquidationPct !== undefined ||
      config.escalateDrawdownPct !== undefined ||
      config.escalateNotionalUsd !== undefined;
    if (needsPoll && !polled)
      errors.push(
        `escalateAccounts${at(sources, "escalateAccounts")}: the liquidation, drawdown and notional rules read the exposure poll; exposureInterval is 0`,
      );
  }
  if (config.permanentRecheckInterval < interval)
    errors.push(
      `permanentRecheckInterval = ${fmt(config.permanentRecheckInterval)}${at(sources, "permanentRecheckInterval")}: must be at least the interval (${fmt(interval)})`,
    );
  if (config.triggerWarnRemaining >= config.triggerLimit)
    errors.push(
      `triggerWarnRemaining = ${config.triggerWarnRemaining}${at(sources, "triggerWarnRemaining")}: must be below triggerLimit (${config.triggerLimit})`,
    );
  if (config.vault && config.accounts.length > 0 && !config.accounts.every((a) => a === config.vault))
    errors.push(
      `accounts = ${show(config.accounts)}${at(sources, "accounts")}: with vault ${config.vault} the account is the vault; drop accounts or set it to the vault`,
    );
  if (config.signers.length > 0) {
    // Several signers: each names its key and its accounts; the single-signer keys would say it twice.
    for (const k of ["keyFile", "vault"] as const)
      if (config[k] !== undefined)
        errors.push(
          `${k}${at(sources, k)}: with signers, each signer names its own key and accounts; drop ${k}`,
        );
    if (config.accounts.length > 0)
      errors.push(
        `accounts${at(sources, "accounts")}: with signers, each signer names its own accounts; drop accounts`,
      );
    const names = new Set<string>();
    const armedBy = new Map<string, string>();
    for (const [i, s] of config.signers.entries()) {
      if (names.has(s.name)) errors.push(`signers.${i}.name = ${s.name}: another signer has this name`);
      names.add(s.name);
      // One account, one signer: two signers pushing for one account would share neither nonces nor budget.
      for (const a of [...(s.account ? [s.account] : []), ...s.vaults]) {
        const other = armedBy.get(a);
        if (other !== undefined)
          errors.push(`signers.${i} (${s.name}): account ${a} is already armed by signer ${other}`);
        else armedBy.set(a, s.name);
      }
    }
  }
  if (config.watchAddresses.length > 0 && !config.rpcUrl)
    errors.push(
      `watchAddresses${at(sources, "watchAddresses")}: needs rpcUrl (--rpc-url / HL_RPC_URL), a node that serves ots_* (the official RPC is not known to)`,
    );
  // The API URL is a base: `/exchange` and `/info` are appended to it, so one that already ends with either would
  // reach `/exchange/exchange` and read as a bare "Not Found" at every push.
  const apiSuffix = config.apiUrl ? apiEndpointSuffix(config.apiUrl) : null;
  if (config.apiUrl && apiSuffix)
    errors.push(
      `apiUrl = ${show(config.apiUrl, "apiUrl")}${at(sources, "apiUrl")}: is the API's base URL, to which /exchange and /info ` +
        `are appended; drop ${apiSuffix}: did you mean ${show(config.apiUrl.replace(/\/(exchange|info)\/*$/, ""), "apiUrl")}?`,
    );
  // The IP's weight (weight.ts): a steady spend above the margin is refused with its arithmetic. The accounts counted
  // are the configured ones (at least one: the signer's own); `run` checks again with the accounts it arms.
  // The 1,200 a minute is the official API's: another host (a simulator, a provider's node) has limits of its own,
  // so there it is a warning.
  const plan = weightPlan(config);
  const official = officialApi(config, simulator);
  if (!plan.fits)
    (official ? errors : warnings).push(
      `the configuration spends more of the IP's weight than fits${at(sources, "interval")}${official ? "" : " (the official API's limit; this API host may have its own)"}:\n${describeWeightPlan(plan)}`,
    );
  // The listen address (`health`) is checked once, by the schema, with src/config/listen.ts.

  // Warnings: settings that burn the address's lifetime action budget, or that risk false triggers.
  const perDay = actionsPerDay(interval);
  if (interval < 5_000)
    warnings.push(
      `interval ${fmt(interval)} is below 5s: ${perDay.toLocaleString("en-US")} scheduleCancel actions per day per account, ` +
        "each spending the address's lifetime action budget (10,000 + 1 per USDC traded)",
    );
  if (deadline < 30_000)
    warnings.push(
      `deadline ${fmt(deadline)} is below 30s: a short network or exchange hiccup can let the switch fire (a false trigger costs 1 of ${config.triggerLimit} per day)`,
    );
  if (deadline > 600_000)
    warnings.push(
      `deadline ${fmt(deadline)} is above 10m: open orders stay live that long after the engine dies`,
    );
  if (config.shutdownTimeout < requestTimeout)
    warnings.push(
      `shutdownTimeout ${fmt(config.shutdownTimeout)} is below requestTimeout ${fmt(requestTimeout)}: a slow removal on shutdown may be cut short`,
    );
  return { errors, warnings };
}

/** `/exchange` or `/info` when the URL's path ends with one of them (the endpoints appended to apiUrl), else null. */
export function apiEndpointSuffix(url: string): string | null {
  try {
    const match = /\/(exchange|info)\/*$/.exec(new URL(url).pathname);
    return match ? `/${match[1]}` : null;
  } catch {
    return null;
  }
}

/** The perp dexes the cancels, closes and fire checks cover: the first perp dex ("") and every listed one. */
export function dexesToActOn(dexes: readonly string[]): string[] {
  return [...new Set(["", ...dexes])];
}

/**
 * The escalation's settings for the accounts that opted in (`escalateAccounts`, docs/operations.md "When cancelling
 * is not enough"); an opted-in account this daemon does not arm is a configuration error.
 */
export function escalationOf(config: Config, plan: readonly { account: string }[]) {
  const escalating = new Set(config.escalateAccounts);
  const strangers = [...escalating].filter((a) => !plan.some((p) => p.account === a));
  if (strangers.length > 0)
    throw new ConfigError([
      `escalateAccounts: ${strangers.join(", ")} not among the accounts this daemon arms (${plan.map((p) => p.account).join(", ")})`,
    ]);
  const escalation = {
    afterDownMs: config.escalateAfter > 0 ? config.escalateAfter : null,
    liquidationPct: config.escalateLiquidationPct ?? null,
    drawdownPct: config.escalateDrawdownPct ?? null,
    notionalCapUsd: config.escalateNotionalUsd ?? null,
    retryMs: config.closeRetryInterval,
  };
  return { escalating, escalation };
}
