/**
 * A vitest reporter (vitest.config.ts): at the end of every run that included test/reliability/ files, prints the
 * fault matrix's count from the tests' actual results, e.g. "reliability: 33 cases, 33 proven".
 */
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";
import { MATRIX } from "./matrix.js";
import { formatMatrixSummary, summarizeMatrix, type TestOutcome } from "./matrix-results.js";

const DIR = `${path.sep}test${path.sep}reliability${path.sep}`;

export default class MatrixReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const outcomes: TestOutcome[] = [];
    for (const module of testModules) {
      if (!module.moduleId.includes(DIR)) continue;
      const file = path.basename(module.moduleId);
      for (const test of module.children.allTests())
        outcomes.push({ file, name: test.name, state: test.result().state });
    }
    const summary = summarizeMatrix(MATRIX, outcomes);
    if (summary.notRun.length === MATRIX.length) return; // no file of the matrix ran
    const lines = formatMatrixSummary(MATRIX, summary);
    process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}
