/**
 * `npm run docs:generate`: rewrites the generated sections of the docs (the option table in docs/operations.md and
 * the reliability matrix in docs/reliability.md, the error policy in docs/errors.md; test/docs/generated.ts) from
 * their sources.
 * test/docs/generated.test.ts fails while a document is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GENERATED, updateGenerated } from "../test/docs/generated.js";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
for (const file of new Set(GENERATED.map((g) => g.file))) {
  const names = GENERATED.filter((g) => g.file === file).map((g) => g.name);
  const before = readFileSync(path.join(root, file), "utf8");
  const after = updateGenerated(before, names);
  if (after === before) {
    console.log(`${file} is current.`);
  } else {
    writeFileSync(path.join(root, file), after);
    console.log(`${file}: generated sections rewritten.`);
  }
}
