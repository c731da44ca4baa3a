// Build step after `tsc` (npm run build): bundles the CLI entry (src/bin/hl-deadman.ts) into one tree-shaken,
// minified CommonJS file with its dependencies (dist/bin/hl-deadman.cjs), makes V8's code cache for it
// (dist/bin/hl-deadman.cjs.cache), and writes over tsc's dist/bin/hl-deadman.js (the package's `bin`) the small
// loader scripts/bin-loader.js, which runs the bundle with that cache.
//
// Why: Node 20 resolves, reads and links every file of an ES-module graph one by one; the daemon's graph is
// ~700 files (got, zod, ethers, prom-client, ...). One file starts in about half the time and keeps less code
// resident; with the code cache, V8 deserializes the compiled code instead of parsing and compiling ~1 MB at
// every start (BENCHMARKS.md, cold start and memory). Node 20 has no code cache for ES modules, hence CommonJS.
// The library (dist/index.js and the other dist/ modules) stays as tsc wrote it. pino stays external: its
// transports (pino-pretty for a terminal) start worker threads that load pino's own files by path.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist/bin");
const bundle = path.join(outdir, "hl-deadman.cjs");
const bin = path.join(outdir, "hl-deadman.js");
// split chunks of earlier (ES-module) builds
rmSync(path.join(outdir, "chunks"), { recursive: true, force: true });
// tsc's map and declarations describe the unbundled file this replaces
for (const stale of ["hl-deadman.js.map", "hl-deadman.d.ts", "hl-deadman.d.ts.map"])
  rmSync(path.join(outdir, stale), { force: true });
mkdirSync(outdir, { recursive: true });
// code caches of an earlier build (the loader would ignore them: they carry that bundle's digest)
for (const stale of readdirSync(outdir))
  if (/^hl-deadman\.cjs\..*cache$/.test(stale)) rmSync(path.join(outdir, stale));

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
  external: ["pino", "pino-pretty"],
  // ES-module dependencies (node-cron) read import.meta.url: the bundle's own URL
  define: { "import.meta.url": "__hlImportMetaUrl" },
  banner: { js: 'var __hlImportMetaUrl=require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
});

// The loader wraps the bundle in a function: a leading #! line would be a syntax error there.
writeFileSync(bundle, readFileSync(bundle, "latin1").replace(/^#![^\n]*\n/, ""), "latin1");
copyFileSync(path.join(root, "scripts/bin-loader.js"), bin);
chmodSync(bin, 0o755);

// The code caches: what `--version` compiles (the bundle's top level and every module it evaluates), written by
// the loader at exit, one per flag set node is started with by the shipped units (V8 rejects a cache made under
// other flags). Without a matching one the CLI still runs, compiling the bundle at each start.
// systemd/hl-deadman*.service and deploy/kubernetes/sidecar.yaml start node with --max-old-space-size=160.
for (const flags of [[], ["--max-old-space-size=160"]]) {
  const made = spawnSync(process.execPath, [...flags, bin, "--version"], {
    env: { ...process.env, NODE_OPTIONS: "", HL_DEADMAN_WRITE_CODE_CACHE: "1" },
    encoding: "utf8",
  });
  if (made.status !== 0) {
    process.stderr.write(`bundle: ${bin} --version failed (${made.status ?? made.signal})\n${made.stderr}`);
    process.exit(1);
  }
}
