/**
 * Fault matrix, cancel on disconnect (issue 28): the real CLI with `--guard-socket` against the simulator, and a
 * real engine process holding the connection through `hl-deadman/engine` (the package's own subpath, resolved by
 * name), killed, stopped and restarted with real signals. With `--on-engine-down cancel` the engine's death reaches
 * its account's switch at once and its open orders are cancelled; nothing spends a trigger.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  assertBuilt,
  assertDeadlinesNeverMoveEarlier,
  eventually,
  processSetup,
  ROOT,
  sleep,
} from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("engine.test.ts");

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
beforeAll(() => {
  assertBuilt();
});

/**
 * The engine: holds the switch for `account`, heartbeat every 100 ms; SIGTERM is a clean exit (close), SIGUSR2 a
 * planned restart (detach 5 s, then exit).
 */
const ENGINE = `
import { holdSwitch } from "hl-deadman/engine";
const hold = holdSwitch({
  socket: process.env.GUARD, accounts: [process.env.ACCOUNT], heartbeatMs: 100, reconnectMs: 100,
  onState: (s) => process.stdout.write(s + "\\n"),
});
process.on("SIGTERM", () => void hold.close().then(() => process.exit(0)));
process.on("SIGUSR2", () => void hold.detach(5000).then(() => process.exit(0)));
`;

type Engine = { child: ChildProcess; out: () => string; exited: Promise<number | null> };

function startEngine(socket: string, account: string): Engine {
  const child = spawn(process.execPath, ["--input-type=module", "-e", ENGINE], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", GUARD: socket, ACCOUNT: account },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, out: () => out, exited };
}

async function setup(label: string) {
  const s = await processSetup(`hl-deadman reliability engine: ${label}`, cleanups);
  const socket = path.join(s.state.dir, "guard.sock");
  const run = (extra: string[] = []) =>
    s.start(["--guard-socket", socket, "--on-engine-down", "cancel", ...extra]);
  return { ...s, socket, run };
}

describe.concurrent("reliability: cancel on disconnect", () => {
  test("behavior: engine SIGKILL → engine down for its account at once, open orders cancelled, no trigger", async () => {
    const { sim, user, socket, run } = await setup("sigkill");
    const p = run();
    await p.waitForEvent("heartbeat.ok", 10_000);
    const engine = startEngine(socket, user);
    await p.waitForEvent("guard.connected", 10_000);
    engine.child.kill("SIGKILL");
    const down = await p.waitForEvent("engine.down", 10_000);
    expect(down.account).toBe(user);
    expect(String(down.detail)).toContain("engine connection closed");
    const cancelled = await p.waitForEvent("engine.orders_cancelled", 10_000);
    expect(cancelled).toMatchObject({ account: user, cancelled: 2 });
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("engine-crash");
  });

  test("behavior: engine hung (SIGSTOP) past --guard-heartbeat-gap → engine down, orders cancelled", async () => {
    const { sim, user, socket, run } = await setup("sigstop");
    const p = run(["--guard-heartbeat-gap", "600ms"]);
    await p.waitForEvent("heartbeat.ok", 10_000);
    const engine = startEngine(socket, user);
    await p.waitForEvent("guard.connected", 10_000);
    await sleep(400); // heartbeats flow: still up
    expect(p.lines.some((l) => l.event === "engine.down")).toBe(false);
    engine.child.kill("SIGSTOP");
    cleanups.push(() => engine.child.kill("SIGCONT"));
    const down = await p.waitForEvent("engine.down", 10_000);
    expect(String(down.detail)).toMatch(/no heartbeat for \d+ ms \(gap 600 ms\)/);
    await p.waitForEvent("engine.orders_cancelled", 10_000);
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("engine-hang");
  });

  test("behavior: engine clean exit (close) → engine down, orders cancelled, no trigger", async () => {
    const { sim, user, socket, run } = await setup("clean exit");
    const p = run();
    await p.waitForEvent("heartbeat.ok", 10_000);
    const engine = startEngine(socket, user);
    await p.waitForEvent("guard.connected", 10_000);
    engine.child.kill("SIGTERM");
    expect(await engine.exited).toBe(0);
    await p.waitForEvent("engine.down", 10_000);
    await p.waitForEvent("engine.orders_cancelled", 10_000);
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("engine-clean-exit");
  });

  test("behavior: detach then restart within the grace → no engine down, orders kept", async () => {
    const { sim, user, socket, run } = await setup("detach");
    const p = run();
    await p.waitForEvent("heartbeat.ok", 10_000);
    const old = startEngine(socket, user);
    await p.waitForEvent("guard.connected", 10_000);
    old.child.kill("SIGUSR2");
    expect(await old.exited).toBe(0);
    await p.waitForEvent("guard.engine_detached", 10_000);
    startEngine(socket, user);
    await p.waitFor((l) => l.event === "guard.engine_up" && l.account === user, 10_000, "the new engine up");
    // a few pushes later: still no engine down, nothing cancelled
    const seen = p.lines.filter((l) => l.event === "heartbeat.ok").length;
    await eventually(() => p.lines.filter((l) => l.event === "heartbeat.ok").length >= seen + 2, {
      what: "two more pushes",
    });
    expect(p.lines.filter((l) => l.event === "engine.down" || l.event === "guard.engine_down")).toEqual([]);
    expect(sim.state.getOpenOrders(user)).toHaveLength(2);
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("engine-detach");
  });

  test("behavior: daemon restarted while the engine stays up → the engine reconnects, nothing cancelled", async () => {
    const { sim, user, socket, run } = await setup("daemon restart");
    const first = run();
    await first.waitForEvent("heartbeat.ok", 10_000);
    const engine = startEngine(socket, user);
    await first.waitForEvent("guard.connected", 10_000);
    first.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
    const second = run();
    await second.waitForEvent("guard.connected", 10_000);
    await second.waitForEvent("heartbeat.ok", 10_000);
    expect(engine.child.exitCode).toBeNull();
    for (const p of [first, second])
      expect(p.lines.filter((l) => l.event === "engine.down" || l.event === "guard.engine_down")).toEqual([]);
    expect(sim.state.getOpenOrders(user)).toHaveLength(2);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    second.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
    proven("engine-daemon-restart");
  });

  test("behavior: a flapping engine connection → down and up each time, pushes go on, no trigger, deadline never earlier", async () => {
    const { sim, user, socket, run } = await setup("flapping");
    const p = run();
    await p.waitForEvent("heartbeat.ok", 10_000);
    for (let i = 0; i < 5; i++) {
      const s = connect({ path: socket });
      s.on("error", () => undefined);
      await new Promise<void>((r) => s.once("connect", () => r()));
      s.write(`hl-deadman-guard/1 ${user}\n`);
      await p.waitFor(
        (l) => l.event === "guard.connected" && l.connection === i + 1,
        10_000,
        `connection ${i + 1}`,
      );
      await sleep(100);
      s.destroy();
      await p.waitFor(
        (l) =>
          l.event === "guard.engine_down" &&
          l.detail !== undefined &&
          String(l.detail).includes(`connection ${i + 1} closed`),
        10_000,
        `down ${i + 1}`,
      );
    }
    await eventually(
      () => p.lines.filter((l) => l.event === "engine.down" && l.account === user).length === 5,
      {
        what: () =>
          `five engine.down, saw ${p.lines
            .filter((l) => l.event === "engine.down" || l.event === "engine.up")
            .map((l) => l.event)
            .join(",")}`,
      },
    );
    expect(p.lines.filter((l) => l.event === "engine.up" && l.account === user)).toHaveLength(4);
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("engine-flapping");
  });

  test("behavior: a second engine connection for the same account → down only when both are gone", async () => {
    const { sim, user, socket, run } = await setup("second engine");
    const p = run();
    await p.waitForEvent("heartbeat.ok", 10_000);
    const one = startEngine(socket, user);
    await p.waitFor((l) => l.event === "guard.connected" && l.connection === 1, 10_000, "engine 1");
    const two = startEngine(socket, user);
    await p.waitFor((l) => l.event === "guard.connected" && l.connection === 2, 10_000, "engine 2");
    one.child.kill("SIGKILL");
    await p.waitFor((l) => l.event === "guard.disconnected" && l.connection === 1, 10_000, "engine 1 gone");
    expect(p.lines.filter((l) => l.event === "engine.down")).toEqual([]);
    expect(sim.state.getOpenOrders(user)).toHaveLength(2);
    two.child.kill("SIGKILL");
    await p.waitForEvent("engine.down", 10_000);
    await p.waitForEvent("engine.orders_cancelled", 10_000);
    expect(sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    p.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
    proven("engine-second-connection");
  });
});
