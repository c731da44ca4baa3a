/**
 * The layout's rules as a pure check over source texts (test/architecture.test.ts runs it on src/ and on planted
 * bugs). A file's room is its first folder under src/ (docs/development.md, "Source map").
 */
import { posix } from "node:path";

/**
 * The producers' rooms: they publish typed events on the bus and word nothing. Besides surface/ (no room of theirs
 * may import it, ROOMS), they import no logger: the log lines and the metrics are surface's subscribers.
 */
export const PRODUCERS: readonly string[] = Object.freeze([
  "switch",
  "watchers",
  "fleet-death",
  "orders",
  "replicas",
  "escalation",
  "drill",
]);

/** Every room the app wires together (all but the simulator, a program of its own): the producers on the base. */
const BELOW_APP: readonly string[] = ["core", "protocol", "config", "surface", ...PRODUCERS];

/** Each room and the rooms it may import from (its own always). */
export const ROOMS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  core: [],
  protocol: ["core"],
  config: ["core", "protocol"],
  surface: ["core", "protocol", "config"],
  // the switch publishes typed events on the bus (core/switch-events.ts): its wording and metrics are surface's
  switch: ["core", "protocol", "config"],
  // the watchers publish typed events on the bus: their wording and metrics are surface's subscribers, the rules
  // of the switch's they use are handed in by the app
  watchers: ["core", "protocol", "config"],
  // the passes of a simultaneous death (a pure machine and its gate): fed the app's events, commands out
  "fleet-death": ["core", "protocol", "config"],
  // the executors of the machines' orders (close, drill): I/O through the protocol's clients, the ports in core/
  orders: ["core", "protocol", "config"],
  // the replicas' election and membership in etcd: an input source beside the watchers, feeds out
  replicas: ["core", "protocol", "config"],
  // the switch's features, pure machines of their own (core/feature.ts): fed the switch's events, commands out
  escalation: ["core", "protocol", "config"],
  drill: ["core", "protocol", "config"],
  app: BELOW_APP,
  sim: ["core", "protocol"],
  cli: [...BELOW_APP, "app", "sim"],
  bin: ["cli"],
  // `hl-deadman/engine`, loaded into the trading engine: the protocol's pure module and the runtime's timers
  engine: ["core"],
  // the library's entry point (package.json "exports") re-exports from every room
  ".": [...BELOW_APP, "app", "sim", "cli"],
});

/** What a producer never imports: the logger (its wording would be its own). */
export const WORDING = "core/logger.ts";

/** Where the seams are allowed: the clock reads wall time, the runtime owns timers, programs own `process`. */
export const SEAMS = Object.freeze({
  wallTime: ["core/clock.ts"],
  timers: ["core/runtime.ts"],
  process: ["app/", "cli/", "bin/"],
  /**
   * a program of its own (its own clock and timers) and the status page's browser script
   */
  exempt: ["sim/", "surface/status-page/page.ts"],
});

export type Findings = {
  /** files outside any room */
  unknownRoom: string[];
  /** `a -> b` imports a room may not make */
  forbidden: string[];
  /** `a -> core/logger.ts`: a producer that would word its own lines */
  wording: string[];
  circles: string[][];
  wallTime: string[];
  timers: string[];
  process: string[];
  /** files over MAX_LINES lines (but the option table) */
  long: string[];
};

/**
 * A file's most lines: a longer one holds more than one concern (issue 42). The option table is the exception: one
 * row per option, kept in one place so that the flags, the environment, the file and the help agree.
 */
export const MAX_LINES = 600;
export const LONG_ALLOWED: readonly string[] = Object.freeze(["config/options.ts"]);

/** Source without comments (string contents kept: an import's specifier is a string). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

/**
 * Code without the contents of string and template literals (a message may name `process`); a template's
 * `${...}` expressions are code and stay.
 */
function withoutStrings(text: string): string {
  let out = "";
  const templates: number[] = []; // brace depth at which each open template's `${` began
  let depth = 0;
  let i = 0;
  const skipTemplateText = () => {
    while (i < text.length) {
      const c = text[i] as string;
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        out += '""';
        return;
      } else if (c === "$" && text[i + 1] === "{") {
        i += 2;
        templates.push(depth);
        depth++;
        out += "(";
        return;
      } else i++;
    }
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
      i++;
      out += '""';
    } else if (c === "`") {
      i++;
      skipTemplateText();
    } else if (c === "{") {
      depth++;
      out += c;
      i++;
    } else if (c === "}") {
      depth--;
      i++;
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        out += ")";
        skipTemplateText();
      } else out += c;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const roomOf = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : ".");

/** `files`: path under src/ → text. */
export function checkArchitecture(files: ReadonlyMap<string, string>): Findings {
  const findings: Findings = {
    unknownRoom: [],
    forbidden: [],
    wording: [],
    circles: [],
    wallTime: [],
    timers: [],
    process: [],
    long: [],
  };
  const edges = new Map<string, Set<string>>();
  for (const [file, text] of files) {
    const room = roomOf(file);
    const allowed = ROOMS[room];
    if (!allowed) findings.unknownRoom.push(file);
    if (text.split("\n").length > MAX_LINES && !LONG_ALLOWED.includes(file)) findings.long.push(file);
    const out = new Set<string>();
    const body = code(text);
    for (const m of body.matchAll(
      /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+["'](\.[^"']+)["']|\bimport\(\s*["'](\.[^"']+)["']\s*\)/g,
    )) {
      const spec = (m[1] ?? m[2]) as string;
      let target = posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, ".ts");
      if (!files.has(target) && files.has(target.replace(/\.ts$/, "/index.ts")))
        target = target.replace(/\.ts$/, "/index.ts");
      if (!files.has(target) || target === file) continue;
      out.add(target);
      const to = roomOf(target);
      if (to !== room && allowed && !allowed.includes(to)) findings.forbidden.push(`${file} -> ${target}`);
      if (target === WORDING && PRODUCERS.includes(room)) findings.wording.push(`${file} -> ${target}`);
    }
    edges.set(file, out);
    if (SEAMS.exempt.some((p) => file.startsWith(p))) continue;
    const bare = withoutStrings(body);
    if (/\bDate\.now\s*\(|\bnew Date\(\s*\)/.test(bare) && !SEAMS.wallTime.includes(file))
      findings.wallTime.push(file);
    if (/\b(?:set|clear)(?:Timeout|Interval|Immediate)\s*\(/.test(bare) && !SEAMS.timers.includes(file))
      findings.timers.push(file);
    if (/(?<![\w.])process\b/.test(bare) && !SEAMS.process.some((p) => file.startsWith(p)))
      findings.process.push(file);
  }
  // Tarjan's strongly connected components: a component of more than one file is a circle.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) findings.circles.push(component.sort());
    }
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return findings;
}
