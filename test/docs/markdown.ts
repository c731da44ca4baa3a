/** Reading Markdown links and GitHub heading anchors, for the link checks (test/docs, test/deploy/install). */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

/** Markdown without fenced code blocks and inline code spans (links there are examples, not links). */
export function prose(text: string): string {
  return text.replace(/^\s*```[\s\S]*?^\s*```\s*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats suffixed -1, -2... */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const noCode = text.replace(/^\s*```[\s\S]*?^\s*```\s*$/gm, "");
  for (const m of noCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (m[1] as string)
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of a Markdown text: [text](target) and [text](target "title"). */
export function relativeLinks(text: string): string[] {
  const links: string[] = [];
  for (const m of prose(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, file:
    links.push(target);
  }
  return links;
}

/** Problems with the links of one Markdown file: missing targets and unknown anchors; names relative to root. */
export function brokenLinks(file: string, root: string): string[] {
  const text = readFileSync(file, "utf8");
  const problems: string[] = [];
  for (const link of relativeLinks(text)) {
    const [path, anchor] = link.split("#", 2) as [string, string | undefined];
    const target = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
    const name = `${relative(root, file)}: ${link}`;
    if (!existsSync(target)) {
      problems.push(`${name} (no such file: ${relative(root, target)})`);
      continue;
    }
    if (anchor && statSync(target).isFile() && target.endsWith(".md")) {
      if (!anchors(readFileSync(target, "utf8")).has(anchor))
        problems.push(`${name} (no heading #${anchor})`);
    }
  }
  return problems;
}
