import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { CONFIG_DOCS, CONFIG_KEYS, configJsonSchema, loadConfig } from "../../src/config/load.js";
import { BLOCK_DOCS } from "../../src/config/options.js";
import { ConfigSchema, DEFAULTS } from "../../src/config/schema.js";
import { issuesOf } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const EXAMPLE = resolve(ROOT, "config/example.json");

describe("loadConfig", () => {
  test("default: defaults come from DEFAULTS", () => {
    const { config, warnings, actionsPerDay, sources } = loadConfig({ env: {}, cwd: "/tmp" });
    expect(config.interval).toBe(DEFAULTS.interval);
    expect(config.deadline).toBe(DEFAULTS.deadline);
    expect(warnings).toEqual([]);
    expect(actionsPerDay).toBe(5_760);
    expect(sources.interval).toBe("default");
  });

  test("behavior: file < env < flags, with the source of each value", () => {
    const { config, sources } = loadConfig({
      options: { config: EXAMPLE, deadline: "90s", account: ["0xAbCdEf0123456789abcdef0123456789ABCDEF01"] },
      env: { HL_INTERVAL: "20s", HL_DEADLINE: "80s", STATE_DIRECTORY: "/var/lib/a:/var/lib/b" },
      cwd: "/tmp",
    });
    expect(config.interval).toBe(20_000);
    expect(sources.interval).toBe("env HL_INTERVAL");
    expect(config.deadline).toBe(90_000);
    expect(sources.deadline).toBe("flag --deadline");
    expect(config.requestTimeout).toBe(5_000);
    expect(sources.requestTimeout).toBe(`file ${EXAMPLE}`);
    expect(config.accounts).toEqual(["0xabcdef0123456789abcdef0123456789abcdef01"]);
    expect(config.stateDir).toBe("/var/lib/a");
    expect(sources.stateDir).toBe("env STATE_DIRECTORY");
    const env = loadConfig({
      env: {
        HL_ACCOUNTS:
          " 0x1111111111111111111111111111111111111111, 0x2222222222222222222222222222222222222222 ",
      },
    });
    expect(env.config.accounts).toHaveLength(2);
  });

  test("behavior: config/example.json documents every key and parses through the loader", () => {
    const example = JSON.parse(readFileSync(EXAMPLE, "utf8")) as Record<string, unknown>;
    for (const s of CONFIG_KEYS) {
      const [top, sub] = s.key.split(".");
      const holder = sub ? (example[top!] as Record<string, unknown>) : example;
      expect(String(holder[`//${sub ?? top}`]), s.key).toContain(CONFIG_DOCS[s.key]!);
    }
    const { config } = loadConfig({ options: { config: EXAMPLE }, env: {}, cwd: ROOT });
    expect(config.interval).toBe(15_000);
    expect(config.thresholds.maxLeverage).toBe(5);
  });

  test("behavior: the table of options covers exactly the schema's keys", () => {
    const shape = ConfigSchema.shape as Record<string, unknown>;
    const top = new Set([...CONFIG_KEYS.map((s) => s.key.split(".")[0]), ...Object.keys(BLOCK_DOCS)]);
    expect([...top].sort()).toEqual(Object.keys(shape).sort());
    expect(Object.keys(CONFIG_DOCS).filter((k) => k !== "thresholds")).toEqual(CONFIG_KEYS.map((s) => s.key));
  });

  test("behavior: config/schema.json equals a fresh generation", () => {
    const committed = JSON.parse(readFileSync(resolve(ROOT, "config/schema.json"), "utf8"));
    expect(committed).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
  });

  test("error: every issue is listed, each with the key, the value, the rule and the source", () => {
    const issues = issuesOf(() =>
      loadConfig({
        options: { interval: "soon", network: "moon" },
        env: { HL_TRIGGER_LIMIT: "ten", HL_VAULT: "0x12" },
      }),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringContaining('interval = "soon" (flag --interval): must be a duration'),
        expect.stringContaining('triggerLimit = "ten" (env HL_TRIGGER_LIMIT): must be a whole number'),
      ]),
    );
    expect(issues.length).toBe(4);
    const schemaIssues = issues;
    expect(schemaIssues.some((i) => i.startsWith('network = "moon" (flag --network)'))).toBe(true);
    expect(
      schemaIssues.some((i) => i.startsWith('vault = "0x12" (env HL_VAULT): must be 0x followed by 40')),
    ).toBe(true);
  });

  test("error: cross-field rules (deadline floor, retries before the deadline, interval <= deadline/2)", () => {
    expect(issuesOf(() => loadConfig({ options: { deadline: "8s", interval: "2s" } }))[0]).toContain(
      "deadline = 8s (flag --deadline): must be at least 11s",
    );
    const issues = issuesOf(() => loadConfig({ options: { interval: "40s", deadline: "50s" } }));
    expect(issues.join("\n")).toContain("interval + 2 x requestTimeout + 5s = 55s");
    expect(issues.join("\n")).toContain("must be at most half the deadline (25s)");
    expect(
      issuesOf(() => loadConfig({ options: { guardFile: "/a", guardUrl: "http://127.0.0.1:1/h" } }))[0],
    ).toContain("set one engine guard, not both");
    // the guard URL's credentials are never printed, even in this message
    const both = issuesOf(() =>
      loadConfig({ options: { guardFile: "/a", guardUrl: "http://ops:hunter2@127.0.0.1:1/h" } }),
    )[0];
    expect(both).toContain("set one engine guard, not both");
    expect(both).not.toContain("hunter2");
    expect(
      issuesOf(() =>
        loadConfig({ options: { watchAddress: ["0x1111111111111111111111111111111111111111"] } }),
      )[0],
    ).toContain("needs rpcUrl");
  });

  test("behavior: warnings for budget-burning or trigger-prone settings", () => {
    const { warnings, actionsPerDay } = loadConfig({
      options: { interval: "1s", deadline: "10s", requestTimeout: "2s" },
    });
    expect(actionsPerDay).toBe(86_400);
    expect(warnings.join("\n")).toContain("86,400 scheduleCancel actions per day");
    expect(warnings.join("\n")).toContain("deadline 10s is below 30s");
    expect(loadConfig({ options: { deadline: "20m" } }).warnings.join("\n")).toContain("above 10m");
  });

  test("error: a config file with an unknown key or bad JSON", () => {
    const dir = mkdtempSync("/tmp/hl-cfg-");
    const file = `${dir}/c.json`;
    writeFileSync(file, '{ "intervall": "15s" }');
    expect(issuesOf(() => loadConfig({ options: { config: file } }))[0]).toContain("intervall (file");
    writeFileSync(file, "{ not json");
    expect(issuesOf(() => loadConfig({ options: { config: file } }))[0]).toContain("is not valid JSON");
  });

  test("error: bad JSON is placed by line and column; a bare small duration in the file suggests seconds", () => {
    const dir = mkdtempSync("/tmp/hl-cfg-");
    const file = `${dir}/c.json`;
    writeFileSync(file, '{\n  "interval": "15s",\n  "deadline" "60s"\n}\n');
    expect(issuesOf(() => loadConfig({ options: { config: file } }))[0]).toContain(
      "is not valid JSON at line 3, column 14",
    );
    writeFileSync(file, '{\n  "interval": "15s",\n');
    expect(issuesOf(() => loadConfig({ options: { config: file } }))[0]).toContain(
      "is not valid JSON at line 3, column 1",
    );
    writeFileSync(file, '{ "interval": 5 }');
    const issues = issuesOf(() => loadConfig({ options: { config: file } }));
    expect(issues.find((i) => i.startsWith("interval = "))).toContain(
      'a number in the config file is milliseconds: did you mean "5s"?',
    );
    // a number that passes is left alone: 15000 ms is the default's 15 s
    writeFileSync(file, '{ "interval": 15000 }');
    expect(loadConfig({ options: { config: file } }).config.interval).toBe(15_000);
  });
});
