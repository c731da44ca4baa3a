/**
 * The fault matrix, the README's Reliability table and the test files agree: every row has a unique id and test name, its
 * test exists under exactly that name in its file and reports the row proven, and the README table lists it.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { ROOT } from "./harness.js";
import { MATRIX } from "./matrix.js";

const dir = path.join(ROOT, "test/reliability");

describe("reliability matrix", () => {
  test("default: ids and test names are unique, every issue-8 group has rows", () => {
    expect(new Set(MATRIX.map((r) => r.id)).size).toBe(MATRIX.length);
    expect(new Set(MATRIX.map((r) => r.test)).size).toBe(MATRIX.length);
    const groups = new Set(MATRIX.map((r) => r.group));
    for (const g of [
      "outage",
      "faults",
      "clock",
      "signals",
      "daily limit",
      "refusals",
      "state",
      "malformed",
      "bad input",
    ])
      expect(groups, g).toContain(g);
  });

  test("behavior: every row's test exists in its file and reports the row proven", () => {
    const files = new Set(readdirSync(dir));
    for (const row of MATRIX) {
      expect(files, row.file).toContain(row.file);
      const text = readFileSync(path.join(dir, row.file), "utf8");
      expect(text, `${row.file} names "${row.test}"`).toContain(`"${row.test}"`);
      expect(text, `${row.file} reports ${row.id}`).toContain(`proven("${row.id}")`);
      expect(text, `${row.file} registers itself`).toContain(`reliabilityFile("${row.file}")`);
    }
  });

  test("behavior: the README's Reliability section lists every row with its test", () => {
    const doc = readFileSync(path.join(ROOT, "docs/reliability.md"), "utf8");
    // Cells may be padded (the formatter aligns the table).
    const tableRows = doc.split("\n").filter((l) => /^\|\s*\d+\s*\|\s*`/.test(l));
    expect(tableRows).toHaveLength(MATRIX.length);
    MATRIX.forEach((row, i) => {
      const line = tableRows[i]!;
      const cells = line.split("|").map((c) => c.trim());
      expect(cells[1]).toBe(String(i + 1));
      expect(cells[2]).toBe(`\`${row.id}\``);
      expect(line).toContain(row.test);
      expect(line).toContain(row.file);
    });
    expect(doc).toContain(`reliability: ${MATRIX.length} cases, ${MATRIX.length} proven`);
  });
});
