/**
 * The bundled CLI (scripts/bundle.mjs) leaves out of the start path what the daemon never uses on its way to the
 * first push (BENCHMARKS.md, cold start): got's http2-wrapper (and with it node:http2) and prom-client's
 * @opentelemetry/api are required from node_modules on first use, pino's node:worker_threads and node:assert
 * where they are used, and node-cron and the simulator are evaluated only when a command imports them. Checked on
 * the built files, in a real process: what `--version` (which evaluates the same modules as `run`) loaded, and
 * that the left-out packages resolve from dist/bin for whoever needs them.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { baseEnv, spawnNode } from "../helpers/process.js";

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

  test("behavior: nothing in the bundle reads WebAssembly, to start or when the simulator runs and is signed to", async () => {
    // The units start node with --no-expose-wasm, and no code of ours uses WebAssembly (the simulator verifies
    // signatures with ethers' recovery): a preload counts the reads of globalThis.WebAssembly made from the bundle
    // (dist/bin/hl-deadman.cjs) by `--version` and by `run --sim` up to its first push.
    const readsOf = async (args: string[]) => {
      const out = join(tmp, `wasm-${args[0]!.replace(/\W/g, "")}.json`);
      const probe = join(tmp, "wasm-probe.cjs");
      writeFileSync(
        probe,
        "const real = globalThis.WebAssembly; const reads = [];\n" +
          'Object.defineProperty(globalThis, "WebAssembly", { configurable: true, get() {\n' +
          '  reads.push(String(new Error().stack).split("\\n")[2]); return real; } });\n' +
          `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(reads)));`,
      );
      const p = spawnNode(["--require", probe, cli, ...args], { env: baseEnv() });
      if (args[0] === "run") {
        await p.waitForEvent("heartbeat.ok", 15_000);
        p.kill("SIGTERM");
      }
      expect((await p.exitWithin(15_000)).code).toBe(0);
      const reads = JSON.parse(readFileSync(out, "utf8")) as string[];
      return reads.filter((frame) => frame.includes("hl-deadman.cjs"));
    };
    expect(await readsOf(["--version"])).toEqual([]);
    const state = mkdtempSync(join(tmp, "state-"));
    expect(await readsOf(["run", "--sim", "--state-dir", state, "--health", "127.0.0.1:0"])).toEqual([]);
  });

  test("behavior: the 00:00 UTC roll-over job is scheduled without an Intl formatter (ICU's data is never mapped)", async () => {
    // node-cron computes its dates with Intl.DateTimeFormat; the bundle's rewrite (scripts/node-cron-utc.mjs) gives
    // it the UTC getters for "UTC". A preload records every formatter built from the bundle during `run --sim`,
    // past the moment node-cron schedules the job (once the first pushes settled, with the first polls).
    const out = join(tmp, "intl.json");
    const probe = join(tmp, "intl-probe.cjs");
    writeFileSync(
      probe,
      "const Real = Intl.DateTimeFormat; const built = [];\n" +
        "Intl.DateTimeFormat = function (...args) { built.push(String(new Error().stack).split('\\n').slice(1, 4).join(' | '));\n" +
        "  return new Real(...args); };\n" +
        `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(built)));`,
    );
    const state = mkdtempSync(join(tmp, "state-intl-"));
    const p = spawnNode(
      ["--require", probe, cli, "run", "--sim", "--state-dir", state, "--health", "127.0.0.1:0"],
      {
        env: baseEnv(),
      },
    );
    await p.waitForEvent("budget", 15_000);
    await new Promise((r) => setTimeout(r, 500));
    p.kill("SIGTERM");
    expect((await p.exitWithin(15_000)).code).toBe(0);
    const built = JSON.parse(readFileSync(out, "utf8")) as string[];
    expect(built.filter((frames) => frames.includes("hl-deadman.cjs"))).toEqual([]);
  });

  test("behavior: the packages left out of the bundle resolve from dist/bin, for HTTP/2 or exemplars", () => {
    const require = createRequire(cli);
    expect(require.resolve("http2-wrapper")).toContain(join("node_modules", "http2-wrapper"));
    expect(require.resolve("@opentelemetry/api")).toContain(join("node_modules", "@opentelemetry", "api"));
    expect(typeof (require("http2-wrapper") as { auto?: unknown }).auto).toBe("function");
  });
});
