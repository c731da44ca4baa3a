import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { VERSION } from "../src/core/version.js";
import * as lib from "../src/index.js";

describe("package root", () => {
  test("default: exports the contract's library surface", () => {
    // docs/cli-contract.md, "Package": at least these.
    for (const name of [
      "signL1Action",
      "recoverL1ActionSigner",
      "ExchangeClient",
      "InfoClient",
      "EvmClient",
      "startSimulator",
    ]) {
      expect(typeof (lib as Record<string, unknown>)[name], name).toBe("function");
    }
  });

  test("behavior: the export list is deliberate (snapshot)", () => {
    expect(Object.keys(lib).sort()).toMatchSnapshot();
  });

  test("behavior: VERSION matches package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
  });
});
