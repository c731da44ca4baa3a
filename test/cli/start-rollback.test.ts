/**
 * Ordered start with rollback, through the real CLI (docs/daemon.md, "Start order and exit"): a component that
 * cannot start (here the health server on a taken port) makes the process exit with its code, promptly, with no
 * schedule armed at the exchange and no process left behind; `run --sim` with a bad option exits 78 at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertBuilt, CLI, FAST_CADENCE, spawnNode } from "../helpers/process.js";

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("run: a start-up failure rolls back and exits", () => {
  let sim: SimulatorHandle;
  let dir: string;
  let holder: Server;
  let port: number;
  const wallet = Wallet.createRandom();
  const user = wallet.address.toLowerCase();

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), "hl-deadman-start-"));
    sim = await startSimulator({ users: [{ address: user }] });
    // Another process's listener on the health port (two hl-deadman@ instances with one port).
    holder = createServer();
    await new Promise<void>((done) => holder.listen(0, "127.0.0.1", done));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((done) => holder?.close(done));
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("behavior: health port taken -> exit 69 naming the port, nothing armed, no process left", async () => {
    const out = spawnNode([CLI, "run", "--health", `127.0.0.1:${port}`, ...FAST_CADENCE, "--json"], {
      env: {
        PATH: process.env.PATH,
        HL_PRIVATE_KEY: wallet.privateKey,
        HL_API_URL: sim.apiUrl,
        HL_STATE_DIR: join(dir, "state"),
        HL_BUDGET_INTERVAL: "0",
      },
    });
    try {
      const { code } = await out.exitWithin(8_000);
      expect(code, `stdout:\n${out.stdout()}\nstderr:\n${out.stderr()}`).toBe(69);
      const errors = out
        .stderr()
        .trim()
        .split("\n")
        .filter((l) => l.includes('"cli.error"'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(`127.0.0.1:${port}`);
      expect(errors[0]).toContain("EADDRINUSE");
      // Nothing was armed: the simulator never saw a signed action and holds no schedule for the account.
      expect(sim.state.requestCount("exchange")).toBe(0);
      expect(sim.state.getSchedule(user)).toBeNull();
      expect(out.lines.some((l) => l.event === "heartbeat.ok")).toBe(false);
      expect(alive(out.child.pid)).toBe(false);
    } finally {
      out.kill("SIGKILL");
    }
  });

  test("behavior: run --sim with --account (a configuration error) exits 78 promptly, simulator closed", async () => {
    const out = spawnNode([CLI, "run", "--sim", "--account", user, "--json"], {
      env: { PATH: process.env.PATH, HL_STATE_DIR: join(dir, "sim-state") },
    });
    try {
      const { code } = await out.exitWithin(8_000);
      expect(code, `stderr:\n${out.stderr()}`).toBe(78);
      expect(out.stderr()).toContain("--sim runs the demo account only");
      expect(out.lines.some((l) => l.event === "sim.start")).toBe(false);
      expect(alive(out.child.pid)).toBe(false);
    } finally {
      out.kill("SIGKILL");
    }
  });
});
