/**
 * The process tests' compile cache (./code-cache.cjs) never runs other code than the bundle's: checked on a copy of
 * the preload beside a small bundle of its own (the preload finds both from where it lies), spawned as the process
 * tests spawn the CLI (`node --require <preload> <bundle> <command>`).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { CODE_CACHE } from "./process.js";

const root = mkdtempSync(path.join(tmpdir(), "hl-code-cache-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A tree of the preload and a bundle of `source`; returns the spawner and the cache directory. */
function tree(name: string, source: string) {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, "test/helpers"), { recursive: true });
  mkdirSync(path.join(dir, "dist/bin"), { recursive: true });
  copyFileSync(CODE_CACHE, path.join(dir, "test/helpers/code-cache.cjs"));
  const bundle = path.join(dir, "dist/bin/hl-deadman.cjs");
  writeFileSync(bundle, source);
  const spawn = (...args: string[]) => {
    const r = spawnSync(
      process.execPath,
      ["--require", path.join(dir, "test/helpers/code-cache.cjs"), bundle, ...args],
      {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
        timeout: 10_000,
      },
    );
    return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
  };
  return { spawn, bundle, cached: () => readdirSync(path.join(dir, ".cache/test-code")).sort() };
}

describe("the process tests' compile cache", () => {
  test("behavior: the first start of a command writes the cache and the next one runs from it, with the bundle's require and module", () => {
    const t = tree(
      "first",
      '#!/usr/bin/env node\nmodule.exports = 1;\nconsole.log(JSON.stringify([require("node:path").basename(__filename), typeof require.resolve, module.exports, process.argv[2]]));\n',
    );
    expect(t.spawn("status")).toEqual({ code: 0, out: '["hl-deadman.cjs","function",1,"status"]', err: "" });
    expect(t.cached()).toEqual([expect.stringMatching(/^status-[0-9a-f]{24}\.v8$/)]);
    expect(t.spawn("status")).toEqual({ code: 0, out: '["hl-deadman.cjs","function",1,"status"]', err: "" });
    t.spawn("run");
    expect(t.cached()).toEqual([expect.stringMatching(/^run-/), expect.stringMatching(/^status-/)]);
  });

  test("behavior: another bundle of the same length never runs the first one's code (V8 checks only the length)", () => {
    const t = tree("rebuilt", 'console.log("build-A");\n');
    expect(t.spawn("status").out).toBe("build-A");
    writeFileSync(t.bundle, 'console.log("build-B");\n');
    expect(t.spawn("status").out).toBe("build-B");
    expect(t.cached()).toHaveLength(2);
  });

  test("behavior: a coordinated start (the bundle's import() of etcd3) compiles from the text, cached or not", () => {
    const t = tree("coordinated", 'import("node:os").then((os) => console.log(typeof os.cpus));\n');
    for (const args of [
      ["run", "--coordinate", "etcd://x"],
      ["run", "--coordinate=etcd://x"],
      ["replicas"],
    ]) {
      expect(t.spawn(...args), args.join(" ")).toEqual({ code: 0, out: "function", err: "" });
      expect(t.spawn(...args), args.join(" ")).toEqual({ code: 0, out: "function", err: "" });
    }
    expect(() => t.cached()).toThrow(/ENOENT/);
  });
});
