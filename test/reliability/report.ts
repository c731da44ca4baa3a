/**
 * Counts proven rows of the fault matrix across the reliability test files. Vitest runs each file in its own
 * forked process, so each file appends its results to a small file keyed by the vitest main process (the
 * forks' parent); each file's afterAll prints its own rows, and the file that completes the set prints the
 * matrix total: "reliability: 33 cases, 33 proven". Running a single file prints that file's share.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { caseById, MATRIX } from "./matrix.js";

const dir = path.join(tmpdir(), "hl-deadman-reliability");
const resultsFile = path.join(dir, `run-${process.ppid}.jsonl`);

type Result = { id: string; file: string; proven: boolean };

/**
 * Call at the top of a reliability test file with its file name. Returns `proven(id)`, to call as the last
 * statement of a row's test (so it only runs when every assertion before it passed).
 */
export function reliabilityFile(file: string): { proven: (id: string) => void } {
  const rows = MATRIX.filter((r) => r.file === file);
  if (rows.length === 0) throw new Error(`no reliability rows for ${file}`);
  const proven = new Set<string>();
  afterAll(() => {
    mkdirSync(dir, { recursive: true });
    for (const r of rows) {
      const result: Result = { id: r.id, file, proven: proven.has(r.id) };
      appendFileSync(resultsFile, `${JSON.stringify(result)}\n`);
    }
    const lines = rows.map((r) => `  ${proven.has(r.id) ? "proven " : "FAILED "} ${r.id}: ${r.test}`);
    console.log(`reliability/${file}: ${rows.length} cases, ${proven.size} proven\n${lines.join("\n")}`);

    const all = readFileSync(resultsFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Result);
    const latest = new Map(all.map((r) => [r.id, r]));
    const files = new Set(MATRIX.map((r) => r.file));
    const filesDone = new Set(all.map((r) => r.file));
    const provenCount = [...latest.values()].filter((r) => r.proven).length;
    if (filesDone.size === files.size) {
      console.log(`reliability: ${MATRIX.length} cases, ${provenCount} proven`);
      rmSync(resultsFile, { force: true });
    } else {
      console.log(
        `reliability: ${latest.size} of ${MATRIX.length} cases run so far (${filesDone.size}/${files.size} files), ${provenCount} proven`,
      );
    }
  });
  return {
    proven(id: string) {
      const row = caseById(id);
      if (row.file !== file) throw new Error(`case ${id} belongs to ${row.file}, not ${file}`);
      proven.add(id);
    },
  };
}
