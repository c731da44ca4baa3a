/**
 * The fault matrix, docs/reliability.md's table and the test files agree: every row has a unique id and test name, its
 * test exists under exactly that name in its file and reports the row proven, and docs/reliability.md's table is the one
 * generated from the matrix. The count printed at the end of a run is computed from the tests' actual results
 * (matrix-results.ts, used by matrix-reporter.ts), pinned here on made-up outcomes.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { generatedSection, matrixTable } from "../docs/generated.js";
import { ROOT } from "./harness.js";
import { MATRIX } from "./matrix.js";
import { formatMatrixSummary, summarizeMatrix, type TestOutcome } from "./matrix-results.js";

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

  test("behavior: docs/reliability.md's table is the one generated from MATRIX (`npm run docs:generate`)", () => {
    const doc = readFileSync(path.join(ROOT, "docs/reliability.md"), "utf8");
    const table = generatedSection(doc, "reliability-matrix");
    expect(table, "docs/reliability.md's matrix is stale: run `npm run docs:generate`").toBe(matrixTable());
    const rows = table.split("\n").slice(2);
    expect(rows).toHaveLength(MATRIX.length);
    MATRIX.forEach((row, i) => {
      const cells = rows[i]!.split("|").map((c) => c.trim());
      expect(cells.slice(1, 3)).toEqual([String(i + 1), `\`${row.id}\``]);
      expect(rows[i]).toContain(`${row.file}: “${row.test}”`);
    });
  });
});

describe("the matrix's count comes from the run's results (matrix-reporter.ts)", () => {
  const rows = MATRIX.filter((r) => r.file === "signals.test.ts");
  const passed = (file: string, name: string): TestOutcome => ({ file, name, state: "passed" });

  test("default: every row's test passed → all proven", () => {
    const outcomes = MATRIX.map((r) => passed(r.file, r.test));
    const s = summarizeMatrix(MATRIX, outcomes);
    expect(s).toEqual({ proven: MATRIX.map((r) => r.id), notProven: [], missing: [], notRun: [] });
    expect(formatMatrixSummary(MATRIX, s)).toEqual([
      `reliability: ${MATRIX.length} cases, ${MATRIX.length} proven`,
    ]);
  });

  test("behavior: a failed or skipped test is not proven, and is named", () => {
    const [first, second, ...rest] = rows;
    const outcomes: TestOutcome[] = [
      { file: first!.file, name: first!.test, state: "failed" },
      { file: second!.file, name: second!.test, state: "skipped" },
      ...rest.map((r) => passed(r.file, r.test)),
    ];
    const s = summarizeMatrix(rows, outcomes);
    expect(s.proven).toEqual(rest.map((r) => r.id));
    expect(s.notProven).toEqual([
      { id: first!.id, state: "failed" },
      { id: second!.id, state: "skipped" },
    ]);
    expect(formatMatrixSummary(rows, s)).toEqual([
      `reliability: ${rows.length} cases, ${rest.length} proven`,
      `  NOT PROVEN ${first!.id} (test failed)`,
      `  NOT PROVEN ${second!.id} (test skipped)`,
    ]);
  });

  test("behavior: a renamed test is missing; a file that did not run is counted apart", () => {
    const [renamed, ...rest] = rows;
    const outcomes = [
      passed(renamed!.file, `${renamed!.test} (renamed)`),
      ...rest.map((r) => passed(r.file, r.test)),
    ];
    const all = summarizeMatrix(MATRIX, outcomes);
    expect(all.missing).toEqual([renamed!.id]);
    expect(all.proven).toEqual(rest.map((r) => r.id));
    expect(all.notRun).toHaveLength(MATRIX.length - rows.length);
    expect(formatMatrixSummary(MATRIX, all)[0]).toBe(
      `reliability: ${rows.length} of ${MATRIX.length} cases run, ${rest.length} proven`,
    );
    expect(formatMatrixSummary(MATRIX, all)).toContain(
      `  MISSING ${renamed!.id}: its file ran without a test of that name`,
    );
  });
});
