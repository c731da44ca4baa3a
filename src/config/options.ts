/**
 * The one table of options. Each configuration key is written here once: its name (the key), its flag, its
 * environment variable(s), its type (the zod type and the `kind` that says how text is read), its default and its
 * one-line description. Everything else is derived from this table:
 * - ConfigSchema (the parse of the merged file < env < flags, ./load.ts) and DEFAULTS;
 * - config/schema.json (`hl-deadman config schema`, ./json-schema.ts);
 * - the flags and their help (src/cli/options.ts), defaults formatted by formatDefault, never typed twice, and
 *   the groups of `run --help` by each row's topic;
 * - the option table of docs/operations.md (`npm run docs:generate`).
 *
 * Durations are milliseconds here; the loaders accept `500ms`, `15s`, `2m`, `1h` or plain milliseconds.
 */
import { z } from "zod";
import { formatDuration } from "../core/duration.js";
import { CLIENT_DEFAULTS } from "../protocol/hyperliquid/client-defaults.js";
import { coordinateProblem } from "./coordinate.js";
import { guardSocketProblem, LISTEN_ADDRESS_PATTERN, listenAddressProblem } from "./listen.js";

/** How a text value (a flag, an environment variable) is read for the key. */
export type OptionKind = "string" | "duration" | "list" | "int" | "number" | "enum" | "boolean";

/**
 * What a key is about, in the order `run --help` shows its groups (src/cli/options.ts gives each its heading):
 * where the service and the key are (general), the switch (each account's scheduled cancel), the engine guard,
 * escalation (closing positions), exposure, the chain watch, the fleet and its replicas, observability.
 */
export const OPTION_TOPICS = [
  "general",
  "switch",
  "guard",
  "escalation",
  "exposure",
  "chain",
  "fleet",
  "observability",
] as const;
export type OptionTopic = (typeof OPTION_TOPICS)[number];

/** What a row says besides its zod type and its default. */
type RowMeta = {
  /** the long flag, without the leading dashes */
  flag: string;
  /** what the key is about: its group in `run --help` */
  topic: OptionTopic;
  /** environment variables, first match wins */
  env: string | readonly string[];
  kind: OptionKind;
  /** one line: the meaning, written once (JSON schema, flag help and docs show it) */
  description: string;
  /** the flag's value placeholder (default by kind: DURATION, N, NUMBER, VALUE; an enum's docs list its choices) */
  metavar?: string;
};

const rows = z.registry<RowMeta>();

/**
 * Blocks: keys of the config file only, with no flag and no environment variable (their values are lists of
 * records that a flag cannot carry: `signers`). Documented by hand in docs/operations.md.
 */
const blocks = z.registry<{ description: string }>();

/** A row with a default: the key is optional in the input and always present in the output. */
function option<T extends z.ZodType>(type: T, row: RowMeta & { default: z.output<T> }): z.ZodDefault<T>;
/** A row without a default: the key may be absent. */
function option<T extends z.ZodType>(type: T, row: RowMeta): z.ZodOptional<T>;
function option(type: z.ZodType, row: RowMeta & { default?: unknown }): z.ZodType {
  const { default: value, ...meta } = row;
  const field = ("default" in row ? type.default(value as never) : type.optional()).meta({
    description: row.description,
  });
  rows.add(field, meta);
  return field;
}

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be 0x followed by 40 hexadecimal digits")
  .transform((a) => a.toLowerCase());
const httpUrl = () => z.url({ protocol: /^https?$/ });
const durationMs = () => z.number().int().nonnegative();
/**
 * One signer of a daemon carrying several (docs/operations.md, "Many accounts, several signers"): where its key
 * comes from (exactly one of a key file, an environment variable, a systemd credential; never the key itself) and
 * the accounts it arms: `account` without vaultAddress (the signer's own user, or the master an agent key acts
 * for), each of `vaults` with vaultAddress (subaccounts and vaults of that user).
 */
export const SignerSchema = z
  .strictObject({
    name: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9_-]{0,31}$/,
        "must be 1-32 of a-z, 0-9, - and _, starting with a letter or digit",
      ),
    keyFile: z.string().min(1).optional(),
    keyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]{0,63}$/, "must be an environment variable's name (A-Z, 0-9, _)")
      .optional(),
    credential: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be a credential's file name (no slash)")
      .optional(),
    account: address.optional(),
    vaults: z.array(address).default([]),
  })
  .superRefine((s, ctx) => {
    const sources = [s.keyFile, s.keyEnv, s.credential].filter((v) => v !== undefined).length;
    if (sources !== 1)
      ctx.addIssue({
        code: "custom",
        message: `needs exactly one of keyFile, keyEnv, credential (found ${sources}); the key itself is never written in the config`,
      });
    if (s.account === undefined && s.vaults.length === 0)
      ctx.addIssue({ code: "custom", message: "arms nothing: give account, vaults or both" });
  });
export type SignerConfig = z.output<typeof SignerSchema>;

const listenAddress = z
  .string()
  .superRefine((value, ctx) => {
    const problem = listenAddressProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .meta({ pattern: LISTEN_ADDRESS_PATTERN });
const coordinate = z.string().superRefine((value, ctx) => {
  const problem = coordinateProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
const guardSocket = z.string().superRefine((value, ctx) => {
  const problem = guardSocketProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export const ConfigSchema = z
  .object({
    network: option(z.enum(["mainnet", "testnet"]), {
      flag: "network",
      topic: "general",
      env: "HL_NETWORK",
      kind: "enum",
      metavar: "NAME",
      default: "mainnet",
      description: "`mainnet` or `testnet`: default URLs and the signing source (`a` mainnet, `b` testnet).",
    }),
    apiUrl: option(httpUrl(), {
      flag: "api-url",
      topic: "general",
      env: "HL_API_URL",
      kind: "string",
      metavar: "URL",
      description:
        "Trading API base URL; `/exchange` and `/info` are appended. Default: the network's official API.",
    }),
    rpcUrl: option(httpUrl(), {
      flag: "rpc-url",
      topic: "general",
      env: "HL_RPC_URL",
      kind: "string",
      metavar: "URL",
      description: "HyperEVM JSON-RPC endpoint, used as given. May contain a key path segment; never logged.",
    }),
    explorerUrl: option(httpUrl(), {
      flag: "explorer-url",
      topic: "general",
      env: "HL_EXPLORER_URL",
      kind: "string",
      metavar: "URL",
      description:
        "The explorer endpoint (`userDetails`), path included. Default: the network's official explorer.",
    }),
    logLevel: option(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]), {
      flag: "log-level",
      topic: "observability",
      env: "HL_LOG_LEVEL",
      kind: "enum",
      metavar: "LEVEL",
      default: "info",
      description: "pino level.",
    }),
    accounts: option(z.array(address), {
      flag: "account",
      topic: "switch",
      env: "HL_ACCOUNTS",
      kind: "list",
      metavar: "ADDR",
      default: [],
      description: "Accounts whose schedule is kept. Default: the signer's own address.",
    }),
    vault: option(address, {
      flag: "vault",
      topic: "switch",
      env: "HL_VAULT",
      kind: "string",
      metavar: "ADDR",
      description: "Act for a vault or subaccount (`vaultAddress`).",
    }),
    interval: option(durationMs(), {
      flag: "interval",
      topic: "switch",
      env: "HL_INTERVAL",
      kind: "duration",
      default: 15_000,
      description: "Push cadence (ms).",
    }),
    deadline: option(durationMs(), {
      flag: "deadline",
      topic: "switch",
      env: "HL_DEADLINE",
      kind: "duration",
      default: 60_000,
      description: "How far ahead each push sets the cancel time (ms); at least 5 s plus a safety margin.",
    }),
    requestTimeout: option(durationMs(), {
      flag: "request-timeout",
      topic: "switch",
      env: "HL_REQUEST_TIMEOUT",
      kind: "duration",
      default: CLIENT_DEFAULTS.requestTimeoutMs,
      description:
        "Time-out of one exchange request, and the `expiresAfter` window of each signed push (ms).",
    }),
    exposureInterval: option(durationMs(), {
      flag: "exposure-interval",
      topic: "exposure",
      env: "HL_EXPOSURE_INTERVAL",
      kind: "duration",
      default: 30_000,
      description: "`batchClearinghouseStates` poll cadence (ms); 0 turns it off.",
    }),
    exposureUsers: option(z.array(address), {
      flag: "exposure-user",
      topic: "exposure",
      env: "HL_EXPOSURE_USERS",
      kind: "list",
      metavar: "ADDR",
      default: [],
      description: "More users to poll besides the accounts.",
    }),
    dexes: option(z.array(z.string()), {
      flag: "dex",
      topic: "exposure",
      env: "HL_DEXES",
      kind: "list",
      metavar: "NAME",
      default: [""],
      description: 'Perp dexes to poll ("" is the first perp dex).',
    }),
    exposureChunkSize: option(z.number().int().min(1).max(1000), {
      flag: "exposure-chunk-size",
      topic: "exposure",
      env: "HL_EXPOSURE_CHUNK_SIZE",
      kind: "int",
      default: CLIENT_DEFAULTS.chunkSize,
      description: "Users per `batchClearinghouseStates` request.",
    }),
    exposureConcurrency: option(z.number().int().min(1).max(16), {
      flag: "exposure-concurrency",
      topic: "exposure",
      env: "HL_EXPOSURE_CONCURRENCY",
      kind: "int",
      default: CLIENT_DEFAULTS.concurrency,
      description: "Chunks in flight at once.",
    }),
    thresholds: z
      .object({
        maxLeverage: option(z.number().positive(), {
          flag: "max-leverage",
          topic: "exposure",
          env: "HL_MAX_LEVERAGE",
          kind: "number",
          description: "Maximum leverage (total notional / account value).",
        }),
        minLiquidationDistancePct: option(z.number().nonnegative(), {
          flag: "min-liquidation-distance-pct",
          topic: "exposure",
          env: "HL_MIN_LIQUIDATION_DISTANCE_PCT",
          kind: "number",
          description: "Minimum distance to liquidation, in percent of the mark price.",
        }),
        maxNotionalUsd: option(z.number().positive(), {
          flag: "max-notional-usd",
          topic: "exposure",
          env: "HL_MAX_NOTIONAL_USD",
          kind: "number",
          description: "Maximum total notional per account, in USD.",
        }),
      })
      .default({})
      .meta({
        description: "Alert thresholds for the exposure poll; each crossing logs `exposure.alert` once.",
      }),
    clockSkewWarn: option(durationMs(), {
      flag: "clock-skew-warn",
      topic: "switch",
      env: "HL_CLOCK_SKEW_WARN",
      kind: "duration",
      default: 2_000,
      description: "Warn when the local clock and the exchange differ by more than this (ms).",
    }),
    stateDir: option(z.string().min(1), {
      flag: "state-dir",
      topic: "general",
      env: ["HL_STATE_DIR", "STATE_DIRECTORY"],
      kind: "string",
      metavar: "DIR",
      description:
        "Where the trigger ledger, the lock and the audit trail live. Default: $HL_STATE_DIR, then $STATE_DIRECTORY, then $XDG_STATE_HOME/hl-deadman (~/.local/state/hl-deadman), whatever the working directory.",
    }),
    health: option(listenAddress, {
      flag: "health",
      topic: "observability",
      env: "HL_HEALTH",
      kind: "string",
      metavar: "HOST:PORT|off",
      default: "127.0.0.1:9464",
      description: "`HOST:PORT` for /healthz, /readyz, /metrics, or `off`.",
    }),
    metricsPerAccount: option(z.enum(["auto", "all", "alerts"]), {
      flag: "metrics-per-account",
      topic: "observability",
      env: "HL_METRICS_PER_ACCOUNT",
      kind: "enum",
      metavar: "MODE",
      default: "auto",
      description:
        'Per-account series on /metrics: `all`, `alerts` (only what the alert rules and the status need), or `auto` (`all` up to 100 accounts). docs/observability.md, "Series per account".',
    }),
    onShutdown: option(z.enum(["remove", "keep"]), {
      flag: "on-shutdown",
      topic: "switch",
      env: "HL_ON_SHUTDOWN",
      kind: "enum",
      metavar: "MODE",
      default: "remove",
      description: "What a graceful stop does to the schedule: `remove` it, or `keep` it armed.",
    }),
    shutdownTimeout: option(durationMs(), {
      flag: "shutdown-timeout",
      topic: "switch",
      env: "HL_SHUTDOWN_TIMEOUT",
      kind: "duration",
      default: 5_000,
      description: "Upper bound for a graceful stop (ms); the process exits by then whatever happens.",
    }),
    coordinate: option(coordinate, {
      flag: "coordinate",
      topic: "fleet",
      env: "HL_COORDINATE",
      kind: "string",
      metavar: "ETCD_URL",
      description:
        "Replicas of the same accounts elect a lease holder in etcd: `etcd://HOST:PORT[,...][/PREFIX]`. Only the holder takes what is unsafe twice (closing, drills, resets, removing on stop).",
    }),
    coordinateTtl: option(durationMs(), {
      flag: "coordinate-ttl",
      topic: "fleet",
      env: "HL_COORDINATE_TTL",
      kind: "duration",
      default: 10_000,
      description:
        "The coordination lease's time to live (whole seconds, 5s to 60s, below deadline - interval): how soon the other replica takes over.",
    }),
    actAlone: option(z.boolean(), {
      flag: "act-alone",
      topic: "fleet",
      env: "HL_ACT_ALONE",
      kind: "boolean",
      default: false,
      description:
        "With --coordinate and etcd unreachable, take the gated actions alone (risking both replicas taking them). Default: take none.",
    }),
    guardFile: option(z.string().min(1), {
      flag: "guard-file",
      topic: "guard",
      env: "HL_GUARD_FILE",
      kind: "string",
      metavar: "FILE",
      description: "Push only while the trading engine keeps touching this file.",
    }),
    guardMaxAge: option(durationMs(), {
      flag: "guard-max-age",
      topic: "guard",
      env: "HL_GUARD_MAX_AGE",
      kind: "duration",
      default: 10_000,
      description: "Maximum age of the guard file's mtime (ms).",
    }),
    guardUrl: option(httpUrl(), {
      flag: "guard-url",
      topic: "guard",
      env: "HL_GUARD_URL",
      kind: "string",
      metavar: "URL",
      description: "Push only while the engine's health URL answers 2xx.",
    }),
    guardSocket: option(guardSocket, {
      flag: "guard-socket",
      topic: "guard",
      env: "HL_GUARD_SOCKET",
      kind: "string",
      metavar: "SOCKET",
      description:
        "Push only while the engine holds a connection here (a Unix socket, mode 0660, or loopback TCP): cancel on disconnect, docs/operations.md.",
    }),
    guardHeartbeatGap: option(durationMs(), {
      flag: "guard-heartbeat-gap",
      topic: "guard",
      env: "HL_GUARD_HEARTBEAT_GAP",
      kind: "duration",
      default: 0,
      description:
        "With guardSocket: silence on the engine's connection longer than this is engine down (ms); 0: only the close counts.",
    }),
    guardConnectGrace: option(durationMs(), {
      flag: "guard-connect-grace",
      topic: "guard",
      env: "HL_GUARD_CONNECT_GRACE",
      kind: "duration",
      description:
        "With guardSocket: after a restart, an account an engine held before is engine down unless an engine names it within this (ms; default deadline - interval).",
    }),
    orderFeedAccounts: option(z.number().int().min(0).max(10), {
      flag: "order-feed-accounts",
      topic: "guard",
      env: "HL_ORDER_FEED_ACCOUNTS",
      kind: "int",
      default: 10,
      description:
        "With guardSocket and cancel: accounts whose open orders are kept fresh over the exchange's WebSocket, at most 10 (its limit per IP); 0: none, every cancel reads first.",
    }),
    guardAnnouncedOrders: option(z.boolean(), {
      flag: "guard-announced-orders",
      topic: "guard",
      env: "HL_GUARD_ANNOUNCED_ORDERS",
      kind: "boolean",
      default: false,
      description:
        "With guardSocket and cancel: every engine announces its orders (guard protocol 2, `orders` lines); the weight plan counts each death's pass as one whose orders are known (no read first).",
    }),
    guardInterval: option(durationMs(), {
      flag: "guard-interval",
      topic: "guard",
      env: "HL_GUARD_INTERVAL",
      kind: "duration",
      default: 2_000,
      description: "How often the guard is checked (ms).",
    }),
    onEngineDown: option(z.enum(["expedite", "lapse", "cancel"]), {
      flag: "on-engine-down",
      topic: "guard",
      env: "HL_ON_ENGINE_DOWN",
      kind: "enum",
      metavar: "MODE",
      default: "expedite",
      description:
        "When the guard fails: `expedite` (cancel at the 5 s minimum, once), `lapse` (stop pushing) or `cancel` (cancel open orders; expedite when not confirmed).",
    }),
    cancelStops: option(z.boolean(), {
      flag: "cancel-stops",
      topic: "guard",
      env: "HL_CANCEL_STOPS",
      kind: "boolean",
      default: false,
      description: "With onEngineDown cancel: cancel trigger (stop/take-profit) orders too.",
    }),
    escalateAccounts: option(z.array(address), {
      flag: "escalate-account",
      topic: "escalation",
      env: "HL_ESCALATE_ACCOUNTS",
      kind: "list",
      metavar: "ADDR",
      default: [],
      description:
        'Opt these accounts in to escalation step 2: close their positions reduce-only when a rule holds while the engine is down (docs/operations.md, "When cancelling is not enough").',
    }),
    escalateAfter: option(durationMs(), {
      flag: "escalate-after",
      topic: "escalation",
      env: "HL_ESCALATE_AFTER",
      kind: "duration",
      default: 0,
      description: "Escalation: the engine down this long closes the positions (ms); 0: not by time alone.",
    }),
    escalateLiquidationPct: option(z.number().positive().max(100), {
      flag: "escalate-liquidation-pct",
      topic: "escalation",
      env: "HL_ESCALATE_LIQUIDATION_PCT",
      kind: "number",
      description:
        "Escalation: while the engine is down, a position closer than this to liquidation (% of the mark).",
    }),
    escalateDrawdownPct: option(z.number().positive().max(100), {
      flag: "escalate-drawdown-pct",
      topic: "escalation",
      env: "HL_ESCALATE_DRAWDOWN_PCT",
      kind: "number",
      description:
        "Escalation: while the engine is down, the account value this many % below its level when the engine went down.",
    }),
    escalateNotionalUsd: option(z.number().positive(), {
      flag: "escalate-notional-usd",
      topic: "escalation",
      env: "HL_ESCALATE_NOTIONAL_USD",
      kind: "number",
      description: "Escalation: while the engine is down, a total notional above this (USD).",
    }),
    closeSlippagePct: option(z.number().positive().max(10), {
      flag: "close-slippage-pct",
      topic: "escalation",
      env: "HL_CLOSE_SLIPPAGE_PCT",
      kind: "number",
      default: 1,
      description: "Escalation: a close order's limit price at most this far from the mark (%).",
    }),
    closeSliceUsd: option(z.number().min(10), {
      flag: "close-slice-usd",
      topic: "escalation",
      env: "HL_CLOSE_SLICE_USD",
      kind: "number",
      default: 50_000,
      description: "Escalation: the largest close order (USD of notional); larger positions close in slices.",
    }),
    closeRetryInterval: option(durationMs(), {
      flag: "close-retry-interval",
      topic: "escalation",
      env: "HL_CLOSE_RETRY_INTERVAL",
      kind: "duration",
      default: 30_000,
      description: "Escalation: a close pass that did not finish is tried again after this (ms).",
    }),
    drillCoin: option(z.string().regex(/^[A-Za-z0-9]{1,20}$/, "must be a perp's name, e.g. BTC"), {
      flag: "drill-coin",
      topic: "switch",
      env: "HL_DRILL_COIN",
      kind: "string",
      metavar: "COIN",
      default: "BTC",
      description:
        "The perp on which `hl-deadman drill` places its small resting order (a post-only buy at half the mark).",
    }),
    permanentRecheckInterval: option(durationMs(), {
      flag: "permanent-recheck-interval",
      topic: "switch",
      env: "HL_PERMANENT_RECHECK_INTERVAL",
      kind: "duration",
      default: 300_000,
      description:
        "Re-check cadence for an account refused permanently (volume gate, unknown signer...) (ms).",
    }),
    budgetInterval: option(durationMs(), {
      flag: "budget-interval",
      topic: "switch",
      env: "HL_BUDGET_INTERVAL",
      kind: "duration",
      default: 600_000,
      description:
        "How often the address's lifetime action budget (userRateLimit) is read (ms); 0 turns it off.",
    }),
    budgetWarnDays: option(z.number().nonnegative(), {
      flag: "budget-warn-days",
      topic: "switch",
      env: "HL_BUDGET_WARN_DAYS",
      kind: "number",
      default: 14,
      description: "Warn when the action budget would run out within this many days at the push rate.",
    }),
    triggerLimit: option(z.number().int().min(1), {
      flag: "trigger-limit",
      topic: "switch",
      env: "HL_TRIGGER_LIMIT",
      kind: "int",
      default: 10,
      description: "Triggers per UTC day the exchange allows.",
    }),
    triggerWarnRemaining: option(z.number().int().min(0), {
      flag: "trigger-warn-remaining",
      topic: "switch",
      env: "HL_TRIGGER_WARN_REMAINING",
      kind: "int",
      default: 3,
      description: "Warn when this many triggers or fewer remain today.",
    }),
    agentWarnDays: option(z.number().nonnegative(), {
      flag: "agent-warn-days",
      topic: "switch",
      env: "HL_AGENT_WARN_DAYS",
      kind: "number",
      default: 7,
      description: "Warn daily when the signing API wallet expires within this many days.",
    }),
    agentCheckInterval: option(durationMs(), {
      flag: "agent-check-interval",
      topic: "switch",
      env: "HL_AGENT_CHECK_INTERVAL",
      kind: "duration",
      default: 3_600_000,
      description:
        "How often the signing API wallet is checked in `extraAgents` (ms); 0 checks only at start-up.",
    }),
    watchAddresses: option(z.array(address), {
      flag: "watch-address",
      topic: "chain",
      env: "HL_WATCH_ADDRESSES",
      kind: "list",
      metavar: "ADDR",
      default: [],
      description:
        "Follow new HyperEVM blocks and log transactions from or to these addresses (needs rpcUrl).",
    }),
    chainPollInterval: option(durationMs(), {
      flag: "chain-poll-interval",
      topic: "chain",
      env: "HL_CHAIN_POLL_INTERVAL",
      kind: "duration",
      default: 2_000,
      description: "Chain watch: how often to ask for the head (ms).",
    }),
    chainStallThreshold: option(durationMs(), {
      flag: "chain-stall-threshold",
      topic: "chain",
      env: "HL_CHAIN_STALL_THRESHOLD",
      kind: "duration",
      default: 60_000,
      description: "Chain watch: warn when the head is older than this (ms).",
    }),
    chainMaxLagBlocks: option(z.number().int().min(1), {
      flag: "chain-max-lag-blocks",
      topic: "chain",
      env: "HL_CHAIN_MAX_LAG_BLOCKS",
      kind: "int",
      default: 200,
      description: "Chain watch: skip ahead when more than this many blocks behind.",
    }),
    chainPageSize: option(z.number().int().min(1).max(1000), {
      flag: "chain-page-size",
      topic: "chain",
      env: "HL_CHAIN_PAGE_SIZE",
      kind: "int",
      default: 100,
      description: "Chain watch: page size for ots_getBlockTransactions.",
    }),
    notifyUrls: option(z.array(httpUrl()), {
      flag: "notify-url",
      topic: "observability",
      env: "HL_NOTIFY_URLS",
      kind: "list",
      metavar: "URL",
      default: [],
      description:
        "Webhook URLs that get a JSON document for each event that matters (trigger, not protected, engine down...). May hold a token or user:pass; never logged.",
    }),
    keyFile: option(z.string().min(1), {
      flag: "key-file",
      topic: "general",
      env: "HL_KEY_FILE",
      kind: "string",
      metavar: "FILE",
      description: "File holding the signer's private key (mode 0600 or stricter). Never the key itself.",
    }),
    signers: z.array(SignerSchema).max(64).default([]).register(blocks, {
      description:
        'Config file only: several signers, each with its key source and its accounts (docs/operations.md, "Many accounts, several signers"). Replaces keyFile, accounts and vault.',
    }),
  })
  .strict();

export type Config = z.output<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** One configuration key, as read from its row of the table. */
export type ConfigOption = {
  /** dotted path in the config object (e.g. `thresholds.maxLeverage`) */
  key: string;
  /** environment variables, first match wins */
  env: readonly string[];
  /** the long flag (without the leading dashes) */
  flag: string;
  /** the commander attribute name the flag lands in */
  attr: string;
  /** what the key is about: its group in `run --help` */
  topic: OptionTopic;
  kind: OptionKind;
  description: string;
  /** the parsed default, or undefined when the key has none */
  default: unknown;
  /** the flag's value placeholder in the docs (an enum's choices joined by `|`; none for a boolean) */
  metavar: string;
  /** the flag's value placeholder in the help, a word (`NAME`, `DURATION`; commander lists an enum's choices) */
  placeholder: string;
  /** an enum's allowed values */
  choices: readonly string[] | undefined;
  /** a URL (or a list of them), by its type: shown redacted in messages (docs/security.md) */
  url: boolean;
};

const KIND_METAVAR: Record<OptionKind, string> = {
  string: "VALUE",
  list: "VALUE",
  duration: "DURATION",
  int: "N",
  number: "NUMBER",
  enum: "VALUE",
  boolean: "",
};

const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
};

/** Frozen defaults: ConfigSchema's output for an empty input, i.e. each row's default. */
export const DEFAULTS: Readonly<Config> = deepFreeze(ConfigSchema.parse({}));

type Table = { options: ConfigOption[]; groups: Record<string, string>; blocks: Record<string, string> };

function readTable(shape: Record<string, z.ZodType>, prefix: string, out: Table): Table {
  for (const [name, field] of Object.entries(shape)) {
    const key = prefix + name;
    const row = rows.get(field);
    const block = blocks.get(field);
    if (block) {
      out.blocks[key] = block.description;
      continue;
    }
    if (!row) {
      // A group (`thresholds`): an object with a default, whose fields are rows.
      out.groups[key] = field.description ?? "";
      readTable((field as z.ZodDefault<z.ZodObject>).unwrap().shape, `${key}.`, out);
      continue;
    }
    const base = field instanceof z.ZodDefault || field instanceof z.ZodOptional ? field.unwrap() : field;
    const choices = base instanceof z.ZodEnum ? (base.options as string[]) : undefined;
    const url = base instanceof z.ZodURL || (base instanceof z.ZodArray && base.element instanceof z.ZodURL);
    out.options.push({
      key,
      env: typeof row.env === "string" ? [row.env] : [...row.env],
      flag: row.flag,
      attr: row.flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()),
      topic: row.topic,
      kind: row.kind,
      description: row.description,
      default: key.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], DEFAULTS),
      metavar: choices ? choices.join("|") : (row.metavar ?? KIND_METAVAR[row.kind]),
      placeholder: row.metavar ?? KIND_METAVAR[row.kind],
      choices,
      url,
    });
  }
  return out;
}

const TABLE = readTable(ConfigSchema.shape, "", { options: [], groups: {}, blocks: {} });

/** Every configuration key, in the table's order (nested keys dotted). */
export const OPTIONS: readonly ConfigOption[] = Object.freeze(TABLE.options);

/** The config file's blocks (`signers`: no flag, no environment variable) and their description. */
export const BLOCK_DOCS: Readonly<Record<string, string>> = Object.freeze(TABLE.blocks);

/** The groups of the table (objects holding rows: `thresholds`) and their description. */
export const GROUP_DOCS: Readonly<Record<string, string>> = Object.freeze(TABLE.groups);

/** The row of `key`; throws for a key the table does not have (a typo in code, never user input). */
export function optionOf(key: string): ConfigOption {
  const found = OPTIONS.find((o) => o.key === key);
  if (!found) throw new Error(`no option ${key}`);
  return found;
}

/**
 * A default for people, the same in the flag help and the docs: durations as `15s`, lists as JSON, none (undefined)
 * for a key without a default or with an empty list.
 */
export function formatDefault(option: ConfigOption): string | undefined {
  const value = option.default;
  if (value === undefined) return undefined;
  if (option.kind === "duration" && typeof value === "number") return formatDuration(value);
  if (Array.isArray(value)) return value.length === 0 ? undefined : JSON.stringify(value);
  return String(value);
}

/** Each key's description, groups included (the words of the table). */
export const CONFIG_DOCS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    OPTIONS.flatMap((o) => {
      const group = o.key.includes(".") ? o.key.split(".")[0]! : undefined;
      const first = group && OPTIONS.find((p) => p.key.startsWith(`${group}.`)) === o;
      return [...(first ? [[group, GROUP_DOCS[group]!] as const] : []), [o.key, o.description] as const];
    }),
  ),
);
