/**
 * `doctor --help` (issue 43): its own flag first, then run's options, then the list of its checks and its exit codes
 * in their order of severity. The checks named are the catalogue's (src/app/doctor/catalogue.ts), which docs/cli.md's
 * table names too; the codes' order is the report's own (SEVERITY).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { DOCTOR_CHECKS } from "../../src/app/doctor/catalogue.js";
import { SEVERITY } from "../../src/app/doctor/index.js";
import { cli } from "../helpers/cli.js";
import { ROOT } from "../helpers/process.js";

describe("doctor --help", () => {
  test("default: --probe first, then run's options; every check and every exit code listed", async () => {
    const r = await cli(["doctor", "--help"]);
    const text = r.stdout;
    expect(text.indexOf("--probe")).toBeGreaterThan(0);
    expect(text.indexOf("--probe")).toBeLessThan(text.indexOf("--config"));
    const checks = text.slice(text.indexOf("Checks ("), text.indexOf("Exit codes ("));
    for (const { check } of DOCTOR_CHECKS) expect(checks).toMatch(new RegExp(`\\n  ${check} +\\S`));
    const codes = text
      .slice(text.indexOf("Exit codes ("))
      .split("\n")
      .map((l) => /^ {1,3}(\d+) {2}/.exec(l)?.[1])
      .filter((c): c is string => c !== undefined)
      .map(Number);
    expect(codes).toEqual([...SEVERITY, 0]);
  });

  test("behavior: docs/cli.md's table of checks names the same checks, in the same order", () => {
    const doc = readFileSync(path.join(ROOT, "docs/cli.md"), "utf8");
    const table = doc.slice(doc.indexOf("| check | what it asks | fails with |"));
    const named = [...table.slice(0, table.indexOf("\n\n")).matchAll(/^\| `([a-z-]+)` \|/gm)].map(
      (m) => m[1],
    );
    expect(named).toEqual(DOCTOR_CHECKS.map((c) => c.check));
  });
});
