/**
 * `npx hl-deadman` in a clone (docs/cli-contract.md): npm 11 installs the clone itself into its npx cache to link its
 * bin (libnpmexec: "self-execution of a local bin"), as a link whose `prepare` script it runs. That script builds
 * only when dist/ is stale (`scripts/build.mjs --if-stale`), so after `npm ci` (or `npm test`'s build) the call
 * rebuilds nothing: the build stamp `--version` prints is the same before and after, and nothing says "building".
 * A fresh npm cache of its own, so the test sees the first call, the slow one before.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, test } from "vitest";
import { assertBuilt, ROOT } from "../helpers/process.js";
import { tempDir } from "../reliability/harness.js";

describe("npx hl-deadman in a clone", () => {
  test("behavior: runs the clone's built CLI without rebuilding it into npm's cache", () => {
    assertBuilt();
    const cache = tempDir("hl-npx-cache-");
    try {
      const direct = spawnSync(process.execPath, ["dist/bin/hl-deadman.js", "--version"], {
        cwd: ROOT,
        encoding: "utf8",
      });
      expect(direct.status, direct.stderr).toBe(0);
      const viaNpx = spawnSync("npx", ["hl-deadman", "--version"], {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 120_000,
        env: { ...process.env, npm_config_cache: cache.dir, npm_config_yes: "true" },
      });
      expect(viaNpx.status, viaNpx.stderr).toBe(0);
      expect(viaNpx.stderr).not.toContain("building dist/");
      // the same build: its stamp (commit and build time) unchanged
      expect(viaNpx.stdout.trim()).toBe(direct.stdout.trim());
    } finally {
      cache.cleanup();
    }
  }, 150_000);
});
