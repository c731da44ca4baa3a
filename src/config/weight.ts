/**
 * The IP's weight a configuration will spend (docs/operations.md, "The IP's weight"). Every REST request of one IP
 * counts against 1,200 weight a minute (Hyperliquid docs, "Rate limits and user limits"):
 * an `/exchange` action weighs 1 (`scheduleCancel` has no batch), `clearinghouseState` 2, `userRole` 60, the
 * other `/info` requests 20, explorer requests 40. `batchClearinghouseStates` is not in the docs: counted as 20 a
 * request of at most 50 users, like the other `/info` requests. Pure: the daemon refuses at start a configuration
 * whose steady spend does not fit under the margin, and `config check` prints the same arithmetic.
 */
import { type ExposureLine, nearestLiquidationPct } from "../protocol/hyperliquid/exposure-line.js";
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
  // read once at start and again only for a coin it does not know. The feed follows the first orderFeedAccounts,
  // on the first perp dex only.
  // The cancels, closes and fire checks cover the first perp dex and every listed one, each with a pass of its own
  // (docs/operations.md, "Every listed dex"); a builder dex's asset ids need one `perpDexs` read and its own `meta`,
  // each read once (at start under `cancel`, else at its first pass).
  const followed = config.onEngineDown === "cancel" ? knownAtDeath(config, accounts) : 0;
  const knownPass = WEIGHT.info + WEIGHT.action;
  const readPass = 2 * WEIGHT.info + WEIGHT.action;
  const cancelMeta = config.onEngineDown === "cancel" ? WEIGHT.info : 0;
  const dexes = new Set(["", ...config.dexes]).size;
  const builders = dexes - 1;
  const once = builders > 0 ? (builders + 1) * WEIGHT.info : 0;
  const perDex = (x: string) => (dexes > 1 ? `${dexes} dex(es) × (${x})` : x);
  const bursts: WeightLine[] = [
    {
      what:
        builders > 0
          ? `an engine death (a cancel pass of every account on each of ${dexes} dexes)`
          : "an engine death (a cancel pass of every account)",
      perMinute:
        followed * knownPass + (accounts - followed) * readPass + accounts * builders * readPass + once,
      arithmetic: `${followed} × (${WEIGHT.info} + ${WEIGHT.action}) with the orders known from ${config.guardAnnouncedOrders && config.guardSocket ? "the engines' announcements" : "the order feed"} + ${accounts - followed} × (${WEIGHT.info} + ${WEIGHT.action} + ${WEIGHT.info}) read first${
        builders > 0
          ? ` + ${accounts} × ${builders} builder dex(es) × (${WEIGHT.info} + ${WEIGHT.action} + ${WEIGHT.info}) read first + ${once} (perpDexs and each builder dex's meta, once)`
          : ""
      }; + ${WEIGHT.info} for meta only for a coin it does not know, + ${WEIGHT.action} per 40 orders more`,
    },
    {
      what: "a start (the record: explorer userDetails and historicalOrders)",
      perMinute: accounts * (WEIGHT.explorer + WEIGHT.info) + cancelMeta,
      arithmetic: `${accounts} × (${WEIGHT.explorer} + ${WEIGHT.info})${cancelMeta > 0 ? ` + ${WEIGHT.info} (meta, once, for the cancel)` : ""}, more for long order histories`,
    },
    {
      what: "a close step of the escalation (positions and marks, per dex)",
      perMinute: dexes * (WEIGHT.clearinghouseState + WEIGHT.info) + WEIGHT.action,
      arithmetic: `${perDex(`${WEIGHT.clearinghouseState} + ${WEIGHT.info}`)} + ${WEIGHT.action} per account and step`,
    },
    {
      what: "the check after a fire (open orders, per dex)",
      perMinute: dexes * WEIGHT.info,
      arithmetic: `${perDex(`${WEIGHT.info}`)} per account and fire`,
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

/**
 * The weight of a cancel pass at an engine's death (src/protocol/hyperliquid/cancel.ts):
 * - orders known (the order feed's fresh list, or the engine's announcement over guard protocol 2): the cancel
 *   actions alone, at most two (resting, triggers);
 * - orders read first: the read and the two actions;
 * - then the confirming read, never dropped (it catches what neither the feed nor the engine named). It waits for
 *   weight at a simultaneous death (src/fleet-death/), but it is part of the pass the plan reserves: the switch holds
 *   its pushes until the pass answers, so a confirm that came after the deadline would cost the trigger;
 * - then the push that renews the schedule once the pass is confirmed, in the minute of its confirm, beyond the
 *   steady rate (the host-death bench's 100 accounts at 2 min drew 13 to 25 answers 429 a death without it counted).
 */
export const PASS_WEIGHT = Object.freeze({
  knownInTime: 2 * WEIGHT.action,
  readInTime: WEIGHT.info + 2 * WEIGHT.action,
  confirm: WEIGHT.info,
  renewal: WEIGHT.action,
});

/** A whole pass: its in-time part, its confirming read, and the renewing push after it. */
export const passWeight = (known: boolean) =>
  (known ? PASS_WEIGHT.knownInTime : PASS_WEIGHT.readInTime) + PASS_WEIGHT.confirm + PASS_WEIGHT.renewal;

/**
 * How many of `accounts` accounts' passes know their orders at a death: every account when the engines announce
 * them (`guardAnnouncedOrders`, guard protocol 2: the operator's word that each engine sends its `orders` lines),
 * else those the order feed follows (at most 10), else none. An account whose engine did not announce reads first
 * at its death: the pass is dearer than planned and, when the weight left cannot afford it, falls back.
 */
export function knownAtDeath(config: Config, accounts: number): number {
  if (!config.guardSocket) return 0;
  if (config.guardAnnouncedOrders) return accounts;
  return config.orderFeedAccounts > 0 ? Math.min(accounts, config.orderFeedAccounts) : 0;
}

export type DeathRoom = {
  accounts: number;
  /** accounts whose orders are known at the death (the order feed's, or announced by their engines) */
  known: number;
  /** whose engines announce their orders (guard protocol 2), among `known` */
  announced: number;
  /** the weight every account's whole pass needs before the deadline at a simultaneous death */
  reserve: number;
  /** what the announcements save in reads: the reserve without them, less the reserve */
  savedByAnnouncements: number;
  /** the time a pass has before the scheduled cancel fires: deadline − interval (the last push may be that old) */
  windowMs: number;
  /** the IP's weight left in that time above the busiest minute's steady spend */
  available: number;
  fits: boolean;
  /** how many passes fit in time, in risk order; the others fall back to the 5 s schedule (a trigger each) */
  afforded: number;
  arithmetic: string;
};

/**
 * The room a configuration keeps for a death of every guarded engine at once (engine-down policy `cancel`), or
 * null under another policy (no pass runs). The IP's limit is a rolling minute: at the death, the minute behind
 * spent the busiest minute's steady weight, so what is left now is the limit less that, and over a window longer
 * than a minute as much again for each further minute.
 */
export function deathRoom(config: Config, accounts = configuredAccounts(config)): DeathRoom | null {
  if (config.onEngineDown !== "cancel") return null;
  const plan = weightPlan(config, accounts);
  const known = knownAtDeath(config, accounts);
  const announced = config.guardSocket && config.guardAnnouncedOrders ? accounts : 0;
  const reserveOf = (k: number) => k * passWeight(true) + (accounts - k) * passWeight(false);
  const reserve = reserveOf(known);
  const withoutAnnouncements = reserveOf(knownAtDeath({ ...config, guardAnnouncedOrders: false }, accounts));
  const windowMs = Math.max(0, config.deadline - config.interval);
  const minutes = Math.max(1, windowMs / 60_000);
  const left = Math.max(0, IP_WEIGHT_PER_MINUTE - plan.peakPerMinute);
  const available = Math.floor(left * minutes);
  const fits = reserve <= available;
  // in risk order the known passes are the cheaper ones; the count is the most that fit, known ones first
  const k = Math.min(known, Math.floor(available / passWeight(true)));
  const afforded = fits ? accounts : k + Math.floor((available - k * passWeight(true)) / passWeight(false));
  const source = announced > 0 ? "announced by their engines" : "known from the order feed";
  const arithmetic =
    `a death of every engine at once needs ${known} × (${PASS_WEIGHT.knownInTime} + ${PASS_WEIGHT.confirm} + ${PASS_WEIGHT.renewal}) (orders ${source}) + ` +
    `${accounts - known} × (${PASS_WEIGHT.readInTime} + ${PASS_WEIGHT.confirm} + ${PASS_WEIGHT.renewal}) (read first) = ${reserve} weight, the confirming reads and the renewing pushes included, within ${s(windowMs)} ` +
    `(deadline ${s(config.deadline)} − interval ${s(config.interval)}); the IP has ${available} left in it ` +
    `(${IP_WEIGHT_PER_MINUTE} − ${round(plan.peakPerMinute)}, the busiest minute's steady spend${minutes > 1 ? `, × ${round(minutes)} min` : ""})` +
    (announced > 0 ? `; the engines' announcements save ${withoutAnnouncements - reserve} in reads` : "");
  return {
    accounts,
    known,
    announced,
    reserve,
    savedByAnnouncements: withoutAnnouncements - reserve,
    windowMs,
    available,
    fits,
    afforded: Math.min(accounts, afforded),
    arithmetic,
  };
}

/** One paragraph: the death's arithmetic and the verdict. */
export function describeDeathRoom(room: DeathRoom): string {
  return room.fits
    ? `  ${room.arithmetic}: room kept`
    : `  ${room.arithmetic}: no room: only ${room.afforded} of ${room.accounts} pass(es) fit in time (the others would fall back to the 5 s schedule, a trigger each); lengthen the interval, lengthen the deadline, or split the accounts over IPs`;
}

/** An account as the exposure poll last saw it: how near its liquidation (fraction, null when none) and how big. */
export type AccountRisk = { account: string; liquidationDistance: number | null; notional: number };

/**
 * An account's risk as the exposure poll saw it on the first perp dex (`orderByRisk`): its nearest liquidation (a
 * fraction; null without one) and its total notional; null when the notional is unreadable.
 */
export function riskOf(
  line: Pick<ExposureLine, "account" | "positions" | "totalNtlPos">,
): AccountRisk | null {
  if (line.totalNtlPos === null || !Number.isFinite(line.totalNtlPos)) return null;
  const nearest = nearestLiquidationPct(line.positions);
  return {
    account: line.account,
    liquidationDistance: nearest !== null ? nearest / 100 : null,
    notional: Math.abs(line.totalNtlPos),
  };
}

/**
 * The order a simultaneous death's passes go in: nearest liquidation first (an account with no liquidation price
 * after every one that has one), then the largest notional, then the account (a stable order).
 */
export function orderByRisk(accounts: readonly AccountRisk[]): AccountRisk[] {
  const d = (a: AccountRisk) =>
    a.liquidationDistance === null ? Number.POSITIVE_INFINITY : a.liquidationDistance;
  return [...accounts].sort(
    (x, y) =>
      d(x) - d(y) || y.notional - x.notional || (x.account < y.account ? -1 : x.account > y.account ? 1 : 0),
  );
}

/**
 * Which passes the weight left affords in time, in risk order: each takes its in-time weight while the rest holds;
 * an account whose pass cannot be afforded falls back to the 5 s schedule (a trigger), and says so.
 */
export function affordPasses(
  ordered: readonly AccountRisk[],
  inTimeWeight: (account: string) => number,
  available: number,
): { inTime: string[]; fallback: string[] } {
  const inTime: string[] = [];
  const fallback: string[] = [];
  let left = available;
  for (const a of ordered) {
    const w = inTimeWeight(a.account);
    if (w <= left) {
      inTime.push(a.account);
      left -= w;
    } else fallback.push(a.account);
  }
  return { inTime, fallback };
}

/**
 * What a start does with a configuration's death room: a new configuration without room is refused (exit code
 * config); one that ran before this version (`heldBefore`: its state directory's ledger holds its accounts) starts
 * with a loud warning, since an upgrade must never stop the pushes, and `doctor` fails it.
 */
export function deathRoomVerdict(
  room: DeathRoom | null,
  {
    heldBefore,
    official = true,
    shortest,
  }: {
    heldBefore: boolean;
    official?: boolean;
    /** shortestIntervalWithRoom's answer, named in the message when given */
    shortest?: number | null | undefined;
  },
): { kind: "ok" } | { kind: "refuse" | "warn"; message: string } {
  if (room === null || room.fits) return { kind: "ok" };
  const fitting =
    shortest === undefined
      ? ""
      : shortest === null
        ? "\n  no push interval keeps room at this deadline: lengthen the deadline or split the accounts over IPs"
        : `\n  an interval of ${shortest / 1000} s keeps room at this deadline`;
  const what = `the configuration keeps no room in the IP's weight for a death of every guarded engine at once (docs/operations.md, "The IP's weight"):\n${describeDeathRoom(room)}${fitting}`;
  if (!official)
    return {
      kind: "warn",
      message: `${what}\n(the official API's limit; this API host may have its own)`,
    };
  return heldBefore
    ? {
        kind: "warn",
        message: `${what}\nstarting anyway: this configuration ran before this version (its ledger holds these accounts); doctor fails it until it is changed`,
      }
    : { kind: "refuse", message: what };
}

/**
 * The shortest push interval (whole seconds, up to half the deadline, as the interval rule allows) at which the
 * steady spend fits and a death of every guarded engine keeps room, or null when none does (the deadline, or the
 * number of accounts on this IP, has to change). Under a policy other than `cancel`: the steady spend's alone.
 */
export function shortestIntervalWithRoom(
  config: Config,
  accounts = configuredAccounts(config),
): number | null {
  for (let interval = 1_000; interval <= config.deadline / 2; interval += 1_000) {
    const at = { ...config, interval };
    if (!weightPlan(at, accounts).fits) continue;
    const room = deathRoom(at, accounts);
    if (room === null || room.fits) return interval;
  }
  return null;
}

/**
 * The exchange's per-IP weight at its steady rate: 1,200 a minute is one request every 50 ms
 * (docs/exchange-behaviour.md §10). Pushes are spread at least this far apart when the interval leaves room.
 */
export const PUSH_PACE_MS = 50;

/**
 * The spacing between consecutive accounts' push slots: the interval shared evenly among `accounts`, but never
 * wider than PUSH_PACE_MS, so that a fleet is spread instead of pushed in one burst (300 accounts at 15 s: one
 * every 50 ms) and still armed quickly (10 accounts: within half a second; 100: in 5 s). A burst of even 10 sends
 * its last push some 160 ms after its first (each signs, writes its write-ahead record and sends in turn:
 * BENCHMARKS.md, "The growth curve").
 */
export function pushSpacing(intervalMs: number, accounts: number): number {
  if (accounts <= 1) return 0;
  return Math.min(PUSH_PACE_MS, Math.floor(intervalMs / accounts));
}
