#!/usr/bin/env node
// Lists every line in src/, test/ and docs/ that cites a document outside the repository (the team's research
// notes and specs, ../shared paths) instead of docs/*.md. Exit 1 when there is any, 0 when there is none.
// Usage: node scripts/check-citations.mjs [ROOT] [--readme]   (--readme also checks README.md)
// Exchange facts are cited as `docs/exchange-behaviour.md §N`. Code in src/ cites the repository's own operator docs
// (docs/cli.md, docs/operations.md, docs/observability.md, docs/evm.md, README.md), never the operator contract:
// docs/cli-contract.md is the team's shared contract, kept here for the tests that check the program against it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One pattern per way an outside document has been cited in this code base. */
export const OUTSIDE_CITATIONS = [
  { name: "research notes (api-facts)", re: /\bapi-facts\b/ },
  { name: "research notes (landscape)", re: /\blandscape(\.md)? §/ },
  { name: "research notes (signing.md)", re: /(?<![\w/-])signing\.md\b/ },
  { name: "research directory", re: /\bresearch\// },
  { name: "path outside the repository", re: /\.\.\/shared\b/ },
  { name: "service spec file", re: /\bservice-spec\b/ },
  { name: "spec section", re: /\bspec §/ },
  { name: "operator contract outside docs/", re: /(?<!docs\/)\bcli-contract(\.md)?\b/ },
  { name: "style guide", re: /\bstyle(\.md)? §|\bstyle\.md\b/ },
  {
    name: "operator contract in src/ (cite docs/cli.md or docs/operations.md)",
    re: /\bcli-contract\b/,
    only: "src",
  },
];

const SCANNED_DIRS = ["src", "test", "docs"];
const EXTENSIONS = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".md", ".json"]);

function* files(dir) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (name === "node_modules" || name === "__snapshots__" || name === "fixtures") continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* files(full);
    else if (EXTENSIONS.has(path.extname(name))) yield full;
  }
}

/** Every offending line under `root`, as `{ file, line, text, pattern }` with `file` relative to root. */
export function findOutsideCitations(root, { readme = false } = {}) {
  const found = [];
  const targets = SCANNED_DIRS.flatMap((d) => [...files(path.join(root, d))]);
  if (readme) targets.push(path.join(root, "README.md"));
  for (const file of targets) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    text.split("\n").forEach((line, i) => {
      const top = path.relative(root, file).split(path.sep)[0];
      for (const { name, re, only } of OUTSIDE_CITATIONS) {
        if (only !== undefined && only !== top) continue;
        if (re.test(line)) {
          found.push({ file: path.relative(root, file), line: i + 1, text: line.trim(), pattern: name });
          break;
        }
      }
    });
  }
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const root = path.resolve(
    args.find((a) => !a.startsWith("--")) ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."),
  );
  const found = findOutsideCitations(root, { readme: args.includes("--readme") });
  for (const f of found) console.log(`${f.file}:${f.line}: ${f.pattern}: ${f.text}`);
  if (found.length > 0) {
    console.error(
      `${found.length} line(s) cite documents outside the repository; cite docs/exchange-behaviour.md §N or the operator docs (docs/cli.md, docs/operations.md) instead.`,
    );
    process.exit(1);
  }
  console.error("check-citations: every citation points inside the repository.");
}
