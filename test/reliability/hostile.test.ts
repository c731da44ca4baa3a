/**
 * Fault matrix, hostile input (issue 16): the real CLI under the shipped heap cap (`--max-old-space-size=160`, as
 * in systemd/ and the sidecar) against servers that answer with bodies built to exhaust memory, and a state
 * directory holding odd files or another daemon's lock. Each row proves: a typed error in one log line per bad
 * answer, the process alive and answering /healthz, never "heap out of memory".
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";
import { LedgerFile } from "../../src/switch/ledger.js";
import {
  bigFlatObject,
  gzipBomb,
  type HostileServer,
  nestedArray,
  startHostileServer,
} from "../hostile/bodies.js";
import {
  assertBuilt,
  type DaemonProcess,
  eventually,
  freePort,
  getJson,
  type LogLine,
  spawnCli,
  tempDir,
} from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("hostile.test.ts");

/** The heap cap the shipped units and the sidecar run with. */
const HEAP_CAP = { NODE_OPTIONS: "--max-old-space-size=160" };
const FAST = ["--interval", "1s", "--deadline", "10s", "--request-timeout", "2s"];
const cleanups: Array<() => unknown> = [];
beforeAll(() => assertBuilt());
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const text = (l: LogLine) => JSON.stringify(l);
const linesMatching = (d: DaemonProcess, re: RegExp) => d.lines.filter((l) => re.test(text(l)));

async function stop(d: DaemonProcess) {
  d.kill("SIGTERM");
  const timer = setTimeout(() => d.kill("SIGKILL"), 8000);
  const r = await d.exited;
  clearTimeout(timer);
  return r;
}

describe("hostile answers under the shipped heap cap", () => {
  let server: HostileServer;
  let daemon: DaemonProcess;
  let port: number;
  const wallet = new Wallet(id("hl-deadman reliability: hostile bodies"));
  const account = wallet.address.toLowerCase();

  beforeAll(async () => {
    const bomb = await gzipBomb(1024 * 1024 * 1024);
    const nested = nestedArray(8_000_000);
    const huge = bigFlatObject(10_000_000);
    server = await startHostileServer((p) => {
      if (p === "/exchange") return { body: huge };
      if (p === "/info") return { body: nested };
      return { headers: { "content-encoding": "gzip" }, body: bomb }; // the EVM RPC
    });
    cleanups.push(() => server.close());
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    port = await freePort();
    daemon = spawnCli(
      [
        "run",
        ...FAST,
        "--api-url",
        server.url,
        "--rpc-url",
        `${server.url}/evm`,
        "--watch-address",
        account,
        "--account",
        account,
        "--exposure-interval",
        "1s",
        "--budget-interval",
        "0",
        "--chain-poll-interval",
        "1s",
        "--state-dir",
        tmp.dir,
        "--health",
        `127.0.0.1:${port}`,
      ],
      { ...HEAP_CAP, HL_PRIVATE_KEY: wallet.privateKey },
    );
    cleanups.push(() => stop(daemon));
    await daemon.waitForEvent("daemon.start", 15_000);
    // Several rounds of every hostile answer.
    await eventually(() => server.seen.filter((s) => s.path === "/exchange").length >= 3, {
      timeoutMs: 20_000,
      what: "three pushes answered with 10 MB",
    });
    await eventually(() => server.seen.filter((s) => s.path === "/info").length >= 2, {
      timeoutMs: 20_000,
      what: "two exposure polls answered with the nested array",
    });
    await eventually(() => server.seen.filter((s) => s.path === "/evm").length >= 2, {
      timeoutMs: 20_000,
      what: "two RPC calls answered with the gzip bomb",
    });
    // Let the last answers be read and logged.
    await eventually(async () => (await getJson(`http://127.0.0.1:${port}/healthz`)).status === 200, {
      what: "healthz",
    });
  }, 60_000);

  const assertAlive = async () => {
    expect(daemon.child.exitCode).toBeNull();
    expect(daemon.stderr()).not.toMatch(/heap out of memory|FATAL ERROR/i);
    expect(daemon.lines.some((l) => l.event === "daemon.crash")).toBe(false);
    expect((await getJson(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  };

  test("behavior: an 8 MB nested JSON array from /info is a typed error, logged once per poll", async () => {
    await assertAlive();
    const polls = server.seen.filter((s) => s.path === "/info").length;
    const logged = linesMatching(daemon, /nested deeper than 64 levels/);
    expect(logged.length).toBeGreaterThanOrEqual(1);
    expect(logged.length).toBeLessThanOrEqual(polls);
    expect(logged.every((l) => l.event === "exposure.failed" && l.kind === "malformed_response")).toBe(true);
    expect(Math.max(...logged.map((l) => text(l).length))).toBeLessThan(4096);
    proven("hostile-info-nested");
  });

  test("behavior: a 10 MB body from /exchange is a typed error, logged once per push", async () => {
    await assertAlive();
    const pushes = server.seen.filter((s) => s.path === "/exchange").length;
    const logged = linesMatching(daemon, /exceeds 1048576 bytes/);
    expect(logged.length).toBeGreaterThanOrEqual(2);
    expect(logged.length).toBeLessThanOrEqual(pushes);
    expect(logged.every((l) => l.event === "heartbeat.failed" && l.reason === "malformed_response")).toBe(
      true,
    );
    expect(Math.max(...logged.map((l) => text(l).length))).toBeLessThan(4096);
    proven("hostile-exchange-huge");
  });

  test("behavior: a 1 MiB gzip expanding to 1 GiB from the EVM RPC is a typed error, never read past the cap", async () => {
    await assertAlive();
    const logged = linesMatching(daemon, /after decompression/);
    expect(logged.length).toBeGreaterThanOrEqual(1);
    // Two readers of the RPC, each with its typed error: the chain watch (`chain.error`, each tick) and, since issue
    // 40, the block witness (`clock.block_unavailable`, once per outage: the exchange's time has a witness less).
    expect(logged.every((l) => l.event === "chain.error" || l.event === "clock.block_unavailable")).toBe(
      true,
    );
    expect(logged.some((l) => l.event === "chain.error")).toBe(true);
    expect(logged.filter((l) => l.event === "clock.block_unavailable").length).toBeLessThanOrEqual(1);
    for (const l of logged) expect(text(l)).toMatch(/Malformed response from the EVM RPC/);
    proven("hostile-evm-gzip-bomb");
  });
});

/** A valid ledger of `entries` history entries for one account (the 38 MB, 300k-entry file of the issue). */
function hugeLedger(account: string, entries: number): string {
  const now = Date.now();
  const history = Array.from({ length: entries }, (_, i) => ({
    at: now - i,
    type: "trigger" as const,
    deadline: now - i,
    triggersToday: 1,
  }));
  const file = {
    version: 1,
    updatedAt: now,
    assumeLimitOn: null,
    accounts: {
      [account]: {
        account,
        day: utcDay(now),
        triggersToday: 1,
        limit: 10,
        assumed: false,
        armedUntil: null,
        lastPushAt: now,
        lastCountedDeadline: now,
        history,
      },
    },
  };
  LedgerFile.parse({
    ...file,
    accounts: { [account]: { ...file.accounts[account]!, history: history.slice(0, 2) } },
  });
  return JSON.stringify(file, null, 1);
}

// The tests of the three blocks below each use a state directory, a port and a simulator of their own: concurrent
// (they wait on their daemons' start-up and timers), cleaned up after the file.
describe.concurrent("odd ledger files", () => {
  /**
   * A daemon on `stateDir`, its health server on a port the kernel picks as it listens (`:0`), read back from
   * `health.listening`: a port found free beforehand can be taken by another test's process before the daemon
   * binds it (EADDRINUSE, exit 69, once in a fresh-clone run).
   */
  async function startOn(stateDir: string) {
    const d = spawnCli(
      [
        "run",
        "--sim",
        ...FAST,
        "--exposure-interval",
        "0",
        "--state-dir",
        stateDir,
        "--health",
        "127.0.0.1:0",
      ],
      HEAP_CAP,
    );
    cleanups.push(() => stop(d));
    const health = async () => String((await d.waitForEvent("health.listening", 15_000)).url);
    return { d, health };
  }

  async function expectMovedAsideAndProtecting(stateDir: string, what: RegExp) {
    const { d, health } = await startOn(stateDir);
    const corrupt = await d.waitForEvent("ledger.corrupt", 15_000);
    expect(String(corrupt.reason)).toMatch(what);
    expect(corrupt.assumedTriggersToday).toBe(10);
    await d.waitForEvent("heartbeat.ok", 15_000);
    expect((await getJson(`${await health()}/healthz`)).status).toBe(200);
    expect(readdirSync(stateDir).some((f) => f.startsWith("ledger.json.corrupt-"))).toBe(true);
    expect(d.stderr()).not.toMatch(/heap out of memory/i);
    const r = await stop(d);
    expect(r.code).toBe(0);
    // the ledger went on in the per-account layout (ledger/meta.json is written last: the layout is complete)
    expect(readdirSync(path.join(stateDir, "ledger"))).toContain("meta.json");
  }

  test("behavior: a ledger symlinked to /dev/zero is moved aside, the limit assumed", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    symlinkSync("/dev/zero", path.join(tmp.dir, "ledger.json"));
    await expectMovedAsideAndProtecting(tmp.dir, /symbolic link/);
    proven("ledger-dev-zero");
  }, 40_000);

  test("behavior: a FIFO as the ledger never blocks start-up", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const made = spawnSync("mkfifo", [path.join(tmp.dir, "ledger.json")]);
    expect(made.status, "mkfifo (coreutils) is needed").toBe(0);
    await expectMovedAsideAndProtecting(tmp.dir, /FIFO/);
    proven("ledger-fifo");
  }, 40_000);

  // The per-account layout (ledger/<account>.json + ledger/meta.json, issue 41): a run writes it, then the
  // account's file is replaced; the next start moves that file aside and assumes the limit for its account.
  async function expectAccountFileMovedAside(plant: (file: string) => void, what: RegExp) {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const first = await startOn(tmp.dir);
    await first.d.waitForEvent("heartbeat.ok", 15_000);
    expect((await stop(first.d)).code).toBe(0);
    const dir = path.join(tmp.dir, "ledger");
    const names = readdirSync(dir).filter((f) => /^0x[0-9a-f]{40}\.json$/.test(f));
    expect(names).toHaveLength(1);
    expect(readdirSync(dir)).toContain("meta.json");
    const file = path.join(dir, names[0]!);
    rmSync(file);
    plant(file);
    const { d, health } = await startOn(tmp.dir);
    const corrupt = await d.waitForEvent("ledger.corrupt", 15_000);
    expect(corrupt.path).toBe(file);
    expect(corrupt.account).toBe(names[0]!.replace(/\.json$/, ""));
    expect(String(corrupt.reason)).toMatch(what);
    expect(corrupt.assumedTriggersToday).toBe(10);
    await d.waitForEvent("heartbeat.ok", 15_000);
    expect((await getJson(`${await health()}/healthz`)).status).toBe(200);
    expect(readdirSync(dir).some((f) => f.startsWith(`${names[0]}.corrupt-`))).toBe(true);
    expect(d.stderr()).not.toMatch(/heap out of memory/i);
    expect((await stop(d)).code).toBe(0);
  }

  test("behavior: an account's ledger file symlinked to /dev/zero is moved aside, the limit assumed", async () => {
    await expectAccountFileMovedAside((file) => symlinkSync("/dev/zero", file), /symbolic link/);
    proven("ledger-account-dev-zero");
  }, 60_000);

  test("behavior: a FIFO as an account's ledger file never blocks start-up", async () => {
    await expectAccountFileMovedAside((file) => {
      const made = spawnSync("mkfifo", [file]);
      expect(made.status, "mkfifo (coreutils) is needed").toBe(0);
    }, /FIFO/);
    proven("ledger-account-fifo");
  }, 60_000);

  test("behavior: a schema-valid 38 MB ledger is refused by size before it is parsed", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const body = hugeLedger("0x0000000000000000000000000000000000000001", 300_000);
    expect(body.length).toBeGreaterThan(30_000_000);
    writeFileSync(path.join(tmp.dir, "ledger.json"), body);
    await expectMovedAsideAndProtecting(tmp.dir, /above the 1048576-byte limit/);
    proven("ledger-huge");
  }, 40_000);
});

describe.concurrent("one daemon per state directory", () => {
  test("behavior: a second daemon on the same state directory exits 75 naming the holder's pid", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const port = await freePort();
    const first = spawnCli([
      "run",
      "--sim",
      ...FAST,
      "--state-dir",
      tmp.dir,
      "--health",
      `127.0.0.1:${port}`,
    ]);
    cleanups.push(() => stop(first));
    await first.waitForEvent("heartbeat.ok", 15_000);
    const lock = JSON.parse(readFileSync(path.join(tmp.dir, "daemon.lock"), "utf8")) as { pid: number };
    expect(lock.pid).toBe(first.child.pid);

    const second = spawnCli(["run", "--sim", ...FAST, "--state-dir", tmp.dir, "--health", "off"]);
    const r = await second.exited;
    expect(r.code).toBe(75);
    expect(second.stderr()).toContain(`pid ${first.child.pid}`);
    // Refused before anything else: no simulator, no key, no daemon.
    expect(second.lines.some((l) => l.event === "daemon.start" || l.event === "sim.start")).toBe(false);
    expect(first.child.exitCode).toBeNull();

    // Released on exit: the next daemon starts.
    expect((await stop(first)).code).toBe(0);
    expect(readdirSync(tmp.dir)).not.toContain("daemon.lock");
    const third = spawnCli(["run", "--sim", ...FAST, "--state-dir", tmp.dir, "--health", "off"]);
    cleanups.push(() => stop(third));
    await third.waitForEvent("heartbeat.ok", 15_000);
    expect((await stop(third)).code).toBe(0);
    proven("second-daemon");
  }, 60_000);

  test("behavior: a lock left by a killed daemon is taken over, with a warning naming its pid", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    // A pid that is certainly gone: a process that has exited.
    const gone = spawn(process.execPath, ["-e", ""]);
    await new Promise((r) => gone.once("exit", r));
    mkdirSync(tmp.dir, { recursive: true });
    writeFileSync(path.join(tmp.dir, "daemon.lock"), `${JSON.stringify({ pid: gone.pid })}\n`);
    const d = spawnCli(["run", "--sim", ...FAST, "--state-dir", tmp.dir, "--health", "off"]);
    cleanups.push(() => stop(d));
    const warned = await d.waitForEvent("state.lock", 15_000);
    expect(String(warned.msg)).toContain(`left by pid ${gone.pid}`);
    await d.waitForEvent("heartbeat.ok", 15_000);
    const lock = JSON.parse(readFileSync(path.join(tmp.dir, "daemon.lock"), "utf8")) as { pid: number };
    expect(lock.pid).toBe(d.child.pid);
    expect((await stop(d)).code).toBe(0);
    proven("stale-lock");
  }, 40_000);
});

describe.concurrent("the key and the first lines", () => {
  test("behavior: the key is not in /proc/<pid>/environ of the running daemon", async () => {
    const wallet = new Wallet(id("hl-deadman reliability: environ"));
    const account = wallet.address.toLowerCase();
    const { startSimulator } = await import("../../src/sim/server.js");
    const sim = await startSimulator({ users: [{ address: account }] });
    cleanups.push(() => sim.close());
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const d = spawnCli(
      [
        "run",
        ...FAST,
        "--exposure-interval",
        "0",
        "--api-url",
        sim.apiUrl,
        "--state-dir",
        tmp.dir,
        "--health",
        "off",
      ],
      { HL_PRIVATE_KEY: wallet.privateKey, HL_OTHER: "kept" },
    );
    cleanups.push(() => stop(d));
    await d.waitForEvent("heartbeat.ok", 15_000);
    const environ = readFileSync(`/proc/${d.child.pid}/environ`, "utf8").split("\0");
    const hex = wallet.privateKey.slice(2).toLowerCase();
    expect(environ.join("\n").toLowerCase()).not.toContain(hex);
    // Blanked in place (same length), the rest of the environment untouched.
    expect(environ).toContain(`HL_PRIVATE_KEY=${"*".repeat(wallet.privateKey.length)}`);
    expect(environ).toContain("HL_OTHER=kept");
    const said = await d.waitForEvent("key.environment", 1000);
    expect(said.scrubbed).toBe(true);
    // Children never inherit it either: the process's own view is unset.
    expect(d.stdout().toLowerCase()).not.toContain(hex);
    proven("key-environ");
  }, 40_000);

  test("behavior: nothing on stdout before a configuration or key error; one JSON error line", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    for (const env of [{}, { HL_INTERVAL: "15" }, { HL_PRIVATE_KEY: "0x1234" }]) {
      const d = spawnCli(["run", "--state-dir", tmp.dir, "--health", "off"], env);
      const r = await d.exited;
      expect(r.code, JSON.stringify(env)).toBe(78);
      expect(d.stdout(), JSON.stringify(env)).toBe("");
      const lines = d.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, event: "cli.error", exitCode: 78 });
    }
    proven("config-error-output");
  }, 40_000);
});
