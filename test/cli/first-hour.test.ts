/**
 * A new operator's first hour (issue 16, item 7): durations need a unit on flags and in the environment, usage
 * errors are one line, every --json command answers in JSON on failure too, status notices a mistyped state
 * directory, config check runs without the key, run --help says where the key comes from.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { cli } from "../helpers/cli.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const tmp = mkdtempSync(path.join(tmpdir(), "hl-first-hour-"));
const KEY = new Wallet(id("hl-deadman first hour")).privateKey;
let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ users: [] }); // the signer is unknown: the exchange refuses its pushes
});
afterAll(async () => {
  await sim?.close();
});

describe("durations need a unit on flags and in the environment", () => {
  test("error: --interval 15 and HL_INTERVAL=15 are refused with 'did you mean 15s?'", async () => {
    const flag = await cli(["config", "check", "--no-key", "--interval", "15"]);
    expect(flag.code).toBe(78);
    expect(flag.stderr).toContain("did you mean 15s?");
    expect(flag.stderr).not.toContain("15ms");
    const env = await cli(["config", "check", "--no-key"], { env: { HL_INTERVAL: "15" } });
    expect(env.code).toBe(78);
    expect(env.stderr).toMatch(/HL_INTERVAL.*did you mean 15s\?/);
  });

  test("error: --deadline 15 is one problem about the deadline, not three", async () => {
    const r = await cli(["config", "check", "--no-key", "--deadline", "15"]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("Invalid configuration: deadline");
    expect(r.stderr).toContain("did you mean 15s?");
    expect(r.stderr).not.toMatch(/problems|interval =/);
  });

  test("error: schedule --in 60 is a usage error with 'did you mean 60s?'", async () => {
    const r = await cli(["schedule", "--in", "60"], { env: { HL_PRIVATE_KEY: KEY } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did you mean 60s?");
  });

  test("default: 0 (off), units, and config-file numbers of milliseconds are accepted", async () => {
    const file = path.join(tmp, "ms.json");
    writeFileSync(file, JSON.stringify({ interval: 15000, deadline: "60s" }));
    const r = await cli([
      "config",
      "check",
      "--no-key",
      "--config",
      file,
      "--exposure-interval",
      "0",
      "--json",
    ]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      config: { interval: number; deadline: number; exposureInterval: number };
    };
    expect(doc.config).toMatchObject({ interval: 15_000, deadline: 60_000, exposureInterval: 0 });
  });
});

describe("usage errors", () => {
  test("error: a mistyped flag is one line with the suggestion and 'see --help', never the whole help", async () => {
    const r = await cli(["run", "--intervl", "15s"], { tty: true });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("--intervl");
    expect(lines[0]).toContain("Did you mean --interval?");
    expect(lines[0]).toContain("see 'hl-deadman run --help'");
    expect(r.stderr).not.toContain("Usage:");
  });

  test("behavior: run's errors are JSON lines when its logs are (not a terminal), text on a terminal", async () => {
    const json = await cli(["run", "--interval", "15"], { tty: false });
    expect(json.code).toBe(78);
    const line = JSON.parse(json.stderr.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 50, event: "cli.error", exitCode: 78 });
    expect(String(line.msg)).toContain("did you mean 15s?");
    const text = await cli(["run", "--interval", "15"], { tty: true });
    expect(text.stderr).toMatch(/^hl-deadman: Invalid configuration/);
  });
});

describe("--json answers in JSON, on failure too", () => {
  test("error: schedule --json refused by the exchange prints {error:{code,message}} on stdout", async () => {
    const r = await cli(["schedule", "--in", "60s", "--json", "--api-url", sim.apiUrl], {
      env: {
        HL_PRIVATE_KEY: KEY,
      },
    });
    expect(r.code).not.toBe(0);
    const doc = JSON.parse(r.stdout) as { error: { code: string; exitCode: number; message: string } };
    expect(doc.error.exitCode).toBe(r.code);
    expect(doc.error.code).toBe("runtime");
    expect(doc.error.message).toMatch(/refused/);
  });

  test("error: status on a missing state directory exits 66, in JSON with --json", async () => {
    const missing = path.join(tmp, "typo");
    const r = await cli(["status", "--state-dir", missing, "--json"]);
    expect(r.code).toBe(66);
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: "no_input", exitCode: 66, message: expect.stringContaining(missing) },
    });
    const empty = await cli(["status", "--state-dir", tmp, "--json"]); // exists, no ledger yet
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual({ accounts: [] });
  });

  test("error: a usage error with --json is a JSON document too", async () => {
    const r = await cli(["status", "--bogus", "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: "usage", exitCode: 2 } });
  });

  test("default: config schema takes --json (always JSON)", async () => {
    const r = await cli(["config", "schema", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ title: "hl-deadman configuration" });
  });
});

describe("config check, run --help, .gitignore", () => {
  test("default: config check --no-key checks a file without any key", async () => {
    const r = await cli(["config", "check", "--no-key", "--config", path.join(ROOT, "config/example.json")]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("configuration OK");
    expect(r.stdout).toContain("not checked (--no-key)");
    // Without --no-key the key (here the example's keyFile) is checked.
    const withKey = await cli(["config", "check", "--config", path.join(ROOT, "config/example.json")]);
    expect(withKey.code).toBe(78);
    expect(withKey.stderr).toMatch(/Key file .* does not exist/);
  });

  test("default: run --help names the key sources, has examples, fits 80 columns, explains --json", async () => {
    const r = await cli(["run", "--help"]);
    expect(r.code).toBe(0);
    for (const s of [
      "HL_PRIVATE_KEY",
      "$CREDENTIALS_DIRECTORY/hl-private-key",
      "--key-file",
      "Examples:",
      "ARMS A",
      "JSON log lines even on a terminal",
    ])
      expect(r.stdout).toContain(s);
    const long = r.stdout.split("\n").filter((l) => l.length > 80);
    expect(long).toEqual([]);
  });

  test("default: the default state directory is ignored by git", () => {
    const lines = readFileSync(path.join(ROOT, ".gitignore"), "utf8").split("\n");
    expect(lines).toContain(".hl-deadman/");
  });
});
