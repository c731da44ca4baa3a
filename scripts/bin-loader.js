#!/usr/bin/env node
// dist/bin/hl-deadman.js, the package's `bin` (written by scripts/bundle.mjs): loads the bundled CLI
// (dist/bin/hl-deadman.cjs) with V8's code cache (dist/bin/hl-deadman.cjs.cache, made at build time), so the
// ~1 MB bundle is deserialized instead of parsed and compiled at every start (BENCHMARKS.md, cold start).
//
// The cache is only a speed-up, never a source of code: its first 32 bytes are the SHA-256 of the bundle it was
// made from, and it is used only when they match the bundle read now (V8's own check is weaker: it compares the
// source length, not its contents). A missing, stale or foreign cache (another Node/V8 version: V8 rejects it)
// means an ordinary compile of the same bundle: slower by some tens of ms, nothing else.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

/**
 * The cache for node's flags: V8 rejects a cache made under other flags, so the build makes one without flags
 * (hl-deadman.cjs.cache: npm start, pm2, Docker) and one per flag set of the shipped units
 * (hl-deadman.cjs.<hash>.cache: the systemd units' and Kubernetes example's --max-old-space-size=160).
 */
export function cacheFileFor(file, execArgv, nodeOptions) {
  const flags = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].filter((f) => f !== "").join(" ");
  if (flags === "") return `${file}.cache`;
  return `${file}.${createHash("sha256").update(flags).digest("hex").slice(0, 12)}.cache`;
}

/** Compiles the bundle (with the cache when it matches) and returns its CommonJS wrapper function. */
function compile(file) {
  const cacheFile = cacheFileFor(file, process.execArgv, process.env.NODE_OPTIONS);
  const source = readFileSync(file);
  const digest = createHash("sha256").update(source).digest();
  let cachedData;
  try {
    const cache = readFileSync(cacheFile);
    if (cache.length > 32 && digest.equals(cache.subarray(0, 32))) cachedData = cache.subarray(32);
  } catch {}
  // The same wrapper as node's CommonJS loader: the bundle sees require, module, __filename and __dirname.
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${source.toString("latin1")}\n})`,
    { filename: file, cachedData },
  );
  // `node scripts/bundle.mjs` writes the cache after running `--version` once with this set: it then holds the
  // code that every command compiles before it parses its arguments.
  if (process.env.HL_DEADMAN_WRITE_CODE_CACHE === "1")
    process.once("exit", () => writeFileSync(cacheFile, Buffer.concat([digest, script.createCachedData()])));
  return script.runInThisContext();
}

// Compiled in a function: the file's and the cache's buffers (~2 MB) are garbage once it returns.
const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "hl-deadman.cjs");
const module = { exports: {}, filename: file, id: file, loaded: false };
compile(file)(module.exports, createRequire(file), module, file, path.dirname(file));
