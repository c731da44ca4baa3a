import { defineConfig } from "vitest/config";

// CI (.ci/run) sets VITEST_JSON_REPORT so it can print "N passed, N failed" from vitest's JSON reporter.
const jsonReport = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // matrix-reporter prints the reliability matrix's count from the run's actual results.
    reporters: [
      "default",
      "./test/reliability/matrix-reporter.ts",
      ...(jsonReport ? [["json", { outputFile: jsonReport }] as ["json", { outputFile: string }]] : []),
    ],
  },
});
