/**
 * The fault matrix's outcome, read from the test results of a run (not from the README, not from a count kept
 * beside the tests): a row is proven when its test ran and passed.
 */
import type { ReliabilityCase } from "./matrix.js";

/** One test's outcome as the runner reports it; `file` is the file name under test/reliability/. */
export type TestOutcome = { file: string; name: string; state: "passed" | "failed" | "skipped" | "pending" };

export type MatrixSummary = {
  /** rows whose test passed */
  proven: string[];
  /** rows whose test ran and failed, or was skipped in a file that ran */
  notProven: Array<{ id: string; state: string }>;
  /** rows whose file ran but has no test of that name (the matrix and the file disagree) */
  missing: string[];
  /** rows whose file did not run (a partial run) */
  notRun: string[];
};

export function summarizeMatrix(
  rows: readonly ReliabilityCase[],
  outcomes: readonly TestOutcome[],
): MatrixSummary {
  const filesRun = new Set(outcomes.map((o) => o.file));
  const summary: MatrixSummary = { proven: [], notProven: [], missing: [], notRun: [] };
  for (const row of rows) {
    if (!filesRun.has(row.file)) {
      summary.notRun.push(row.id);
      continue;
    }
    const outcome = outcomes.find((o) => o.file === row.file && o.name === row.test);
    if (!outcome) summary.missing.push(row.id);
    else if (outcome.state === "passed") summary.proven.push(row.id);
    else summary.notProven.push({ id: row.id, state: outcome.state });
  }
  return summary;
}

/** The lines printed at the end of a run: the count, then every row that is not proven and why. */
export function formatMatrixSummary(rows: readonly ReliabilityCase[], s: MatrixSummary): string[] {
  const ran = rows.length - s.notRun.length;
  const head =
    s.notRun.length === 0
      ? `reliability: ${rows.length} cases, ${s.proven.length} proven`
      : `reliability: ${ran} of ${rows.length} cases run, ${s.proven.length} proven`;
  return [
    head,
    ...s.notProven.map((r) => `  NOT PROVEN ${r.id} (test ${r.state})`),
    ...s.missing.map((id) => `  MISSING ${id}: its file ran without a test of that name`),
  ];
}
