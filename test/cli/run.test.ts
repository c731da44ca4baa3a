/**
 * The CLI's run, schedule and configuration paths.
 * - In-process (`cli()`, test/helpers/cli.ts): every check a real process adds nothing to: configuration and key
 *   errors, usage errors, schedule/unschedule against a simulator in this process. Fast and deterministic.
 * - Process (`spawnCli()`, test/helpers/process.ts): what only the built CLI as a real process shows: exit codes
 *   through the OS, SIGTERM. Build first (`npm test` does).
 * A SIGKILL, the lapse and the restart that counts the trigger are test/reliability/signals.test.ts's ("SIGKILL
 * while armed → sim fires, restart counts it and re-arms"); this file kept a slower copy of it until issue 12.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { ExitCode } from "../../src/core/exit-codes.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { cli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { events } from "../helpers/json-lines.js";
import { assertBuilt, runCliProcess, type SpawnedProcess, spawnCli } from "../helpers/process.js";

let sim: SimulatorHandle | undefined;
const procs: SpawnedProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.kill("SIGKILL");
  await sim?.close();
  sim = undefined;
});

const tempCwd = () => mkdtempSync(join(tmpdir(), "hl-cli-cwd-"));
const KEY = `0x${"ab".repeat(32)}`;

const FAST = [
  "--interval",
  "1s",
  "--deadline",
  "10s",
  "--request-timeout",
  "2s",
  "--exposure-interval",
  "0",
  "--health",
  "off",
];

describe("hl-deadman run (process)", () => {
  beforeAll(assertBuilt);

  test("behavior: SIGTERM removes the schedule and exits 0; the key appears nowhere", async () => {
    const wallet = Wallet.createRandom();
    const account = wallet.address.toLowerCase();
    sim = await startSimulator({ users: [{ address: account }], ipWeightPerMinute: null });
    const stateDir = mkdtempSync(join(tmpdir(), "hl-cli-state-"));
    const p = spawnCli(["run", "--api-url", sim.apiUrl, "--state-dir", stateDir, ...FAST], {
      HL_PRIVATE_KEY: wallet.privateKey,
    });
    procs.push(p);
    await eventually(() => p.lines.filter((l) => l.event === "heartbeat.ok").length >= 2, {
      what: "two heartbeat.ok",
    });
    expect(sim.state.getSchedule(account)).toBeGreaterThan(Date.now());
    p.kill("SIGTERM");
    const { code, signal } = await p.exitWithin(10_000);
    expect([code, signal]).toEqual([0, null]);
    expect(sim.state.getSchedule(account)).toBeNull();
    expect(events(p.stdout(), "shutdown.removed")).toHaveLength(1);
    expect(events(p.stdout(), "shutdown.removed")[0]!.account).toBe(account);
    const hex = wallet.privateKey.slice(2);
    // every file the daemon left in its state directory, the audit trail's among them
    const files = (readdirSync(stateDir, { recursive: true }) as string[])
      .map((f) => join(stateDir, f))
      .filter((f) => statSync(f).isFile())
      .map((f) => readFileSync(f, "utf8"));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const text of [p.stdout(), p.stderr(), ...files])
      expect(text.toLowerCase()).not.toContain(hex.toLowerCase());
    // `status --json` reads what the stopped daemon left, in the contract's shape (docs/cli-contract.md).
    const status = await cli(["status", "--state-dir", stateDir, "--json"], { cwd: tempCwd() });
    expect([status.code, status.stderr]).toEqual([0, ""]);
    const doc = JSON.parse(status.stdout) as { accounts: Record<string, unknown>[] };
    expect(doc.accounts).toEqual([
      expect.objectContaining({
        account,
        triggersToday: 0,
        triggerLimit: 10,
        armedUntil: null,
        exhausted: false,
      }),
    ]);
    // the contract's fields, and beside them only the documented additions of issue 25 (docs/cli.md "status")
    expect(Object.keys(doc.accounts[0]!).sort()).toEqual(
      [
        "account",
        "armedUntil",
        "day",
        "exhausted",
        "triggerLimit",
        "triggersToday",
        "limitRefused",
        "limitSuspected",
        "proofs",
        "triggers",
      ].sort(),
    );
    expect(doc.accounts[0]).toMatchObject({ limitRefused: false, limitSuspected: false, triggers: [] });
  });

  test("error: exit codes reach the OS: 78 configuration, 2 usage, 69 unavailable, 0 success", async () => {
    const cwd = tempCwd();
    // Four short-lived processes at once: they share nothing.
    const [config, usage, unavailable, ok] = await Promise.all([
      runCliProcess(["config", "check", "--deadline", "zz"], { HL_PRIVATE_KEY: KEY }, { cwd }),
      runCliProcess(["run", "--private-key", KEY], {}, { cwd }),
      runCliProcess(
        ["schedule", "--in", "60s", "--api-url", "http://127.0.0.1:9", "--request-timeout", "1s"],
        { HL_PRIVATE_KEY: KEY },
        { cwd },
      ),
      runCliProcess(["config", "check", "--json"], { HL_PRIVATE_KEY: KEY }, { cwd }),
    ]);
    expect([config.code, config.signal]).toEqual([ExitCode.config, null]);
    expect(config.stderr).toContain('deadline = "zz" (flag --deadline)');
    expect(usage.code).toBe(ExitCode.usage);
    expect(usage.stderr).toContain("unknown option");
    expect(usage.stderr).not.toContain("ab".repeat(32));
    expect(unavailable.code).toBe(ExitCode.unavailable);
    expect(ok.code).toBe(ExitCode.ok);
    expect((JSON.parse(ok.stdout) as { ok: boolean }).ok).toBe(true);
    expect(ok.stdout).not.toContain("ab".repeat(32));
  });
});

describe("hl-deadman configuration and key errors (in-process)", () => {
  const env = { HL_PRIVATE_KEY: KEY };

  test("error: a bad config value exits 78 naming the key, the value and the rule", async () => {
    const r = await cli(["config", "check", "--interval", "40s", "--deadline", "zz"], {
      env,
      cwd: tempCwd(),
    });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('deadline = "zz" (flag --deadline)');
    expect(r.stderr).toContain("must be a duration");
    expect(r.stdout).toBe("");
  });

  test("error: a cross-field rule exits 78 with every problem listed", async () => {
    const p = await cli(["config", "check", "--interval", "40s", "--deadline", "60s"], {
      env: { ...env, HL_REQUEST_TIMEOUT: "abc" },
      cwd: tempCwd(),
    });
    expect(p.code).toBe(78);
    expect(p.stderr).toContain('requestTimeout = "abc" (env HL_REQUEST_TIMEOUT)');
    const q = await cli(["config", "check", "--interval", "40s", "--deadline", "50s"], {
      env,
      cwd: tempCwd(),
    });
    expect(q.code).toBe(78);
    expect(q.stderr).toContain("Invalid configuration (2 problems)");
    expect(q.stderr).toContain("interval = 40s (flag --interval): must be at most half the deadline (25s)");
    expect(q.stderr).toContain("so that two retries fit");
  });

  test("error: an unknown flag exits 2 and does not echo a key given as its value", async () => {
    const r = await cli(["run", "--private-key", KEY], { cwd: tempCwd() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option");
    expect(r.stderr).not.toContain("ab".repeat(32));
  });

  test("error: a bad key exits 78 without echoing it", async () => {
    const bad = `0x${"zz".repeat(32)}`;
    const r = await cli(["config", "check"], { env: { HL_PRIVATE_KEY: bad }, cwd: tempCwd() });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("The key in env HL_PRIVATE_KEY is not a private key");
    expect(r.stderr).not.toContain("zz".repeat(8));
  });

  test("error: a group-readable key file exits 78 and says chmod 600", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-key-"));
    const file = join(dir, "key");
    writeFileSync(file, `${KEY}\n`);
    chmodSync(file, 0o640);
    const p = await cli(["config", "check", "--key-file", file], { cwd: dir });
    expect(p.code).toBe(78);
    expect(p.stderr).toContain(`Key file ${file} has mode 640`);
    expect(p.stderr).toContain(`chmod 600 ${file}`);
    chmodSync(file, 0o600);
    const q = await cli(["config", "check", "--key-file", file, "--json"], { cwd: dir });
    expect(q.code).toBe(0);
    const doc = JSON.parse(q.stdout) as {
      key: { source: string; signer: string };
      config: { keyFile: string };
    };
    expect(doc.key.source).toBe(`key file ${file}`);
    expect(doc.key.signer).toBe(new Wallet(KEY).address.toLowerCase());
    expect(doc.config.keyFile).toBe(file);
    expect(q.stdout).not.toContain("ab".repeat(32));
  });

  test("error: no key exits 78 saying where it looked", async () => {
    const r = await cli(["config", "check"], { cwd: tempCwd() });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("No signing key found.");
    expect(r.stderr).toContain("HL_PRIVATE_KEY");
  });

  test("error: schedule less than 5 s ahead exits 2; an unreachable exchange exits 69; a refusal exits 1", async () => {
    const cwd = tempCwd();
    const p = await cli(["schedule", "--in", "3s"], { env, cwd });
    expect(p.code).toBe(2);
    expect(p.stderr).toContain("the exchange needs at least 5s");
    const q = await cli(
      ["schedule", "--in", "60s", "--api-url", "http://127.0.0.1:9", "--request-timeout", "1s"],
      { env, cwd },
    );
    expect(q.code).toBe(69);
    const wallet = new Wallet(KEY);
    sim = await startSimulator({
      users: [{ address: wallet.address, volumeUsd: 10 }],
      ipWeightPerMinute: null,
    });
    const r = await cli(["schedule", "--in", "60s", "--api-url", sim.apiUrl], { env, cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Cannot set scheduled cancel time until enough volume traded");
    expect(sim.state.getSchedule(wallet.address)).toBeNull();
    sim.state.setVolume(wallet.address, 5_000_000);
    const s = await cli(["schedule", "--in", "60s", "--api-url", sim.apiUrl, "--json"], { env, cwd });
    expect(s.code).toBe(0);
    const t = (JSON.parse(s.stdout) as { time: number }).time;
    expect(sim.state.getSchedule(wallet.address)).toBe(t);
    const u = await cli(["unschedule", "--api-url", sim.apiUrl], { env, cwd });
    expect(u.code).toBe(0);
    expect(sim.state.getSchedule(wallet.address)).toBeNull();
  });
});
