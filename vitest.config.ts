import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// CI (.ci/run) sets VITEST_JSON_REPORT so it can print "N passed, N failed" from vitest's JSON reporter.
const jsonReport = process.env.VITEST_JSON_REPORT;

// Every file shares its worker's module cache (isolate: false): loading ethers, zod, got and the sources once per
// worker instead of once per file saves about a third of the suite's CPU (docs/development.md, "Tests and checks").
// A test must therefore not rely on a module's first load.

export default defineConfig({
  test: {
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // Most files wait on sockets, child processes and timers rather than the CPU: one more worker than cores keeps
    // both cores of a small machine busy (vitest's default is cores - 1, i.e. one worker on 2 cores).
    maxWorkers: Math.max(3, availableParallelism()),
    include: ["test/**/*.test.ts"],
    isolate: false,
    // matrix-reporter prints the reliability matrix's count from the run's actual results.
    reporters: [
      "default",
      "./test/reliability/matrix-reporter.ts",
      ...(jsonReport ? [["json", { outputFile: jsonReport }] as ["json", { outputFile: string }]] : []),
    ],
  },
});
