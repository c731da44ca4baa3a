/** The JSON config file: read, comments dropped, unknown keys reported (never a crash). */
import { readFileSync } from "node:fs";
import { maskSecrets } from "../utils/redact.js";
import { OPTIONS } from "./options.js";
import { isPlainObject, show } from "./values.js";

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

/** Reads and parses the JSON config file; problems become issues (never a crash). */
export function readConfigFile(path: string, issues: string[]): Record<string, unknown> {
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

/** One issue per top-level key of the file that the table does not have. */
export function unknownFileKeys(data: Record<string, unknown>, file: string): string[] {
  const known = new Set(OPTIONS.map((s) => s.key.split(".")[0]));
  return Object.keys(data)
    .filter((k) => !known.has(k))
    .map((k) => `${k} (file ${file}): unknown key; known keys are ${[...known].join(", ")}`);
}

/** One issue per key inside a group (`thresholds`) that the table does not have. */
export function unknownGroupKeys(data: Record<string, unknown>, file: string): string[] {
  const issues: string[] = [];
  for (const group of new Set(OPTIONS.filter((o) => o.key.includes(".")).map((o) => o.key.split(".")[0]!))) {
    const value = data[group];
    if (!isPlainObject(value)) continue;
    for (const k of Object.keys(value)) {
      if (!OPTIONS.some((s) => s.key === `${group}.${k}`))
        issues.push(`${group}.${k} (file ${file}): unknown key`);
    }
  }
  return issues;
}
