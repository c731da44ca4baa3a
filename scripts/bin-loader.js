#!/usr/bin/env node
// dist/bin/hl-deadman.js, the package's `bin` (copied here by scripts/bundle.mjs): runs the bundled CLI
// (dist/bin/hl-deadman.cjs) with V8's code cache for the running node and its flags
// (dist/bin/hl-deadman.cjs.<tag>.cache), so the ~1 MB bundle is deserialized instead of parsed and compiled at
// every start (BENCHMARKS.md, cold start; docs/development.md, "The build").
//
// <tag> is v8.cachedDataVersionTag(): V8's version, its flags and the CPU's features. V8 refuses a cache made
// under another tag, so the build makes one per flag set the deployments start node with, and a node upgrade
// simply finds no file for its tag. The cache is only a speed-up, never a source of code: its first 32 bytes are
// the SHA-256 of the bundle it was made from, and it is used only when they match the bundle read now (V8's own
// check compares the source's length, not its contents). A missing, stale, foreign or damaged cache means an
// ordinary compile of the same bundle: slower by some tens of ms, nothing else.
//
// HL_DEADMAN_CODE_CACHE (build and install time only; docs/development.md):
//   write   make the cache for this node and these flags, at exit (scripts/bundle.mjs runs `run` up to its first
//           push so; after a node upgrade, `--version` will do)
//   report  print to stderr which cache was used: "code cache: used|rejected|stale|absent <file>" (stale: made
//           from another bundle; rejected: refused by V8)
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";

/** The cache file for the running node and its flags. */
const cacheFileFor = (bundle) => `${bundle}.${v8.cachedDataVersionTag()}.cache`;

/** Compiles the bundle (with the cache when it matches) and returns its CommonJS wrapper function. */
function compile(file, mode) {
  const cacheFile = cacheFileFor(file);
  const source = readFileSync(file);
  const digest = createHash("sha256").update(source).digest();
  let cachedData;
  let state = "absent";
  try {
    const cache = readFileSync(cacheFile);
    state = "stale";
    if (cache.length > 32 && digest.equals(cache.subarray(0, 32))) cachedData = cache.subarray(32);
  } catch {}
  // The same wrapper as node's CommonJS loader: the bundle sees require, module, __filename and __dirname.
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${source.toString("latin1")}\n})`,
    { filename: file, cachedData },
  );
  if (mode === "report") {
    if (cachedData !== undefined) state = script.cachedDataRejected ? "rejected" : "used";
    process.stderr.write(`code cache: ${state} ${cacheFile}\n`);
  }
  // At exit the script holds the code of everything the command compiled (`--version`: the bundle's top level
  // and every module it evaluates, which every command compiles before it parses its arguments; `run`: also the
  // daemon's start path).
  if (mode === "write")
    process.once("exit", () => {
      const temp = `${cacheFile}.${process.pid}.tmp`;
      const fd = openSync(temp, "w", 0o644);
      writeFileSync(fd, Buffer.concat([digest, script.createCachedData()]));
      fsyncSync(fd);
      closeSync(fd);
      renameSync(temp, cacheFile);
    });
  return script.runInThisContext();
}

// Compiled in a function: the file's and the cache's buffers (~2 MB) are garbage once it returns.
const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "hl-deadman.cjs");
const module = { exports: {}, filename: file, id: file, loaded: false };
compile(file, process.env.HL_DEADMAN_CODE_CACHE)(
  module.exports,
  createRequire(file),
  module,
  file,
  path.dirname(file),
);
