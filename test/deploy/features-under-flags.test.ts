/**
 * Every feature that does I/O, alive under the node flags the deployments ship (docs/operations.md, "Node flags"):
 * the real CLI (dist/bin/hl-deadman.js) started with the systemd unit's own node flags, read from the unit through
 * ./deployments.ts (so this follows whatever the units decide), against the in-process simulator, with the engine
 * guard's URL (a real loopback health server), webhook notifications (a real loopback receiver), the exchange's
 * record (the simulator's explorer), exposure, the chain watch (the simulator's EVM RPC) and the health server all
 * switched on. It must stay up (several confirmed pushes, no exit) and each feature must really do its I/O.
 *
 * Under `--jitless --no-expose-wasm` there is no WebAssembly: anything reaching for the global `fetch` (undici,
 * whose HTTP parser is WebAssembly) dies with `ReferenceError: WebAssembly is not defined`, which is how the guard
 * and the notifier crashed the daemon before they went through src/protocol/http/http.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertBuilt, CLI, fastCadence, type SpawnedProcess, spawnNode } from "../helpers/process.js";
import { nodeFlagsOf, unitExecStart } from "./deployments.js";

/** The node flags the systemd unit starts the daemon with (heap cap included: this is the unit's process). */
const FLAGS = nodeFlagsOf(unitExecStart("systemd/hl-deadman.service"));

/** A loopback server that records each request (method, path, body) and answers `status()`. */
async function loopback(status: () => number) {
  const seen: Array<{ method: string; path: string; body: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", path: req.url ?? "", body });
      res.writeHead(status(), { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    seen,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("every I/O feature under the shipped node flags (process)", () => {
  let sim: SimulatorHandle;
  let engine: Awaited<ReturnType<typeof loopback>>;
  let webhook: Awaited<ReturnType<typeof loopback>>;
  let dir: string;
  let engineStatus = 200;
  const wallet = Wallet.createRandom();
  const user = wallet.address.toLowerCase();

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), "hl-deadman-features-"));
    sim = await startSimulator({ users: [{ address: user }] });
    engine = await loopback(() => engineStatus);
    webhook = await loopback(() => 200);
  });
  afterAll(async () => {
    await sim?.close();
    await engine?.close();
    await webhook?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the flags come from the unit and turn WebAssembly off", () => {
    expect(FLAGS).toContain("--jitless");
    expect(FLAGS).toContain("--no-expose-wasm");
  });

  test("behavior: guard URL, webhooks, explorer, exposure, chain watch and /metrics all do their I/O; the daemon stays up and stops cleanly", async () => {
    const watched = sim.chain.senders()[0]!;
    const counts = () => ({
      explorer: sim.state.requestCount("explorer"),
      evm: sim.state.requestCount("evm"),
      info: sim.state.requestCount("info"),
    });
    const daemon: SpawnedProcess = spawnNode(
      [
        ...FLAGS,
        CLI,
        "run",
        "--api-url",
        sim.apiUrl,
        "--state-dir",
        join(dir, "state"),
        ...fastCadence("1s"),
        "--guard-url",
        `${engine.url}/health`,
        "--guard-interval",
        "1s",
        "--on-engine-down",
        "lapse",
        "--notify-url",
        `${webhook.url}/hook`,
        "--explorer-url",
        sim.explorerUrl,
        "--rpc-url",
        sim.rpcUrl,
        "--watch-address",
        watched,
        "--chain-poll-interval",
        "1s",
        "--health",
        "127.0.0.1:0",
        // guard.check is a debug line
        "--log-level",
        "debug",
      ],
      { env: { PATH: process.env.PATH, HL_PRIVATE_KEY: wallet.privateKey } },
    );
    const pushes = () => daemon.lines.filter((l) => l.event === "heartbeat.ok").length;
    const confirmed = (n: number) =>
      daemon.waitFor((l) => l.event === "heartbeat.ok" && pushes() >= n, 15_000, `${n} confirmed pushes`);
    try {
      const listening = await daemon.waitForEvent("health.listening", 10_000);
      await confirmed(3);
      expect(sim.state.getSchedule(user)).toBeGreaterThan(Date.now());

      // The guard asked the engine's health URL (a GET, more than once: its loop runs).
      expect(engine.seen.length).toBeGreaterThanOrEqual(2);
      expect(engine.seen.every((r) => r.method === "GET" && r.path === "/health")).toBe(true);
      // The record was read from the explorer at start-up, and agreed with the ledger.
      for (let i = 0; i < 100 && counts().explorer === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(counts().explorer).toBeGreaterThan(0);
      expect(daemon.lines.filter((l) => l.event === "record.unavailable")).toEqual([]);
      expect(daemon.lines.find((l) => l.event === "guard.check")).toMatchObject({ ok: true });
      // Exposure polled /info.
      await daemon.waitForEvent("exposure", 10_000);
      // The chain watch probed the RPC, followed blocks, and logged a transaction of the watched address.
      await daemon.waitForEvent("chain.watch.started", 10_000);
      const tx = await daemon.waitForEvent("chain.tx", 10_000);
      expect([tx.from, tx.to]).toContain(watched);
      // The health server answers (inbound I/O) with the daemon's figures.
      const metrics = await (await fetch(new URL("/metrics", String(listening.url)))).text();
      expect(metrics).toMatch(/^hl_deadman_engine_up\{guard="url"\} 1$/m);

      // The engine goes down and comes back: the guard sees it, the webhook gets both notifications.
      engineStatus = 503;
      await daemon.waitForEvent("engine.down", 10_000);
      engineStatus = 200;
      await daemon.waitForEvent("engine.up", 10_000);
      const before = pushes();
      await confirmed(before + 2);
      const posted = () => webhook.seen.map((r) => (JSON.parse(r.body) as { event: string }).event);
      const deadline = Date.now() + 10_000;
      while (!(posted().includes("engine.down") && posted().includes("engine.up")) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(posted()).toEqual(expect.arrayContaining(["engine.down", "engine.up"]));
      expect(webhook.seen.every((r) => r.method === "POST" && r.path === "/hook")).toBe(true);
      expect(counts().evm).toBeGreaterThan(2);
      expect(counts().info).toBeGreaterThan(0);

      // Still up, nothing on stderr (a crash or a V8 warning would be there).
      expect(daemon.child.exitCode).toBeNull();
      expect(daemon.stderr()).toBe("");

      daemon.kill("SIGTERM");
      const { code } = await daemon.exitWithin(10_000);
      expect(code, daemon.stderr()).toBe(0);
      expect(sim.state.getSchedule(user)).toBeNull();
      // The last notification went out before the exit.
      expect(posted()).toContain("shutdown.removed");
      expect(daemon.stderr()).toBe("");
    } finally {
      daemon.kill("SIGKILL");
    }
  }, 90_000);
});
