import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { ROOT } from "../helpers/process.js";
import { GENERATED, generatedSection, matrixTable, paddedTable, updateReadme } from "./readme.js";

describe("README.md's generated sections (npm run docs:readme)", () => {
  const doc = readFileSync(path.join(ROOT, "README.md"), "utf8");

  test("default: every generated section is current", () => {
    for (const { name, content } of GENERATED) {
      expect(generatedSection(doc, name), `README.md's ${name} is stale: run \`npm run docs:readme\``).toBe(
        content(),
      );
    }
    expect(updateReadme(doc)).toBe(doc);
  });

  test("behavior: updateReadme rewrites a stale section, keeps the text around it, and is idempotent", () => {
    const stale = [
      "intro",
      "<!-- options-table:start (note) -->",
      "| old |",
      "<!-- options-table:end -->",
      "middle",
      "<!-- reliability-matrix:start -->",
      "<!-- reliability-matrix:end -->",
      "outro",
    ].join("\n");
    const fresh = updateReadme(stale);
    expect(fresh).not.toContain("| old |");
    expect(fresh.startsWith("intro\n<!-- options-table:start (note) -->\n| key | flag |")).toBe(true);
    expect(generatedSection(fresh, "reliability-matrix")).toBe(matrixTable());
    expect(fresh).toContain("<!-- options-table:end -->\nmiddle\n<!-- reliability-matrix:start -->\n");
    expect(fresh.endsWith("<!-- reliability-matrix:end -->\noutro")).toBe(true);
    expect(updateReadme(fresh)).toBe(fresh);
  });

  test("error: a missing marker throws, naming the section", () => {
    expect(() => updateReadme("<!-- options-table:start -->\n<!-- options-table:end -->\n")).toThrow(
      "README.md lost its reliability-matrix markers",
    );
  });

  test("behavior: tables are padded to the widest cell, separators at least three dashes", () => {
    expect(paddedTable(["#", "name"], [["10", "x"]])).toBe(
      ["| #   | name |", "| --- | ---- |", "| 10  | x    |"].join("\n"),
    );
  });
});
