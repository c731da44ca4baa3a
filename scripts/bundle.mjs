// Build step after `tsc` (npm run build): bundles the CLI entry (src/bin/hl-deadman.ts) with its dependencies into
// one minified CommonJS file, dist/bin/hl-deadman.cjs, and writes over tsc's dist/bin/hl-deadman.js (the package's
// `bin`) a two-line loader that requires it. The library (dist/index.js and the other dist/ modules) stays as tsc
// wrote it.
//
// Why a bundle: Node 20 resolves, reads and links every file of the daemon's module graph one by one (~700 files:
// got, zod, ethers, prom-client, pino, ...); the bundle is one file. What it buys is measured, not assumed:
// docs/development.md ("The build") and BENCHMARKS.md (start → first confirmed push as deployed, bundle against
// tsc's own output in the same run).
//
// Two rules (test/deploy/build.test.ts): the build runs no program (no simulator, no daemon, no child process:
// esbuild's own service aside, which is the bundler), and the dependencies go in exactly as published: no plugin,
// no text rewrite; esbuild only concatenates and minifies.
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist/bin");
const bundle = path.join(outdir, "hl-deadman.cjs");
const bin = path.join(outdir, "hl-deadman.js");

/** esbuild's options: no plugin (a plugin's onLoad could rewrite a dependency's text), nothing injected. */
export const bundleOptions = {
  entryPoints: [path.join(root, "src/bin/hl-deadman.ts")],
  tsconfig: path.join(root, "tsconfig.build.json"),
  outfile: bundle,
  bundle: true,
  // CommonJS: the CommonJS dependencies (pino, prom-client, got's helpers) keep their require, __dirname and
  // __filename; the ES modules' import.meta.url becomes the bundle's own URL (the banner below).
  format: "cjs",
  platform: "node",
  target: "node20",
  minify: true,
  // keep class and function names: error names (e.g. ConfigError) are part of what the CLI prints and logs
  keepNames: true,
  charset: "ascii",
  legalComments: "none",
  // pino-pretty formats a terminal's lines and is required from node_modules only then (src/core/logger.ts);
  // etcd3 is loaded only with --coordinate (src/replicas/election.ts), from node_modules as published: it
  // reads its gRPC .proto files from beside itself (__dirname), which a bundle would move
  external: ["pino-pretty", "etcd3"],
  define: { "import.meta.url": "__hlImportMetaUrl" },
  banner: { js: 'var __hlImportMetaUrl=require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
};

/** Bundles the CLI and writes the `bin` loader beside it. */
export async function bundleCli() {
  mkdirSync(outdir, { recursive: true });
  // What earlier builds left beside the bundle: V8 code caches (and their temporary files), split chunks, and
  // tsc's map and declarations of the unbundled file the loader replaces.
  rmSync(path.join(outdir, "chunks"), { recursive: true, force: true });
  for (const stale of readdirSync(outdir))
    if (
      /^hl-deadman\.cjs\..*\.(cache|tmp)$/.test(stale) ||
      /^hl-deadman\.(js\.map|d\.ts|d\.ts\.map)$/.test(stale)
    )
      rmSync(path.join(outdir, stale), { force: true });
  await build(bundleOptions);
  // The package's `bin`: an ES module (package.json "type": "module") that loads the bundle through CommonJS's
  // require, so node's ES-module loader does not scan the bundle for named exports first.
  writeFileSync(
    bin,
    [
      "#!/usr/bin/env node",
      '// Written by scripts/bundle.mjs: runs the bundled CLI (docs/development.md, "The build").',
      'import { createRequire } from "node:module";',
      'createRequire(import.meta.url)("./hl-deadman.cjs");',
      "",
    ].join("\n"),
  );
  chmodSync(bin, 0o755);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bundleCli();
