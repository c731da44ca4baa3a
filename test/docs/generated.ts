/**
 * The generated parts of the docs, each between `<!-- NAME:start … -->` and `<!-- NAME:end -->` markers:
 * - `options-table` in docs/operations.md: one row per configuration key (the table of src/config/options.ts);
 * - `reliability-matrix` in docs/reliability.md: the fault matrix (test/reliability/matrix.ts);
 * - `error-policy` in docs/errors.md: one row per error kind (src/core/errors/policy.ts);
 * - `commands` in docs/cli.md: every command and subcommand of the program with its options (src/cli/).
 * `npm run docs:generate` (scripts/update-docs.ts) rewrites them; test/docs/generated.test.ts fails while a document
 * differs from `updateGenerated(doc)`. No test writes a document.
 */
import { Writable } from "node:stream";
import type { Command } from "commander";
import { createProgram } from "../../src/cli/program.js";
import { type ConfigOption, formatDefault, OPTIONS } from "../../src/config/options.js";
import { ERROR_POLICY, type ErrorPolicy } from "../../src/protocol/policy.js";
import { MATRIX, type ReliabilityCase } from "../reliability/matrix.js";

// ---------------------------------------------------------------- option table

const cell = (text: string) => text.replaceAll("|", "\\|");

/** The flag cell: `--interval DURATION`, `--cancel-stops`, `--account ADDR` (repeatable). */
export function flagCell(option: ConfigOption): string {
  const flag = `--${option.flag}${option.metavar ? ` ${option.metavar}` : ""}`;
  return `\`${cell(flag)}\`${option.kind === "list" ? " (repeatable)" : ""}`;
}

/** One row of the option table, in the words and with the default of the table of options. */
export function optionRow(option: ConfigOption): string {
  const env =
    option.env.map((e) => `\`${e}\``).join(", then ") + (option.kind === "list" ? " (comma-separated)" : "");
  const def = formatDefault(option);
  return `| \`${option.key}\` | ${flagCell(option)} | ${env} | ${def === undefined ? "—" : `\`${def}\``} | ${cell(option.description)} |`;
}

/** The option table: one row per configuration key (src/config/options.ts), in the table's order. */
export function optionsTable(): string {
  return [
    "| key | flag | environment | default | meaning |",
    "|---|---|---|---|---|",
    ...OPTIONS.map(optionRow),
  ].join("\n");
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

// ---------------------------------------------------------------- commands

/** The program's own definition of its commands and options, writing nothing (for the docs' tests). */
export function quietProgram(): Command {
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  return createProgram({
    stdout: quiet,
    stderr: quiet,
    env: {},
    cwd: "/",
    clock: { now: () => 0 },
  } as never);
}

/**
 * Every command of the program, as the program itself describes it: a heading per command path, its usage, its
 * description and its options; `run`'s configuration options (shared by run, doctor, schedule, …) are named once,
 * in docs/operations.md's option table, and each command that takes them says so.
 */
export function commandsReference(): string {
  const program = quietProgram();
  const configFlags = new Set(OPTIONS.map((o) => `--${o.flag}`));
  const out: string[] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      const name = sub.name();
      if (name === "help") continue;
      const full = [...path, name];
      if (sub.commands.length > 0 && sub.options.length === 0) {
        out.push(`### \`hl-deadman ${full.join(" ")}\``, "", `${sub.description()}.`, "");
        walk(sub, full);
        continue;
      }
      const own = sub.options.filter((o) => !configFlags.has(o.long ?? ""));
      const shared = sub.options.length - own.length;
      // The groups the help shows the configuration options in (`run`'s topics), when there is more than one.
      const groups = new Map<string, number>();
      for (const o of sub.options.filter((o) => configFlags.has(o.long ?? ""))) {
        const heading = o.helpGroupHeading ?? "Options:";
        groups.set(heading, (groups.get(heading) ?? 0) + 1);
      }
      out.push(`### \`hl-deadman ${full.join(" ")} ${sub.usage()}\``, "", `${sub.description()}.`, "");
      for (const o of own)
        out.push(`- \`${o.flags.replaceAll("|", "\\|")}\`: ${o.description.replaceAll("\n", " ")}`);
      if (shared > 0)
        out.push(
          `- and ${shared} of \`run\`'s configuration options (docs/operations.md, "Options"; \`hl-deadman ${full.join(" ")} --help\`)${groups.size > 1 ? ", in the help's groups:" : ""}`,
        );
      if (groups.size > 1) for (const [heading, n] of groups) out.push(`  - \`${heading}\` ${n}`);
      out.push("");
      walk(sub, full);
    }
  };
  walk(program, []);
  return out.join("\n").trim();
}

// ---------------------------------------------------------------- the README

/** Each generated section, the document (relative to the repository) that holds it, and its source. */
export const GENERATED: ReadonlyArray<{ name: string; file: string; content: () => string }> = [
  { name: "options-table", file: "docs/operations.md", content: optionsTable },
  { name: "reliability-matrix", file: "docs/reliability.md", content: () => matrixTable() },
  { name: "error-policy", file: "docs/errors.md", content: errorPolicyTable },
  { name: "commands", file: "docs/cli.md", content: commandsReference },
];

/** The text between a section's markers (trimmed); throws when the markers are missing. */
export function generatedSection(doc: string, name: string): string {
  const start = new RegExp(`<!-- ${name}:start[^>]*-->\\n`).exec(doc);
  const end = doc.indexOf(`<!-- ${name}:end -->`);
  if (!start || end < start.index) throw new Error(`the document lost its ${name} markers`);
  return doc.slice(start.index + start[0].length, end).trim();
}

/** The rows of docs/operations.md's option table in `doc`, by key: [key, flag, environment, default, meaning]. */
export function optionTableRows(doc: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of generatedSection(doc, "options-table").split("\n").slice(2)) {
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
    rows.set((cells[0] ?? "").replaceAll("`", ""), cells);
  }
  return rows;
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
