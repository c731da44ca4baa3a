/**
 * Each reliability test file calls `reliabilityFile(name)` and, as the last statement of a row's test,
 * `proven(id)`: it checks the id belongs to that file, and the file's afterAll prints its rows. The matrix's
 * total ("reliability: 33 cases, 33 proven") is printed by matrix-reporter.ts from the run's actual test results
 * (a row is proven when its test passed), not from a count kept here.
 */
import { afterAll } from "vitest";
import { caseById, MATRIX } from "./matrix.js";

/**
 * Call at the top of a reliability test file with its file name. Returns `proven(id)`, to call as the last
 * statement of a row's test (so it only runs when every assertion before it passed).
 */
export function reliabilityFile(file: string): { proven: (id: string) => void } {
  const rows = MATRIX.filter((r) => r.file === file);
  if (rows.length === 0) throw new Error(`no reliability rows for ${file}`);
  const proven = new Set<string>();
  afterAll(() => {
    const lines = rows.map((r) => `  ${proven.has(r.id) ? "proven " : "FAILED "} ${r.id}: ${r.test}`);
    console.log(`reliability/${file}: ${rows.length} cases, ${proven.size} proven\n${lines.join("\n")}`);
  });
  return {
    proven(id: string) {
      const row = caseById(id);
      if (row.file !== file) throw new Error(`case ${id} belongs to ${row.file}, not ${file}`);
      proven.add(id);
    },
  };
}
