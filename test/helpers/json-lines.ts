/**
 * The one JSON-lines reader of the suite: pino writes one JSON object per line on stdout.
 * `jsonLineSplitter` for a stream (chunks may split lines), `jsonLines`/`events` for text already collected.
 */
export type LogLine = Record<string, unknown> & { event?: string; level?: number; msg?: string };

function parseObject(text: string): LogLine | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as LogLine)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a stream of text into lines and hands each JSON-object line to `onLine` (other lines are ignored). */
export function jsonLineSplitter(onLine: (line: LogLine) => void): (chunk: string) => void {
  let partial = "";
  return (chunk) => {
    partial += chunk;
    let nl = partial.indexOf("\n");
    while (nl >= 0) {
      const line = parseObject(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
      nl = partial.indexOf("\n");
      if (line) onLine(line);
    }
  };
}

/**
 * Every line of `text` parsed as a JSON object. Blank lines are skipped; with `strict` (the default) any other
 * line that is not a JSON object throws (a log must be JSON lines only), otherwise it is ignored.
 */
export function jsonLines(text: string, { strict = true }: { strict?: boolean } = {}): LogLine[] {
  const out: LogLine[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    const line = parseObject(raw);
    if (line) out.push(line);
    else if (strict) throw new Error(`not a JSON log line: ${raw.slice(0, 200)}`);
  }
  return out;
}

/** The JSON lines of `text` whose `event` is `name` (non-JSON lines are ignored). */
export function events(text: string, name: string): LogLine[] {
  return jsonLines(text, { strict: false }).filter((l) => l.event === name);
}
