import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, test } from "vitest";
import { VERSION } from "../../src/version.js";

// dist/bin/hl-deadman.js (scripts/bin-loader.js) runs the bundle dist/bin/hl-deadman.cjs with V8's code cache
// dist/bin/hl-deadman.cjs.cache (or .<hash of node's flags>.cache), whose first 32 bytes are the SHA-256 of the
// bundle it was made from.
const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const bin = join(root, "dist/bin");

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

/** A copy of dist/bin/ (with the project's node_modules beside it for pino) that a test may tamper with. */
function copyOfBin(): string {
  dir = mkdtempSync(join(tmpdir(), "hl-deadman-cache-"));
  cpSync(bin, join(dir, "bin"), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return join(dir, "bin");
}

const version = async (binDir: string) =>
  (
    await run(process.execPath, [join(binDir, "hl-deadman.js"), "--version"], { timeout: 15_000 })
  ).stdout.trim();

describe("the bundle's code cache", () => {
  test("behavior: the build made a cache from the bundle it sits beside, without flags and with the units' flags", () => {
    const bundle = readFileSync(join(bin, "hl-deadman.cjs"));
    const digest = createHash("sha256").update(bundle).digest("hex");
    // the flags node gets from the shipped units: a cache made under other flags would be rejected by V8
    for (const unit of [
      "systemd/hl-deadman.service",
      "systemd/hl-deadman@.service",
      "deploy/kubernetes/sidecar.yaml",
    ])
      expect(readFileSync(join(root, unit), "utf8").match(/--max-old-space-size=\d+/g)).toEqual([
        "--max-old-space-size=160",
      ]);
    const withFlags = createHash("sha256").update("--max-old-space-size=160").digest("hex").slice(0, 12);
    const caches = readdirSync(bin).filter((f) => f.endsWith(".cache"));
    expect(caches.sort()).toEqual(["hl-deadman.cjs.cache", `hl-deadman.cjs.${withFlags}.cache`].sort());
    for (const name of caches) {
      const cache = readFileSync(join(bin, name));
      expect(cache.length).toBeGreaterThan(100_000);
      expect(cache.subarray(0, 32).toString("hex")).toBe(digest);
    }
  });

  test("behavior: a cache made from another bundle of the same length is not used (its old code never runs)", async () => {
    // V8 checks cached data against the source's length only: without the loader's digest, the cache's
    // compiled code for the old bundle would run here and print the old version.
    const binDir = copyOfBin();
    const bundlePath = join(binDir, "hl-deadman.cjs");
    const before = readFileSync(bundlePath, "latin1");
    const other = VERSION.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
    expect(other).toHaveLength(VERSION.length);
    const after = before.replace(JSON.stringify(VERSION), JSON.stringify(other));
    expect(after).not.toBe(before);
    expect(after).toHaveLength(before.length);
    writeFileSync(bundlePath, after, "latin1");
    expect(await version(binDir)).toBe(other);
  });

  test("behavior: the CLI runs without its cache and with a damaged one", async () => {
    const binDir = copyOfBin();
    const cachePath = join(binDir, "hl-deadman.cjs.cache");
    const cache = readFileSync(cachePath);
    expect(await version(binDir)).toBe(VERSION);
    // the right digest, then bytes that are not V8's: V8 rejects them and the bundle is compiled as usual
    writeFileSync(cachePath, Buffer.concat([cache.subarray(0, 32), Buffer.alloc(4096, 7)]));
    expect(await version(binDir)).toBe(VERSION);
    rmSync(cachePath);
    expect(await version(binDir)).toBe(VERSION);
  });
});
