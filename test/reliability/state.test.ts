/**
 * Fault matrix, the state directory: read-only, full, or the ledger corrupt or truncated. The real CLI against
 * the simulator (real clock, in this process). Each row proves: a clear message, the daemon keeps protecting
 * (heartbeats accepted by the simulator), no silent reset to zero, and nothing written before is lost.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { utcDay } from "../../src/core/clock.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { LedgerFile } from "../../src/switch/ledger.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import {
  assertBuilt,
  type DaemonProcess,
  eventually,
  FAST_CADENCE,
  freePort,
  getJson,
  runCli,
  spawnCli,
  tempDir,
  unprivilegedUser,
} from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("state.test.ts");

const FAST = FAST_CADENCE;
const cleanups: Array<() => unknown> = [];
beforeAll(() => assertBuilt());
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A ledger written "before": two triggers today, two history events, nothing armed. */
function ledgerFixture(user: string): string {
  const now = Date.now();
  const file = {
    version: 1,
    updatedAt: now - 60_000,
    assumeLimitOn: null,
    accounts: {
      [user]: {
        account: user,
        day: utcDay(now),
        triggersToday: 2,
        limit: 10,
        assumed: false,
        armedUntil: null,
        lastPushAt: now - 600_000,
        lastCountedDeadline: now - 300_000,
        history: [
          { at: now - 400_000, type: "trigger", deadline: now - 400_000, triggersToday: 1 },
          { at: now - 300_000, type: "trigger", deadline: now - 300_000, triggersToday: 2 },
        ],
      },
    },
  };
  LedgerFile.parse(file); // the fixture is a valid ledger of the current format
  return `${JSON.stringify(file, null, 2)}\n`;
}

async function setup(label: string) {
  const wallet = new Wallet(id(`hl-deadman reliability: ${label}`));
  const user = wallet.address.toLowerCase();
  const sim: SimulatorHandle = await startSimulator({ users: [{ address: user }] });
  const tmp = tempDir();
  cleanups.push(
    () => sim.close(),
    () => tmp.cleanup(),
  );
  const port = await freePort();
  const start = (stateDir: string, as?: { uid: number; gid: number }): DaemonProcess => {
    const p = spawnCli(
      ["run", "--api-url", sim.apiUrl, "--state-dir", stateDir, "--health", `127.0.0.1:${port}`, ...FAST],
      { HL_PRIVATE_KEY: wallet.privateKey },
      { user: as },
    );
    cleanups.push(() => p.kill("SIGKILL"));
    return p;
  };
  const readyz = () => getJson(`http://127.0.0.1:${port}/readyz`);
  return { wallet, user, sim, tmp, start, readyz };
}

/** Protecting = a confirmed heartbeat and the simulator holding a schedule in the future. */
async function protecting(p: DaemonProcess, sim: SimulatorHandle, user: string) {
  await p.waitForEvent("heartbeat.ok", 10_000);
  await eventually(() => (sim.state.getSchedule(user) ?? 0) > Date.now(), { what: "an armed schedule" });
}

async function stop(p: DaemonProcess) {
  p.kill("SIGTERM");
  return p.exited;
}

/** Mounts a tiny tmpfs (a real ENOSPC) when allowed (root, mount permitted); null otherwise. */
function tinyTmpfs(dir: string): (() => void) | null {
  if (process.getuid?.() !== 0) return null;
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir], {
    encoding: "utf8",
  });
  if (r.status !== 0) return null;
  return () => spawnSync("umount", ["-l", dir]);
}

/** Fills the file system holding `dir` until ENOSPC; returns the filler's path. */
function fill(dir: string): string {
  const filler = path.join(dir, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (let i = 0; i < 100_000; i++) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
  return filler;
}

describe.concurrent("reliability: state directory", () => {
  test("behavior: read-only state dir → logged, still protecting, old ledger intact", async () => {
    // Read-only at start is refused (exit 73, test/cli/state-dir.test.ts); one that turns read-only while the daemon
    // runs keeps this rule: the write failure logged, protection goes on, what was written stays intact.
    const { user, sim, tmp, start, readyz } = await setup("state-read-only");
    const stateDir = path.join(tmp.dir, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    const ledgerPath = path.join(stateDir, "ledger.json");
    writeFileSync(ledgerPath, ledgerFixture(user));
    // Root ignores file modes: then the daemon runs as nobody, owning the directory it may then not write.
    const as = unprivilegedUser();
    if (as) {
      chownSync(tmp.dir, as.uid, as.gid);
      chownSync(stateDir, as.uid, as.gid);
      chownSync(ledgerPath, as.uid, as.gid);
    }
    const p = start(stateDir, as);
    await p.waitForEvent("ledger.loaded", 10_000);
    await protecting(p, sim, user);
    // migrated at the start: the account's file in ledger/ is what a write would replace
    const accountFile = path.join(stateDir, "ledger", `${user}.json`);
    chmodSync(accountFile, 0o400);
    chmodSync(path.join(stateDir, "ledger"), 0o500);
    chmodSync(stateDir, 0o500);
    cleanups.push(() => chmodSync(stateDir, 0o700));
    cleanups.push(() => chmodSync(path.join(stateDir, "ledger"), 0o700));
    const before = readFileSync(accountFile, "utf8");
    const listing = readdirSync(path.join(stateDir, "ledger")).sort();
    const failed = await p.waitForEvent("ledger.write_failed", 10_000);
    expect(failed.level).toBe(50); // error
    expect(String(failed.path)).toContain(stateDir);
    expect(failed.reason).toBe("EACCES");
    // Still counting from what was written before (2 today): nothing lost, nothing reset.
    const r = await readyz();
    const accounts = (r.body as { accounts: Array<{ account: string; triggersToday: number }> }).accounts;
    expect(accounts.find((a) => a.account === user)?.triggersToday).toBe(2);
    expect(r.status).toBe(200);
    // Keeps protecting after the failure, too.
    const pushes = sim.state.actions.filter((a) => a.accepted).length;
    await eventually(() => sim.state.actions.filter((a) => a.accepted).length > pushes + 1, {
      what: "more accepted pushes after the write failure",
    });
    const exit = await stop(p);
    expect(exit.code).toBe(0);
    expect(sim.state.getSchedule(user)).toBeNull(); // removed on the way out
    expect(readFileSync(accountFile, "utf8")).toBe(before);
    expect(readdirSync(path.join(stateDir, "ledger")).sort()).toEqual(listing); // no temporary file left behind
    proven("state-read-only");
  });

  test("behavior: unwritable ledger → logged, still protecting", async () => {
    const { user, sim, tmp, start } = await setup("state-full");
    const stateDir = path.join(tmp.dir, "state");
    mkdirSync(stateDir);
    const unmount = tinyTmpfs(stateDir);
    if (unmount) {
      cleanups.push(unmount);
      // A real full disk: the old ledger, then a filler up to ENOSPC.
      const before = ledgerFixture(user);
      const ledgerPath = path.join(stateDir, "ledger.json");
      writeFileSync(ledgerPath, before);
      const filler = fill(stateDir);
      const p = start(stateDir);
      await protecting(p, sim, user);
      const failed = await p.waitForEvent("ledger.write_failed", 10_000);
      expect(failed.reason).toBe("ENOSPC");
      expect(String(failed.path)).toContain(stateDir);
      expect(readFileSync(ledgerPath, "utf8")).toBe(before); // the old file survives a failed write
      // Space comes back: the next write succeeds and says so; the count written before is still there.
      rmSync(filler);
      await p.waitForEvent("ledger.write_recovered", 10_000);
      const exit = await stop(p);
      expect(exit.code).toBe(0);
      // the migration failed at the start (ENOSPC: ledger.json kept); once written, the per-account ledger is it
      const after = LedgerFile.parse({ version: 1, ...ledgerOnDisk(stateDir) });
      expect(after.accounts[user]!.triggersToday).toBe(2);
      expect(after.accounts[user]!.history.filter((h) => h.type === "trigger")).toHaveLength(2);
      console.log("reliability: state-full used a 64 KiB tmpfs (real ENOSPC)");
    } else {
      // No mount allowed: the state directory's path runs through a regular file (ENOTDIR on every write).
      const blocker = path.join(tmp.dir, "blocker");
      writeFileSync(blocker, "operator notes\n");
      const p = start(path.join(blocker, "state"));
      const failed = await p.waitForEvent("ledger.write_failed", 10_000);
      expect(String(failed.reason)).toMatch(/ENOTDIR|EEXIST/);
      await protecting(p, sim, user);
      expect((await stop(p)).code).toBe(0);
      expect(readFileSync(blocker, "utf8")).toBe("operator notes\n");
      console.log("reliability: state-full used a path through a regular file (mount not permitted)");
    }
    proven("state-full");
  });

  async function damagedLedger(label: string, damaged: string) {
    const { user, sim, tmp, start, readyz } = await setup(label);
    const stateDir = path.join(tmp.dir, "state");
    mkdirSync(stateDir);
    const ledgerPath = path.join(stateDir, "ledger.json");
    writeFileSync(ledgerPath, damaged);
    const p = start(stateDir);
    const corrupt = await p.waitForEvent("ledger.corrupt", 10_000, (l) => typeof l.movedTo === "string");
    expect(corrupt.level).toBe(50);
    expect(String(corrupt.msg)).toMatch(/moved it to/);
    expect(corrupt.assumedTriggersToday).toBe(10);
    // Moved aside byte for byte, not deleted.
    const aside = String(corrupt.movedTo);
    expect(path.dirname(aside)).toBe(stateDir);
    expect(readFileSync(aside, "utf8")).toBe(damaged);
    // Still protecting, but not ready: the daily limit is assumed used until proven otherwise.
    await protecting(p, sim, user);
    const r = await readyz();
    expect(r.status).toBe(503);
    expect((r.body as { reasons: string[] }).reasons.join("\n")).toMatch(/daily trigger limit/);
    expect((await stop(p)).code).toBe(0);
    // No silent reset: the new ledger (ledger/, written after the damaged file was moved aside) and `status` both
    // say 10 (assumed), with the corrupt event in history.
    const after = LedgerFile.parse({ version: 1, ...ledgerOnDisk(stateDir) });
    expect(after.accounts[user]!.triggersToday).toBe(10);
    expect(after.accounts[user]!.assumed).toBe(true);
    expect(after.accounts[user]!.history.some((h) => h.type === "corrupt")).toBe(true);
    const status = await runCli(["status", "--state-dir", stateDir, "--json"]);
    expect(status.code).toBe(0);
    const shown = JSON.parse(status.stdout) as {
      accounts: Array<{ account: string; triggersToday: number }>;
    };
    expect(shown.accounts.find((a) => a.account === user)?.triggersToday).toBe(10);
    expect(readFileSync(aside, "utf8")).toBe(damaged);
  }

  test("behavior: corrupt ledger → clear message, kept aside, no silent reset", async () => {
    await damagedLedger("ledger-corrupt", "this is not a ledger {{{\n");
    proven("ledger-corrupt");
  });

  test("behavior: truncated ledger → clear message, kept aside, no silent reset", async () => {
    const whole = ledgerFixture(
      new Wallet(id("hl-deadman reliability: ledger-truncated")).address.toLowerCase(),
    );
    await damagedLedger("ledger-truncated", whole.slice(0, Math.floor(whole.length / 2)));
    proven("ledger-truncated");
  });
});
