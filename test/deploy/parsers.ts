/**
 * Tiny readers for the deployment files, so the tests need no new dependency: systemd unit files (INI with
 * repeated keys), Dockerfiles (instructions grouped by stage) and the YAML subset deploy/ uses (block mappings and
 * sequences, `|` block scalars, flow sequences of scalars, `---` documents, comments).
 */

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
      section = new Map();
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

/** A systemd time span ("20s", "1min 30s", "500ms", "2", plain seconds) in milliseconds. */
export function parseTimespan(text: string): number {
  const units: Record<string, number> = {
    us: 0.001,
    ms: 1,
    s: 1000,
    sec: 1000,
    m: 60_000,
    min: 60_000,
    h: 3_600_000,
    hr: 3_600_000,
  };
  let total = 0;
  const parts = text.trim().split(/\s+/);
  for (const part of parts) {
    const m = /^(\d+(?:\.\d+)?)([a-z]*)$/.exec(part);
    if (!m) throw new Error(`not a time span: ${text}`);
    const factor = m[2] === "" ? 1000 : units[m[2] as string];
    if (factor === undefined) throw new Error(`unknown time unit in ${text}`);
    total += Number(m[1]) * factor;
  }
  return total;
}

// ---------------------------------------------------------------- Dockerfile

export type DockerInstruction = { op: string; args: string; line: number };
export type DockerStage = { from: string; name?: string; instructions: DockerInstruction[] };
export type Dockerfile = { args: Map<string, string>; stages: DockerStage[] };

export function parseDockerfile(text: string): Dockerfile {
  const args = new Map<string, string>();
  const stages: DockerStage[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = (lines[i] ?? "").trim();
    if (line === "" || line.startsWith("#")) continue;
    while (line.endsWith("\\") && i + 1 < lines.length) {
      const next = (lines[++i] ?? "").trim();
      if (next.startsWith("#")) continue;
      line = `${line.slice(0, -1).trimEnd()} ${next}`;
    }
    const m = /^([A-Za-z]+)\s+([\s\S]*)$/.exec(line);
    if (!m) throw new Error(`not a Dockerfile instruction (line ${start}): ${line}`);
    const op = (m[1] as string).toUpperCase();
    const rest = (m[2] as string).trim();
    if (op === "FROM") {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!from) throw new Error(`bad FROM: ${rest}`);
      const image = (from[1] as string).replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? "");
      stages.push({ from: image, ...(from[2] ? { name: from[2] } : {}), instructions: [] });
      continue;
    }
    if (op === "ARG" && stages.length === 0) {
      const [name, value] = rest.split("=", 2);
      args.set((name as string).trim(), (value ?? "").trim());
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`instruction before FROM (line ${start}): ${op}`);
    stage.instructions.push({ op, args: rest, line: start });
  }
  return { args, stages };
}

/** All instructions `op` of a stage. */
export function instructions(stage: DockerStage, op: string): DockerInstruction[] {
  return stage.instructions.filter((i) => i.op === op);
}

/** ENV of a stage, both `ENV A=1 B=2` and the legacy `ENV A 1` form; quotes removed. */
export function dockerEnv(stage: DockerStage): Map<string, string> {
  const env = new Map<string, string>();
  for (const { args } of instructions(stage, "ENV")) {
    if (!args.includes("=")) {
      const [k, ...v] = args.split(/\s+/);
      env.set(k as string, v.join(" "));
      continue;
    }
    for (const m of args.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
      env.set(m[1] as string, (m[2] as string).replace(/^"(.*)"$/, "$1"));
    }
  }
  return env;
}

/** An exec-form (JSON array) argument list, or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith("[")) return undefined;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === "string")) {
    throw new Error(`not an exec-form array: ${args}`);
  }
  return parsed;
}

// ---------------------------------------------------------------- YAML (subset)

export type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

type Line = { indent: number; text: string; raw: string; no: number };

/** Parses every `---`-separated document of the YAML subset used in deploy/. Throws on anything else. */
export function parseYamlDocuments(text: string): Yaml[] {
  const docs: Line[][] = [[]];
  text.split("\n").forEach((raw, i) => {
    if (/^---\s*$/.test(raw)) {
      docs.push([]);
      return;
    }
    const text = stripComment(raw).trimEnd();
    const indent = raw.length - raw.trimStart().length;
    docs.at(-1)?.push({ indent, text: text.trim(), raw, no: i + 1 });
  });
  return docs
    .filter((lines) => lines.some((l) => l.text !== ""))
    .map((lines) => {
      const state = { lines, pos: 0 };
      skipBlank(state);
      const first = state.lines[state.pos] as Line;
      const value = parseBlock(state, first.indent);
      skipBlank(state);
      if (state.pos < state.lines.length) {
        const l = state.lines[state.pos] as Line;
        throw new Error(`unexpected YAML at line ${l.no}: ${l.raw}`);
      }
      return value;
    });
}

type State = { lines: Line[]; pos: number };

function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === "#" && (i === 0 || /\s/.test(line[i - 1] as string))) {
      return line.slice(0, i);
    }
  }
  return line;
}

function skipBlank(state: State): void {
  while (state.pos < state.lines.length && (state.lines[state.pos] as Line).text === "") state.pos++;
}

function parseBlock(state: State, indent: number): Yaml {
  skipBlank(state);
  const line = state.lines[state.pos];
  if (!line || line.indent < indent) return null;
  return line.text.startsWith("- ") || line.text === "-"
    ? parseSeq(state, line.indent)
    : parseMap(state, line.indent);
}

function parseSeq(state: State, indent: number): Yaml[] {
  const out: Yaml[] = [];
  for (;;) {
    skipBlank(state);
    const line = state.lines[state.pos];
    if (!line || line.indent !== indent || !(line.text.startsWith("- ") || line.text === "-")) return out;
    const rest = line.text.slice(1).trim();
    if (rest === "") {
      state.pos++;
      out.push(parseBlock(state, indent + 1));
    } else if (/^[^"'[{][^:]*:(\s|$)/.test(rest)) {
      // "- key: value" opens a mapping whose keys sit at the column after "- ".
      const afterDash = line.text.slice(1);
      const column = line.indent + 1 + (afterDash.length - afterDash.trimStart().length);
      state.lines[state.pos] = { ...line, indent: column, text: rest };
      out.push(parseMap(state, column));
    } else {
      state.pos++;
      out.push(scalar(rest, line));
    }
  }
}

function parseMap(state: State, indent: number): { [key: string]: Yaml } {
  const out: { [key: string]: Yaml } = {};
  for (;;) {
    skipBlank(state);
    const line = state.lines[state.pos];
    if (!line || line.indent !== indent || line.text.startsWith("- ")) return out;
    const m = /^("[^"]*"|'[^']*'|[^:]+?):(?:\s+(.*))?$/.exec(line.text);
    if (!m) throw new Error(`unexpected YAML at line ${line.no}: ${line.raw}`);
    const key = (m[1] as string).replace(/^["'](.*)["']$/, "$1");
    const rest = (m[2] ?? "").trim();
    state.pos++;
    if (rest === "|" || rest === "|-" || rest === ">") {
      out[key] = blockScalar(state, indent, rest);
    } else if (rest === "") {
      skipBlank(state);
      const next = state.lines[state.pos];
      const nested = next && (next.indent > indent || (next.indent === indent && next.text.startsWith("- ")));
      out[key] = nested ? parseBlock(state, next.indent) : null;
    } else {
      out[key] = scalar(rest, line);
    }
  }
}

function blockScalar(state: State, parentIndent: number, style: string): string {
  const body: string[] = [];
  let indent: number | undefined;
  while (state.pos < state.lines.length) {
    const line = state.lines[state.pos] as Line;
    if (line.raw.trim() !== "") {
      if (line.indent <= parentIndent) break;
      indent ??= line.indent;
    }
    body.push(line.raw.slice(indent ?? 0));
    state.pos++;
  }
  while (body.length > 0 && (body.at(-1) as string).trim() === "") body.pop();
  const text = style === ">" ? body.join(" ") : body.join("\n");
  return style === "|-" ? text : `${text}\n`;
}

function scalar(text: string, line: Line): Yaml {
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (text.startsWith("'")) return text.slice(1, -1).replaceAll("''", "'");
  if (text.startsWith("[")) {
    const inner = text.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map((part) => scalar(part.trim(), line));
  }
  if (text.startsWith("{")) throw new Error(`flow mappings are not supported (line ${line.no})`);
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null" || text === "~") return null;
  if (/^-?\d+(\.\d+)?$/.test(text) && !/^0\d/.test(text)) return Number(text);
  return text;
}
