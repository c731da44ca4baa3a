/**
 * Fault matrix, HTTP faults: 5xx bursts, 429, connection resets, slow responses and a blackhole. The core
 * property, checked over every accepted action the simulator recorded: the deadline never moves earlier than a
 * previously confirmed one. Also: pushes never overlap, no trigger while the faults stay shorter than the
 * deadline, and the switch is armed again once the path heals.
 */
import { id, Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { type Daemon, startDaemon } from "../../src/app/daemon.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { systemClock } from "../../src/core/clock.js";
import { createLogger } from "../../src/core/logger.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertDeadlinesNeverMoveEarlier, eventually, sleep, tempDir } from "./harness.js";
import { countingClient, type InProcess, simArmed, startInProcess } from "./inprocess.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("faults.test.ts");

let t: InProcess | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Runs `ms` of simulated time and records whether the simulator's schedule was ever not in the future. */
async function runWatching(ms: number, stepMs = 1_000): Promise<{ lapsed: boolean }> {
  let lapsed = false;
  await t!.run(ms, stepMs, () => {
    if (!simArmed(t!)) lapsed = true;
  });
  return { lapsed };
}

function commonChecks() {
  const { sim, daemon, user } = t!;
  const times = assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
  expect(times.length).toBeGreaterThan(2);
  expect(sim.state.getTriggers(user)).toHaveLength(0);
  expect(t!.events("trigger.counted")).toHaveLength(0);
  expect(daemon.status()[0]!.state).toBe("armed");
  expect(t!.maxInFlight()).toBe(1);
}

describe("reliability: HTTP faults", () => {
  test("behavior: 500/502/503 bursts never move the deadline earlier", async () => {
    t = await startInProcess({ label: "http-5xx" });
    let lapsed = false;
    for (const errorStatus of [500, 502, 503] as const) {
      // A full burst (every request), then a partial one (half of them), then healthy.
      t.sim.faults.set("exchange", { errorRate: 1, errorStatus });
      lapsed ||= (await runWatching(20_000)).lapsed;
      t.sim.faults.set("exchange", { errorRate: 0.5, errorStatus });
      lapsed ||= (await runWatching(20_000)).lapsed;
      t.sim.faults.clear("exchange");
      lapsed ||= (await runWatching(20_000)).lapsed;
    }
    expect(lapsed).toBe(false);
    const reasons = new Set(t.events("heartbeat.failed").map((l) => l.reason));
    expect([...reasons]).toEqual(["server_error"]);
    commonChecks();
    proven("http-5xx");
  });

  test("behavior: 429 is answered with back-off, not a retry storm", async () => {
    t = await startInProcess({ label: "http-429" });
    await t.run(10_000, 1_000);
    const before = t.sim.state.requestCount("exchange");
    t.sim.faults.set("exchange", { rateLimit: true });
    // Sample the request count every second of a 40 s window to see the gaps between attempts.
    const attemptsAt: number[] = [];
    let last = before;
    await t.run(40_000, 1_000, () => {
      const n = t!.sim.state.requestCount("exchange");
      for (let i = last; i < n; i++) attemptsAt.push(t!.clock.now());
      last = n;
    });
    const during = t.sim.state.requestCount("exchange") - before;
    // Without back-off a 0.5 s retry would send ~80 requests; with 2 s, 4 s, 8 s, then the 15 s cap: a handful.
    expect(during).toBeGreaterThanOrEqual(3);
    expect(during).toBeLessThanOrEqual(8);
    const gaps = attemptsAt.slice(1).map((at, i) => at - attemptsAt[i]!);
    expect(gaps[0]!).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...gaps)).toBeGreaterThan(gaps[0]!); // the gaps grow
    expect(t.events("heartbeat.failed").every((l) => l.reason === "rate_limited")).toBe(true);
    t.sim.faults.clear("exchange");
    const { lapsed } = await runWatching(20_000);
    // 40 s of 429 fits inside the 60 s deadline: never lapsed, armed again.
    expect(lapsed).toBe(false);
    commonChecks();
    expect(t.sim.state.getSchedule(t.user)! - t.clock.now()).toBeGreaterThan(45_000);
    proven("http-429");
  });

  test("behavior: connection resets never move the deadline earlier", async () => {
    t = await startInProcess({ label: "conn-reset" });
    t.sim.faults.set("exchange", { resetRate: 1 });
    let lapsed = (await runWatching(20_000)).lapsed;
    t.sim.faults.set("exchange", { resetRate: 0.5 });
    lapsed ||= (await runWatching(40_000)).lapsed;
    t.sim.faults.clear("exchange");
    lapsed ||= (await runWatching(20_000)).lapsed;
    expect(lapsed).toBe(false);
    expect(t.events("heartbeat.failed").length).toBeGreaterThan(0);
    expect(t.events("heartbeat.failed").every((l) => l.reason === "transport")).toBe(true);
    // Each retry carries a fresh nonce: nonces of recorded actions strictly increase.
    const nonces = t.sim.state.actions.filter((a) => a.user === t!.user).map((a) => a.nonce!);
    for (let i = 1; i < nonces.length; i++) expect(nonces[i]!).toBeGreaterThan(nonces[i - 1]!);
    commonChecks();
    proven("conn-reset");
  });

  test("behavior: a blackhole never moves the deadline earlier", async () => {
    t = await startInProcess({ label: "blackhole" });
    const confirmed = t.daemon.status()[0]!.armedUntil!;
    t.sim.faults.set("exchange", { blackhole: true });
    const { lapsed } = await runWatching(30_000);
    expect(lapsed).toBe(false);
    // While blackholed: every attempt timed out, the confirmed deadline did not move at all.
    const failed = t.events("heartbeat.failed");
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(failed.every((l) => l.reason === "transport")).toBe(true);
    expect(t.daemon.status()[0]!.armedUntil).toBe(confirmed);
    expect(t.sim.state.getSchedule(t.user)).toBe(confirmed);
    expect(t.daemon.status()[0]!.state).toBe("retrying");
    t.sim.faults.clear("exchange");
    await runWatching(20_000);
    commonChecks();
    expect(t.sim.state.getSchedule(t.user)!).toBeGreaterThan(confirmed);
    proven("blackhole");
  });
});

// Slow responses need time to pass while a request is in flight, so this row runs on the real clock with a
// short cadence: interval 1 s, each response 1.5 s late (slower than the interval), requestTimeout 3 s.
describe("reliability: slow responses (real clock)", () => {
  let sim: SimulatorHandle | undefined;
  let daemon: Daemon | undefined;
  const state = tempDir();
  afterEach(async () => {
    sim?.faults.clear();
    await daemon?.close({ reason: "test end" });
    await sim?.close();
    state.cleanup();
  });

  test("behavior: responses slower than the interval never move the deadline earlier", async () => {
    const wallet = new Wallet(id("hl-deadman reliability: slow"));
    const user = wallet.address.toLowerCase();
    sim = await startSimulator({ users: [{ address: user }] });
    const config = ConfigSchema.parse({
      apiUrl: sim.apiUrl,
      interval: 1_000,
      deadline: 10_000,
      requestTimeout: 3_000,
      exposureInterval: 0,
      health: "off",
    });
    const real = new ExchangeClient({
      apiUrl: sim.apiUrl,
      signer: wallet,
      isMainnet: true,
      clock: systemClock,
      expiresAfterMs: config.requestTimeout,
      timeoutMs: config.requestTimeout,
    });
    const client = countingClient(real);
    daemon = await startDaemon({
      config,
      wallet,
      stateDir: state.dir,
      logger: createLogger({ level: "silent", pretty: false }),
      client,
      apiUrl: sim.apiUrl,
    });
    await eventually(() => sim!.state.getSchedule(user) !== null, { what: "first push" });
    sim.faults.set("exchange", { latencyMs: 1_500 });
    const slowFrom = sim.state.actions.length;
    await sleep(5_000);
    sim.faults.clear("exchange");
    await sleep(1_500);
    const slow = sim.state.actions.slice(slowFrom).filter((a) => a.user === user);
    // In 5 s with a 1 s interval, a 1.5 s answer allows at most ~4 pushes (no overlap, no pile-up).
    expect(slow.length).toBeGreaterThanOrEqual(2);
    expect(slow.length).toBeLessThanOrEqual(5);
    expect(slow.every((a) => a.accepted)).toBe(true);
    expect(client.maxInFlight()).toBe(1);
    assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    expect(daemon.status()[0]!.state).toBe("armed");
    expect(sim.state.getSchedule(user)!).toBeGreaterThan(Date.now() + 5_000);
    proven("slow-responses");
  });
});
