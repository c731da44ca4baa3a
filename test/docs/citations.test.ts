import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCRIPT = path.join(ROOT, "scripts/check-citations.mjs");

function check(root: string, ...flags: string[]) {
  const r = spawnSync(process.execPath, [SCRIPT, root, ...flags], { encoding: "utf8" });
  return { status: r.status, lines: r.stdout.split("\n").filter(Boolean), stderr: r.stderr };
}

describe("citations point inside the repository (docs/exchange-behaviour.md, the operator docs)", () => {
  test("no line in src/, test/ or docs/ cites a document outside the repository", () => {
    const r = check(ROOT);
    expect(r.lines).toEqual([]);
    expect(r.status).toBe(0);
  });

  describe("the check finds each way an outside document has been cited", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-cite-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    // Built from pieces so that this file itself does not match.
    const facts = ["api", "facts"].join("-");
    const bad = [
      `/** The 5 s minimum (${facts} §A3). */`,
      "// see the research in ../" + "shared/research",
      `// budget (${"land"}scape §2 table)`,
      `// no useBigInt64, see ${"sign"}ing.md §5.3`,
      `/** Exit codes (${"cli"}-contract.md, "Exit codes") */`,
      `/** (service ${"spec"} §2.5) */`,
      `// one schema per type (${"sty"}le §4)`,
      // the operator contract is the team's shared document: code cites the repository's operator docs
      `/** Exit codes (docs/${"cli"}-contract.md, "Exit codes") */`,
    ];
    const good = [
      "/** The 5 s minimum (docs/exchange-behaviour.md §3). */",
      '/** Exit codes (docs/cli.md, "Exit codes") */',
    ];
    // tests check the program against the contract and may name it
    const goodInTests = [...good, '// the contract\'s shape (docs/cli-contract.md, "Exit codes")'];
    mkdirSync(path.join(dir, "src"), { recursive: true });
    mkdirSync(path.join(dir, "test"), { recursive: true });
    writeFileSync(path.join(dir, "src/a.ts"), [...good, ...bad].join("\n"));
    writeFileSync(path.join(dir, "test/b.test.ts"), goodInTests.join("\n"));
    writeFileSync(path.join(dir, "README.md"), bad[1] ?? "");

    test("lists every offending line with file and line number, and fails", () => {
      const r = check(dir);
      expect(r.status).toBe(1);
      expect(r.lines.map((l) => l.split(":").slice(0, 2).join(":"))).toEqual(
        bad.map((_, i) => `src/a.ts:${good.length + i + 1}`),
      );
      expect(r.stderr).toContain(`${bad.length} line(s) cite documents outside the repository`);
    });

    test("README.md is checked only with --readme", () => {
      expect(check(dir).lines.some((l) => l.startsWith("README.md"))).toBe(false);
      expect(check(dir, "--readme").lines.filter((l) => l.startsWith("README.md:1:"))).toHaveLength(1);
    });
  });
});
