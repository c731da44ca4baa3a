/**
 * The docs against the shipped rules (issue 31, item 12): every alert a doc names exists in
 * deploy/prometheus/hl-deadman.rules.yml, and the alerts operations.md lists "from day one" have the rules file's
 * own expression and `for:`; every runbook_url is built from the one external label runbook_base.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";

const ROOT = path.resolve(import.meta.dirname, "../..");
type Rule = { alert?: string; expr: string; for?: string; annotations?: Record<string, string> };
const rules = parse(readFileSync(path.join(ROOT, "deploy/prometheus/hl-deadman.rules.yml"), "utf8")) as {
  groups: Array<{ rules: Rule[] }>;
};
const alerts = new Map(
  rules.groups.flatMap((g) => g.rules.filter((r) => r.alert).map((r) => [r.alert!, r] as const)),
);
const docs = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const squash = (s: string) => s.replace(/\s+/g, " ").trim();

describe("alerts in the docs", () => {
  test("error: every HlDeadman* alert a doc names exists in the rules file", () => {
    const named = new Map<string, string>();
    for (const doc of docs)
      for (const m of readFileSync(path.join(ROOT, doc), "utf8").matchAll(/\bHlDeadman[A-Z][A-Za-z]+/g))
        named.set(m[0], doc);
    expect(named.size).toBeGreaterThan(5);
    for (const [name, doc] of named) expect(alerts.has(name), `${name} (${doc})`).toBe(true);
  });

  test("error: operations.md's 'Alerts worth having from day one' match the rules' expressions and durations", () => {
    const text = readFileSync(path.join(ROOT, "docs/operations.md"), "utf8");
    const from = text.indexOf("Alerts worth having from day one");
    const block = /```yaml\n([\s\S]*?)```/.exec(text.slice(from))?.[1];
    expect(block).toBeDefined();
    const listed = (parse(block!) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);
    expect(listed.length).toBeGreaterThan(3);
    for (const r of listed) {
      const shipped = alerts.get(r.alert!);
      expect(shipped, r.alert).toBeDefined();
      expect(squash(r.expr), r.alert).toBe(squash(shipped!.expr));
      expect(r.for, r.alert).toBe(shipped!.for);
    }
  });

  test("behavior: every runbook_url is a full URL made from the one external label runbook_base", () => {
    for (const [name, r] of alerts) {
      expect(r.annotations?.runbook_url, name).toMatch(
        /^\{\{ with \$externalLabels\.runbook_base \}\}\{\{ \. \}\}\{\{ else \}\}file:\/\/\/opt\/hl-deadman\{\{ end \}\}\/docs\/observability\.md#runbook-[a-z-]+$/,
      );
    }
  });
});
