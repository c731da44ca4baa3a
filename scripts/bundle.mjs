// Build step after `tsc` (npm run build): bundles the CLI entry (src/bin/hl-deadman.ts) into one tree-shaken,
// minified CommonJS file with its dependencies (dist/bin/hl-deadman.cjs), makes V8's code cache for it under each
// set of node flags the deployments start node with (dist/bin/hl-deadman.cjs.<tag>.cache), and writes over tsc's
// dist/bin/hl-deadman.js (the package's `bin`) the small loader scripts/bin-loader.js, which runs the bundle with
// the cache that matches the running node.
//
// Why: Node 20 resolves, reads and links every file of an ES-module graph one by one; the daemon's graph is
// ~700 files (got, zod, ethers, prom-client, ...). One file starts in about half the time and keeps less code
// resident; with the code cache, V8 deserializes the compiled code instead of parsing and compiling ~1 MB at
// every start (BENCHMARKS.md, cold start and memory). Node 20 has no code cache for ES modules, hence CommonJS;
// what only some commands use (the simulator, the chain watch, node-cron) stays in the file, evaluated only when
// a command imports it. The library (dist/index.js and the other dist/ modules) stays as tsc wrote it. pino is
// bundled (its ~29 CommonJS files cost ~15 ms to resolve and load one by one); its transports would start worker
// threads that load pino's own files by path, so the logger never uses one (src/utils/logger.ts: pino-pretty,
// external, runs in the main thread for a terminal).
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { Wallet } from "ethers";
import { nodeCronUtcWithoutIntl } from "./node-cron-utc.mjs";
import { replaceExactly } from "./replace-exactly.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist/bin");
const bundle = path.join(outdir, "hl-deadman.cjs");
const bin = path.join(outdir, "hl-deadman.js");
// split chunks of earlier (ES-module) builds, code caches of earlier bundles (their digest no longer matches) and
// a cache write's temporary file left by an interrupted build
rmSync(path.join(outdir, "chunks"), { recursive: true, force: true });
for (const stale of readdirSync(outdir, { withFileTypes: true }))
  if (/^hl-deadman\.cjs\..*\.(cache|tmp)$/.test(stale.name)) rmSync(path.join(outdir, stale.name));
// tsc's map and declarations describe the unbundled file this replaces
for (const stale of ["hl-deadman.js.map", "hl-deadman.d.ts", "hl-deadman.d.ts.map"])
  rmSync(path.join(outdir, stale), { force: true });
mkdirSync(outdir, { recursive: true });

/**
 * zod's classic entry re-exports every locale as `z.locales` (~270 KB of the ~460 KB zod adds to the bundle,
 * all parsed at start). hl-deadman only uses the English messages zod configures by default, so the locales
 * index is replaced by one that re-exports `en` alone.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)
        ? { path: path.join(path.dirname(args.importer), "../locales/en.js"), namespace: "zod-english-only" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: path.dirname(args.path),
    }));
  },
};

/**
 * A plugin that rewrites one dependency file as it is loaded: `transform(source, path)` returns the new text, or
 * throws (the build fails) when the text it expects is not there: a new version of the package, to look at again.
 */
function rewrite(name, filter, transform) {
  return {
    name,
    setup(b) {
      b.onLoad({ filter }, async (args) => ({
        contents: transform(await readFile(args.path, "utf8"), args.path),
        loader: "js",
      }));
    },
  };
}

/** `text` with comments removed, to look for a name's uses in code. */
const codeOf = (text) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");

/** A plugin that rewrites one dependency file by `replaceExactly`'s pairs. */
const rewriteExactly = (name, filter, pairs) =>
  rewrite(name, filter, (source, file) => replaceExactly(name, source, file, pairs));

/**
 * Replaces the statement `eager` (which loads `pkg` at once) with an object `binding` whose `members` require `pkg`
 * from node_modules on first use; `pkg` is external, so it is neither parsed nor evaluated on the way to the first
 * push, and still works for whoever uses it.
 */
function requireOnFirstUse(name, source, file, { eager, binding, pkg, members }) {
  if (!source.includes(eager)) throw new Error(`${name}: expected "${eager}" in ${file}`);
  const getters = members.map((m) => `get ${m}() { return (loaded ??= require('${pkg}')).${m}; }`);
  return source.replace(eager, `let loaded; const ${binding} = { ${getters.join(", ")} };`);
}

/**
 * @sindresorhus/is (got's argument checks) builds two `Intl.ListFormat`s when it is loaded, for its error messages.
 * The first Intl object a process builds loads ICU's locale data: ~5 ms of CPU and ~6 MiB resident, on the path
 * to the first push (BENCHMARKS.md, cold start). They are built on first use instead; the messages are the same.
 */
const lazyListFormat = rewrite(
  "lazy-list-format",
  /[\\/]@sindresorhus[\\/]is[\\/]distribution[\\/]index\.js$/,
  (source, file) => {
    const eager =
      /const (andFormatter|orFormatter) = new Intl\.ListFormat\('en', \{ style: 'long', type: '(conjunction|disjunction)' \}\);/g;
    const found = source.match(eager) ?? [];
    if (found.length !== 2)
      throw new Error(
        `lazy-list-format: expected 2 eager Intl.ListFormat lines in ${file}, found ${found.length}`,
      );
    return source.replace(
      eager,
      (_line, name, type) =>
        `const ${name} = { format(values) { return (this.f ??= new Intl.ListFormat('en', { style: 'long', type: '${type}' })).format(values); } };`,
    );
  },
);

/**
 * prom-client requires @opentelemetry/api (~24 KB minified) at the top of its process-CPU metric, for exemplars,
 * which hl-deadman never enables.
 */
const lazyOpenTelemetry = rewrite(
  "lazy-opentelemetry",
  /[\\/]prom-client[\\/]lib[\\/]metrics[\\/]processCpuTotal\.js$/,
  (source, file) =>
    requireOnFirstUse("lazy-opentelemetry", source, file, {
      eager: "const OtelApi = require('@opentelemetry/api');",
      binding: "OtelApi",
      pkg: "@opentelemetry/api",
      members: ["trace", "context"],
    }),
);

/**
 * got imports http2-wrapper at the top of its options module, and http2-wrapper loads node:http2: ~8 ms of CPU on
 * the way to the first push, for a wrapper got only uses with `http2: true`, which hl-deadman never sets (it
 * speaks HTTP/1.1 with keep-alive).
 */
const HTTP2_MEMBERS = ["globalAgent", "auto"];
const lazyHttp2Wrapper = rewrite(
  "lazy-http2-wrapper",
  /[\\/]got[\\/]dist[\\/]source[\\/]core[\\/]options\.js$/,
  (source, file) => {
    const contents = requireOnFirstUse("lazy-http2-wrapper", source, file, {
      eager: "import http2wrapper from 'http2-wrapper';",
      binding: "http2wrapper",
      pkg: "http2-wrapper",
      members: HTTP2_MEMBERS,
    });
    // any member got uses beyond these would be undefined here, so refuse to build
    for (const use of new Set(codeOf(contents).match(/http2wrapper\.[A-Za-z]+/g) ?? []))
      if (!HTTP2_MEMBERS.includes(use.slice("http2wrapper.".length)))
        throw new Error(`lazy-http2-wrapper: got uses ${use}; extend the lazy object`);
    return contents;
  },
);

/**
 * Two node built-ins the daemon never uses, loaded by pino's top-level requires: node:worker_threads, for
 * transports (which the logger never uses, src/utils/logger.ts) and for an isMainThread check of asynchronous
 * destinations (the logger's is synchronous); node:assert, by sonic-boom for one argument check and by
 * thread-stream (pino's transports). Each is required where it is used instead: 10-40 ms off the cold start under
 * the deployed node flags, whose V8 flags make node compile every built-in it loads (issue 15, A/B, 11 interleaved
 * runs). node:child_process and dgram stay: node's own net module loads them through node:cluster when a server
 * listens.
 */
const lazyPinoWorkerThreads = rewriteExactly("lazy-pino-worker-threads", /[\\/]pino[\\/]lib[\\/]tools\.js$/, [
  ["const { isMainThread } = require('worker_threads')", "let workerThreads", 1],
  ["isMainThread", "(workerThreads ??= require('worker_threads')).isMainThread", 1],
]);
const lazyPinoThreadStream = rewriteExactly(
  "lazy-pino-thread-stream",
  /[\\/]pino[\\/]lib[\\/]transport\.js$/,
  [
    ["const ThreadStream = require('thread-stream')", "let ThreadStream", 1],
    ["new ThreadStream(", "new (ThreadStream ??= require('thread-stream'))(", 1],
  ],
);
const lazySonicBoomAssert = rewrite(
  "lazy-sonic-boom-assert",
  /[\\/]sonic-boom[\\/]index\.js$/,
  (source, file) => {
    if (/\bassert\./.test(codeOf(source)))
      throw new Error(`lazy-sonic-boom-assert: ${file} uses assert.<member>`);
    return replaceExactly("lazy-sonic-boom-assert", source, file, [
      ["const assert = require('assert')", "const assert = (...args) => require('assert')(...args)", 1],
    ]);
  },
);

/**
 * node-cron builds an Intl.DateTimeFormat for every date it computes, and the first one maps ICU's data: +8.6 MiB
 * resident for the 00:00 UTC roll-over job. In UTC its date parts come from Date's UTC getters instead
 * (scripts/node-cron-utc.mjs; BENCHMARKS.md, memory).
 */
const nodeCronUtc = rewrite("node-cron-utc", /[\\/]node-cron[\\/]dist[\\/]_shared\.js$/, (source, file) =>
  nodeCronUtcWithoutIntl(source, file),
);

await build({
  plugins: [
    zodEnglishOnly,
    nodeCronUtc,
    lazyListFormat,
    lazyOpenTelemetry,
    lazyHttp2Wrapper,
    lazyPinoWorkerThreads,
    lazyPinoThreadStream,
    lazySonicBoomAssert,
  ],
  entryPoints: [path.join(root, "src/bin/hl-deadman.ts")],
  tsconfig: path.join(root, "tsconfig.build.json"),
  outfile: bundle,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  minify: true,
  // keep class and function names: error names (e.g. ConfigError) are part of what the CLI prints and logs
  keepNames: true,
  charset: "ascii",
  legalComments: "none",
  external: ["pino-pretty", "@opentelemetry/api", "http2-wrapper"],
  // ES modules (node-cron, the logger's createRequire) read import.meta.url: the bundle's own URL
  define: { "import.meta.url": "__hlImportMetaUrl" },
  banner: { js: 'var __hlImportMetaUrl=require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
});

// The loader wraps the bundle in a function: a leading #! line would be a syntax error there.
writeFileSync(bundle, readFileSync(bundle, "latin1").replace(/^#![^\n]*\n/, ""), "latin1");
copyFileSync(path.join(root, "scripts/bin-loader.js"), bin);
chmodSync(bin, 0o755);

/**
 * The node flags the deployments start node with (docs/operations.md, "Node flags"): none (npm start, a shell);
 * pm2's node_args and the image's ENTRYPOINT; the systemd units' ExecStart, which add the heap cap (as does the
 * Kubernetes example, through NODE_OPTIONS). V8 refuses a cache made under other flags, so each set gets its own
 * (test/deploy/code-cache.test.ts checks that every deployment's set has one).
 */
const JITLESS = ["--jitless", "--no-expose-wasm", "--optimize-for-size"];
const CODE_CACHE_FLAGS = [[], JITLESS, [...JITLESS, "--max-old-space-size=160"]];

/** Makes the cache for `flags` from `--version`: the bundle's top level and every module it evaluates. */
function cacheFromVersion(flags) {
  const made = spawnSync(process.execPath, [...flags, bin, "--version"], {
    env: { ...process.env, NODE_OPTIONS: "", HL_DEADMAN_CODE_CACHE: "write" },
    encoding: "utf8",
  });
  if (made.status !== 0) {
    process.stderr.write(`bundle: ${bin} --version failed (${made.status ?? made.signal})\n${made.stderr}`);
    process.exit(1);
  }
}

/**
 * Makes the cache for `flags` from a real start: `run` against the simulator at `apiUrl` with a throwaway key, up
 * to its first confirmed push, then SIGTERM (the schedule removed, exit 0). Resolves with why it failed, or null.
 */
function cacheFromRun(flags, apiUrl, privateKey) {
  const stateDir = mkdtempSync(path.join(tmpdir(), "hl-deadman-build-"));
  const child = spawn(
    process.execPath,
    [...flags, bin, "run", "--api-url", apiUrl, "--state-dir", stateDir, "--health", "127.0.0.1:0"],
    {
      env: {
        PATH: process.env.PATH,
        HOME: stateDir,
        HL_PRIVATE_KEY: privateKey,
        HL_DEADMAN_CODE_CACHE: "write",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, 15_000);
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.includes('"event":"heartbeat.ok"')) child.kill("SIGTERM");
  });
  return new Promise((resolve) => {
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      rmSync(stateDir, { recursive: true, force: true });
      if (code === 0) resolve(null);
      else if (timedOut) resolve("run confirmed no push in 15 s");
      else resolve(`run exited ${code ?? signal}: ${stderr.trim().split("\n").at(-1) ?? ""}`);
    });
  });
}

// Each cache is made from a real start (cacheFromRun): it then holds what every command compiles before it parses
// its arguments and the daemon's own start path (~1.4 MB against ~1 MB from `--version` alone; 183 -> 174 ms to
// the first push as deployed, issue 15, 11 interleaved runs). If that start fails, the cache is made from
// `--version` and the build says why. Without any matching cache the CLI still runs, compiling as usual.
const { startSimulator } = await import(pathToFileURL(path.join(root, "dist/index.js")).href);
const wallet = Wallet.createRandom();
/** The simulator for the runs, or why it could not start (a build without a loopback interface, say). */
const sim = await startSimulator({ users: [{ address: wallet.address.toLowerCase() }] }).catch(
  (err) => `the simulator did not start (${err.message})`,
);
try {
  // after one failed run the others are not tried: they would fail alike, 15 s each
  let failed = typeof sim === "string" ? sim : null;
  for (const flags of CODE_CACHE_FLAGS) {
    failed ??= await cacheFromRun(flags, sim.apiUrl, wallet.privateKey);
    if (failed === null) continue;
    process.stderr.write(`bundle: the code cache for [${flags.join(" ")}] comes from --version: ${failed}\n`);
    cacheFromVersion(flags);
  }
} finally {
  if (typeof sim !== "string") await sim.close();
}
