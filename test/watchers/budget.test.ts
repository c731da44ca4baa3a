import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createBudgetMonitor } from "../../src/watchers/budget.js";
import { captureLogger, type Harness, harness } from "../app/helpers.js";
import { watcherBus } from "../helpers/watcher-bus.js";

let sim: SimulatorHandle | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await sim?.close();
  await h?.close();
  sim = undefined;
  h = undefined;
});

const gauge = async (metrics: ReturnType<typeof createMetrics>, name: string, account: string) => {
  const m = (await metrics.registry.getSingleMetric(name)?.get())?.values.find(
    (v) => v.labels.account === account,
  );
  return m?.value;
};

/** The monitor as the daemon runs it at the default cadence (15 s pushes: 5,760 a day; warn below 14 days). */
function monitorFor({
  info,
  user,
  clock,
  log,
  metrics = createMetrics({ defaultMetrics: false }),
}: {
  info: InfoClient;
  user: string;
  clock: ManualClock;
  log: ReturnType<typeof captureLogger>;
  metrics?: ReturnType<typeof createMetrics>;
}) {
  return createBudgetMonitor({
    info,
    accounts: [user],
    runtime: createRuntime({ clock, timers: new ManualTimers(clock) }),
    bus: watcherBus(log.logger, metrics),
    intervalMs: 600_000,
    actionsPerDay: 5_760,
    warnDays: 14,
  });
}

describe("address budget monitor", () => {
  test("default: reads userRateLimit from the simulator: 10,000 + volume, used grows with each push", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const wallet = Wallet.createRandom();
    const user = wallet.address.toLowerCase();
    sim = await startSimulator({ clock, users: [{ address: user, volumeUsd: 1_234_567.5 }] });
    const info = new InfoClient({ apiUrl: sim.apiUrl, clock });
    const exchange = new ExchangeClient({ apiUrl: sim.apiUrl, signer: wallet, isMainnet: true, clock });
    for (let i = 0; i < 3; i++) await exchange.scheduleCancel({ time: clock.now() + 60_000 + i });
    const r = await info.userRateLimit({ user });
    expect(r).toMatchObject({ cumVlm: "1234567.5", nRequestsUsed: 3, nRequestsCap: 10_000 + 1_234_567 });

    const metrics = createMetrics({ defaultMetrics: false });
    const log = captureLogger();
    const monitor = monitorFor({ info, user, clock, log, metrics });
    await monitor.checkNow();
    const left = 10_000 + 1_234_567 - 3;
    expect(monitor.status()[0]).toMatchObject({ used: 3, cap: 1_244_567, left });
    expect(monitor.status()[0]!.daysLeft).toBeCloseTo(left / 5_760, 6);
    expect(await gauge(metrics, "hl_deadman_address_requests_left", user)).toBe(left);
    expect(log.events("budget")).toHaveLength(1);
    expect(log.events("budget.low")).toHaveLength(0);
    info.close();
    exchange.close();
  });

  test("behavior: warns once per crossing below warnDays, errors once when exhausted, recovers", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const wallet = Wallet.createRandom();
    const user = wallet.address.toLowerCase();
    sim = await startSimulator({ clock, users: [{ address: user, addressBudget: 10 }] });
    const info = new InfoClient({ apiUrl: sim.apiUrl, clock });
    const exchange = new ExchangeClient({ apiUrl: sim.apiUrl, signer: wallet, isMainnet: true, clock });
    const log = captureLogger();
    const metrics = createMetrics({ defaultMetrics: false });
    const monitor = monitorFor({ info, user, clock, log, metrics });
    await monitor.checkNow();
    await monitor.checkNow();
    expect(log.events("budget.low")).toHaveLength(1);
    for (let i = 0; i < 10; i++) await exchange.scheduleCancel({ time: clock.now() + 60_000 + i });
    await monitor.checkNow();
    await monitor.checkNow();
    expect(log.events("budget.exhausted")).toHaveLength(1);
    expect(log.events("budget.exhausted")[0]).toMatchObject({ level: 50, used: 10, cap: 10, left: 0 });
    expect(await gauge(metrics, "hl_deadman_address_requests_left", user)).toBe(0);
    // The exchange agrees: the next push is refused with the budget text.
    await expect(exchange.scheduleCancel({ time: clock.now() + 60_000 })).rejects.toMatchObject({
      kind: "address_budget",
    });
    info.close();
    exchange.close();
  });

  test("error: a failed read is logged once per streak and never throws", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const user = Wallet.createRandom().address.toLowerCase();
    sim = await startSimulator({ clock, users: [{ address: user }] });
    sim.faults.set("info", { errorRate: 1, errorStatus: 503 });
    const info = new InfoClient({ apiUrl: sim.apiUrl, clock, retryLimit: 0 });
    const log = captureLogger();
    const monitor = monitorFor({ info, user, clock, log });
    await monitor.checkNow();
    await monitor.checkNow();
    expect(log.events("budget.failed")).toHaveLength(1);
    sim.faults.clear("info");
    await monitor.checkNow();
    expect(log.events("budget.check_recovered")).toHaveLength(1);
    expect(monitor.status()).toHaveLength(1);
    info.close();
  });

  test("behavior: the daemon reads the budget at start and on its cadence, counting its own pushes", async () => {
    h = await harness({ config: { budgetInterval: 60_000 } });
    expect(h.events("budget")).toHaveLength(1);
    await h.advance(120_000, 15_000);
    const accepted = h.sim.state.actions.filter((a) => a.user === h!.account && a.accepted).length;
    const used = await gauge(h.daemon.metrics, "hl_deadman_address_requests_used", h.account);
    // Read at most one push behind the simulator's count.
    expect(used).toBeGreaterThanOrEqual(accepted - 1);
    expect(used).toBeLessThanOrEqual(accepted);
  });
});
