/**
 * The shipped Prometheus rules and Alertmanager example, proven by the programs that consume them:
 * `promtool check rules`, `promtool test rules` (deploy/prometheus/hl-deadman.rules.test.yml: every alert
 * firing and not firing, with its real `for:` window), `amtool check-config` and `amtool config routes test`.
 * A missing program fails the test with the apt-get command (test/helpers/binaries.ts).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { createMetrics } from "../../src/surface/metrics.js";
import { requireBinary } from "../helpers/binaries.js";

const root = resolve(import.meta.dirname, "../..");
const RULES = join(root, "deploy/prometheus/hl-deadman.rules.yml");
const RULE_TESTS = join(root, "deploy/prometheus/hl-deadman.rules.test.yml");
const AM_CONFIG = join(root, "deploy/alertmanager/hl-deadman.alertmanager.yml");
const rulesText = readFileSync(RULES, "utf8");
const alerts = [...rulesText.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]!);

function run(bin: string, args: string[]) {
  const r = spawnSync(requireBinary(bin), args, { encoding: "utf8", timeout: 15_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("Prometheus rules (promtool)", () => {
  test("behavior: promtool check rules accepts the file", () => {
    const r = run("promtool", ["check", "rules", RULES]);
    expect(r.out).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.code).toBe(0);
  });

  test("behavior: promtool test rules passes every unit test", () => {
    const r = run("promtool", ["test", "rules", RULE_TESTS]);
    expect(r.out, r.out).toContain("SUCCESS");
    expect(r.out).not.toContain("FAILED");
    expect(r.code).toBe(0);
  });

  test("the issue's alerts exist, each with a unit test firing and one not firing", () => {
    for (const name of [
      "HlDeadmanDown",
      "HlDeadmanAbsent",
      "HlDeadmanNotProtected",
      "HlDeadmanTriggerBudgetExhausted",
      "HlDeadmanTriggerBudgetLow",
      "HlDeadmanTriggerFired",
      "HlDeadmanProtectionLow",
      "HlDeadmanPushesFailing",
      "HlDeadmanEngineDown",
      "HlDeadmanClockSkew",
      "HlDeadmanClockSuspect",
      "HlDeadmanExposureStale",
      "HlDeadmanNearLiquidation",
      "HlDeadmanAddressBudgetLow",
    ])
      expect(alerts).toContain(name);
    const tests = readFileSync(RULE_TESTS, "utf8");
    for (const name of alerts) {
      expect(tests, `${name} firing`).toMatch(
        new RegExp(`alertname: ${name}\\n\\s+exp_alerts:\\n\\s+- exp_labels`),
      );
      expect(tests, `${name} not firing`).toMatch(new RegExp(`alertname: ${name}\\n\\s+exp_alerts: \\[\\]`));
    }
  });

  test("every hl_deadman_ metric the rules use is one the daemon exports", () => {
    const exported = new Set<string>();
    const { registry } = createMetrics();
    for (const m of registry.getMetricsAsArray()) {
      const { name, type } = m as unknown as { name: string; type: string };
      exported.add(name);
      if (type === "histogram") for (const s of ["_bucket", "_count", "_sum"]) exported.add(`${name}${s}`);
    }
    const used = new Set([...rulesText.matchAll(/\bhl_deadman_[a-z_]+/g)].map((m) => m[0]));
    expect(used.size).toBeGreaterThan(10);
    for (const name of used) expect(exported, name).toContain(name);
  });

  test("every alert has summary, description, severity and a runbook section in docs/observability.md", () => {
    const doc = readFileSync(join(root, "docs/observability.md"), "utf8");
    const anchors = new Set(
      [...doc.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, "")
          .replace(/ /g, "-"),
      ),
    );
    const blocks = rulesText.split(/\n\s+- alert: /).slice(1);
    expect(blocks).toHaveLength(alerts.length);
    for (const block of blocks) {
      const name = block.slice(0, block.indexOf("\n"));
      expect(block, name).toMatch(/severity: (critical|warning)/);
      expect(block, name).toMatch(/summary: /);
      expect(block, name).toMatch(/description: /);
      // a full URL from the one external label runbook_base (the installed package's docs without it)
      const anchor =
        /runbook_url: '\{\{ with \$externalLabels\.runbook_base \}\}\{\{ \. \}\}\{\{ else \}\}file:\/\/\/opt\/hl-deadman\{\{ end \}\}\/docs\/observability\.md#([a-z0-9-]+)'/.exec(
          block,
        )?.[1];
      expect(anchor, name).toBeDefined();
      expect(anchors, `${name}: #${anchor}`).toContain(anchor);
    }
  });
});

describe("Alertmanager example (amtool)", () => {
  test("behavior: amtool check-config accepts it", () => {
    const r = run("amtool", ["check-config", AM_CONFIG]);
    expect(r.out).toContain("SUCCESS");
    expect(r.code).toBe(0);
  });

  test("behavior: critical hl-deadman alerts page and reach the chat; warnings only the chat", () => {
    const route = (...labels: string[]) =>
      run("amtool", ["config", "routes", "test", `--config.file=${AM_CONFIG}`, ...labels]).out.split("\n")[0];
    expect(route("alertname=HlDeadmanTriggerBudgetExhausted", "severity=critical")).toBe(
      "hl-deadman-pager,hl-deadman-chat",
    );
    expect(route("alertname=HlDeadmanClockSkew", "severity=warning")).toBe("hl-deadman-chat");
    expect(route("alertname=NodeDown", "severity=critical")).toBe("default");
  });
});
