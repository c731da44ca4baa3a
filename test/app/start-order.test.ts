/**
 * startDaemon's ordered start with rollback (docs/daemon.md, "Start order and exit"), in-process against the
 * simulator: the health server binds before the guard is asked and before any switch pushes; a step that fails
 * closes the ones already started in reverse (a switch that already armed removes its schedule); close() runs once.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  DAEMON_COMPONENTS,
  DaemonStartError,
  daemonComponents,
  type StartDaemonParameters,
  startDaemon,
} from "../../src/app/daemon.js";
import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { ManualClock } from "../../src/core/clock.js";
import { ExitCode } from "../../src/core/exit-codes.js";
import { ManualTimers } from "../../src/core/runtime.js";
import { ManualScheduler, type Scheduler } from "../../src/core/scheduler.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { eventually } from "../helpers/eventually.js";
import { captureLogger, tick } from "./helpers.js";

const listen = <T extends Server | HttpServer>(server: T) =>
  new Promise<number>((done) =>
    server.listen(0, "127.0.0.1", () => done((server.address() as { port: number }).port)),
  );

/** The daemon's components, each close recorded in `closed` by name (the list startDaemon runs). */
function recordedComponents(closed: string[]) {
  const list = daemonComponents();
  for (const component of list) {
    const close = component.close.bind(component);
    component.close = () => {
      closed.push(component.name);
      return close();
    };
  }
  return list;
}

/** The components docs/daemon.md lists in "Start order and exit", in order. */
function documentedComponents(): string[] {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/daemon.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Start order and exit"), doc.indexOf("## Shutdown and crashes"));
  return [...section.matchAll(/^\d+\. `([^`]+)`:/gm)].map((m) => m[1]!);
}

describe("startDaemon: ordered start, rollback, close", () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const wallet = Wallet.createRandom();
  const account = wallet.address.toLowerCase();
  let sim: SimulatorHandle;
  let timers: ManualTimers;
  let stateDir: string;
  let holder: Server;
  let takenPort: number;
  // The engine's health URL: counts how often the guard asked it.
  let engine: HttpServer;
  let engineUrl: string;
  let engineAsked = 0;

  beforeEach(async () => {
    sim = await startSimulator({
      clock,
      ipWeightPerMinute: null,
      users: [{ address: account, orders: [{ coin: "BTC", side: "B", limitPx: 90_000, sz: 0.1 }] }],
    });
    timers = new ManualTimers(clock);
    stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-start-order-"));
    holder = createServer();
    takenPort = await listen(holder);
    engineAsked = 0;
    engine = createHttpServer((_req, res) => {
      engineAsked++;
      res.end("ok");
    });
    engineUrl = `http://127.0.0.1:${await listen(engine)}/health`;
  });
  afterEach(async () => {
    timers.dispose();
    await new Promise((done) => holder.close(done));
    engine.closeAllConnections();
    await new Promise((done) => engine.close(done));
    await sim.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const params = (config: ConfigInput, extra: Partial<StartDaemonParameters> = {}) => {
    const log = captureLogger();
    return {
      log,
      params: {
        config: ConfigSchema.parse({ exposureInterval: 0, budgetInterval: 0, ...config }),
        wallet,
        stateDir,
        logger: log.logger,
        clock,
        timers,
        scheduler: new ManualScheduler(),
        apiUrl: sim.apiUrl,
        metrics: createMetrics({ defaultMetrics: false }),
        ...extra,
      } satisfies StartDaemonParameters,
    };
  };

  test("behavior: health port taken -> DaemonStartError(health, 69), one line; guard never asked, nothing pushed", async () => {
    const { params: p, log } = params({ health: `127.0.0.1:${takenPort}`, guardUrl: engineUrl });
    const error = await startDaemon(p).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DaemonStartError);
    const failure = error as DaemonStartError;
    expect(failure.component).toBe("health");
    expect(failure.exitCode).toBe(ExitCode.unavailable);
    expect(failure.message).toBe(
      `Cannot listen on 127.0.0.1:${takenPort} for health and metrics (EADDRINUSE); use --health HOST:PORT or off.`,
    );
    // Bound before the guard and the switches: neither the engine nor the exchange heard from us.
    clock.advance(30_000);
    await tick();
    expect(engineAsked).toBe(0);
    expect(sim.state.requestCount("exchange")).toBe(0);
    expect(sim.state.getSchedule(account)).toBeNull();
    expect(log.events("heartbeat.ok")).toHaveLength(0);
    // No timer left behind by the components started before the health server.
    expect(timers.pending).toBe(0);
  });

  test("behavior: the components start in the documented order and close in the reverse, once", async () => {
    expect(DAEMON_COMPONENTS).toEqual([
      "notifications",
      "audit",
      "ledger",
      "clients",
      "exchange record",
      "chain watch",
      "health",
      "guard",
      "agent watch",
      "clock watch",
      "coordination",
      "switches",
      "pollers",
      "control",
    ]);
    expect(documentedComponents()).toEqual(DAEMON_COMPONENTS);
    const closed: string[] = [];
    const { params: p, log } = params({ health: "127.0.0.1:0", guardUrl: engineUrl });
    const daemon = await startDaemon(p, recordedComponents(closed));
    expect(daemon.components).toEqual(DAEMON_COMPONENTS);
    await daemon.settle();
    expect(closed).toEqual([]);
    await daemon.close({ mode: "keep" });
    await daemon.close();
    expect(closed).toEqual([...DAEMON_COMPONENTS].reverse());
    // the stop is said before the first component closes; nothing failed to close
    expect(log.events("daemon.stopping")).toHaveLength(1);
    expect(log.events("daemon.close.failed")).toHaveLength(0);
  });

  test("behavior: between the health server's bind and the switches' start, /readyz says starting (503)", async () => {
    const list = daemonComponents();
    // The guard's first answer is held back: the health server is up, the switches are not yet built.
    let release: () => void = () => {};
    const held = new Promise<void>((done) => (release = done));
    let bound: () => void = () => {};
    const healthUp = new Promise<void>((done) => (bound = done));
    const guard = list[7];
    expect(guard.name).toBe("guard");
    const start = guard.start.bind(guard);
    guard.start = async (ctx) => {
      bound();
      await held;
      return start(ctx);
    };
    const { params: p, log } = params({ health: "127.0.0.1:0" });
    const starting = startDaemon(p, list);
    await healthUp;
    const url = log.events("health.listening")[0]!.url as string;
    const answer = await fetch(`${url}/readyz`);
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { reasons: string[] }).reasons).toEqual([
      "starting: the switches have not started yet",
    ]);
    expect(sim.state.requestCount("exchange")).toBe(0);
    release();
    const daemon = await starting;
    await daemon.close({ mode: "keep" });
  });

  test("behavior: a component that fails to start closes only the ones before it, in reverse", async () => {
    const closed: string[] = [];
    const { params: p } = params({ health: `127.0.0.1:${takenPort}` });
    const error = await startDaemon(p, recordedComponents(closed)).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as DaemonStartError).component).toBe("health");
    expect(closed).toEqual(["chain watch", "exchange record", "clients", "ledger", "audit", "notifications"]);
  });

  test("behavior: a step failing after the switches started rolls back in reverse: the switch sends a removal, nothing stays armed", async () => {
    const failing: Scheduler = {
      schedule() {
        throw new Error("cron is broken");
      },
    };
    const { params: p, log } = params(
      { health: "127.0.0.1:0", guardUrl: engineUrl },
      // The roll-over job (the last step, after the switches started) cannot be scheduled.
      { scheduler: failing },
    );
    const error = (await startDaemon(p).then(
      () => null,
      (e: unknown) => e,
    )) as DaemonStartError;
    expect(error).toBeInstanceOf(DaemonStartError);
    expect(error.component).toBe("pollers");
    expect(error.exitCode).toBe(ExitCode.runtime);
    expect(error.message).toBe("Could not start the pollers: cron is broken");
    expect(engineAsked).toBeGreaterThan(0);
    // The first push was in flight when the step failed; let any answer land (real HTTP), then: whatever the switch
    // armed, the rollback removed it (remove mode, whatever onShutdown says).
    await new Promise((done) => setTimeout(done, 300));
    const actions = sim.state.actions.map((a) => a.action as { type: string; time?: number });
    // The last word to the exchange is a removal (scheduleCancel without a time).
    expect(actions.at(-1)).toEqual({ type: "scheduleCancel" });
    expect(sim.state.getSchedule(account)).toBeNull();
    const pushed = sim.state.requestCount("exchange");
    clock.advance(60_000);
    await tick();
    expect(sim.state.requestCount("exchange")).toBe(pushed);
    // A push asked for before the stop leaves once its write-ahead is durable (no round trip to withdraw it); the
    // stop waits for its answer, so any confirmation comes before the removal, never after.
    const lines = log.lines.map((l) => l.event);
    const removedAt = lines.lastIndexOf("shutdown.removed");
    expect(removedAt).toBeGreaterThanOrEqual(0);
    expect(lines.lastIndexOf("heartbeat.ok")).toBeLessThan(removedAt);
  });

  test("behavior: exposure and the action budget send their first requests after the first push settled, not beside it", async () => {
    // The write-ahead of the first push waits on a slow disk until released (the first fsync is the fresh
    // ledger's meta.json, written at open; the second, the first push's intent).
    let release: () => void = () => {};
    let held = 0;
    const slowDisk = () => {
      held++;
      return held === 2 ? new Promise<void>((done) => (release = done)) : Promise.resolve();
    };
    // The roll-over job is scheduled in the start order; node-cron may start it only once `after` settled.
    let rolloverMayStart = false;
    const recording = new ManualScheduler();
    const scheduler: Scheduler = {
      schedule(expr, fn, options) {
        void options?.after?.then(() => {
          rolloverMayStart = true;
        });
        return recording.schedule(expr, fn);
      },
    };
    const { params: p, log } = params(
      { health: "off", exposureInterval: 30_000, budgetInterval: 600_000 },
      { beforeLedgerSync: slowDisk, scheduler },
    );
    const daemon = await startDaemon(p);
    // Real time, bounded: on a loaded machine the first push reaches its write-ahead fsync after many ticks.
    await eventually(() => held === 2, { timeoutMs: 5_000, what: "the first push's write-ahead" });
    for (let i = 0; i < 20; i++) await tick();
    // The first push is still writing its intent: nothing was asked of /info yet, nothing sent to /exchange, and
    // the roll-over job has not been let start.
    expect(held).toBe(2);
    expect(sim.state.requestCount("info")).toBe(0);
    expect(sim.state.requestCount("exchange")).toBe(0);
    expect(recording.jobs.map((j) => j.expr)).toEqual(["0 0 * * *"]);
    expect(rolloverMayStart).toBe(false);
    release();
    await eventually(
      async () => {
        await daemon.settle();
        return log.events("exposure").length > 0 && log.events("budget").length > 0;
      },
      { timeoutMs: 5_000, what: "the first exposure poll and budget check" },
    );
    expect(log.events("heartbeat.ok")).toHaveLength(1);
    expect(log.events("exposure")).toHaveLength(1);
    expect(log.events("budget")).toHaveLength(1);
    expect(sim.state.requestCount("info")).toBeGreaterThan(0);
    expect(rolloverMayStart).toBe(true);
    await daemon.close();
  });

  test("behavior: a first push that does not settle holds the pollers back one request time-out at most", async () => {
    // The exchange never answers the first push.
    sim.faults.set("exchange", { blackhole: true });
    const { params: p, log } = params({ health: "off", exposureInterval: 30_000, requestTimeout: 5_000 });
    const daemon = await startDaemon(p);
    await eventually(() => sim.state.requestCount("exchange") > 0, {
      timeoutMs: 5_000,
      what: "the first push to reach the exchange",
    });
    expect(sim.state.requestCount("exchange")).toBe(1);
    expect(sim.state.requestCount("info")).toBe(0);
    clock.advance(4_999);
    await tick();
    expect(sim.state.requestCount("info")).toBe(0);
    clock.advance(1);
    await eventually(() => log.events("exposure").length > 0, {
      timeoutMs: 5_000,
      what: "the exposure poll one request time-out after the start",
    });
    expect(log.events("exposure")).toHaveLength(1);
    sim.faults.clear();
    await daemon.close({ mode: "keep" });
  });

  test("behavior: close() runs once: the second call returns the same result and sends nothing", async () => {
    const { params: p } = params({ health: "127.0.0.1:0" });
    const daemon = await startDaemon(p);
    for (let i = 0; i < 5 && sim.state.getSchedule(account) === null; i++) {
      await daemon.settle();
      await tick();
    }
    expect(sim.state.getSchedule(account)).not.toBeNull();
    const healthUrl = daemon.healthUrl!;
    expect((await fetch(`${healthUrl}/healthz`)).status).toBe(200);
    const first = daemon.close({ mode: "remove" });
    const second = daemon.close({ mode: "keep" });
    expect(second).toBe(first);
    const result = await first;
    expect(result.ok).toBe(true);
    expect(result.results.map((r) => r.outcome)).toEqual(["removed"]);
    expect(sim.state.getSchedule(account)).toBeNull();
    const sent = sim.state.requestCount("exchange");
    expect(await daemon.close()).toBe(result);
    expect(sim.state.requestCount("exchange")).toBe(sent);
    // The health server is closed too (the last handle in reverse order but the first started after the ledger).
    await expect(fetch(`${healthUrl}/healthz`)).rejects.toThrow();
  });
});
