/**
 * Readers for the deployment files the tests check.
 * - Dockerfile: `dockerfile-ast` (the parser behind the Dockerfile language server: continuation lines, comments
 *   inside them, flags, ENV's two forms, parser directives, heredocs), reduced to stages of instructions.
 * - YAML (deploy/kubernetes): the `yaml` package, every `---` document, strict (duplicate keys and syntax
 *   errors throw).
 * - systemd unit files: no maintained npm parser keeps systemd's semantics (repeated keys that accumulate,
 *   backslash continuation, `;` comments; INI parsers collapse repeated keys), so a small one lives here, with its
 *   own tests (parsers.test.ts) beside `systemd-analyze verify`, which checks the same files for real.
 */
import { DockerfileParser, type Instruction } from "dockerfile-ast";
import { parseAllDocuments } from "yaml";

// ---------------------------------------------------------------- systemd units

/** section → key → every value assigned, in order (systemd keys may repeat; an empty value resets a list). */
export type UnitFile = Map<string, Map<string, string[]>>;

export function parseUnit(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] ?? "").trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    while (line.endsWith("\\") && i + 1 < lines.length) {
      line = `${line.slice(0, -1)} ${(lines[++i] ?? "").trim()}`;
    }
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = unit.get(header[1] as string) ?? new Map();
      unit.set(header[1] as string, section);
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0 || !section) throw new Error(`not a unit-file line: ${line}`);
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    section.set(key, [...(section.get(key) ?? []), value]);
  }
  return unit;
}

/** The last value of a key (what systemd uses for single-valued settings), or undefined. */
export function unitValue(unit: UnitFile, section: string, key: string): string | undefined {
  return unit.get(section)?.get(key)?.at(-1);
}

const TIMESPAN_UNITS: Record<string, number> = {
  us: 0.001,
  usec: 0.001,
  ms: 1,
  msec: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
};

/** A systemd time span ("20s", "1min 30s", "1min30s", "500ms", a plain number of seconds) in milliseconds. */
export function parseTimespan(text: string): number {
  const trimmed = text.trim();
  if (trimmed === "") throw new Error("not a time span: empty");
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  let total = 0;
  let rest = trimmed;
  while (rest !== "") {
    const m = /^(\d+(?:\.\d+)?)\s*([a-z]+)\s*/.exec(rest);
    if (!m) throw new Error(`not a time span: ${text}`);
    const factor = TIMESPAN_UNITS[m[2] as string];
    if (factor === undefined) throw new Error(`unknown time unit "${m[2]}" in ${text}`);
    total += Number(m[1]) * factor;
    rest = rest.slice(m[0].length);
  }
  return total;
}

// ---------------------------------------------------------------- Dockerfile

export type DockerInstruction = {
  /** upper-case keyword */
  op: string;
  /** the arguments, one space apart; flags (`--from=…`) and comment lines inside continuations left out */
  args: string;
  /** the instruction's flags: `COPY --from=build` → from → build */
  flags: Map<string, string>;
  /** 1-based line of the keyword */
  line: number;
  /** ENV's (and ARG's) name/value pairs, quotes removed */
  properties: Array<[string, string]>;
};
export type DockerStage = { from: string; name?: string; instructions: DockerInstruction[] };
export type Dockerfile = { args: Map<string, string>; stages: DockerStage[] };

type WithFlags = { getFlags(): Array<{ getName(): string; getValue(): string | null }> };
type WithProperties = { getProperties(): Array<{ getName(): string; getValue(): string | null }> };

function toInstruction(i: Instruction): DockerInstruction {
  const flags = new Map<string, string>();
  if ("getFlags" in i)
    for (const f of (i as unknown as WithFlags).getFlags()) flags.set(f.getName(), f.getValue() ?? "");
  const properties: Array<[string, string]> =
    "getProperties" in i
      ? (i as unknown as WithProperties).getProperties().map((p) => [p.getName(), p.getValue() ?? ""])
      : [];
  return {
    op: i.getKeyword().toUpperCase(),
    // The arguments as Docker splits them, one space apart: continuation lines joined, comment lines inside
    // them dropped (getArgumentsContent would keep those).
    args: i
      .getArguments()
      .map((a) => a.getValue())
      .join(" "),
    flags,
    line: i.getRange().start.line + 1,
    properties,
  };
}

export function parseDockerfile(text: string): Dockerfile {
  const parsed = DockerfileParser.parse(text);
  const args = new Map<string, string>();
  const stages: DockerStage[] = [];
  for (const raw of parsed.getInstructions()) {
    const ins = toInstruction(raw);
    if (ins.op === "FROM") {
      const [image = "", as, name] = ins.args.split(/\s+/);
      if (image === "" || (as !== undefined && (as.toUpperCase() !== "AS" || name === undefined)))
        throw new Error(`bad FROM (line ${ins.line}): ${ins.args}`);
      const from = image.replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_, a?: string, b?: string) => args.get(a ?? b ?? "") ?? "",
      );
      stages.push({ from, ...(name ? { name } : {}), instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) {
      if (ins.op !== "ARG") throw new Error(`instruction before FROM (line ${ins.line}): ${ins.op}`);
      for (const [k, v] of ins.properties) args.set(k, v);
      continue;
    }
    stage.instructions.push(ins);
  }
  return { args, stages };
}

/** All instructions `op` of a stage. */
export function instructions(stage: DockerStage, op: string): DockerInstruction[] {
  return stage.instructions.filter((i) => i.op === op);
}

/** ENV of a stage (both `ENV A=1 B=2` and the legacy `ENV A 1`), later assignments winning. */
export function dockerEnv(stage: DockerStage): Map<string, string> {
  return new Map(instructions(stage, "ENV").flatMap((i) => i.properties));
}

/** An exec-form (JSON array of strings) argument list, or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.trimStart().startsWith("[")) return undefined;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === "string")) {
    throw new Error(`not an exec-form array: ${args}`);
  }
  return parsed;
}

// ---------------------------------------------------------------- YAML

export type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

/** Every `---` document of a YAML file as plain values; the first error of any document throws. */
export function parseYamlDocuments(text: string): Yaml[] {
  return parseAllDocuments(text).map((doc, n) => {
    const problem = doc.errors[0];
    if (problem) throw new Error(`YAML document ${n + 1}: ${problem.message}`);
    return doc.toJS() as Yaml;
  });
}
