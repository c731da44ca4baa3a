/**
 * `npm ci` names no install script it has not been told about (issue 43, item 10): npm warns of each dependency
 * with an install script that package.json's `allowScripts` does not answer ("not yet covered by allowScripts").
 * Every package the lock file marks `hasInstallScript` is answered, allowed or denied, and nothing else is.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { ROOT } from "../helpers/process.js";

const read = (f: string) => JSON.parse(readFileSync(path.join(ROOT, f), "utf8")) as Record<string, unknown>;

describe("allowScripts", () => {
  test("default: every dependency with an install script is answered, and only those", () => {
    const lock = read("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript === true)
      .map(([k]) => k.slice(k.lastIndexOf("node_modules/") + "node_modules/".length))
      .sort();
    const answered = Object.keys(read("package.json").allowScripts as Record<string, boolean>).sort();
    expect(withScripts.length).toBeGreaterThan(0);
    expect(answered).toEqual([...new Set(withScripts)]);
  });
});
