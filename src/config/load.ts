/**
 * Configuration layering: DEFAULTS < JSON config file (--config / HL_CONFIG) < HL_* environment < flags,
 * then one ConfigSchema parse and the cross-field rules (./rules.ts). Every problem is collected and reported at
 * once (key, bad value, rule, and where the value came from); the CLI exits 78 (EX_CONFIG).
 *
 * The other concerns live beside it: the table of options (./options.ts), reading text values (./coerce.ts), the
 * file (./file.ts), the rules (./rules.ts), the JSON schema (./json-schema.ts), the networks' URLs
 * (./networks.ts), the listen address (./listen.ts) and the error (./errors.ts); this module re-exports them.
 */
import { isAbsolute, resolve } from "node:path";
import { coerce, readEnv } from "./coerce.js";
import { ConfigError } from "./errors.js";
import { readConfigFile, unknownFileKeys, unknownGroupKeys } from "./file.js";
import { BLOCK_DOCS, type Config, ConfigSchema, OPTIONS } from "./options.js";
import { actionsPerDay, type ConfigSources, checkConfigRules } from "./rules.js";
import { getPath, isPlainObject, setPath, show } from "./values.js";

export { ConfigError } from "./errors.js";
export { configJsonSchema } from "./json-schema.js";
export { effectiveExplorerUrl, effectiveStateDir, effectiveUrls } from "./networks.js";
export {
  CONFIG_DOCS,
  type ConfigOption,
  formatDefault,
  OPTIONS,
  OPTIONS as CONFIG_KEYS,
  type OptionKind,
} from "./options.js";
export {
  actionsPerDay,
  type ConfigSources,
  checkConfigRules,
  EXCHANGE_MIN_LEAD_MS,
  MIN_DEADLINE_MS,
  MIN_INTERVAL_MS,
  MIN_REQUEST_TIMEOUT_MS,
  RETRY_MARGIN_MS,
  SKEW_MARGIN_MS,
} from "./rules.js";

export type LoadConfigParameters = {
  /** Parsed commander options (attribute names as in OPTIONS[].attr, plus `config`). */
  options?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** `run --sim`: the API is the embedded simulator (set after loading), not an official host */
  simulator?: boolean;
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

/**
 * Merges file < env < flags, validates, and applies the cross-field rules. Throws ConfigError (exit 78)
 * listing every problem; returns the effective config with its warnings and the source of each value.
 */
export function loadConfig({
  options = {},
  env = {},
  cwd = ".",
  simulator = false,
}: LoadConfigParameters = {}): LoadedConfig {
  const issues: string[] = [];
  const merged: Record<string, unknown> = {};
  const sources: ConfigSources = {};
  const rawOrigins: Record<string, string> = {};
  /** keys whose own value is wrong: a cross-field rule about them would judge a default, not what was written */
  const failed = new Set<string>();

  // 1. The file.
  const fileArg =
    typeof options.config === "string" && options.config !== ""
      ? options.config
      : env.HL_CONFIG !== undefined && env.HL_CONFIG !== ""
        ? env.HL_CONFIG
        : undefined;
  const file = fileArg === undefined ? undefined : isAbsolute(fileArg) ? fileArg : resolve(cwd, fileArg);
  /** durations the file gives as a small bare number (milliseconds there): a rule they break suggests seconds */
  const bareMs = new Map<string, number>();
  if (file) {
    const data = readConfigFile(file, issues);
    issues.push(...unknownFileKeys(data, file));
    for (const s of OPTIONS) {
      const raw = getPath(data, s.key);
      if (raw === undefined) continue;
      const origin = `file ${file}`;
      if (s.kind === "duration" && typeof raw === "number" && raw > 0 && raw < 1_000) bareMs.set(s.key, raw);
      const value = coerce(s, raw, origin, issues, { fromText: false });
      if (value === undefined) {
        failed.add(s.key);
        continue;
      }
      setPath(merged, s.key, value);
      sources[s.key] = origin;
      rawOrigins[s.key] = origin;
    }
    issues.push(...unknownGroupKeys(data, file));
    // The blocks (`signers`) are the file's alone; the schema reads them as written.
    for (const key of Object.keys(BLOCK_DOCS)) {
      if (data[key] === undefined) continue;
      merged[key] = structuredClone(data[key]);
      sources[key] = `file ${file}`;
      rawOrigins[key] = `file ${file}`;
    }
  }

  // 2. The environment (an empty variable counts as unset).
  for (const s of OPTIONS) {
    const found = readEnv(s, env);
    if (!found) continue;
    const { name, raw } = found;
    const origin = `env ${name}`;
    const value = coerce(s, raw, origin, issues, { fromText: true });
    if (value === undefined) {
      failed.add(s.key);
      continue;
    }
    setPath(merged, s.key, value);
    sources[s.key] = origin;
    rawOrigins[s.key] = origin;
  }

  // 3. Flags.
  for (const s of OPTIONS) {
    const raw = options[s.attr];
    if (raw === undefined || (Array.isArray(raw) && raw.length === 0)) continue;
    const origin = `flag --${s.flag}`;
    const value = coerce(s, raw, origin, issues, { fromText: true });
    if (value === undefined) {
      failed.add(s.key);
      continue;
    }
    setPath(merged, s.key, value);
    sources[s.key] = origin;
    rawOrigins[s.key] = origin;
  }

  // Relative paths are relative to the working directory.
  for (const k of ["stateDir", "guardFile", "keyFile"] as const) {
    const v = merged[k];
    if (typeof v === "string" && v !== "" && !isAbsolute(v)) merged[k] = resolve(cwd, v);
  }
  if (Array.isArray(merged.signers))
    for (const s of merged.signers as unknown[])
      if (isPlainObject(s) && typeof s.keyFile === "string" && s.keyFile !== "" && !isAbsolute(s.keyFile))
        s.keyFile = resolve(cwd, s.keyFile);

  // 4. The schema.
  const result = ConfigSchema.safeParse(merged);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path.map(String).join(".");
      const key = path === "" ? "(root)" : path;
      const top = issue.path.length > 0 ? issue.path.slice(0, 2).map(String).join(".") : "";
      const origin = rawOrigins[top] ?? rawOrigins[String(issue.path[0] ?? "")] ?? "config";
      if (issue.code === "unrecognized_keys") {
        // Unknown keys in the file were reported above with the nearest known keys, except inside a block's
        // records, which only the schema sees (their names are said, never their values: one may be a key).
        if (issue.path[0] === "signers")
          issues.push(
            `${key} (${origin}): unknown ${issue.keys.length === 1 ? "key" : "keys"} ${issue.keys.join(", ")}; a signer has name, keyFile | keyEnv | credential, account and vaults (the key itself is never written in the config)`,
          );
        else if (!file) issues.push(`${key}: ${issue.message}`);
        continue;
      }
      const value = getPath(merged, path);
      const name = String(issue.path[0] ?? top);
      if (name === "signers") {
        // A signer's values are never shown: a key pasted where a file or a variable's name belongs is still a key.
        failed.add(name);
        issues.push(`${key} (${origin}): ${issue.message}`);
        continue;
      }
      failed.add(OPTIONS.some((o) => o.key === top) ? top : name);
      // URL-valued keys (a list such as notifyUrls included) are shown redacted, even when invalid
      issues.push(`${key} = ${show(value, name)} (${origin}): ${issue.message}${urlHint(name, value)}`);
    }
    // Every problem at once (docs/cli.md, "Errors"): the cross-field rules too, judged on the keys that are valid
    // (a wrong key left at its default), never about a key that is itself wrong.
    const rest = ConfigSchema.safeParse(withoutKeys(merged, failed));
    for (const s of OPTIONS) sources[s.key] ??= "default";
    if (rest.success) issues.push(...ruleErrorsAbout(rest.data, sources, failed));
    throw new ConfigError(withUnitHints(issues, bareMs), { file });
  }
  const config = result.data;
  for (const s of OPTIONS) sources[s.key] ??= "default";

  // 5. Cross-field rules and warnings.
  const { warnings } = checkConfigRules(config, sources, { simulator });
  issues.push(...ruleErrorsAbout(config, sources, failed, simulator));
  if (issues.length > 0) throw new ConfigError(withUnitHints(issues, bareMs), { file });
  return { config, warnings, sources, file, actionsPerDay: actionsPerDay(config.interval) };
}

/**
 * A duration written in the config file as a bare number is milliseconds (`"interval": 5` is 5 ms); when a rule
 * refuses it, say so and suggest the seconds it probably meant, as the flag's `needs a unit: did you mean 5s?` does.
 */
function withUnitHints(issues: string[], bareMs: ReadonlyMap<string, number>): string[] {
  return issues.map((issue) => {
    const key = [...bareMs.keys()].find((k) => issue.startsWith(`${k} = `));
    if (key === undefined) return issue;
    const n = bareMs.get(key)!;
    return `${issue}; a number in the config file is milliseconds: did you mean "${n}s"?`;
  });
}

/** The cross-field rule errors that do not name a key in `failed`. */
function ruleErrorsAbout(
  config: Config,
  sources: ConfigSources,
  failed: ReadonlySet<string>,
  simulator = false,
): string[] {
  const names = [...failed].map((k) => new RegExp(`(^|[^\\w.])${k.replace(".", "\\.")}(?![\\w])`));
  return checkConfigRules(config, sources, { simulator }).errors.filter(
    (e) => !names.some((re) => re.test(e)),
  );
}

/** `merged` without the (dotted) keys in `keys`. */
function withoutKeys(merged: Record<string, unknown>, keys: ReadonlySet<string>): Record<string, unknown> {
  const copy = structuredClone(merged);
  for (const key of keys) {
    const parts = key.split(".");
    const parent = parts.length > 1 ? getPath(copy, parts.slice(0, -1).join(".")) : copy;
    if (parent && typeof parent === "object") delete (parent as Record<string, unknown>)[parts.at(-1)!];
  }
  return copy;
}

/** For a URL key given without its scheme (`127.0.0.1:8080`), the likely meaning. */
function urlHint(key: string, value: unknown): string {
  const option = OPTIONS.find((o) => o.key === key);
  if (!option?.url || typeof value !== "string" || /^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim())) return "";
  return `; a URL starts with http:// or https://: did you mean ${show(`http://${value.trim()}`, key)}?`;
}
