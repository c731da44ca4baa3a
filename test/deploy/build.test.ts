/**
 * The build (scripts/build.mjs: tsc, then scripts/bundle.mjs) compiles and bundles; it never runs the program, and it
 * takes the dependencies as published (docs/development.md, "The build"). Checked on a real build of a copy of the
 * sources (so the dist/ the other tests use is left alone), with a preload in every node process the build starts
 * (NODE_OPTIONS=--import) that records what each process is, every child process it starts, every server it
 * listens with and every module of dist/ it imports; and every file under node_modules hashed before and after.
 */
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
// @ts-expect-error: a build script in plain JavaScript, without types
import { bundleOptions } from "../../scripts/bundle.mjs";
import { VERSION } from "../../src/core/version.js";
import { ROOT } from "../helpers/process.js";

const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), "hl-deadman-build-"));
const copy = join(tmp, "repo");
const log = join(tmp, "build-log.jsonl");
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Path → sha256 of every regular file under `dir` (symlinks by their target, never followed). */
function hashTree(dir: string, into = new Map<string, string>(), base = dir): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    const key = relative(base, full);
    if (entry.isSymbolicLink()) into.set(key, `-> ${readlinkSync(full)}`);
    else if (entry.isDirectory()) hashTree(full, into, base);
    else if (entry.isFile()) into.set(key, createHash("sha256").update(readFileSync(full)).digest("hex"));
  }
  return into;
}

/**
 * The preload: one JSON line per node process (its argv), per child process started (the function and its
 * command), per server listening, and per module of a dist/ directory resolved (a loader hook sees every import).
 */
const PROBE = `import { appendFileSync } from "node:fs";
import childProcess from "node:child_process";
import net from "node:net";
import { register, syncBuiltinESMExports } from "node:module";
const LOG = ${JSON.stringify(log)};
const note = (entry) => appendFileSync(LOG, JSON.stringify({ pid: process.pid, ...entry }) + "\\n");
note({ kind: "process", argv: process.argv.slice(1) });
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
  const real = childProcess[name];
  childProcess[name] = function (command, args, ...rest) {
    note({ kind: "child", via: name, command: String(command), args: Array.isArray(args) ? args.map(String) : [] });
    return real.call(this, command, args, ...rest);
  };
}
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  note({ kind: "listen" });
  return listen.apply(this, args);
};
syncBuiltinESMExports();
register("data:text/javascript," + encodeURIComponent(
  "import { appendFileSync } from 'node:fs';" +
  "export async function resolve(specifier, context, next) { const r = await next(specifier, context);" +
  " if (/\\\\/dist\\\\//.test(r.url) && !r.url.includes('/node_modules/'))" +
  " appendFileSync(" + JSON.stringify(LOG) + ", JSON.stringify({ kind: 'import', url: r.url }) + '\\\\n');" +
  " return r; }"));
`;

/** A path inside the copy, or inside the checkout (node_modules is a link to it), relative to its root. */
const inRepo = (file: string) => relative(file.startsWith(copy) ? copy : ROOT, file).replaceAll("\\", "/");

type Entry = { kind: string; argv?: string[]; via?: string; command?: string; args?: string[]; url?: string };
let entries: Entry[] = [];
let before: Map<string, string>;
let after: Map<string, string>;

beforeAll(async () => {
  for (const item of [
    "src",
    "scripts",
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "tsconfig.build.json",
  ])
    cpSync(join(ROOT, item), join(copy, item), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  const probe = join(tmp, "probe.mjs");
  writeFileSync(probe, PROBE);
  before = hashTree(join(ROOT, "node_modules"));
  await run(process.execPath, [join(copy, "scripts/build.mjs")], {
    cwd: copy,
    env: { PATH: process.env.PATH, HOME: tmp, NODE_OPTIONS: `--import=${pathToFileURL(probe).href}` },
    timeout: 170_000,
  });
  after = hashTree(join(ROOT, "node_modules"));
  entries = readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Entry);
}, 180_000);

describe("the build", () => {
  test("behavior: runs tsc and the bundler and nothing else: no program of ours, no server, no module of dist/", () => {
    const scripts = entries.filter((e) => e.kind === "process").map((e) => inRepo((e.argv ?? [])[0] ?? ""));
    // the probe saw the build (it would see any node process, whatever it runs)
    expect(scripts).toEqual(["scripts/build.mjs", "node_modules/typescript/bin/tsc", "scripts/bundle.mjs"]);
    const children = entries.filter((e) => e.kind === "child");
    for (const child of children) {
      const what = child.command === process.execPath ? (child.args ?? [])[0] : child.command;
      // node running tsc or the bundle script, or esbuild's own binary (its build service)
      expect(what, JSON.stringify(child)).toMatch(
        /typescript[\\/]bin[\\/]tsc$|scripts[\\/]bundle\.mjs$|esbuild$/,
      );
    }
    expect(children.some((c) => /esbuild$/.test(c.command ?? ""))).toBe(true);
    expect(entries.filter((e) => e.kind === "listen")).toEqual([]);
    expect(entries.filter((e) => e.kind === "import")).toEqual([]);
    // and the build did build
    expect(
      execFileSync(process.execPath, [join(copy, "dist/bin/hl-deadman.js"), "--version"], {
        encoding: "utf8",
      })
        .trim()
        .split(" ")[0],
    ).toBe(VERSION);
  });

  test("behavior: leaves every file under node_modules as it was (hashes before and after)", () => {
    expect(after.size).toBeGreaterThan(1000);
    const changed = [...after].filter(([file, hash]) => before.get(file) !== hash).map(([file]) => file);
    const gone = [...before.keys()].filter((file) => !after.has(file));
    expect({ changed, gone }).toEqual({ changed: [], gone: [] });
  });

  test("default: the bundle takes its dependencies as published: no esbuild plugin, nothing injected or defined but import.meta.url", () => {
    expect(bundleOptions.plugins ?? []).toEqual([]);
    expect(bundleOptions.inject ?? []).toEqual([]);
    expect(bundleOptions.alias ?? {}).toEqual({});
    expect(Object.keys(bundleOptions.define ?? {})).toEqual(["import.meta.url"]);
    // left to node_modules as published: pino-pretty (a terminal's lines only) and etcd3 (--coordinate only; it
    // reads its .proto files from beside itself)
    expect(bundleOptions.external).toEqual(["pino-pretty", "etcd3"]);
  });

  test("default: dist/bin holds the bundle and its loader, no code cache; the CLI starts from the bundle alone", () => {
    const bin = join(copy, "dist/bin");
    expect(readdirSync(bin).sort()).toEqual(["hl-deadman.cjs", "hl-deadman.js"]);
    expect(lstatSync(join(bin, "hl-deadman.js")).size).toBeLessThan(1000);
    const loaded = join(tmp, "loaded.json");
    const probe = join(tmp, "loaded.cjs");
    writeFileSync(
      probe,
      `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(Object.keys(require("module")._cache))));`,
    );
    execFileSync(process.execPath, ["--require", probe, join(bin, "hl-deadman.js"), "--version"], {
      env: {},
    });
    // nothing required from node_modules one file at a time: every dependency `--version` evaluates is in the bundle
    expect(JSON.parse(readFileSync(loaded, "utf8"))).toEqual([probe, join(bin, "hl-deadman.cjs")]);
  });
});
