// Build step after `tsc` (npm run build): bundles the CLI entry (src/bin/hl-deadman.ts) into one tree-shaken,
// minified ES module with its dependencies, written over tsc's dist/bin/hl-deadman.js (the package's `bin`), plus
// split chunks in dist/bin/chunks/ for what only some commands load (the simulator, the chain watch, ...).
//
// Why: Node 20 resolves, reads and links every file of an ES-module graph one by one; the daemon's graph is
// ~700 files (got, zod, ethers, prom-client, ...). One file starts in about half the time and keeps less code
// resident (BENCHMARKS.md, cold start and memory). The library (dist/index.js and the other dist/ modules) stays
// as tsc wrote it. pino stays external: its transports (pino-pretty for a terminal) start worker threads that
// load pino's own files by path.
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

await build({
  plugins: [zodEnglishOnly],
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
  external: ["pino", "pino-pretty"],
  // CommonJS dependencies (prom-client, ...) call require() for node: built-ins; give the ES module one.
  banner: {
    js: 'import{createRequire as __hlCreateRequire}from"node:module";const require=__hlCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
