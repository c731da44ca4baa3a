/**
 * Every relative link in README.md and docs/*.md points at a file of the repository, and every `#anchor` on a
 * Markdown target names one of that file's headings (GitHub's slugs). The guide moved out of the README into
 * docs/; a renamed section or a missing doc must fail here, not in a reader's browser.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { anchors, brokenLinks, relativeLinks } from "./markdown.js";

const root = resolve(import.meta.dirname, "../..");

const files = [
  join(root, "README.md"),
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(root, "docs", f)),
];

describe("links in README.md and docs/*.md", () => {
  test("default: the link and anchor readers find what GitHub would", () => {
    expect(relativeLinks('a [x](docs/a.md#b-c) [y](https://e.org) `[z](no.md)` [t](b.md "T")')).toEqual([
      "docs/a.md#b-c",
      "b.md",
    ]);
    expect([...anchors("# T\n## Choosing --interval and --deadline\n## Keys: a `x` wallet\n## T\n")]).toEqual(
      ["t", "choosing---interval-and---deadline", "keys-a-x-wallet", "t-1"],
    );
  });

  test.each(files.map((f) => [relative(root, f), f]))(
    "behavior: every relative link in %s resolves to a file, and its anchor to a heading",
    (_name, file) => {
      expect(brokenLinks(file as string, root)).toEqual([]);
    },
  );

  test("behavior: the README links every doc in docs/", () => {
    const readme = relativeLinks(readFileSync(join(root, "README.md"), "utf8")).map((l) => l.split("#")[0]);
    for (const f of files.slice(1)) expect(readme, relative(root, f)).toContain(relative(root, f));
  });
});
