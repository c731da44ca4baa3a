/** The JSON config file: read, comments dropped, unknown keys reported (never a crash). */
import { readFileSync } from "node:fs";
import { maskSecrets } from "../core/redact.js";
import { BLOCK_DOCS, OPTIONS } from "./options.js";
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

/**
 * " at line L, column C" for JSON.parse's error, whose message gives a character offset ("at position 18") or, at
 * the end of the text, none: people and editors count lines and columns (1-based), not offsets.
 */
export function whereInJson(text: string, message: string): string {
  const m = /at position (\d+)/.exec(message);
  const offset = m ? Number(m[1]) : /end of JSON input/i.test(message) ? text.length : null;
  if (offset === null || offset > text.length) return "";
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return ` at line ${line}, column ${column}`;
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
    issues.push(
      `config file ${path}: is not valid JSON${whereInJson(text, (error as Error).message)} (${maskSecrets((error as Error).message)})`,
    );
    return {};
  }
  if (!isPlainObject(json)) {
    issues.push(`config file ${path}: must hold one JSON object, got ${show(json)}`);
    return {};
  }
  return stripComments(json) as Record<string, unknown>;
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d = Array.from({ length: x.length + 1 }, (_, i) => [i, ...Array<number>(y.length).fill(0)]);
  for (let j = 1; j <= y.length; j++) d[0]![j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[x.length]![y.length]!;
}

/**
 * The known keys nearest to an unknown one (`intervall` -> `interval`): those within a third of its length in
 * edits (at least 1, at most 3), closest first, at most three; or those it is a prefix or a part of.
 */
export function nearestKeys(unknown: string, known: readonly string[]): string[] {
  const limit = Math.min(3, Math.max(1, Math.floor(unknown.length / 3)));
  const scored = known
    .map((k) => ({ k, d: distance(unknown, k) }))
    .filter(
      ({ k, d }) => d <= limit || (unknown.length >= 4 && k.toLowerCase().includes(unknown.toLowerCase())),
    )
    .sort((a, b) => a.d - b.d);
  return scored.slice(0, 3).map(({ k }) => k);
}

function unknownKeyIssue(key: string, file: string, known: readonly string[], group = ""): string {
  const near = nearestKeys(key, known).map((k) => `${group}${k}`);
  return near.length > 0
    ? `${group}${key} (file ${file}): unknown key; did you mean ${near.join(" or ")}?`
    : `${group}${key} (file ${file}): unknown key; the ${known.length} known keys${group ? ` of ${group.slice(0, -1)}` : ""} are listed by \`hl-deadman config schema\` and in config/example.json`;
}

/** One issue per top-level key of the file that the table does not have, naming the nearest known keys. */
export function unknownFileKeys(data: Record<string, unknown>, file: string): string[] {
  const known = [...new Set([...OPTIONS.map((s) => s.key.split(".")[0]!), ...Object.keys(BLOCK_DOCS)])];
  return Object.keys(data)
    .filter((k) => !known.includes(k))
    .map((k) => unknownKeyIssue(k, file, known));
}

/** One issue per key inside a group (`thresholds`) that the table does not have. */
export function unknownGroupKeys(data: Record<string, unknown>, file: string): string[] {
  const issues: string[] = [];
  for (const group of new Set(OPTIONS.filter((o) => o.key.includes(".")).map((o) => o.key.split(".")[0]!))) {
    const value = data[group];
    if (!isPlainObject(value)) continue;
    const known = OPTIONS.filter((o) => o.key.startsWith(`${group}.`)).map((o) =>
      o.key.slice(group.length + 1),
    );
    for (const k of Object.keys(value)) {
      if (!known.includes(k)) issues.push(unknownKeyIssue(k, file, known, `${group}.`));
    }
  }
  return issues;
}
