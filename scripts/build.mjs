// `npm run build`: tsc (dist/, the library and its declarations), then scripts/bundle.mjs (the CLI as one bundled
// file, dist/bin/hl-deadman.cjs, and its loader over dist/bin/hl-deadman.js), then a stamp (dist/.build-stamp)
// recording that dist/ matches the sources. The build compiles and bundles; it never runs the program
// (test/deploy/build.test.ts).
//
// `node scripts/build.mjs --if-stale` (npm start's prestart) builds only when an input is newer than the stamp:
// a second `npm start` after `npm ci` (whose `prepare` built dist/) starts at once instead of spending ~7 s in tsc.
// Inputs: everything under src/ and scripts/ (the build's own scripts included),
// package.json, package-lock.json, tsconfig*.json.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const STAMP = path.join(root, "dist/.build-stamp");
const OUTPUTS = ["dist/index.js", "dist/bin/hl-deadman.js", "dist/bin/hl-deadman.cjs"];
const INPUT_FILES = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"];
/** Directories whose every file is an input: a script the bundle imports cannot be left off a list. */
const INPUT_DIRS = ["src", "scripts"];

/** The newest modification time (ms) under a directory, walking it fully (src/ is ~100 files). */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestUnder(full));
    else newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** Why dist/ must be rebuilt, or null when it is current. */
export function staleReason() {
  if (!existsSync(STAMP)) return "no build stamp";
  for (const out of OUTPUTS) if (!existsSync(path.join(root, out))) return `${out} is missing`;
  const built = statSync(STAMP).mtimeMs;
  for (const file of INPUT_FILES) {
    const full = path.join(root, file);
    if (existsSync(full) && statSync(full).mtimeMs > built) return `${file} changed`;
  }
  for (const dir of INPUT_DIRS) if (newestUnder(path.join(root, dir)) > built) return `${dir}/ changed`;
  return null;
}

function run(script, args) {
  const r = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

/**
 * dist/build-info.json: what `hl-deadman --version` prints besides the version (src/core/version.ts): the commit the
 * build was made from (null outside a git checkout) and the build's date. Read by the program, never made by
 * running it; it ships in the package with dist/. The commit is read from git's own files (HEAD, the ref it names,
 * packed-refs; a worktree's `.git` file points to its git directory), not by running git: the build starts no
 * program but tsc and the bundler (test/deploy/build.test.ts).
 */
function headCommit() {
  try {
    let gitDir = path.join(root, ".git");
    if (statSync(gitDir).isFile()) {
      const m = /^gitdir: (.+)$/m.exec(readFileSync(gitDir, "utf8"));
      if (!m) return null;
      gitDir = path.resolve(root, m[1].trim());
    }
    // a linked worktree keeps its refs in the common directory
    const common = existsSync(path.join(gitDir, "commondir"))
      ? path.resolve(gitDir, readFileSync(path.join(gitDir, "commondir"), "utf8").trim())
      : gitDir;
    const head = readFileSync(path.join(gitDir, "HEAD"), "utf8").trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (!ref) return /^[0-9a-f]{40}$/.test(head) ? head : null;
    for (const dir of [gitDir, common]) {
      const file = path.join(dir, ref);
      if (existsSync(file)) return readFileSync(file, "utf8").trim();
    }
    const packed = path.join(common, "packed-refs");
    if (!existsSync(packed)) return null;
    for (const line of readFileSync(packed, "utf8").split("\n")) {
      const [sha, name] = line.split(" ");
      if (name === ref && /^[0-9a-f]{40}$/.test(sha ?? "")) return sha;
    }
    return null;
  } catch {
    return null;
  }
}

function writeBuildInfo(startedAt) {
  const head = headCommit();
  const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const info = { version, commit: head === null ? null : head.slice(0, 12), date: startedAt.toISOString() };
  writeFileSync(path.join(root, "dist/build-info.json"), `${JSON.stringify(info)}\n`);
}

export function build() {
  const require = createRequire(import.meta.url);
  // the stamp goes first (older than every output), so an edit made during the build is seen next time
  const startedAt = new Date();
  run(require.resolve("typescript/bin/tsc"), ["-p", "tsconfig.build.json"]);
  run(path.join(root, "scripts/bundle.mjs"), []);
  writeBuildInfo(startedAt);
  writeFileSync(STAMP, `${startedAt.toISOString()}\n`);
  utimesSync(STAMP, startedAt, startedAt);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--if-stale")) {
    const reason = staleReason();
    if (reason !== null) {
      process.stderr.write(`hl-deadman: building dist/ (${reason})\n`);
      build();
    }
  } else build();
}
