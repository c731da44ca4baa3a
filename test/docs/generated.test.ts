import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { ROOT } from "../helpers/process.js";
import { GENERATED, generatedSection, matrixTable, paddedTable, updateGenerated } from "./generated.js";

describe("the docs' generated sections (npm run docs:generate)", () => {
  test("default: every generated section is current", () => {
    for (const { name, file, content } of GENERATED) {
      const doc = readFileSync(path.join(ROOT, file), "utf8");
      expect(generatedSection(doc, name), `${file}'s ${name} is stale: run \`npm run docs:generate\``).toBe(
        content(),
      );
      expect(updateGenerated(doc, [name])).toBe(doc);
    }
  });

  test("behavior: updateGenerated rewrites a stale section, keeps the text around it, and is idempotent", () => {
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
    const fresh = updateGenerated(stale, ["options-table", "reliability-matrix"]);
    expect(fresh).not.toContain("| old |");
    expect(fresh.startsWith("intro\n<!-- options-table:start (note) -->\n| key | flag |")).toBe(true);
    expect(generatedSection(fresh, "reliability-matrix")).toBe(matrixTable());
    expect(fresh).toContain("<!-- options-table:end -->\nmiddle\n<!-- reliability-matrix:start -->\n");
    expect(fresh.endsWith("<!-- reliability-matrix:end -->\noutro")).toBe(true);
    expect(updateGenerated(fresh, ["options-table", "reliability-matrix"])).toBe(fresh);
  });

  test("error: a missing marker throws, naming the section", () => {
    expect(() => updateGenerated("<!-- options-table:start -->\n<!-- options-table:end -->\n")).toThrow(
      "the document lost its reliability-matrix markers",
    );
  });

  test("behavior: tables are padded to the widest cell, separators at least three dashes", () => {
    expect(paddedTable(["#", "name"], [["10", "x"]])).toBe(
      ["| #   | name |", "| --- | ---- |", "| 10  | x    |"].join("\n"),
    );
  });
});
