/**
 * The generated parts of the docs, each between `<!-- NAME:start … -->` and `<!-- NAME:end -->` markers:
 * - `options-table` in docs/operations.md: one row per configuration key (src/config/schema.ts, src/config/load.ts);
 * - `reliability-matrix` in docs/reliability.md: the fault matrix (test/reliability/matrix.ts);
 * - `error-policy` in docs/errors.md: one row per error kind (src/errors/policy.ts).
 * `npm run docs:generate` (scripts/update-docs.ts) rewrites them; test/docs/generated.test.ts fails while a document
 * differs from `updateGenerated(doc)`. No test writes a document.
 */
import { CONFIG_DOCS, CONFIG_KEYS, type KeySpec } from "../../src/config/load.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { ERROR_POLICY, type ErrorPolicy } from "../../src/errors/policy.js";
import { formatDuration } from "../../src/utils/duration.js";
import { MATRIX, type ReliabilityCase } from "../reliability/matrix.js";

// ---------------------------------------------------------------- option table

const defaults = ConfigSchema.parse({}) as Record<string, unknown>;

function defaultOf(spec: KeySpec): string {
  const [head, tail] = spec.key.split(".") as [string, string | undefined];
  const value = tail ? (defaults[head] as Record<string, unknown>)[tail] : defaults[head];
  if (value === undefined) return "—";
  if (spec.kind === "duration" && typeof value === "number") return `\`${formatDuration(value)}\``;
  if (Array.isArray(value)) return value.length === 0 ? "—" : `\`${JSON.stringify(value)}\``;
  return `\`${String(value)}\``;
}

const METAVAR: Record<string, string> = {
  apiUrl: "URL",
  rpcUrl: "URL",
  guardUrl: "URL",
  accounts: "ADDR",
  vault: "ADDR",
  exposureUsers: "ADDR",
  watchAddresses: "ADDR",
  dexes: "NAME",
  stateDir: "DIR",
  guardFile: "FILE",
  keyFile: "FILE",
  health: "HOST:PORT|off",
};

function flagOf(spec: KeySpec): string {
  let meta: string;
  if (spec.kind === "duration") meta = "DURATION";
  else if (spec.kind === "int") meta = "N";
  else if (spec.kind === "number") meta = "NUMBER";
  else if (spec.kind === "enum") {
    const field = ConfigSchema.shape[spec.key as keyof typeof ConfigSchema.shape] as unknown as {
      unwrap(): { options: string[] };
    };
    meta = field.unwrap().options.join("\\|");
  } else meta = METAVAR[spec.key] ?? "VALUE";
  return `\`--${spec.flag} ${meta.replace(/(?<!\\)\|/g, "\\|")}\`${spec.kind === "list" ? " (repeatable)" : ""}`;
}

/** The option table: one row per configuration key, in the words of the schema. */
export function optionsTable(): string {
  const rows = CONFIG_KEYS.map((spec) => {
    const doc = CONFIG_DOCS[spec.key] ?? "";
    const env =
      spec.env.map((e) => `\`${e}\``).join(", then ") + (spec.kind === "list" ? " (comma-separated)" : "");
    return `| \`${spec.key}\` | ${flagOf(spec)} | ${env} | ${defaultOf(spec)} | ${doc.replaceAll("|", "\\|")} |`;
  });
  return ["| key | flag | environment | default | meaning |", "|---|---|---|---|---|", ...rows].join("\n");
}

// ---------------------------------------------------------------- reliability matrix

/** A Markdown table with every column padded to its widest cell (what a Markdown formatter writes). */
export function paddedTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** The README's fault-matrix table, one row per case in MATRIX order. */
export function matrixTable(rows: readonly ReliabilityCase[] = MATRIX): string {
  return paddedTable(
    ["#", "Case", "Fault injected", "What it proves", "Test (`test/reliability/…`)", "Daemon"],
    rows.map((r, i) => [
      String(i + 1),
      `\`${r.id}\``,
      r.fault.replaceAll("|", "\\|"),
      r.proves.replaceAll("|", "\\|"),
      `${r.file}: “${r.test}”`,
      r.mode,
    ]),
  );
}

// ---------------------------------------------------------------- error policy

/** The error policy: one row per family and kind, in the table's order. */
export function errorPolicyTable(): string {
  const yes = (b: boolean) => (b ? "yes" : "—");
  const rows = Object.entries(ERROR_POLICY).flatMap(([domain, kinds]) =>
    Object.entries(kinds as Record<string, ErrorPolicy>).map(([kind, p]) => [
      `\`${domain}\``,
      `\`${kind}\``,
      yes(p.retryable),
      yes(p.permanent),
      yes(p.outcomeUnknown),
      String(p.exitCode),
      p.note.replaceAll("|", "\\|"),
    ]),
  );
  return paddedTable(["family", "kind", "retryable", "permanent", "outcome unknown", "exit", "when"], rows);
}

// ---------------------------------------------------------------- the README

/** Each generated section, the document (relative to the repository) that holds it, and its source. */
export const GENERATED: ReadonlyArray<{ name: string; file: string; content: () => string }> = [
  { name: "options-table", file: "docs/operations.md", content: optionsTable },
  { name: "reliability-matrix", file: "docs/reliability.md", content: () => matrixTable() },
  { name: "error-policy", file: "docs/errors.md", content: errorPolicyTable },
];

/** The text between a section's markers (trimmed); throws when the markers are missing. */
export function generatedSection(doc: string, name: string): string {
  const start = new RegExp(`<!-- ${name}:start[^>]*-->\\n`).exec(doc);
  const end = doc.indexOf(`<!-- ${name}:end -->`);
  if (!start || end < start.index) throw new Error(`the document lost its ${name} markers`);
  return doc.slice(start.index + start[0].length, end).trim();
}

/** `doc` with each named generated section replaced by its current content. Pure; idempotent. */
export function updateGenerated(
  doc: string,
  names: readonly string[] = GENERATED.map((g) => g.name),
): string {
  let out = doc;
  for (const { name, content } of GENERATED.filter((g) => names.includes(g.name))) {
    const start = new RegExp(`<!-- ${name}:start[^>]*-->\\n`).exec(out);
    const end = out.indexOf(`<!-- ${name}:end -->`);
    if (!start || end < start.index) throw new Error(`the document lost its ${name} markers`);
    out = `${out.slice(0, start.index + start[0].length)}${content()}\n${out.slice(end)}`;
  }
  return out;
}
