/**
 * dist/bin/hl-deadman.js (scripts/bin-loader.js) runs the bundle dist/bin/hl-deadman.cjs with V8's code cache
 * dist/bin/hl-deadman.cjs.<tag>.cache, <tag> being v8.cachedDataVersionTag() of the running node and its flags;
 * the cache's first 32 bytes are the SHA-256 of the bundle it was made from (docs/development.md, "The build").
 * The build makes each cache from a real `run` up to its first push. Checked in real processes, with the flags
 * every deployment starts node with.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, test } from "vitest";
import { VERSION } from "../../src/version.js";
import { ROOT } from "../helpers/process.js";
import { deploymentStarts, type NodeStart } from "./deployments.js";

const run = promisify(execFile);
const bin = join(ROOT, "dist/bin");

const envOf = (start: NodeStart, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH,
  NODE_OPTIONS: start.nodeOptions ?? "",
  ...extra,
});

/** The cache file name that node started this way looks for. */
async function cacheNameFor(start: NodeStart): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [...start.flags, "-p", "require('node:v8').cachedDataVersionTag()"],
    { env: envOf(start) },
  );
  return `hl-deadman.cjs.${stdout.trim()}.cache`;
}

/** `hl-deadman --version` started this way, with the loader's report of the cache it used. */
async function version(binDir: string, start: NodeStart = { name: "plain", flags: [] }, mode = "report") {
  const { stdout, stderr } = await run(
    process.execPath,
    [...start.flags, join(binDir, "hl-deadman.js"), "--version"],
    {
      env: envOf(start, { HL_DEADMAN_CODE_CACHE: mode }),
      timeout: 15_000,
    },
  );
  // the version is the first word (the commit and build date follow it, docs/cli.md "--version")
  return { version: stdout.trim().split(" ")[0], cache: /^code cache: (\w+) /m.exec(stderr)?.[1] };
}

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

/** A copy of dist/bin/ (with the project's node_modules beside it) that a test may tamper with. */
function copyOfBin(): string {
  dir = mkdtempSync(join(tmpdir(), "hl-deadman-cache-"));
  cpSync(bin, join(dir, "bin"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return join(dir, "bin");
}

describe("the bundle's code cache", () => {
  test("default: every deployment's node flags find a cache made from the bundle beside it, and use it", async () => {
    const digest = createHash("sha256")
      .update(readFileSync(join(bin, "hl-deadman.cjs")))
      .digest("hex");
    const starts = deploymentStarts();
    // the deployments differ: none, the JIT off, the JIT off with the heap cap
    expect(new Set(await Promise.all(starts.map(cacheNameFor))).size).toBe(3);
    for (const start of starts) {
      const name = await cacheNameFor(start);
      expect(existsSync(join(bin, name)), `${start.name}: ${name}`).toBe(true);
      const cache = readFileSync(join(bin, name));
      expect(cache.length, start.name).toBeGreaterThan(100_000);
      expect(cache.subarray(0, 32).toString("hex"), start.name).toBe(digest);
      expect(await version(bin, start), start.name).toEqual({ version: VERSION, cache: "used" });
    }
  });

  test("behavior: the build's caches hold the daemon's start path, made from a real run, not only --version", async () => {
    // scripts/bundle.mjs makes each cache from `run` up to its first confirmed push against a simulator
    const binDir = copyOfBin();
    const name = await cacheNameFor({ name: "plain", flags: [] });
    const fromRun = readFileSync(join(binDir, name)).length;
    rmSync(join(binDir, name));
    expect((await version(binDir, { name: "plain", flags: [] }, "write")).version).toBe(VERSION);
    const fromVersion = readFileSync(join(binDir, name)).length;
    expect(fromRun).toBeGreaterThan(fromVersion * 1.2);
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
    expect(await version(binDir)).toEqual({ version: other, cache: "stale" });
  });

  test("behavior: the CLI runs with a damaged cache and without one, compiling as usual", async () => {
    const binDir = copyOfBin();
    const cachePath = join(binDir, await cacheNameFor({ name: "plain", flags: [] }));
    const cache = readFileSync(cachePath);
    expect(await version(binDir)).toEqual({ version: VERSION, cache: "used" });
    // the right digest, then bytes that are not V8's: V8 rejects them and the bundle is compiled as usual
    writeFileSync(cachePath, Buffer.concat([cache.subarray(0, 32), Buffer.alloc(4096, 7)]));
    expect(await version(binDir)).toEqual({ version: VERSION, cache: "rejected" });
    rmSync(cachePath);
    expect(await version(binDir)).toEqual({ version: VERSION, cache: "absent" });
  });

  test("behavior: HL_DEADMAN_CODE_CACHE=write makes the cache for node's own flags (after a node upgrade)", async () => {
    const binDir = copyOfBin();
    const start = { name: "other flags", flags: ["--max-old-space-size=99"] };
    const name = await cacheNameFor(start);
    expect(existsSync(join(binDir, name))).toBe(false);
    expect(await version(binDir, start)).toEqual({ version: VERSION, cache: "absent" });
    expect((await version(binDir, start, "write")).version).toBe(VERSION);
    expect(existsSync(join(binDir, name))).toBe(true);
    expect(await version(binDir, start)).toEqual({ version: VERSION, cache: "used" });
  });
});
