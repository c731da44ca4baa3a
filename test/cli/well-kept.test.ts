/**
 * What a well-kept CLI has (issue 31, items 5 and 13): `--version`/`-v` with the commit and build date the build
 * wrote, `logs` to read the JSON lines pretty, a package that ships what the docs tell operators to load from it,
 * and a CHANGELOG.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, test } from "vitest";
import { runCli } from "../../src/cli/program.js";
import { systemClock } from "../../src/core/clock.js";
import { versionText } from "../../src/core/version.js";
import { assertBuilt, runCliProcess } from "../helpers/process.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("--version", () => {
  test("behavior: -v, -V and --version print the version, the commit and the build date of dist/build-info.json", async () => {
    assertBuilt();
    const info = JSON.parse(readFileSync(path.join(ROOT, "dist/build-info.json"), "utf8")) as {
      version: string;
      commit: string;
      date: string;
    };
    const head = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    expect(info.commit).toBe(head);
    expect(Number.isNaN(Date.parse(info.date))).toBe(false);
    for (const flag of ["-v", "-V", "--version"]) {
      const r = await runCliProcess([flag]);
      expect(r.code, flag).toBe(0);
      expect(r.stdout.trim(), flag).toBe(`${info.version} (commit ${info.commit}, built ${info.date})`);
    }
    expect(versionText(null)).toContain("no build info");
  });
});

describe("logs", () => {
  test("behavior: JSON lines from stdin come out one pretty line each; other lines unchanged", async () => {
    const lines = [
      JSON.stringify({
        level: 30,
        time: 0,
        pid: 1,
        module: "switch",
        event: "heartbeat.ok",
        msg: "armed until X",
      }),
      "not json",
      JSON.stringify({
        level: 50,
        time: 0,
        pid: 1,
        event: "cli.error",
        exitCode: 78,
        msg: "Invalid configuration",
      }),
    ];
    let out = "";
    const stdout = new (await import("node:stream")).Writable({
      write(chunk, _e, done) {
        out += chunk.toString();
        done();
      },
    });
    const code = await runCli(["node", "hl-deadman", "logs"], {
      stdout,
      stderr: stdout,
      env: {},
      clock: systemClock,
      cwd: ROOT,
      stdin: Readable.from([`${lines.join("\n")}\n`]),
    });
    expect(code).toBe(0);
    const shown = out.trimEnd().split("\n");
    expect(shown).toHaveLength(3);
    expect(shown[0]).toMatch(/INFO.*armed until X.*"event":"heartbeat.ok"/);
    expect(shown[0]).not.toContain('"pid"');
    expect(shown[1]).toBe("not json");
    expect(shown[2]).toMatch(/ERROR.*Invalid configuration/);
  });
});

describe("the npm package", () => {
  test("behavior: npm pack ships deploy/, ecosystem.config.cjs, CHANGELOG.md and the build info", () => {
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, npm_config_loglevel: "silent" },
      }),
    ) as Array<{ files: Array<{ path: string }> }>;
    const files = new Set(packed[0]!.files.map((f) => f.path));
    for (const f of [
      "deploy/prometheus/hl-deadman.rules.yml",
      "deploy/alertmanager/hl-deadman.alertmanager.yml",
      "deploy/grafana/hl-deadman.json",
      "deploy/kubernetes/sidecar.yaml",
      "ecosystem.config.cjs",
      "CHANGELOG.md",
    ])
      expect(files.has(f), f).toBe(true);
    if (existsSync(path.join(ROOT, "dist/build-info.json")))
      expect(files.has("dist/build-info.json")).toBe(true);
  });

  test("behavior: CHANGELOG.md follows Keep a Changelog and names the package's version", () => {
    const text = readFileSync(path.join(ROOT, "CHANGELOG.md"), "utf8");
    const { version } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(text).toMatch(/^# Changelog/);
    expect(text).toContain("## [Unreleased]");
    expect(text).toMatch(new RegExp(`## \\[${version.replaceAll(".", "\\.")}\\] - \\d{4}-\\d\\d-\\d\\d`));
  });
});
