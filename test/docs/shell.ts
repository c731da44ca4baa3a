/**
 * The commands a Markdown document shows, read the way a reader copies them: fenced code blocks (with the section
 * they stand in), shell lines with their `\` continuations joined and comments dropped, words split as sh would for
 * plain quoting (a `<placeholder>` for the reader is one word), and the `hl-deadman` invocations among them (`hl-deadman …`, `npx hl-deadman …`,
 * `node …/hl-deadman.js …`). For test/docs/readme.test.ts and test/docs/recipe.test.ts.
 */

export type CodeBlock = { lang: string; text: string; section: string };

/** Every fenced code block of `md`, in order, with the `## ` section it stands in. */
export function codeBlocks(md: string): CodeBlock[] {
  const out: CodeBlock[] = [];
  let section = "";
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) section = heading[1]!;
    const fence = /^\s*```(\w*)\s*$/.exec(line);
    if (!fence) continue;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    out.push({ lang: fence[1] ?? "", text: body.join("\n"), section });
  }
  return out;
}

/** The text of the `## name` section (up to the next `## `). */
export function sectionOf(md: string, name: string): string {
  const start = md.indexOf(`\n## ${name}\n`);
  if (start < 0) throw new Error(`no section "## ${name}"`);
  const end = md.indexOf("\n## ", start + 4);
  return md.slice(start, end < 0 ? undefined : end);
}

/** Splits a line into words: blanks separate, '…' and "…" quote (no expansion), a `#` starting a word comments. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unbalanced ${c} in: ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === "<" && /[a-z]/i.test(line[i + 1] ?? "") && line.indexOf(">", i) > 0) {
      // a placeholder for the reader, <the demo key it printed>: one word
      const end = line.indexOf(">", i);
      word = (word ?? "") + line.slice(i, end + 1);
      i = end;
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "#" && word === null) break;
    else if (c === ";" || c === "|" || c === "&") {
      if (word !== null) words.push(word);
      word = null;
      const op = line[i + 1] === c ? c + c : c;
      words.push(op);
      i += op.length - 1;
    } else word = (word ?? "") + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/**
 * The shell commands of a block: continuations joined, each line's pipelines and lists split into commands; the
 * script of an `sh -c '…'` follows its command, as commands of its own.
 */
export function shellCommands(text: string): string[][] {
  const out: string[][] = [];
  const push = (command: string[]) => {
    if (command.length === 0) return;
    out.push(command);
    const c = command.indexOf("-c");
    const script = command[c + 1];
    if (c > 0 && /(^|\/)(ba)?sh$/.test(command[c - 1]!) && script !== undefined)
      out.push(...shellCommands(script));
  };
  for (const line of text.replace(/\\\n\s*/g, " ").split("\n")) {
    let current: string[] = [];
    for (const w of shellWords(line)) {
      if (["&&", "||", "|", ";", "&"].includes(w)) {
        push(current);
        current = [];
      } else current.push(w);
    }
    push(current);
  }
  return out;
}

/**
 * The arguments after the program when `words` runs hl-deadman (directly, through sudo, npx or node, after any
 * `NAME=value` assignments and node's flags), else null: `systemctl enable hl-deadman` does not run it.
 */
export function hlDeadmanArgs(words: readonly string[]): string[] | null {
  let i = 0;
  while (
    i < words.length &&
    (/^[A-Z_][A-Z0-9_]*=/.test(words[i]!) || ["sudo", "npx", "node"].includes(words[i]!))
  )
    i++;
  while (
    i < words.length &&
    words[i - 1] !== undefined &&
    words[i]!.startsWith("--") &&
    words.includes("node")
  )
    i++;
  const program = words[i];
  return program === "hl-deadman" || (program !== undefined && /(^|\/)hl-deadman\.js$/.test(program))
    ? words.slice(i + 1)
    : null;
}
