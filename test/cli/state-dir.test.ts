/**
 * A state directory that cannot be created, or is not the daemon's own, stops `run` at start with exit 73
 * (EX_CANTCREAT) and a one-line fix (issue 43): never a degraded run (the daily limit assumed spent until midnight,
 * or no one-daemon lock). The real CLI, spawned: `run --sim --state-dir DIR`.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { chooseStateDir } from "../../src/app/state-dir.js";
import { defaultStateDir } from "../../src/config/networks.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertBuilt, FAST_CADENCE, runCliProcess, spawnCli } from "../helpers/process.js";
import { tempDir } from "../reliability/harness.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function scratch() {
  const dir = tempDir("hl-statedir-");
  cleanups.push(() => dir.cleanup());
  chmodSync(dir.dir, 0o755); // another user may walk into it (the uid 65534 case)
  return dir.dir;
}

const run = (stateDir: string, user?: { uid: number; gid: number }) =>
  runCliProcess(
    ["run", "--sim", "--health", "127.0.0.1:0", "--state-dir", stateDir, ...FAST_CADENCE],
    {},
    {
      timeoutMs: 15_000,
      ...(user ? { user } : {}),
    },
  );

describe("run: the state directory at start", () => {
  test("error: a path under a file → exit 73 with the fix", async () => {
    assertBuilt();
    const base = scratch();
    writeFileSync(path.join(base, "file"), "x");
    const r = await run(path.join(base, "file", "state"));
    expect(r.code, r.stderr).toBe(73);
    expect(r.stderr).toContain("a part of its path is a file");
    expect(r.stderr).toContain("install -d -m 700");
    expect(r.stdout).not.toContain("heartbeat.ok");
  });

  test("error: a directory owned by another user, or writable by others → exit 73", async () => {
    assertBuilt();
    const base = scratch();
    const foreign = path.join(base, "foreign");
    mkdirSync(foreign, { mode: 0o700 });
    chownSync(foreign, 65534, 65534);
    const r1 = await run(foreign);
    expect(r1.code, r1.stderr).toBe(73);
    expect(r1.stderr).toContain("is owned by uid 65534, not by this user");
    const open = path.join(base, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const r2 = await run(open);
    expect(r2.code, r2.stderr).toBe(73);
    expect(r2.stderr).toContain("writable by every user (mode 0777)");
    expect(r2.stderr).toContain(`chmod 700 ${open}`);
  });

  test("error: a directory where no file can be created → exit 73, never a run without the lock", async () => {
    assertBuilt();
    if (process.getuid?.() !== 0) throw new Error("this test drops to uid 65534 and needs to start as root");
    const base = scratch();
    const locked = path.join(base, "ro");
    mkdirSync(locked, { mode: 0o500 });
    chownSync(locked, 65534, 65534);
    const r = await run(locked, { uid: 65534, gid: 65534 });
    expect(r.code, r.stderr).toBe(73);
    expect(r.stderr).toContain("No file can be created in the state directory");
  });
});

describe("the default state directory", () => {
  test("default: $XDG_STATE_HOME/hl-deadman, else ~/.local/state/hl-deadman, never the working directory", () => {
    expect(defaultStateDir({ XDG_STATE_HOME: "/x/state", HOME: "/home/t" }, "/srv")).toBe(
      "/x/state/hl-deadman",
    );
    expect(defaultStateDir({ HOME: "/home/t" }, "/srv")).toBe("/home/t/.local/state/hl-deadman");
    expect(defaultStateDir({ XDG_STATE_HOME: "relative", HOME: "/home/t" }, "/srv")).toBe(
      "/home/t/.local/state/hl-deadman",
    );
    expect(defaultStateDir({}, "/srv")).toBe("/srv/.hl-deadman"); // no home known: the old default
  });

  test("behavior: the old ./.hl-deadman is moved by run (unless a daemon holds it), read in place by others", () => {
    const base = scratch();
    const cwd = path.join(base, "work");
    const home = path.join(base, "home");
    mkdirSync(path.join(cwd, ".hl-deadman"), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(cwd, ".hl-deadman", "ledger.json"), "{}");
    const env = { HOME: home };
    const target = path.join(home, ".local/state/hl-deadman");
    expect(chooseStateDir({ configured: undefined, cwd, env, move: false })).toEqual({
      dir: path.join(cwd, ".hl-deadman"),
      legacy: { action: "used", from: path.join(cwd, ".hl-deadman"), why: expect.stringContaining(target) },
    });
    const held = chooseStateDir({ configured: undefined, cwd, env, move: true, lockHeld: () => true });
    expect(held.dir).toBe(path.join(cwd, ".hl-deadman"));
    expect(held.legacy?.why).toContain("a running daemon holds it");
    const moved = chooseStateDir({ configured: undefined, cwd, env, move: true, lockHeld: () => false });
    expect(moved).toEqual({
      dir: target,
      legacy: {
        action: "moved",
        from: path.join(cwd, ".hl-deadman"),
        why: `moved to the new default ${target}`,
      },
    });
    expect(readFileSync(path.join(target, "ledger.json"), "utf8")).toBe("{}");
    expect(existsSync(path.join(cwd, ".hl-deadman"))).toBe(false);
    // a configured directory is never second-guessed
    expect(chooseStateDir({ configured: "/etc/x", cwd, env, move: true })).toEqual({
      dir: "/etc/x",
      legacy: null,
    });
  });

  let sim: SimulatorHandle | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  test("behavior: a daemon started in one directory is found by status from another (same user), and says where", async () => {
    assertBuilt();
    const wallet = Wallet.createRandom();
    const account = wallet.address.toLowerCase();
    sim = await startSimulator({ users: [{ address: account }], ipWeightPerMinute: null });
    const base = scratch();
    const home = path.join(base, "home");
    const a = path.join(base, "a");
    const b = path.join(base, "b");
    mkdirSync(home);
    mkdirSync(a);
    mkdirSync(b);
    const p = spawnCli(
      ["run", "--api-url", sim.apiUrl, "--health", "off", ...FAST_CADENCE],
      { HL_PRIVATE_KEY: wallet.privateKey, HOME: home },
      { cwd: a },
    );
    cleanups.push(() => p.kill("SIGKILL"));
    const said = await p.waitForEvent("state.dir", 15_000);
    const expected = path.join(home, ".local/state/hl-deadman");
    expect(said.path).toBe(expected);
    expect(String(said.msg)).toContain(`state directory ${expected}`);
    await p.waitForEvent("heartbeat.ok", 15_000);
    const status = await runCliProcess(
      ["status", "--json", "--api-url", sim.apiUrl],
      { HOME: home },
      { cwd: b },
    );
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(account);
    p.kill("SIGTERM");
    await p.exitWithin(10_000);
  });
});
