/**
 * The one configuration schema. The JSON config file, HL_* environment variables and flags are merged in
 * that order (flags win) by ./load.ts, then parsed here once. Every key is documented in the same words in
 * config/example.json and in the README's option table; config/schema.json is generated from this schema.
 *
 * Durations are milliseconds here; the loaders accept `500ms`, `15s`, `2m`, `1h` or plain milliseconds.
 */
import { z } from "zod";

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be 0x followed by 40 hexadecimal digits")
  .transform((a) => a.toLowerCase());

const durationMs = z.number().int().nonnegative();

/** Frozen defaults: the single source of every default value. */
export const DEFAULTS = Object.freeze({
  network: "mainnet" as const,
  logLevel: "info" as const,
  interval: 15_000,
  deadline: 60_000,
  requestTimeout: 5_000,
  exposureInterval: 30_000,
  exposureChunkSize: 50,
  exposureConcurrency: 2,
  health: "127.0.0.1:9464",
  onShutdown: "remove" as const,
  shutdownTimeout: 5_000,
  onEngineDown: "expedite" as const,
  guardMaxAge: 10_000,
  guardInterval: 2_000,
  permanentRecheckInterval: 300_000,
  budgetInterval: 600_000,
  budgetWarnDays: 14,
  triggerLimit: 10,
  triggerWarnRemaining: 3,
  clockSkewWarn: 2_000,
  chainPollInterval: 2_000,
  chainStallThreshold: 60_000,
  chainMaxLagBlocks: 200,
  chainPageSize: 100,
  agentWarnDays: 7,
  agentCheckInterval: 3_600_000,
});

export const NETWORK_URLS = Object.freeze({
  mainnet: { apiUrl: "https://api.hyperliquid.xyz", rpcUrl: "https://rpc.hyperliquid.xyz/evm" },
  testnet: {
    apiUrl: "https://api.hyperliquid-testnet.xyz",
    rpcUrl: "https://rpc.hyperliquid-testnet.xyz/evm",
  },
});

/** The explorer endpoints (docs/exchange-record.md, "The record"): their own host and path. */
export const EXPLORER_URLS = Object.freeze({
  mainnet: "https://rpc.hyperliquid.xyz/explorer",
  testnet: "https://rpc.hyperliquid-testnet.xyz/explorer",
});

export const ConfigSchema = z
  .object({
    /** `mainnet` or `testnet`: default URLs and the signing source (`a` mainnet, `b` testnet). */
    network: z.enum(["mainnet", "testnet"]).default(DEFAULTS.network),
    /** Trading API base URL; `/exchange` and `/info` are appended. Default: the network's official API. */
    apiUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** HyperEVM JSON-RPC endpoint, used as given. May contain a key path segment; never logged. */
    rpcUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** The explorer endpoint (`userDetails`), path included. Default: the network's official explorer. */
    explorerUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** pino level. */
    logLevel: z
      .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
      .default(DEFAULTS.logLevel),
    /** Accounts whose schedule is kept. Default: the signer's own address. */
    accounts: z.array(address).default([]),
    /** Act for a vault or subaccount (`vaultAddress`). */
    vault: address.optional(),
    /** Push cadence (ms). */
    interval: durationMs.default(DEFAULTS.interval),
    /** How far ahead each push sets the cancel time (ms); at least 5 s plus a safety margin. */
    deadline: durationMs.default(DEFAULTS.deadline),
    /** Time-out of one exchange request, and the `expiresAfter` window of each signed push (ms). */
    requestTimeout: durationMs.default(DEFAULTS.requestTimeout),
    /** `batchClearinghouseStates` poll cadence (ms); 0 turns it off. */
    exposureInterval: durationMs.default(DEFAULTS.exposureInterval),
    /** More users to poll besides the accounts. */
    exposureUsers: z.array(address).default([]),
    /** Perp dexes to poll ("" is the first perp dex). */
    dexes: z.array(z.string()).default([""]),
    /** Users per `batchClearinghouseStates` request. */
    exposureChunkSize: z.number().int().min(1).max(1000).default(DEFAULTS.exposureChunkSize),
    /** Chunks in flight at once. */
    exposureConcurrency: z.number().int().min(1).max(16).default(DEFAULTS.exposureConcurrency),
    /** Alert thresholds for the exposure poll; each crossing logs `exposure.alert` once. */
    thresholds: z
      .object({
        /** Maximum leverage (total notional / account value). */
        maxLeverage: z.number().positive().optional(),
        /** Minimum distance to liquidation, in percent of the mark price. */
        minLiquidationDistancePct: z.number().nonnegative().optional(),
        /** Maximum total notional per account, in USD. */
        maxNotionalUsd: z.number().positive().optional(),
      })
      .default({}),
    /** Warn when the local clock and the exchange differ by more than this (ms). */
    clockSkewWarn: durationMs.default(DEFAULTS.clockSkewWarn),
    /** Where the trigger ledger lives. Default: $HL_STATE_DIR, then $STATE_DIRECTORY, then ./.hl-deadman. */
    stateDir: z.string().min(1).optional(),
    /** `HOST:PORT` for /healthz, /readyz, /metrics, or `off`. */
    health: z
      .string()
      .regex(/^(off|\[?[0-9a-zA-Z.:-]*\]?:\d{1,5})$/, "must be HOST:PORT or off")
      .default(DEFAULTS.health),
    /** What a graceful stop does to the schedule: `remove` it, or `keep` it armed. */
    onShutdown: z.enum(["remove", "keep"]).default(DEFAULTS.onShutdown),
    /** Upper bound for a graceful stop (ms); the process exits by then whatever happens. */
    shutdownTimeout: durationMs.default(DEFAULTS.shutdownTimeout),
    /** Push only while the trading engine keeps touching this file. */
    guardFile: z.string().min(1).optional(),
    /** Maximum age of the guard file's mtime (ms). */
    guardMaxAge: durationMs.default(DEFAULTS.guardMaxAge),
    /** Push only while the engine's health URL answers 2xx. */
    guardUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** How often the guard is checked (ms). */
    guardInterval: durationMs.default(DEFAULTS.guardInterval),
    /** When the guard fails: `expedite` (cancel at the 5 s minimum, once), `lapse` (stop pushing) or `cancel` (cancel open orders; expedite when not confirmed). */
    onEngineDown: z.enum(["expedite", "lapse", "cancel"]).default(DEFAULTS.onEngineDown),
    /** With onEngineDown cancel: cancel trigger (stop/take-profit) orders too. */
    cancelStops: z.boolean().default(false),
    /** Re-check cadence for an account refused permanently (volume gate, unknown signer...) (ms). */
    permanentRecheckInterval: durationMs.default(DEFAULTS.permanentRecheckInterval),
    /** How often the address's lifetime action budget (userRateLimit) is read (ms); 0 turns it off. */
    budgetInterval: durationMs.default(DEFAULTS.budgetInterval),
    /** Warn when the action budget would run out within this many days at the push rate. */
    budgetWarnDays: z.number().nonnegative().default(DEFAULTS.budgetWarnDays),
    /** Triggers per UTC day the exchange allows. */
    triggerLimit: z.number().int().min(1).default(DEFAULTS.triggerLimit),
    /** Warn when this many triggers or fewer remain today. */
    triggerWarnRemaining: z.number().int().min(0).default(DEFAULTS.triggerWarnRemaining),
    /** Warn daily when the signing API wallet expires within this many days. */
    agentWarnDays: z.number().nonnegative().default(DEFAULTS.agentWarnDays),
    /** How often the signing API wallet is checked in `extraAgents` (ms); 0 checks only at start-up. */
    agentCheckInterval: durationMs.default(DEFAULTS.agentCheckInterval),
    /** Follow new HyperEVM blocks and log transactions from or to these addresses (needs rpcUrl). */
    watchAddresses: z.array(address).default([]),
    /** Chain watch: how often to ask for the head (ms). */
    chainPollInterval: durationMs.default(DEFAULTS.chainPollInterval),
    /** Chain watch: warn when the head is older than this (ms). */
    chainStallThreshold: durationMs.default(DEFAULTS.chainStallThreshold),
    /** Chain watch: skip ahead when more than this many blocks behind. */
    chainMaxLagBlocks: z.number().int().min(1).default(DEFAULTS.chainMaxLagBlocks),
    /** Chain watch: page size for ots_getBlockTransactions. */
    chainPageSize: z.number().int().min(1).max(1000).default(DEFAULTS.chainPageSize),
    /** Webhook URLs that get a JSON document for each event that matters (trigger, not protected, engine down...). May hold a token or user:pass; never logged. */
    notifyUrls: z.array(z.url({ protocol: /^https?$/ })).default([]),
    /** File holding the signer's private key (mode 0600 or stricter). Never the key itself. */
    keyFile: z.string().min(1).optional(),
  })
  .strict();

export type Config = z.output<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
