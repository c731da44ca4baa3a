/**
 * `npm run docs:readme`: rewrites the generated sections of README.md (the option table and the reliability
 * matrix, test/docs/readme.ts) from their sources. test/docs/readme.test.ts fails while the README is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { updateReadme } from "../test/docs/readme.js";

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "README.md");
const before = readFileSync(file, "utf8");
const after = updateReadme(before);
if (after === before) {
  console.log("README.md is current.");
} else {
  writeFileSync(file, after);
  console.log("README.md: generated sections rewritten.");
}
