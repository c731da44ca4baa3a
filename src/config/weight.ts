/**
 * The IP's weight a configuration will spend (docs/operations.md, "The IP's weight"). Every REST request of one IP
 * counts against 1,200 weight a minute (Hyperliquid docs, "Rate limits and user limits"):
 * an `/exchange` action weighs 1 (`scheduleCancel` has no batch), `clearinghouseState` 2, `userRole` 60, the
 * other `/info` requests 20, explorer requests 40. `batchClearinghouseStates` is not in the docs: counted as 20 a
 * request of at most 50 users, like the other `/info` requests. Pure: the daemon refuses at start a configuration
 * whose steady spend does not fit under the margin, and `config check` prints the same arithmetic.
 */
import type { Config } from "./options.js";

export const IP_WEIGHT_PER_MINUTE = 1_200;
/** the steady spend may use this share of the IP's limit: the rest is for start-up, engine deaths and retries */
export const WEIGHT_MARGIN = 0.9;
export const WEIGHT = Object.freeze({
  action: 1,
  clearinghouseState: 2,
  info: 20,
  userRole: 60,
  explorer: 40,
  /** undocumented: counted as another /info request, per request of at most BATCH_USERS */
  batchClearinghouseStates: 20,
});
export const BATCH_USERS = 50;

/**
 * The status page's open orders (src/watchers/open-orders.ts) are read only while the daemon arms at most this many
 * accounts: one `frontendOpenOrders` (20) per account on the exposure cadence; a fleet's page says they are not read.
 */
export const OPEN_ORDERS_MAX_ACCOUNTS = 10;

/** Whether the open orders of `accounts` accounts are read at all (not without the exposure poll's cadence). */
export function readsOpenOrders(accounts: number, exposureIntervalMs: number): boolean {
  return exposureIntervalMs > 0 && accounts > 0 && accounts <= OPEN_ORDERS_MAX_ACCOUNTS;
}

export type WeightLine = { what: string; perMinute: number; arithmetic: string };

export type WeightPlan = {
  accounts: number;
  /** the steady spend, a line per kind of request */
  lines: WeightLine[];
  perMinute: number;
  /** IP_WEIGHT_PER_MINUTE × WEIGHT_MARGIN */
  budget: number;
  fits: boolean;
  /**
   * The busiest minute: the steady spend with one whole exposure poll in it instead of its average (a poll's
   * requests all go out within a few seconds). It must fit too.
   */
  peakPerMinute: number;
  /** what an engine death costs on top (every account's cancel pass), and a start (the record reads, meta) */
  bursts: WeightLine[];
  /** the shortest push interval (ms, whole seconds) at which the steady spend fits, or null when none does */
  fittingIntervalMs: number | null;
};

const perMin = (intervalMs: number) => 60_000 / intervalMs;
const round = (x: number) => Math.round(x * 10) / 10;
const s = (ms: number) => `${round(ms / 1000)} s`;

/** How many accounts `config` arms: its signers' accounts and vaults, else its accounts (at least the signer's own). */
export function configuredAccounts(config: Config): number {
  if (config.signers.length > 0)
    return config.signers.reduce((n, s) => n + (s.account ? 1 : 0) + s.vaults.length, 0);
  if (config.vault) return 1;
  return Math.max(1, new Set(config.accounts).size);
}

/** The steady weight a minute of `config` for `accounts` accounts, and what would fit. */
export function weightPlan(config: Config, accounts = configuredAccounts(config)): WeightPlan {
  const lines: WeightLine[] = [];
  const pushes = accounts * perMin(config.interval) * WEIGHT.action;
  lines.push({
    what: "pushes (scheduleCancel)",
    perMinute: pushes,
    arithmetic: `${accounts} account(s) × 60 s / ${s(config.interval)} × ${WEIGHT.action}`,
  });
  const others: WeightLine[] = [];
  let poll = 0;
  if (config.exposureInterval > 0) {
    const chunks = Math.ceil(accounts / BATCH_USERS) * Math.max(1, config.dexes.length);
    poll = chunks * WEIGHT.batchClearinghouseStates;
    others.push({
      what: "exposure (batchClearinghouseStates)",
      perMinute: chunks * perMin(config.exposureInterval) * WEIGHT.batchClearinghouseStates,
      arithmetic: `${chunks} request(s) of ≤ ${BATCH_USERS} users × 60 s / ${s(config.exposureInterval)} × ${WEIGHT.batchClearinghouseStates}`,
    });
  }
  // what a fire would cancel, for the status page: a few accounts only (src/watchers/open-orders.ts)
  if (readsOpenOrders(accounts, config.exposureInterval)) {
    const reads = accounts * Math.max(1, config.dexes.length);
    others.push({
      what: "open orders (frontendOpenOrders, for the status page)",
      perMinute: reads * perMin(config.exposureInterval) * WEIGHT.info,
      arithmetic: `${reads} read(s) × 60 s / ${s(config.exposureInterval)} × ${WEIGHT.info} (at most ${OPEN_ORDERS_MAX_ACCOUNTS} accounts)`,
    });
  }
  if (config.budgetInterval > 0)
    others.push({
      what: "address budget (userRateLimit)",
      perMinute: accounts * perMin(config.budgetInterval) * WEIGHT.info,
      arithmetic: `${accounts} × 60 s / ${s(config.budgetInterval)} × ${WEIGHT.info}`,
    });
  if (config.agentCheckInterval > 0)
    others.push({
      what: "agent validity (extraAgents)",
      perMinute: perMin(config.agentCheckInterval) * WEIGHT.info,
      arithmetic: `1 master × 60 s / ${s(config.agentCheckInterval)} × ${WEIGHT.info} (only when the signer is an agent)`,
    });
  lines.push(...others);
  const perMinute = lines.reduce((a, l) => a + l.perMinute, 0);
  const budget = IP_WEIGHT_PER_MINUTE * WEIGHT_MARGIN;
  const rest = others.reduce((a, l) => a + l.perMinute, 0);
  // pushes + rest ≤ budget ⇔ interval ≥ accounts × 60 s × weight / (budget − rest)
  // the busiest minute holds a whole poll: pushes + rest − its average + poll ≤ budget
  const pollAverage = config.exposureInterval > 0 ? poll * perMin(config.exposureInterval) : 0;
  const peakPerMinute = perMinute - pollAverage + poll;
  const room = budget - Math.max(rest, rest - pollAverage + poll);
  const fittingIntervalMs =
    room <= 0 ? null : Math.ceil((accounts * 60_000 * WEIGHT.action) / room / 1000) * 1000;
  // A cancel pass (src/protocol/hyperliquid/cancel.ts): the orders a fresh order feed knows are cancelled without a
  // read first and one read confirms them; without a fresh list a read comes first and a second confirms. `meta` is
  // read once at start and again only for a coin it does not know. The feed follows the first orderFeedAccounts.
  const feed =
    config.onEngineDown === "cancel" && Boolean(config.guardSocket) && config.orderFeedAccounts > 0;
  const followed = feed ? Math.min(accounts, config.orderFeedAccounts) : 0;
  const knownPass = WEIGHT.info + WEIGHT.action;
  const readPass = 2 * WEIGHT.info + WEIGHT.action;
  const cancelMeta = config.onEngineDown === "cancel" ? WEIGHT.info : 0;
  const bursts: WeightLine[] = [
    {
      what: "an engine death (a cancel pass of every account)",
      perMinute: followed * knownPass + (accounts - followed) * readPass,
      arithmetic: `${followed} × (${WEIGHT.info} + ${WEIGHT.action}) with the orders known from the order feed + ${accounts - followed} × (${WEIGHT.info} + ${WEIGHT.action} + ${WEIGHT.info}) read first; + ${WEIGHT.info} for meta only for a coin it does not know, + ${WEIGHT.action} per 40 orders more`,
    },
    {
      what: "a start (the record: explorer userDetails and historicalOrders)",
      perMinute: accounts * (WEIGHT.explorer + WEIGHT.info) + cancelMeta,
      arithmetic: `${accounts} × (${WEIGHT.explorer} + ${WEIGHT.info})${cancelMeta > 0 ? ` + ${WEIGHT.info} (meta, once, for the cancel)` : ""}, more for long order histories`,
    },
  ];
  return {
    accounts,
    lines: lines.map((l) => ({ ...l, perMinute: round(l.perMinute) })),
    perMinute: round(perMinute),
    budget,
    fits: perMinute <= budget && peakPerMinute <= budget,
    peakPerMinute: round(peakPerMinute),
    bursts,
    fittingIntervalMs,
  };
}

/** One paragraph for people: the arithmetic, the verdict, and what would fit. */
export function describeWeightPlan(p: WeightPlan): string {
  const rows = p.lines.map((l) => `  ${l.what}: ${l.arithmetic} = ${l.perMinute}/min`).join("\n");
  const peak =
    p.peakPerMinute > p.perMinute
      ? `; the minute with a whole exposure poll in it: ${p.peakPerMinute}/min`
      : "";
  const verdict = p.fits
    ? `= ${p.perMinute} weight/min${peak}, within ${p.budget} (${WEIGHT_MARGIN * 100} % of the IP's ${IP_WEIGHT_PER_MINUTE}/min)`
    : `= ${p.perMinute} weight/min${peak}, above ${p.budget} (${WEIGHT_MARGIN * 100} % of the IP's ${IP_WEIGHT_PER_MINUTE}/min): ${
        p.fittingIntervalMs === null
          ? "no push interval fits: the reads alone exceed it (lengthen exposureInterval or budgetInterval, or split the accounts over IPs)"
          : `an interval of ${p.fittingIntervalMs / 1000} s or more fits (or split the accounts over IPs)`
      }`;
  return `${rows}\n  ${verdict}`;
}
