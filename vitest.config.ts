import { availableParallelism } from "node:os";
import { relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// CI (.ci/run) sets VITEST_JSON_REPORT so it can print "N passed, N failed" from vitest's JSON reporter.
const jsonReport = process.env.VITEST_JSON_REPORT;

// Every file shares its worker's module cache (isolate: false): loading ethers, zod, got and the sources once per
// worker instead of once per file saves about a third of the suite's CPU (docs/development.md, "Tests and checks").
// A test must therefore not rely on a module's first load.

// The files that take longest (fresh-clone CI, docs/development.md "The suite's time"), started first. Without its
// results cache (a fresh clone) vitest starts the largest files first, and a long file of few lines started late is
// the run's tail: switch/time-witness.process.test.ts (60 s) started at 196 s of a 257 s run and ended 27 s after
// every other file. A file split in parts is listed by each part.
// Two kinds alternate: the process tests, which wait on daemons' timers (time-witness: 5 s of CPU in its 33 s), and
// the property parts, which keep a core busy for all of theirs; so the workers running at once are mostly one of
// each, not three property parts on two cores. protocol/evm/client.test.ts computes too (it signs and then checks a
// block of 5,000 transactions, ~7 s of CPU): it follows a waiting file.
// The deploy tests' long work is in their beforeAll, which vitest's report leaves out of a file's time: install's
// npm pack and two installs (~45 s, mostly waiting on the registry) and build's build of a copy (~30 s, tsc). Both
// small files, a fresh clone started them near the end: install's npm ran in the last 45 s of a 193 s run.
const LONG_FIRST = [
  "test/switch/time-witness.process.test.ts",
  "test/deploy/install.test.ts",
  "test/switch/properties-part1.test.ts",
  "test/reliability/trust.test.ts",
  "test/switch/properties-part2.test.ts",
  "test/cli/cancel-weight.test.ts",
  "test/switch/properties-part3.test.ts",
  "test/reliability/date-process.test.ts",
  "test/switch/properties-part4.test.ts",
  "test/observability/prometheus.test.ts",
  "test/deploy/build.test.ts",
  "test/switch/properties-planted-a.test.ts",
  "test/app/coordination.test.ts",
  "test/switch/properties-planted-b.test.ts",
  "test/switch/properties-planted-c.test.ts",
  "test/reliability/engine-stall.test.ts",
  "test/protocol/evm/client.test.ts",
  "test/cli/escalation-rules.test.ts",
  "test/cli/escalation.test.ts",
  "test/cli/escalation-engine-back.test.ts",
  "test/cli/drill-stops.test.ts",
  "test/reliability/hostile.test.ts",
];

/** vitest's order (by its results cache, else by size), the LONG_FIRST files before all others in their order. */
class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.indexOf(relative(this.ctx.config.root, f.moduleId).split("\\").join("/"));
      return i < 0 ? LONG_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // Most files wait on sockets, child processes and timers rather than the CPU (alone, time-witness.process
    // 5 s of CPU in 33 s, trust 6 s in 43 s, date-process 5 s in 33 s, cancel-weight 4.5 s in 25 s): six workers
    // keep both cores of a small machine busy. With four, the suite's CPU down to ~276 s, whenever the four files
    // running were such process tests the cores idled: 174 s of wall, the cores 79 % busy; with six, 158 s, 95 %
    // busy (each worker loads the sources once: ~25 s of CPU more). vitest's default is cores - 1, one worker on 2
    // cores. `npx vitest run --maxWorkers=4` gives the former figure to compare (docs/development.md).
    maxWorkers: Math.max(6, availableParallelism()),
    include: ["test/**/*.test.ts"],
    isolate: false,
    sequence: { sequencer: LongFirst },
    // matrix-reporter prints the reliability matrix's count from the run's actual results.
    reporters: [
      "default",
      "./test/reliability/matrix-reporter.ts",
      ...(jsonReport ? [["json", { outputFile: jsonReport }] as ["json", { outputFile: string }]] : []),
    ],
  },
});
