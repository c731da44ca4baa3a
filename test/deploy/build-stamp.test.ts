/**
 * `npm start` rebuilds dist/ only when an input is newer than dist/.build-stamp (scripts/build.mjs `staleReason`).
 * Every script the build runs or the bundle imports is an input: scripts/node-cron-utc.mjs and
 * scripts/replace-exactly.mjs were once left off the list, so an edit to them would have run an old bundle.
 */
import { statSync, utimesSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
// @ts-expect-error: a build script in plain JavaScript, without types
import { staleReason } from "../../scripts/build.mjs";

const root = resolve(import.meta.dirname, "../..");

describe("the build stamp", () => {
  test("behavior: dist/ built by `npm test` is current; a newer script the bundle imports makes it stale", () => {
    expect(staleReason()).toBeNull();
    for (const script of ["scripts/node-cron-utc.mjs", "scripts/replace-exactly.mjs", "scripts/bundle.mjs"]) {
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
