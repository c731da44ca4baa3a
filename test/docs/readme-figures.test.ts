/**
 * What the README's rehearsal quotes of the simulator is what the simulator does: the demo account's open orders (the
 * TRIGGER line's count) and the explorer's default with a custom --api-url (none: src/config/networks.ts).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { effectiveExplorerUrl } from "../../src/config/networks.js";
import { OPTIONS } from "../../src/config/options.js";
import { demoUser } from "../../src/sim/demo.js";
import { ROOT } from "../helpers/process.js";

const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");

describe("README figures", () => {
  test("default: the TRIGGER line's count is the demo account's open orders", () => {
    const quoted = /TRIGGER 0xf069… cancelled\s+(\d+) open order\(s\)/.exec(readme);
    expect(quoted, "the README quotes the simulator's TRIGGER line").not.toBeNull();
    expect(Number(quoted![1])).toBe(demoUser("0x0000000000000000000000000000000000000001").orders?.length);
  });

  test("behavior: with a custom --api-url and no --explorer-url there is no explorer, as the README says", () => {
    const defaults = Object.fromEntries(OPTIONS.map((o) => [o.key, o.default])) as Parameters<
      typeof effectiveExplorerUrl
    >[0];
    expect(effectiveExplorerUrl({ ...defaults, apiUrl: "http://127.0.0.1:8080" })).toBeNull();
    expect(readme).toContain("no record is read at all");
    expect(readme).not.toContain("reach for the mainnet explorer");
  });
});
