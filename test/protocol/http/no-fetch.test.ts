/**
 * Nothing in src/ uses the global `fetch`, `WebSocket`, `EventSource` or `WebAssembly`, nor imports undici: the first three are undici,
 * whose HTTP parser is WebAssembly, and the shipped node flags (`--jitless --no-expose-wasm`, docs/operations.md,
 * "Node flags") turn WebAssembly off: the first call throws `ReferenceError: WebAssembly is not defined`. Every
 * HTTP call goes through src/protocol/http/http.ts (got on node:http).
 *
 * Two checks: biome's rules (biome.json, `overrides` for src/**: noRestrictedGlobals, noRestrictedImports), which
 * `npm run lint` runs, and this scan with TypeScript's checker, which also sees what biome does not: a global
 * reached through `globalThis.fetch` or `global.WebSocket`, or a type taken from one (`typeof fetch`).
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, test } from "vitest";
import { ROOT } from "../../helpers/process.js";

/** The globals that are undici (and need WebAssembly), and the modules that are. */
const DENIED_GLOBALS = new Set(["fetch", "WebSocket", "EventSource", "WebAssembly"]);
const DENIED_MODULES = new Set(["undici", "node:undici"]);

/** Where the global declarations live: TypeScript's default libraries and @types/node. */
function isGlobalDeclarationFile(fileName: string): boolean {
  return (
    /[\\/]typescript[\\/]lib[\\/]lib\..*\.d\.ts$/.test(fileName) || /[\\/]@types[\\/]node[\\/]/.test(fileName)
  );
}

/** Every use, in the program's files under `dir`, of a denied global or module, as `file:line: what`. */
function deniedUses(program: ts.Program, dir: string): string[] {
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || relative(dir, file.fileName).startsWith("..")) continue;
    const at = (node: ts.Node, what: string) => {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      found.push(`${relative(dir, file.fileName)}:${line + 1}: ${what}`);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && DENIED_GLOBALS.has(node.text)) {
        const symbol = checker.getSymbolAtLocation(node);
        const declarations = symbol?.declarations ?? [];
        if (declarations.some((d) => isGlobalDeclarationFile(d.getSourceFile().fileName)))
          at(node, `global ${node.text}`);
      }
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier) &&
        DENIED_MODULES.has(node.moduleSpecifier.text)
      )
        at(node, `import of ${node.moduleSpecifier.text}`);
      if (
        ts.isCallExpression(node) &&
        (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
          (ts.isIdentifier(node.expression) && node.expression.text === "require")) &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0]) &&
        DENIED_MODULES.has(node.arguments[0].text)
      )
        at(node, `import of ${node.arguments[0].text}`);
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found.sort();
}

/** The files under `dir` that import `module` (a value import; `import type` is erased), relative to `dir`. */
function importersOf(program: ts.Program, dir: string, module: string): string[] {
  const found = new Set<string>();
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || relative(dir, file.fileName).startsWith("..")) continue;
    for (const statement of file.statements) {
      if (
        ts.isImportDeclaration(statement) &&
        ts.isStringLiteral(statement.moduleSpecifier) &&
        statement.moduleSpecifier.text === module &&
        !statement.importClause?.isTypeOnly
      )
        found.add(relative(dir, file.fileName));
    }
  }
  return [...found].sort();
}

/** A program over `rootNames`, with the project's compiler options. */
function programOf(rootNames: string[]): ts.Program {
  const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return ts.createProgram({
    rootNames,
    options: { ...parsed.options, noEmit: true, typeRoots: [join(ROOT, "node_modules/@types")] },
  });
}

describe("no global fetch, WebSocket or undici in src/", () => {
  test("behavior: the scan finds none in src/", () => {
    const src = join(ROOT, "src");
    const files = ts.sys.readDirectory(src, [".ts"], undefined, ["**/*"]);
    expect(files.length).toBeGreaterThan(50);
    const program = programOf(files);
    expect(deniedUses(program, src)).toEqual([]);
    // One transport: got is created in one place, with followRedirect off (test/protocol/http/redirect.test.ts).
    expect(importersOf(program, src, "got")).toEqual(["protocol/http/http.ts"]);
  }, 60_000);

  test("behavior: the scan finds each way of reaching them (a planted file)", () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-deadman-no-fetch-"));
    try {
      const file = join(dir, "planted.ts");
      writeFileSync(
        file,
        [
          'export const a = () => fetch("http://127.0.0.1/");',
          'export const b = () => globalThis.fetch("http://127.0.0.1/");',
          'export const c = () => new WebSocket("ws://127.0.0.1/");',
          "export type D = typeof fetch;",
          'export const e = () => import("undici");',
          // not the global: a local of the same name, a property of our own, a word in a string
          'const fetchLike = { fetch: (u: string) => u }; export const f = fetchLike.fetch("fetch");',
          "export function g(fetch: (u: string) => string) { return fetch('x'); }",
          "",
        ].join("\n"),
      );
      expect(deniedUses(programOf([file]), dir)).toEqual([
        "planted.ts:1: global fetch",
        "planted.ts:2: global fetch",
        "planted.ts:3: global WebSocket",
        "planted.ts:4: global fetch",
        "planted.ts:5: import of undici",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("behavior: biome's rules for src/ refuse them too, and src/ passes them", () => {
    const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
    const only = ["--only=style/noRestrictedGlobals", "--only=style/noRestrictedImports"];
    const clean = spawnSync(process.execPath, [biome, "lint", ...only, "src"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(clean.status, clean.stdout + clean.stderr).toBe(0);
    // A planted file, under src/ of a copy of the project's biome.json (without its git settings) in a temporary
    // directory: the override applies by path.
    const dir = mkdtempSync(join(tmpdir(), "hl-deadman-no-fetch-biome-"));
    let planted: SpawnSyncReturns<string>;
    try {
      const config = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8")) as Record<string, unknown>;
      delete config.vcs;
      delete config.$schema;
      writeFileSync(join(dir, "biome.json"), JSON.stringify(config));
      mkdirSync(join(dir, "src"));
      writeFileSync(
        join(dir, "src/planted.ts"),
        'import { request } from "undici";\nexport const a = () => fetch("x");\nexport const b = request;\n',
      );
      planted = spawnSync(process.execPath, [biome, "lint", ...only, "--reporter=json", "src"], {
        cwd: dir,
        encoding: "utf8",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const rules = [...planted.stdout.matchAll(/"category":"(lint\/style\/noRestricted\w+)"/g)].map(
      (m) => m[1],
    );
    expect(rules.sort(), planted.stdout + planted.stderr).toEqual([
      "lint/style/noRestrictedGlobals",
      "lint/style/noRestrictedImports",
    ]);
  }, 60_000);
});
