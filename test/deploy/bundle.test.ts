/**
 * The bundled CLI (scripts/bundle.mjs) leaves out of the start path what the daemon never uses on its way to the
 * first push (BENCHMARKS.md, cold start): got's http2-wrapper (and with it node:http2) and prom-client's
 * @opentelemetry/api are required from node_modules on first use, pino's node:worker_threads and node:assert
 * where they are used, and node-cron is a chunk loaded when the roll-over job starts. Checked on the built files, in a real process: what `--version` (which loads the same
 * static module graph as `run`) loaded, and that the left-out packages resolve from dist/bin for whoever needs them.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const cli = join(root, "dist/bin/hl-deadman.js");
const tmp = mkdtempSync(join(tmpdir(), "hl-deadman-bundle-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs the CLI with a preload that writes, at exit, the built-in modules and the CommonJS files it loaded. */
function loaded(args: string[]): { builtins: string[]; files: string[] } {
  const out = join(tmp, `loaded-${args.join("-")}.json`);
  const probe = join(tmp, "probe.cjs");
  writeFileSync(
    probe,
    `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify({` +
      `builtins: process.moduleLoadList, files: Object.keys(require("module")._cache) })));`,
  );
  execFileSync(process.execPath, ["--require", probe, cli, ...args], { encoding: "utf8", env: {} });
  return JSON.parse(readFileSync(out, "utf8")) as { builtins: string[]; files: string[] };
}

describe("the bundled CLI's start path", () => {
  test("behavior: neither node:http2, http2-wrapper, @opentelemetry/api nor node-cron is loaded to start", () => {
    const { builtins, files } = loaded(["--version"]);
    // the probe sees the graph: got itself (bundled) pulled in node:https
    expect(builtins).toContain("NativeModule https");
    expect(builtins.filter((m) => /http2/.test(m))).toEqual([]);
    expect(files.filter((f) => /http2-wrapper|@opentelemetry|node-cron/.test(f))).toEqual([]);
  });

  test("behavior: neither node:worker_threads nor node:assert is loaded to start (pino's transports are never used)", () => {
    const { builtins } = loaded(["--version"]);
    // the probe sees the logger's graph: pino bundled, its destination (sonic-boom) on node:fs
    expect(builtins).toContain("NativeModule fs");
    expect(builtins.filter((m) => /^NativeModule (worker_threads|assert|internal\/worker)$/.test(m))).toEqual(
      [],
    );
  });

  test("behavior: the simulator's WebAssembly check is not in the files the CLI loads to start", () => {
    // the main file and every chunk it imports statically (import("...") chunks load only when used)
    const dir = join(root, "dist/bin");
    const start = new Set<string>();
    const walk = (file: string) => {
      if (start.has(file)) return;
      start.add(file);
      const text = readFileSync(join(dir, file), "utf8");
      for (const m of text.matchAll(/from"\.\/((?:chunks\/)?[\w.-]+\.js)"/g))
        walk(file.startsWith("chunks/") && !m[1]!.startsWith("chunks/") ? `chunks/${m[1]}` : m[1]!);
    };
    walk("hl-deadman.js");
    expect(start.size).toBeGreaterThan(3);
    const withCheck = [...start].filter((f) => readFileSync(join(dir, f), "utf8").includes('"madd"'));
    expect(withCheck).toEqual([]);
    // it is in the simulator's chunk
    const all = readdirSync(join(dir, "chunks")).filter((f) =>
      readFileSync(join(dir, "chunks", f), "utf8").includes('"madd"'),
    );
    expect(all.length).toBe(1);
  });

  test("behavior: the packages left out of the bundle resolve from dist/bin, for HTTP/2 or exemplars", () => {
    const require = createRequire(cli);
    expect(require.resolve("http2-wrapper")).toContain(join("node_modules", "http2-wrapper"));
    expect(require.resolve("@opentelemetry/api")).toContain(join("node_modules", "@opentelemetry", "api"));
    expect(typeof (require("http2-wrapper") as { auto?: unknown }).auto).toBe("function");
  });
});
