/**
 * Configuration messages a newcomer meets (issue 31, items 6, 11 and the hostile review): each names the likely fix,
 * and every problem comes at once.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { nearestKeys } from "../../src/config/file.js";
import { loadConfig, OPTIONS } from "../../src/config/load.js";
import { cli } from "../helpers/cli.js";
import { issuesOf } from "./helpers.js";

const tmp = mkdtempSync(path.join(tmpdir(), "hl-messages-"));

describe("suggestions", () => {
  test("error: --health 9464 suggests 127.0.0.1:9464", () => {
    const [issue] = issuesOf(() => loadConfig({ options: { health: "9464" } }));
    expect(issue).toContain('health = "9464" (flag --health)');
    expect(issue).toContain("did you mean 127.0.0.1:9464");
  });

  test("error: --api-url 127.0.0.1:8080 (and HL_API_URL=localhost:8080) suggests the http:// form", () => {
    const [flag] = issuesOf(() => loadConfig({ options: { apiUrl: "127.0.0.1:8080" } }));
    expect(flag).toContain('did you mean "http://127.0.0.1:8080"?');
    const [env] = issuesOf(() => loadConfig({ env: { HL_API_URL: "localhost:8080" } }));
    expect(env).toContain('did you mean "http://localhost:8080"?');
    // a URL with a scheme gets no such suggestion
    const [ftp] = issuesOf(() => loadConfig({ options: { apiUrl: "ftp://127.0.0.1:8080" } }));
    expect(ftp).not.toContain("did you mean");
  });

  test("error: an --api-url that ends with /exchange or /info is refused with the base URL to use", () => {
    for (const suffix of ["/exchange", "/info", "/exchange/"]) {
      const issues = issuesOf(() => loadConfig({ options: { apiUrl: `http://127.0.0.1:8080${suffix}` } }));
      expect(issues).toHaveLength(1);
      expect(issues[0]).toContain("/exchange and /info are appended");
      expect(issues[0]).toContain('did you mean "http://127.0.0.1:8080"?');
    }
    expect(loadConfig({ options: { apiUrl: "http://127.0.0.1:8080/api" } }).config.apiUrl).toBe(
      "http://127.0.0.1:8080/api",
    );
  });

  test("error: a key typo names the nearest key(s), not the whole list", () => {
    const file = path.join(tmp, "typo.json");
    writeFileSync(file, JSON.stringify({ intervall: "15s", thresholds: { maxLeverag: 3 } }));
    const issues = issuesOf(() => loadConfig({ options: { config: file } }));
    expect(issues[0]).toBe(`intervall (file ${file}): unknown key; did you mean interval?`);
    expect(issues[1]).toBe(
      `thresholds.maxLeverag (file ${file}): unknown key; did you mean thresholds.maxLeverage?`,
    );
    expect(issues.join("\n")).not.toContain("exposureChunkSize");
    const known = OPTIONS.map((o) => o.key);
    expect(nearestKeys("deadlin", known)).toEqual(["deadline"]);
    expect(nearestKeys("notifyUrl", known)).toEqual(["notifyUrls"]);
    expect(nearestKeys("zzz", known)).toEqual([]);
  });
});

describe("every problem at once", () => {
  test("error: a bad URL, an unknown key and a cross-field rule come in one report", () => {
    const file = path.join(tmp, "all.json");
    writeFileSync(file, JSON.stringify({ intervall: "15s", apiUrl: "127.0.0.1:8080", deadline: "20s" }));
    const issues = issuesOf(() => loadConfig({ options: { config: file } }));
    expect(issues.some((i) => i.startsWith("intervall"))).toBe(true);
    expect(issues.some((i) => i.startsWith("apiUrl"))).toBe(true);
    // deadline 20s < interval 15s + 2 x 5s + 5s: the rule is reported with the others, not after a fix
    expect(issues.some((i) => i.startsWith("deadline = 20s") && i.includes("two retries"))).toBe(true);
  });

  test("default: no rule is judged on a key that is itself wrong", () => {
    const issues = issuesOf(() => loadConfig({ options: { interval: "15", deadline: "20s" } }));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toContain("interval");
    expect(issues[0]).toContain("did you mean 15s?");
  });
});

describe("a private key pasted with a digit lost or doubled is never echoed", () => {
  const key = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
  test.each([
    ["63 digits", `0x${key.slice(1)}`],
    ["65 digits", `0x${key}0`],
    ["63 digits, no 0x", key.slice(1)],
  ])("error: --account with %s", async (_name, value) => {
    const r = await cli(["config", "check", "--no-key", "--account", value]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("hex digits masked");
    expect(r.stderr).not.toContain(key.slice(1, 60));
    const json = await cli(["config", "check", "--no-key", "--account", value, "--json"]);
    expect(json.stdout + json.stderr).not.toContain(key.slice(1, 60));
  });

  test("default: an address (40 digits) stays readable", async () => {
    const r = await cli(["config", "check", "--no-key", "--account", "0x12345"]);
    expect(r.stderr).toContain("0x12345");
  });
});
