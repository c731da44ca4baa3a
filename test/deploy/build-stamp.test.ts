/**
 * `npm start` rebuilds dist/ only when an input is newer than dist/.build-stamp (scripts/build.mjs `staleReason`).
 * Every file under scripts/ is an input: an edit to the build's own scripts must rebuild, and a script once left
 * off a list of inputs would have run an old bundle.
 */
import { statSync, utimesSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
// @ts-expect-error: a build script in plain JavaScript, without types
import { staleReason } from "../../scripts/build.mjs";

const root = resolve(import.meta.dirname, "../..");

describe("the build stamp", () => {
  test("behavior: dist/ built by `npm test` is current; a newer build script makes it stale", () => {
    expect(staleReason()).toBeNull();
    for (const script of ["scripts/build.mjs", "scripts/bundle.mjs"]) {
      const file = join(root, script);
      const { atime, mtime } = statSync(file);
      try {
        const later = new Date(Date.now() + 60_000);
        utimesSync(file, later, later);
        expect(staleReason(), script).toBe("scripts/ changed");
      } finally {
        utimesSync(file, atime, mtime);
      }
    }
    expect(staleReason()).toBeNull();
  });
});
