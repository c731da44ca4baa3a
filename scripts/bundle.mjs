// Build step after `tsc` (npm run build): bundles the CLI entry (src/bin/hl-deadman.ts) into one tree-shaken,
// minified ES module with its dependencies, written over tsc's dist/bin/hl-deadman.js (the package's `bin`), plus
// split chunks in dist/bin/chunks/ for what only some commands load (the simulator, the chain watch, ...).
//
// Why: Node 20 resolves, reads and links every file of an ES-module graph one by one; the daemon's graph is
// ~700 files (got, zod, ethers, prom-client, ...). One file starts in about half the time and keeps less code
// resident (BENCHMARKS.md, cold start and memory). The library (dist/index.js and the other dist/ modules) stays
// as tsc wrote it. pino is bundled (its ~29 CommonJS files cost ~15 ms to resolve and load one by one); its
// transports would start worker threads that load pino's own files by path, so the logger never uses one
// (src/utils/logger.ts: pino-pretty, external, runs in the main thread for a terminal).
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist/bin");
rmSync(path.join(outdir, "chunks"), { recursive: true, force: true });
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
 * @sindresorhus/is (got's argument checks) builds two `Intl.ListFormat`s when it is loaded, for its error messages.
 * The first Intl object a process builds loads ICU's locale data: ~5 ms of CPU and ~6 MiB resident, on the path
 * to the first push (BENCHMARKS.md, cold start). They are built on first use instead; the messages are the same.
 * The build fails if the lines are not found (a new version of the package): look at them again then.
 */
const lazyListFormat = {
  name: "lazy-list-format",
  setup(b) {
    b.onLoad({ filter: /[\\/]@sindresorhus[\\/]is[\\/]distribution[\\/]index\.js$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      const source = await readFile(args.path, "utf8");
      const eager =
        /const (andFormatter|orFormatter) = new Intl\.ListFormat\('en', \{ style: 'long', type: '(conjunction|disjunction)' \}\);/g;
      const found = source.match(eager) ?? [];
      if (found.length !== 2)
        throw new Error(
          `lazy-list-format: expected 2 eager Intl.ListFormat lines in ${args.path}, found ${found.length}`,
        );
      const contents = source.replace(
        eager,
        (_line, name, type) =>
          `const ${name} = { format(values) { return (this.f ??= new Intl.ListFormat('en', { style: 'long', type: '${type}' })).format(values); } };`,
      );
      return { contents, loader: "js" };
    });
  },
};

/**
 * prom-client requires @opentelemetry/api (~24 KB minified) at the top of its process-CPU metric, for exemplars,
 * which hl-deadman never enables. The package is left out of the bundle and required from node_modules on first
 * use, so a daemon does not parse or evaluate it on the way to the first push. The build fails if the line is not
 * found (a new version of prom-client).
 */
const lazyOpenTelemetry = {
  name: "lazy-opentelemetry",
  setup(b) {
    b.onLoad({ filter: /[\\/]prom-client[\\/]lib[\\/]metrics[\\/]processCpuTotal\.js$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      const source = await readFile(args.path, "utf8");
      const eager = "const OtelApi = require('@opentelemetry/api');";
      if (!source.includes(eager)) throw new Error(`lazy-opentelemetry: expected "${eager}" in ${args.path}`);
      const lazy =
        "let otel; const OtelApi = { get trace() { return (otel ??= require('@opentelemetry/api')).trace; }, " +
        "get context() { return (otel ??= require('@opentelemetry/api')).context; } };";
      return { contents: source.replace(eager, lazy), loader: "js" };
    });
  },
};

/**
 * got imports http2-wrapper at the top of its options module, and http2-wrapper loads node:http2: ~8 ms of CPU on
 * the way to the first push, for a wrapper got only uses with `http2: true`, which hl-deadman never sets (it
 * speaks HTTP/1.1 with keep-alive). The package is left out of the bundle and required from node_modules on first
 * use, so HTTP/2 still works for whoever turns it on. The build fails if the import is not found (a new got).
 */
const lazyHttp2Wrapper = {
  name: "lazy-http2-wrapper",
  setup(b) {
    b.onLoad({ filter: /[\\/]got[\\/]dist[\\/]source[\\/]core[\\/]options\.js$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      const source = await readFile(args.path, "utf8");
      const eager = "import http2wrapper from 'http2-wrapper';";
      if (!source.includes(eager)) throw new Error(`lazy-http2-wrapper: expected "${eager}" in ${args.path}`);
      const lazy =
        "let http2wrapperModule; const http2wrapper = { " +
        "get globalAgent() { return (http2wrapperModule ??= require('http2-wrapper')).globalAgent; }, " +
        "get auto() { return (http2wrapperModule ??= require('http2-wrapper')).auto; } };";
      const contents = source.replace(eager, lazy);
      // the only uses are .globalAgent and .auto; any other would be undefined here, so refuse to build
      const code = contents.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
      const uses = new Set(code.match(/http2wrapper\.[A-Za-z]+/g) ?? []);
      for (const use of uses)
        if (use !== "http2wrapper.globalAgent" && use !== "http2wrapper.auto")
          throw new Error(`lazy-http2-wrapper: got uses ${use}; extend the lazy object`);
      return { contents, loader: "js" };
    });
  },
};

await build({
  plugins: [zodEnglishOnly, lazyListFormat, lazyOpenTelemetry, lazyHttp2Wrapper],
  entryPoints: { "hl-deadman": path.join(root, "src/bin/hl-deadman.ts") },
  tsconfig: path.join(root, "tsconfig.build.json"),
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  // keep class and function names: error names (e.g. ConfigError) are part of what the CLI prints and logs
  keepNames: true,
  charset: "ascii",
  legalComments: "none",
  chunkNames: "chunks/[name]-[hash]",
  external: ["pino-pretty", "@opentelemetry/api", "http2-wrapper"],
  // CommonJS dependencies (prom-client, ...) call require() for node: built-ins; give the ES module one.
  banner: {
    js: 'import{createRequire as __hlCreateRequire}from"node:module";const require=__hlCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
