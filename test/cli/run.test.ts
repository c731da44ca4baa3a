/**
 * Process tests: the built CLI (dist/bin/hl-deadman.js) against a simulator in this process (real clock),
 * with real signals. Build first: `npx tsc -p tsconfig.build.json` (npm test does).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Wallet } from "ethers";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";

const BIN = resolve(import.meta.dirname, "../../dist/bin/hl-deadman.js");

type Proc = {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<{ code: number | null; signal: string | null }>;
};

function spawnCli(args: string[], env: Record<string, string> = {}, cwd?: string): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
    cwd: cwd ?? mkdtempSync(join(tmpdir(), "hl-cli-cwd-")),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: string | null }>(
    (r) => child.on("close", (code, signal) => r({ code, signal })), // close: stdout drained, unlike exit
  );
  return { child, out: () => out, err: () => err, exit };
}

async function waitFor(pred: () => boolean, ms = 8_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("timed out waiting");
}

const events = (text: string, name: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.event === name);

let sim: SimulatorHandle | undefined;
const procs: Proc[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.child.kill("SIGKILL");
  await sim?.close();
  sim = undefined;
});

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npx tsc -p tsconfig.build.json first`);
});

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
  test("behavior: SIGTERM removes the schedule and exits 0; the key appears nowhere", async () => {
    const wallet = Wallet.createRandom();
    const account = wallet.address.toLowerCase();
    sim = await startSimulator({ users: [{ address: account }], ipWeightPerMinute: null });
    const stateDir = mkdtempSync(join(tmpdir(), "hl-cli-state-"));
    const p = spawnCli(["run", "--api-url", sim.apiUrl, "--state-dir", stateDir, ...FAST], {
      HL_PRIVATE_KEY: wallet.privateKey,
    });
    procs.push(p);
    await waitFor(() => events(p.out(), "heartbeat.ok").length >= 2);
    expect(sim.state.getSchedule(account)).toBeGreaterThan(Date.now());
    p.child.kill("SIGTERM");
    const { code } = await p.exit;
    expect(code).toBe(0);
    expect(sim.state.getSchedule(account)).toBeNull();
    expect(events(p.out(), "shutdown.removed")).toHaveLength(1);
    expect(events(p.out(), "shutdown.removed")[0]!.account).toBe(account);
    const hex = wallet.privateKey.slice(2);
    const files = readdirSync(stateDir).map((f) => readFileSync(join(stateDir, f), "utf8"));
    for (const text of [p.out(), p.err(), ...files])
      expect(text.toLowerCase()).not.toContain(hex.toLowerCase());
  });

  test("behavior: SIGKILL, then a restart after the deadline counts the trigger", async () => {
    const wallet = Wallet.createRandom();
    const account = wallet.address.toLowerCase();
    sim = await startSimulator({
      users: [{ address: account, orders: [{ coin: "BTC", side: "B", limitPx: 90_000, sz: 0.1 }] }],
      ipWeightPerMinute: null,
    });
    const stateDir = mkdtempSync(join(tmpdir(), "hl-cli-state-"));
    const env = { HL_PRIVATE_KEY: wallet.privateKey };
    const p = spawnCli(["run", "--api-url", sim.apiUrl, "--state-dir", stateDir, ...FAST], env);
    procs.push(p);
    // Two confirmed pushes: the first one is surely in the ledger file (writes are asynchronous).
    await waitFor(() => events(p.out(), "heartbeat.ok").length >= 2);
    p.child.kill("SIGKILL");
    await p.exit;
    const armed = sim.state.getSchedule(account)!;
    expect(armed).toBeGreaterThan(Date.now());
    await waitFor(() => sim!.state.getTriggers(account).length === 1, 12_000);
    const q = spawnCli(["run", "--api-url", sim.apiUrl, "--state-dir", stateDir, ...FAST], env);
    procs.push(q);
    await waitFor(() => events(q.out(), "heartbeat.ok").length >= 1);
    const counted = events(q.out(), "trigger.counted");
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({ account, triggersToday: 1 });
    expect(counted[0]!.deadline as number).toBeLessThanOrEqual(armed);
    expect(sim.state.getTriggers(account)).toHaveLength(1);
    q.child.kill("SIGTERM");
    expect((await q.exit).code).toBe(0);
    const status = spawnCli(["status", "--state-dir", stateDir, "--json"]);
    expect((await status.exit).code).toBe(0);
    const doc = JSON.parse(status.out()) as { accounts: Record<string, unknown>[] };
    expect(doc.accounts).toEqual([
      expect.objectContaining({
        account,
        triggersToday: 1,
        triggerLimit: 10,
        armedUntil: null,
        exhausted: false,
      }),
    ]);
    expect(Object.keys(doc.accounts[0]!).sort()).toEqual(
      ["account", "armedUntil", "day", "exhausted", "triggerLimit", "triggersToday"].sort(),
    );
  }, 30_000);
});

describe("hl-deadman configuration and key errors (process)", () => {
  const key = `0x${"ab".repeat(32)}`;
  test("error: a bad config value exits 78 naming the key, the value and the rule", async () => {
    const p = spawnCli(["config", "check", "--interval", "40s", "--deadline", "zz"], { HL_PRIVATE_KEY: key });
    const { code } = await p.exit;
    expect(code).toBe(78);
    expect(p.err()).toContain('deadline = "zz" (flag --deadline)');
    expect(p.err()).toContain("must be a duration");
  });

  test("error: a cross-field rule exits 78 with every problem listed", async () => {
    const p = spawnCli(["config", "check", "--interval", "40s", "--deadline", "60s"], {
      HL_PRIVATE_KEY: key,
      HL_REQUEST_TIMEOUT: "abc",
    });
    expect((await p.exit).code).toBe(78);
    expect(p.err()).toContain('requestTimeout = "abc" (env HL_REQUEST_TIMEOUT)');
    const q = spawnCli(["config", "check", "--interval", "40s", "--deadline", "50s"], {
      HL_PRIVATE_KEY: key,
    });
    expect((await q.exit).code).toBe(78);
    expect(q.err()).toContain("Invalid configuration (2 problems)");
    expect(q.err()).toContain("interval = 40s (flag --interval): must be at most half the deadline (25s)");
    expect(q.err()).toContain("so that two retries fit");
  });

  test("error: an unknown flag exits 2", async () => {
    const p = spawnCli(["run", "--private-key", key]);
    expect((await p.exit).code).toBe(2);
    expect(p.err()).toContain("unknown option");
    expect(p.err()).not.toContain("ab".repeat(32));
  });

  test("error: a bad key exits 78 without echoing it", async () => {
    const bad = `0x${"zz".repeat(32)}`;
    const p = spawnCli(["config", "check"], { HL_PRIVATE_KEY: bad });
    expect((await p.exit).code).toBe(78);
    expect(p.err()).toContain("The key in env HL_PRIVATE_KEY is not a private key");
    expect(p.err()).not.toContain("zz".repeat(8));
  });

  test("error: a group-readable key file exits 78 and says chmod 600", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hl-key-"));
    const file = join(dir, "key");
    writeFileSync(file, `${key}\n`);
    chmodSync(file, 0o640);
    const p = spawnCli(["config", "check", "--key-file", file]);
    expect((await p.exit).code).toBe(78);
    expect(p.err()).toContain(`Key file ${file} has mode 640`);
    expect(p.err()).toContain(`chmod 600 ${file}`);
    chmodSync(file, 0o600);
    const q = spawnCli(["config", "check", "--key-file", file, "--json"]);
    expect((await q.exit).code).toBe(0);
    const doc = JSON.parse(q.out()) as {
      key: { source: string; signer: string };
      config: { keyFile: string };
    };
    expect(doc.key.source).toBe(`key file ${file}`);
    expect(doc.config.keyFile).toBe(file);
    expect(q.out()).not.toContain("ab".repeat(32));
  });

  test("error: no key exits 78 saying where it looked", async () => {
    const p = spawnCli(["config", "check"]);
    expect((await p.exit).code).toBe(78);
    expect(p.err()).toContain("No signing key found.");
    expect(p.err()).toContain("HL_PRIVATE_KEY");
  });

  test("error: schedule less than 5 s ahead exits 2; an unreachable exchange exits 69; a refusal exits 1", async () => {
    const p = spawnCli(["schedule", "--in", "3s"], { HL_PRIVATE_KEY: key });
    expect((await p.exit).code).toBe(2);
    expect(p.err()).toContain("the exchange needs at least 5s");
    const q = spawnCli(
      ["schedule", "--in", "60s", "--api-url", "http://127.0.0.1:9", "--request-timeout", "1s"],
      {
        HL_PRIVATE_KEY: key,
      },
    );
    expect((await q.exit).code).toBe(69);
    const wallet = new Wallet(key);
    sim = await startSimulator({
      users: [{ address: wallet.address, volumeUsd: 10 }],
      ipWeightPerMinute: null,
    });
    const r = spawnCli(["schedule", "--in", "60s", "--api-url", sim.apiUrl], { HL_PRIVATE_KEY: key });
    expect((await r.exit).code).toBe(1);
    expect(r.err()).toContain("Cannot set scheduled cancel time until enough volume traded");
    sim.state.setVolume(wallet.address, 5_000_000);
    const s = spawnCli(["schedule", "--in", "60s", "--api-url", sim.apiUrl, "--json"], {
      HL_PRIVATE_KEY: key,
    });
    expect((await s.exit).code).toBe(0);
    const t = (JSON.parse(s.out()) as { time: number }).time;
    expect(sim.state.getSchedule(wallet.address)).toBe(t);
    const u = spawnCli(["unschedule", "--api-url", sim.apiUrl], { HL_PRIVATE_KEY: key });
    expect((await u.exit).code).toBe(0);
    expect(sim.state.getSchedule(wallet.address)).toBeNull();
  });
});
