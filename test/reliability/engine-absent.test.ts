/**
 * Issue 38, finding 2: a host crash takes the engine and the daemon together (SIGKILL to both); only the daemon comes
 * back (systemd restarts it) on the same state directory. Its ledger says an engine held the account, so the account
 * waits for an engine only `--guard-connect-grace` (default deadline - interval), then is engine down (`absent`) and
 * `--on-engine-down cancel` cancels the dead engine's resting orders, within the grace, without a trigger. Before
 * the fix the account stayed `waiting` for ever and the orders stayed open. The real CLI against the simulator, a
 * real engine process holding the connection through `hl-deadman/engine`, real signals.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { assertBuilt, eventually, processSetup, ROOT } from "./harness.js";

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
beforeAll(() => {
  assertBuilt();
});

/** The engine: holds the switch for its account, a heartbeat every 100 ms. */
const ENGINE = `
import { holdSwitch } from "hl-deadman/engine";
holdSwitch({ socket: process.env.GUARD, accounts: [process.env.ACCOUNT], heartbeatMs: 100, reconnectMs: 100 });
`;

function startEngine(socket: string, account: string): { child: ChildProcess; exited: Promise<unknown> } {
  const child = spawn(process.execPath, ["--input-type=module", "-e", ENGINE], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", GUARD: socket, ACCOUNT: account },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((r) => child.once("exit", r));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, exited };
}

describe("reliability: a dead engine is not waited on for ever", () => {
  test("behavior: engine and daemon SIGKILLed together, the daemon restarted alone → the dead engine's 3 orders cancelled within the connect grace, no trigger", async () => {
    const { sim, user, state, start } = await processSetup("hl-deadman reliability engine absent", cleanups, {
      orders: "one",
    });
    const socket = path.join(state.dir, "guard.sock");
    // FAST_CADENCE: interval 1 s, deadline 10 s: the default grace is 9 s
    const graceMs = 9_000;
    const args = ["--guard-socket", socket, "--on-engine-down", "cancel", "--order-feed-accounts", "0"];
    const first = start(args);
    await first.waitForEvent("heartbeat.ok", 10_000);
    const engine = startEngine(socket, user);
    await first.waitFor((l) => l.event === "guard.engine_up" && l.account === user, 10_000, "engine up");
    // the engine's resting orders (the seeded one and two more it placed)
    sim.state.addOrder(user, { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" });
    sim.state.addOrder(user, { coin: "BTC", side: "B", limitPx: "40000", sz: "0.02" });
    expect(sim.state.getOpenOrders(user)).toHaveLength(3);
    // the ledger has recorded the engine on disk (one write after its first up)
    const meta = path.join(state.dir, "ledger", "meta.json");
    await eventually(
      () => {
        const read = existsSync(meta) ? ledgerOnDisk(state.dir) : null;
        return read?.engines[user] !== undefined;
      },
      { what: "the engine recorded in the ledger", timeoutMs: 10_000 },
    );

    // the host crash: both at once
    first.kill("SIGKILL");
    engine.child.kill("SIGKILL");
    await Promise.all([first.exited, engine.exited]);
    expect(sim.state.getOpenOrders(user)).toHaveLength(3);

    const startedAt = Date.now();
    const second = start(args);
    await second.waitForEvent("guard.listening", 10_000);
    const down = await second.waitFor(
      (l) => l.event === "engine.down" && l.account === user,
      graceMs + 6_000,
      "engine down at the grace's end",
    );
    const downAfterMs = Date.now() - startedAt;
    expect(down).toMatchObject({ action: "cancel", cause: "absent" });
    expect(String(down.detail)).toContain("no engine named it within the grace after a restart");
    // not before the grace: a live engine had the whole grace to reconnect
    expect(downAfterMs).toBeGreaterThanOrEqual(graceMs - 500);
    await second.waitForEvent("engine.orders_cancelled", 10_000);
    const cancelledAfterMs = Date.now() - startedAt;
    expect(sim.state.getOpenOrders(user)).toEqual([]);
    // within the grace (plus the daemon's own start-up and one cancel round trip)
    expect(cancelledAfterMs).toBeLessThan(graceMs + 4_000);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    second.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  }, 60_000);
});
