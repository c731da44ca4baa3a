// The process tests' compile cache: a preload (`node --require`) that test/helpers/process.ts gives the CLIs the
// suite spawns, and nothing else. The product never reads or writes a code cache (docs/security.md, "The build").
//
// Why: every spawned CLI has V8 compile the 1.6 MB bundle (dist/bin/hl-deadman.cjs) from its text (~0.1 s of CPU),
// then again each function a command runs, on its first call; the suite spawns some 300 of them. Here the first
// process of a command keeps V8's code of the bundle (with the functions it ran) in .cache/test-code/ (ignored by git
// and the image's build context), and the next ones start from it: a `run --sim` to its first push ~0.16 s of CPU
// less, `--version` ~0.08 s (docs/development.md, "The suite's time"). Node 22's module compile cache does this;
// Node 20 has none.
//
// The code run is the same: V8 takes a cache only for the same V8, the same flags and a source of the same length,
// and compiles from the text otherwise; the file's name carries the bundle's sha256 besides, since two builds of one
// length (another commit's stamp) would pass V8's own check. A cache is written once, by the first process of its
// command: 2 s after the start or at exit, whichever comes first, into a temporary file and then renamed (a reader
// sees a whole file or none; V8 refuses a short one). A process that cannot write it (another user, a read-only
// tree) runs on without.
"use strict";
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const vm = require("node:vm");

const BUNDLE = path.resolve(__dirname, "../../dist/bin/hl-deadman.cjs");
const DIR = path.resolve(__dirname, "../../.cache/test-code");
const compile = Module.prototype._compile;

Module.prototype._compile = function compileBundle(content, filename) {
  if (filename !== BUNDLE || importsAModule()) return compile.call(this, content, filename);
  Module.prototype._compile = compile;
  const key = createHash("sha256")
    .update(content)
    .update(`\0${process.version}\0${process.execArgv.join("\0")}`)
    .digest("hex")
    .slice(0, 24);
  const command = /^[a-z][a-z-]{0,30}$/.test(process.argv[2] ?? "") ? process.argv[2] : "other";
  const file = path.join(DIR, `${command}-${key}.v8`);
  let cachedData;
  try {
    cachedData = fs.readFileSync(file);
  } catch {
    cachedData = undefined;
  }
  // The text as node's own loader compiles it: inside the module wrapper, the #! line emptied (it is legal only at
  // the very start of a script; the line stays, so every line keeps its number).
  const text = content.startsWith("#!") ? content.replace(/^#![^\n]*/, "") : content;
  const script = new vm.Script(Module.wrap(text), {
    filename,
    cachedData,
  });
  if (cachedData === undefined || script.cachedDataRejected) keep(script, file);
  const wrapper = script.runInThisContext({ displayErrors: true });
  return wrapper.call(this.exports, this.exports, requireOf(this), this, filename, path.dirname(filename));
};

/**
 * A script V8 made from a cache has no import(): node 20 gives a vm script one only through
 * --experimental-vm-modules or, compiled from its text, an experimental constant that warns on stderr. The bundle's
 * one import() is etcd3's (src/replicas/election.ts), for the coordinated replicas (`--coordinate`, HL_COORDINATE)
 * and the `replicas` command, which therefore compile as node does. (A configuration file naming `coordinate` is
 * not seen here: its spawn passes `codeCache: false`, test/helpers/process.ts; without it the start fails loudly.)
 */
function importsAModule() {
  const argv = process.argv.slice(2);
  return (
    argv[0] === "replicas" ||
    argv.some((a) => a === "--coordinate" || a.startsWith("--coordinate=")) ||
    (process.env.HL_COORDINATE ?? "") !== ""
  );
}

/** The `require` node's loader gives a module (lib/internal/modules/helpers.js, makeRequireFunction). */
function requireOf(mod) {
  const require = (id) => mod.require(id);
  require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  require.resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

/** Writes the script's code once: 2 s after the start (a daemon has pushed by then) or at exit. */
function keep(script, file) {
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(DIR, { recursive: true });
      fs.writeFileSync(temporary, script.createCachedData());
      fs.renameSync(temporary, file);
    } catch {
      try {
        fs.rmSync(temporary, { force: true });
      } catch {}
    }
  };
  setTimeout(write, 2_000).unref();
  process.once("exit", write);
}
