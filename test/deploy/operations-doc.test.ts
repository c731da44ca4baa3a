import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { DEFAULTS, OPTIONS } from "../../src/config/options.js";
import { formatDuration } from "../../src/core/duration.js";
import { generatedSection, optionsTable, optionTableRows } from "../docs/generated.js";

const root = resolve(import.meta.dirname, "../..");
const docPath = join(root, "docs/operations.md");
const tableRows = optionTableRows;

/** The option table as it stands in docs/operations.md (between its markers). */
const currentTable = (doc: string): string => generatedSection(doc, "options-table");

describe("docs/operations.md, operator's guide", () => {
  const doc = readFileSync(docPath, "utf8");

  test("default: the option table is the one generated from the schema (`npm run docs:generate` to refresh)", () => {
    expect(currentTable(doc)).toBe(optionsTable());
  });

  test("behavior: every key of the table of options has a row, whose meaning is the row's description", () => {
    const rows = tableRows(doc);
    expect([...rows.keys()]).toEqual(OPTIONS.map((o) => o.key));
    for (const option of OPTIONS)
      expect(rows.get(option.key)?.[4], option.key).toBe(option.description.replaceAll("|", "\\|"));
  });

  test("behavior: every flag in the table is one `hl-deadman run` accepts", () => {
    const help = execFileSync(process.execPath, [join(root, "dist/bin/hl-deadman.js"), "run", "--help"], {
      encoding: "utf8",
      timeout: 15_000,
    });
    const flags = [...currentTable(doc).matchAll(/\| `(--[a-z-]+)[ `]/g)].map((m) => m[1] as string);
    expect(flags.length).toBe(OPTIONS.length);
    for (const flag of flags) expect(help, flag).toMatch(new RegExp(`^\\s+${flag}\\b`, "m"));
  });

  test("behavior: the defaults shown are DEFAULTS", () => {
    const rows = tableRows(doc);
    const def = (key: string) => rows.get(key)?.[3];
    expect(def("interval")).toBe(`\`${formatDuration(DEFAULTS.interval)}\``);
    expect(def("deadline")).toBe(`\`${formatDuration(DEFAULTS.deadline)}\``);
    expect(def("shutdownTimeout")).toBe(`\`${formatDuration(DEFAULTS.shutdownTimeout)}\``);
    expect(def("health")).toBe(`\`${DEFAULTS.health}\``);
    expect(def("onShutdown")).toBe(`\`${DEFAULTS.onShutdown}\``);
    expect(def("triggerLimit")).toBe(`\`${DEFAULTS.triggerLimit}\``);
  });

  test("behavior: the guide covers each deployment and each topic the issue names", () => {
    const sections = [...doc.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    for (const title of [
      "Running under systemd",
      "Vaults and subaccounts",
      "Running under pm2",
      "Running in a container and on Kubernetes",
      "Choosing --interval and --deadline",
      "Keys: a dedicated API wallet for the daemon",
      "High availability",
      "When the trigger budget runs out",
      "Options",
      "Logs and metrics",
      "Upgrading",
    ]) {
      expect(sections).toContain(title);
    }
    const prose = doc.replace(/^```[\s\S]*?^```$/gm, ""); // shell comments in code blocks also start with "# "
    expect(prose.match(/^# /gm)).toHaveLength(1); // the title only: the guide is made of ## sections
    expect(doc).toContain("](observability.md)");
  });

  test("behavior: the budget table's figures are 86,400 / interval and 1.01M / that", () => {
    for (const m of doc.matchAll(/^\|\s*(\d+) s[^|]*\|\s*([\d,]+)\s*\|\s*~(\d+)\s*\|/gm)) {
      const interval = Number(m[1]);
      const perDay = 86_400 / interval;
      expect(Number((m[2] as string).replaceAll(",", ""))).toBe(perDay);
      expect(Math.abs(Number(m[3]) - 1_010_000 / perDay)).toBeLessThanOrEqual(1.5);
    }
    expect([...doc.matchAll(/^\|\s*(\d+) s[^|]*\|\s*([\d,]+)\s*\|\s*~(\d+)\s*\|/gm)].length).toBe(4);
  });

  test("behavior: the numbers quoted for the deployment files are the files' own", () => {
    const unit = readFileSync(join(root, "systemd/hl-deadman.service"), "utf8");
    const stop = /^TimeoutStopSec=(\S+)$/m.exec(unit)?.[1];
    expect(doc).toContain(`\`TimeoutStopSec=${stop}\``);
    const pm2 = readFileSync(join(root, "ecosystem.config.cjs"), "utf8");
    const kill = /kill_timeout: (\d+)/.exec(pm2)?.[1];
    expect(doc).toContain(`kill_timeout: ${kill}`);
    const k8s = readFileSync(join(root, "deploy/kubernetes/sidecar.yaml"), "utf8");
    const grace = /terminationGracePeriodSeconds: (\d+)/.exec(k8s)?.[1];
    expect(doc).toContain(`terminationGracePeriodSeconds: ${grace}`);
  });
});
