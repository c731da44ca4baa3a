/**
 * Configuration layering: DEFAULTS < JSON config file (--config / HL_CONFIG) < HL_* environment < flags,
 * then one ConfigSchema parse and the cross-field rules below. Every problem is collected and reported at
 * once (key, bad value, rule, and where the value came from); the CLI exits 78 (EX_CONFIG).
 */
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { BaseError } from "../errors/base.js";
import { BareDurationError, formatDuration, parseDuration, parseDurationText } from "../utils/duration.js";
import { ExitCode } from "../utils/exit-codes.js";
import { maskSecrets, showUrl } from "../utils/redact.js";
import { type Config, ConfigSchema, EXPLORER_URLS, NETWORK_URLS } from "./schema.js";

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

/** A configuration that cannot be used: exit 78, every issue listed. */
export class ConfigError extends BaseError {
  override name = "ConfigError";
  readonly exitCode = ExitCode.config;
  readonly issues: string[];
  readonly file: string | undefined;
  constructor(issues: string[], { file }: { file?: string | undefined } = {}) {
    super(
      issues.length === 1
        ? `Invalid configuration: ${issues[0]}`
        : `Invalid configuration (${issues.length} problems):`,
      { metaMessages: issues.length === 1 ? [] : issues.map((i) => `- ${i}`) },
    );
    this.issues = issues;
    this.file = file;
  }
}

type Kind = "string" | "duration" | "list" | "int" | "number" | "enum" | "boolean";

/** One row per configuration key: its environment twin, its flag, and how text values are read. */
export type KeySpec = {
  /** dotted path in the config object (e.g. `thresholds.maxLeverage`) */
  key: string;
  /** environment variables, first match wins */
  env: string[];
  /** the long flag (without the leading dashes) */
  flag: string;
  /** the commander attribute name the flag lands in */
  attr: string;
  kind: Kind;
};

const spec = (key: string, env: string | string[], flag: string, kind: Kind, attr?: string): KeySpec => ({
  key,
  env: Array.isArray(env) ? env : [env],
  flag,
  attr: attr ?? flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()),
  kind,
});

/** Every key of ConfigSchema, with its env and flag twin (a test checks the list matches the schema). */
export const CONFIG_KEYS: readonly KeySpec[] = Object.freeze([
  spec("network", "HL_NETWORK", "network", "enum"),
  spec("apiUrl", "HL_API_URL", "api-url", "string"),
  spec("rpcUrl", "HL_RPC_URL", "rpc-url", "string"),
  spec("explorerUrl", "HL_EXPLORER_URL", "explorer-url", "string"),
  spec("logLevel", "HL_LOG_LEVEL", "log-level", "enum"),
  spec("accounts", "HL_ACCOUNTS", "account", "list"),
  spec("vault", "HL_VAULT", "vault", "string"),
  spec("interval", "HL_INTERVAL", "interval", "duration"),
  spec("deadline", "HL_DEADLINE", "deadline", "duration"),
  spec("requestTimeout", "HL_REQUEST_TIMEOUT", "request-timeout", "duration"),
  spec("exposureInterval", "HL_EXPOSURE_INTERVAL", "exposure-interval", "duration"),
  spec("exposureUsers", "HL_EXPOSURE_USERS", "exposure-user", "list"),
  spec("dexes", "HL_DEXES", "dex", "list"),
  spec("exposureChunkSize", "HL_EXPOSURE_CHUNK_SIZE", "exposure-chunk-size", "int"),
  spec("exposureConcurrency", "HL_EXPOSURE_CONCURRENCY", "exposure-concurrency", "int"),
  spec("thresholds.maxLeverage", "HL_MAX_LEVERAGE", "max-leverage", "number"),
  spec(
    "thresholds.minLiquidationDistancePct",
    "HL_MIN_LIQUIDATION_DISTANCE_PCT",
    "min-liquidation-distance-pct",
    "number",
  ),
  spec("thresholds.maxNotionalUsd", "HL_MAX_NOTIONAL_USD", "max-notional-usd", "number"),
  spec("clockSkewWarn", "HL_CLOCK_SKEW_WARN", "clock-skew-warn", "duration"),
  spec("stateDir", ["HL_STATE_DIR", "STATE_DIRECTORY"], "state-dir", "string"),
  spec("health", "HL_HEALTH", "health", "string"),
  spec("onShutdown", "HL_ON_SHUTDOWN", "on-shutdown", "enum"),
  spec("shutdownTimeout", "HL_SHUTDOWN_TIMEOUT", "shutdown-timeout", "duration"),
  spec("guardFile", "HL_GUARD_FILE", "guard-file", "string"),
  spec("guardMaxAge", "HL_GUARD_MAX_AGE", "guard-max-age", "duration"),
  spec("guardUrl", "HL_GUARD_URL", "guard-url", "string"),
  spec("guardInterval", "HL_GUARD_INTERVAL", "guard-interval", "duration"),
  spec("onEngineDown", "HL_ON_ENGINE_DOWN", "on-engine-down", "enum"),
  spec("cancelStops", "HL_CANCEL_STOPS", "cancel-stops", "boolean"),
  spec("permanentRecheckInterval", "HL_PERMANENT_RECHECK_INTERVAL", "permanent-recheck-interval", "duration"),
  spec("budgetInterval", "HL_BUDGET_INTERVAL", "budget-interval", "duration"),
  spec("budgetWarnDays", "HL_BUDGET_WARN_DAYS", "budget-warn-days", "number"),
  spec("triggerLimit", "HL_TRIGGER_LIMIT", "trigger-limit", "int"),
  spec("triggerWarnRemaining", "HL_TRIGGER_WARN_REMAINING", "trigger-warn-remaining", "int"),
  spec("agentWarnDays", "HL_AGENT_WARN_DAYS", "agent-warn-days", "number"),
  spec("agentCheckInterval", "HL_AGENT_CHECK_INTERVAL", "agent-check-interval", "duration"),
  spec("watchAddresses", "HL_WATCH_ADDRESSES", "watch-address", "list"),
  spec("chainPollInterval", "HL_CHAIN_POLL_INTERVAL", "chain-poll-interval", "duration"),
  spec("chainStallThreshold", "HL_CHAIN_STALL_THRESHOLD", "chain-stall-threshold", "duration"),
  spec("chainMaxLagBlocks", "HL_CHAIN_MAX_LAG_BLOCKS", "chain-max-lag-blocks", "int"),
  spec("chainPageSize", "HL_CHAIN_PAGE_SIZE", "chain-page-size", "int"),
  spec("notifyUrls", "HL_NOTIFY_URLS", "notify-url", "list"),
  spec("keyFile", "HL_KEY_FILE", "key-file", "string"),
]);

/** Where each effective value came from: `default`, `file <path>`, `env HL_X`, `flag --x`. */
export type ConfigSources = Record<string, string>;

export type LoadConfigParameters = {
  /** Parsed commander options (attribute names as in CONFIG_KEYS[].attr, plus `config`). */
  options?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
};

export type LoadedConfig = {
  config: Config;
  warnings: string[];
  sources: ConfigSources;
  /** absolute path of the config file read, if any */
  file: string | undefined;
  /** scheduleCancel actions per day per account at this interval (each spends the address's lifetime budget) */
  actionsPerDay: number;
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function getPath(obj: Record<string, unknown>, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    // Arrays too: a schema issue at `accounts.1` must show the bad element, not `undefined`.
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(cur[part])) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** Drops documentation keys (`//key`, `$comment`, `$schema`) at every level of a config file. */
function stripComments(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith("//") || k.startsWith("$")) continue;
    out[k] = stripComments(v);
  }
  return out;
}

/** URL-valued keys: shown redacted (credentials, path segments that may be an endpoint key). */
const URL_KEYS = new Set(["apiUrl", "rpcUrl", "guardUrl", "explorerUrl", "notifyUrls"]);

/**
 * A value for a message: key-like values and URL credentials masked before any truncation (docs/security.md,
 * "What is never shown"), URL keys redacted.
 */
const show = (value: unknown, key?: string): string => {
  if (key !== undefined && URL_KEYS.has(key) && typeof value === "string")
    return JSON.stringify(showUrl(value));
  const raw = JSON.stringify(value);
  const text = raw === undefined ? String(value) : maskSecrets(raw);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** Turns one text or JSON value into what the schema expects for `kind`; pushes an issue when it cannot. */
function coerce(
  s: KeySpec,
  raw: unknown,
  origin: string,
  issues: string[],
  { fromText }: { fromText: boolean },
): unknown {
  const fail = (rule: string) => {
    issues.push(`${s.key} = ${show(raw, s.key)} (${origin}): ${rule}`);
    return undefined;
  };
  switch (s.kind) {
    case "duration": {
      if (typeof raw !== "string" && typeof raw !== "number")
        return fail("must be a duration such as 500ms, 15s, 2m, 1h, or a number of milliseconds");
      // Flags and environment need a unit (a bare 15 was silently 15 ms); config files keep numbers of ms.
      if (fromText) {
        try {
          return parseDurationText(String(raw));
        } catch (error) {
          if (error instanceof BareDurationError)
            return fail(
              `needs a unit: did you mean ${error.suggestion}? (write 500ms, 15s, 2m, 1h; 0 means off)`,
            );
          return fail("must be a duration such as 500ms, 15s, 2m or 1h");
        }
      }
      try {
        return parseDuration(raw);
      } catch {
        return fail("must be a duration such as 500ms, 15s, 2m, 1h, or a number of milliseconds");
      }
    }
    case "int":
    case "number": {
      if (!fromText) return raw;
      const text = String(raw).trim();
      const n = Number(text);
      if (text === "" || !Number.isFinite(n))
        return fail(`must be a ${s.kind === "int" ? "whole " : ""}number`);
      return n;
    }
    case "boolean": {
      if (typeof raw === "boolean") return raw;
      const text = String(raw).trim().toLowerCase();
      if (text === "true" || text === "1") return true;
      if (text === "false" || text === "0") return false;
      return fail("must be true or false");
    }
    case "list": {
      if (!fromText) return raw;
      if (Array.isArray(raw)) return raw.flatMap((v) => String(v).split(",")).map((v) => v.trim());
      return String(raw)
        .split(",")
        .map((v) => v.trim())
        .filter((v) => s.key === "dexes" || v !== "");
    }
    default:
      return raw;
  }
}

/** Reads and parses the JSON config file; problems become issues (never a crash). */
function readConfigFile(path: string, issues: string[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    issues.push(`config file ${path}: cannot be read (${code})`);
    return {};
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    issues.push(`config file ${path}: is not valid JSON (${maskSecrets((error as Error).message)})`);
    return {};
  }
  if (!isPlainObject(json)) {
    issues.push(`config file ${path}: must hold one JSON object, got ${show(json)}`);
    return {};
  }
  return stripComments(json) as Record<string, unknown>;
}

/**
 * Merges file < env < flags, validates, and applies the cross-field rules. Throws ConfigError (exit 78)
 * listing every problem; returns the effective config with its warnings and the source of each value.
 */
export function loadConfig({
  options = {},
  env = {},
  cwd = process.cwd(),
}: LoadConfigParameters = {}): LoadedConfig {
  const issues: string[] = [];
  const merged: Record<string, unknown> = {};
  const sources: ConfigSources = {};
  const rawOrigins: Record<string, string> = {};

  // 1. The file.
  const fileArg =
    typeof options.config === "string" && options.config !== ""
      ? options.config
      : env.HL_CONFIG !== undefined && env.HL_CONFIG !== ""
        ? env.HL_CONFIG
        : undefined;
  const file = fileArg === undefined ? undefined : isAbsolute(fileArg) ? fileArg : resolve(cwd, fileArg);
  if (file) {
    const data = readConfigFile(file, issues);
    const known = new Set(CONFIG_KEYS.map((s) => s.key.split(".")[0]));
    for (const k of Object.keys(data)) {
      if (!known.has(k)) {
        issues.push(`${k} (file ${file}): unknown key; known keys are ${[...known].join(", ")}`);
      }
    }
    for (const s of CONFIG_KEYS) {
      const raw = getPath(data, s.key);
      if (raw === undefined) continue;
      const origin = `file ${file}`;
      const value = coerce(s, raw, origin, issues, { fromText: false });
      if (value === undefined) continue;
      setPath(merged, s.key, value);
      sources[s.key] = origin;
      rawOrigins[s.key] = origin;
    }
    if (isPlainObject(data.thresholds)) {
      for (const k of Object.keys(data.thresholds)) {
        if (!CONFIG_KEYS.some((s) => s.key === `thresholds.${k}`)) {
          issues.push(`thresholds.${k} (file ${file}): unknown key`);
        }
      }
    }
  }

  // 2. The environment (an empty variable counts as unset).
  for (const s of CONFIG_KEYS) {
    const name = s.env.find((n) => env[n] !== undefined && env[n] !== "");
    if (!name) continue;
    let raw = env[name]!;
    // systemd's STATE_DIRECTORY may list several directories separated by colons; the first is ours.
    if (name === "STATE_DIRECTORY") raw = raw.split(":")[0]!;
    const origin = `env ${name}`;
    const value = coerce(s, raw, origin, issues, { fromText: true });
    if (value === undefined) continue;
    setPath(merged, s.key, value);
    sources[s.key] = origin;
    rawOrigins[s.key] = origin;
  }

  // 3. Flags.
  for (const s of CONFIG_KEYS) {
    const raw = options[s.attr];
    if (raw === undefined || (Array.isArray(raw) && raw.length === 0)) continue;
    const origin = `flag --${s.flag}`;
    const value = coerce(s, raw, origin, issues, { fromText: true });
    if (value === undefined) continue;
    setPath(merged, s.key, value);
    sources[s.key] = origin;
    rawOrigins[s.key] = origin;
  }

  // Relative paths are relative to the working directory.
  for (const k of ["stateDir", "guardFile", "keyFile"] as const) {
    const v = merged[k];
    if (typeof v === "string" && v !== "" && !isAbsolute(v)) merged[k] = resolve(cwd, v);
  }

  // 4. The schema.
  const result = ConfigSchema.safeParse(merged);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path.map(String).join(".");
      const key = path === "" ? "(root)" : path;
      const top = issue.path.length > 0 ? issue.path.slice(0, 2).map(String).join(".") : "";
      const origin = rawOrigins[top] ?? rawOrigins[String(issue.path[0] ?? "")] ?? "config";
      if (issue.code === "unrecognized_keys") {
        // Unknown keys in the file were reported above with the list of known keys.
        if (!file) issues.push(`${key}: ${issue.message}`);
        continue;
      }
      const value = getPath(merged, path);
      // URL-valued keys (a list such as notifyUrls included) are shown redacted, even when invalid
      issues.push(`${key} = ${show(value, String(issue.path[0] ?? top))} (${origin}): ${issue.message}`);
    }
    throw new ConfigError(issues, { file });
  }
  const config = result.data;
  for (const s of CONFIG_KEYS) sources[s.key] ??= "default";

  // 5. Cross-field rules and warnings.
  const { errors, warnings } = checkConfigRules(config, sources);
  issues.push(...errors);
  if (issues.length > 0) throw new ConfigError(issues, { file });
  return { config, warnings, sources, file, actionsPerDay: actionsPerDay(config.interval) };
}

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
      `guardFile and guardUrl${at(sources, "guardFile")}: set one engine guard, not both (got ${config.guardFile} and ${config.guardUrl})`,
    );
  if (config.guardFile && config.guardMaxAge < config.guardInterval)
    errors.push(
      `guardMaxAge = ${fmt(config.guardMaxAge)}${at(sources, "guardMaxAge")}: must be at least guardInterval (${fmt(config.guardInterval)})`,
    );
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
  if (config.watchAddresses.length > 0 && !config.rpcUrl)
    errors.push(
      `watchAddresses${at(sources, "watchAddresses")}: needs rpcUrl (--rpc-url / HL_RPC_URL), a node that serves ots_* (the official RPC is not known to)`,
    );
  if (config.health !== "off") {
    const port = Number(config.health.slice(config.health.lastIndexOf(":") + 1));
    if (port > 65_535)
      errors.push(`health = ${show(config.health)}${at(sources, "health")}: port must be 0-65535`);
  }

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

/**
 * The effective explorer URL: explicit, else the network's official one when the API is the official one;
 * with a third-party API host and no explicit explorer URL there is no record (null).
 */
export function effectiveExplorerUrl(config: Config): string | null {
  if (config.explorerUrl) return config.explorerUrl;
  const official = NETWORK_URLS[config.network].apiUrl;
  if (config.apiUrl && config.apiUrl.replace(/\/+$/, "") !== official) return null;
  return EXPLORER_URLS[config.network];
}

/** The effective API and RPC URLs (explicit, else the network's). */
export function effectiveUrls(config: Config): { apiUrl: string; rpcUrl: string } {
  return {
    apiUrl: config.apiUrl ?? NETWORK_URLS[config.network].apiUrl,
    rpcUrl: config.rpcUrl ?? NETWORK_URLS[config.network].rpcUrl,
  };
}

/** The state directory: the configured one, else ./.hl-deadman under `cwd`. */
export function effectiveStateDir(config: Config, cwd: string): string {
  return config.stateDir ?? resolve(cwd, ".hl-deadman");
}

const DURATION_KEYS = new Set(CONFIG_KEYS.filter((s) => s.kind === "duration").map((s) => s.key));

/**
 * The JSON schema for editors (config/schema.json): z.toJSONSchema(ConfigSchema) for the input side, with
 * each key's description from the schema's comments, and durations accepting "15s"-style strings too.
 */
export function configJsonSchema(docs: Record<string, string> = CONFIG_DOCS): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigSchema, { io: "input" }) as Record<string, unknown>;
  const annotate = (props: Record<string, Record<string, unknown>>, prefix: string) => {
    for (const [k, prop] of Object.entries(props)) {
      const key = prefix + k;
      if (docs[key]) prop.description = docs[key];
      if (DURATION_KEYS.has(key)) {
        const { type: _type, minimum: _min, maximum: _max, ...rest } = prop;
        props[k] = {
          ...rest,
          anyOf: [
            { type: "integer", minimum: 0, description: "milliseconds" },
            {
              type: "string",
              pattern: "^\\d+(\\.\\d+)?(ms|s|m|h|d)?$",
              description: "e.g. 500ms, 15s, 2m, 1h",
            },
          ],
        };
      }
      if (isPlainObject(prop.properties)) {
        annotate(prop.properties as Record<string, Record<string, unknown>>, `${key}.`);
        prop.patternProperties = { "^(//|\\$)": {} };
      }
    }
  };
  annotate(schema.properties as Record<string, Record<string, unknown>>, "");
  // Documentation keys are allowed in the file ("//interval": "...", "$comment", "$schema").
  schema.patternProperties = { "^(//|\\$)": {} };
  schema.title = "hl-deadman configuration";
  return schema;
}

/**
 * Each key's documentation: the same words as the comment above the key in src/config/schema.ts
 * (test/config/load.test.ts compares them) and as the "//key" lines of config/example.json.
 */
export const CONFIG_DOCS: Readonly<Record<string, string>> = Object.freeze({
  network: "`mainnet` or `testnet`: default URLs and the signing source (`a` mainnet, `b` testnet).",
  apiUrl: "Trading API base URL; `/exchange` and `/info` are appended. Default: the network's official API.",
  rpcUrl: "HyperEVM JSON-RPC endpoint, used as given. May contain a key path segment; never logged.",
  explorerUrl:
    "The explorer endpoint (`userDetails`), path included. Default: the network's official explorer.",
  logLevel: "pino level.",
  accounts: "Accounts whose schedule is kept. Default: the signer's own address.",
  vault: "Act for a vault or subaccount (`vaultAddress`).",
  interval: "Push cadence (ms).",
  deadline: "How far ahead each push sets the cancel time (ms); at least 5 s plus a safety margin.",
  requestTimeout: "Time-out of one exchange request, and the `expiresAfter` window of each signed push (ms).",
  exposureInterval: "`batchClearinghouseStates` poll cadence (ms); 0 turns it off.",
  exposureUsers: "More users to poll besides the accounts.",
  dexes: 'Perp dexes to poll ("" is the first perp dex).',
  exposureChunkSize: "Users per `batchClearinghouseStates` request.",
  exposureConcurrency: "Chunks in flight at once.",
  thresholds: "Alert thresholds for the exposure poll; each crossing logs `exposure.alert` once.",
  "thresholds.maxLeverage": "Maximum leverage (total notional / account value).",
  "thresholds.minLiquidationDistancePct": "Minimum distance to liquidation, in percent of the mark price.",
  "thresholds.maxNotionalUsd": "Maximum total notional per account, in USD.",
  clockSkewWarn: "Warn when the local clock and the exchange differ by more than this (ms).",
  stateDir:
    "Where the trigger ledger lives. Default: $HL_STATE_DIR, then $STATE_DIRECTORY, then ./.hl-deadman.",
  health: "`HOST:PORT` for /healthz, /readyz, /metrics, or `off`.",
  onShutdown: "What a graceful stop does to the schedule: `remove` it, or `keep` it armed.",
  shutdownTimeout: "Upper bound for a graceful stop (ms); the process exits by then whatever happens.",
  guardFile: "Push only while the trading engine keeps touching this file.",
  guardMaxAge: "Maximum age of the guard file's mtime (ms).",
  guardUrl: "Push only while the engine's health URL answers 2xx.",
  guardInterval: "How often the guard is checked (ms).",
  onEngineDown:
    "When the guard fails: `expedite` (cancel at the 5 s minimum, once), `lapse` (stop pushing) or `cancel` (cancel open orders; expedite when not confirmed).",
  cancelStops: "With onEngineDown cancel: cancel trigger (stop/take-profit) orders too.",
  permanentRecheckInterval:
    "Re-check cadence for an account refused permanently (volume gate, unknown signer...) (ms).",
  budgetInterval:
    "How often the address's lifetime action budget (userRateLimit) is read (ms); 0 turns it off.",
  budgetWarnDays: "Warn when the action budget would run out within this many days at the push rate.",
  triggerLimit: "Triggers per UTC day the exchange allows.",
  triggerWarnRemaining: "Warn when this many triggers or fewer remain today.",
  agentWarnDays: "Warn daily when the signing API wallet expires within this many days.",
  agentCheckInterval:
    "How often the signing API wallet is checked in `extraAgents` (ms); 0 checks only at start-up.",
  watchAddresses:
    "Follow new HyperEVM blocks and log transactions from or to these addresses (needs rpcUrl).",
  chainPollInterval: "Chain watch: how often to ask for the head (ms).",
  chainStallThreshold: "Chain watch: warn when the head is older than this (ms).",
  chainMaxLagBlocks: "Chain watch: skip ahead when more than this many blocks behind.",
  chainPageSize: "Chain watch: page size for ots_getBlockTransactions.",
  notifyUrls:
    "Webhook URLs that get a JSON document for each event that matters (trigger, not protected, engine down...). May hold a token or user:pass; never logged.",
  keyFile: "File holding the signer's private key (mode 0600 or stricter). Never the key itself.",
});
