/**
 * The agent watch against the simulator over real HTTP: extraAgents with validUntil, expiry, same-name
 * deregistration, removal mid-run detected within one check, the daily expiry warning and its metric.
 */
import { describe, expect, test, vi } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { type AgentState, createAgentWatch } from "../../src/watchers/agent-watch.js";
import { captureLogger } from "../app/helpers.js";
import { watcherBus } from "../helpers/watcher-bus.js";
import { post, simulatorPerTest, testWallet } from "../sim/helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const DAY = 86_400_000;
const HOUR = 3_600_000;
const master = testWallet("agent-watch-master").address.toLowerCase();
const agent = testWallet("agent-watch-agent").address.toLowerCase();
const other = testWallet("agent-watch-other").address.toLowerCase();
const sims = simulatorPerTest();

async function setup({ validUntil = T0 + 90 * DAY, name = "hl-deadman", signer = agent } = {}) {
  const clock = new ManualClock(T0);
  const sim = await sims.start({ clock, users: [{ address: master }] });
  sim.state.approveAgent({ user: master, agent, name, validUntil });
  const info = new InfoClient({ apiUrl: sim.apiUrl, retryLimit: 0 });
  const timers = new ManualTimers(clock);
  const log = captureLogger();
  const metrics = createMetrics({ defaultMetrics: false });
  const states: AgentState[] = [];
  const watch = createAgentWatch({
    info,
    account: master,
    signer,
    runtime: createRuntime({ clock, timers }),
    bus: watcherBus(log.logger, metrics),
    intervalMs: HOUR,
    warnDays: 7,
    onAgentState: (s) => states.push(s),
  });
  sims.onClose(
    () => watch.stop(),
    () => info.close(),
  );
  const validUntilMetric = async () =>
    (await metrics.agentValidUntil.get()).values.find((v) => v.labels.agent === agent)?.value;
  return { clock, sim, info, watch, log, states, validUntilMetric };
}

describe("agent watch", () => {
  test("default: a valid named agent is ok, once; its expiry is exported", async () => {
    const t = await setup();
    expect(await t.watch.checkNow()).toMatchObject({ state: "ok", validUntil: T0 + 90 * DAY });
    await t.watch.checkNow();
    expect(t.states.map((s) => s.state)).toEqual(["ok"]);
    expect(await t.validUntilMetric()).toBe((T0 + 90 * DAY) / 1000);
    expect(t.log.events("agent.expiring")).toEqual([]);
  });

  test("an agent removed mid-run turns missing within one check, with the likely causes", async () => {
    const t = await setup();
    t.watch.start();
    await vi.waitFor(() => expect(t.states).toHaveLength(1));
    const removed = await post(`${t.sim.adminUrl}/agents/remove`, { agent });
    expect(removed.json).toEqual({ ok: true, removed: true });
    t.clock.advance(HOUR); // one check interval
    await vi.waitFor(() => expect(t.states.map((s) => s.state)).toEqual(["ok", "missing"]));
    const missing = t.states[1]!;
    expect(missing.detail).toMatch(/expired/);
    expect(missing.detail).toMatch(/same name deregistered it/);
    expect(missing.detail).toMatch(/--account names the wrong master/);
    expect(t.log.events("agent.missing")).toHaveLength(1);
  });

  test("approveAgent with the same name deregisters the old agent → missing", async () => {
    const t = await setup();
    await t.watch.checkNow();
    await post(`${t.sim.adminUrl}/agents`, { user: master, agent: other, name: "hl-deadman" });
    expect(await t.watch.checkNow()).toMatchObject({ state: "missing" });
    expect(t.sim.state.getAgents(master).map((a) => a.address)).toEqual([other]);
  });

  test("expiring within warnDays: warns once per UTC day; after expiry → expired", async () => {
    const t = await setup({ validUntil: T0 + 2 * DAY + HOUR });
    await t.watch.checkNow();
    await t.watch.checkNow();
    expect(t.log.events("agent.expiring")).toHaveLength(1);
    t.clock.advance(DAY);
    await t.watch.checkNow();
    expect(t.log.events("agent.expiring")).toHaveLength(2);
    t.clock.advance(2 * DAY);
    // The exchange prunes it: no longer listed; the watch remembers its validUntil → expired, not missing.
    expect(await t.watch.checkNow()).toMatchObject({ state: "expired", validUntil: T0 + 2 * DAY + HOUR });
    expect(t.states.map((s) => s.state)).toEqual(["ok", "expired"]);
    // And the exchange refuses the agent's signature from then on (the simulator agrees).
    expect(t.sim.state.getAgents(master)).toHaveLength(1);
  });

  test("an unnamed agent (not in extraAgents) is ok through userRole", async () => {
    const t = await setup({ name: "" });
    expect(await t.watch.checkNow()).toMatchObject({ state: "ok", validUntil: null });
  });

  test("a signer that is the master needs no check", async () => {
    const t = await setup({ signer: master });
    t.watch.start();
    expect(await t.watch.checkNow()).toMatchObject({ state: "ok" });
    expect(t.sim.state.requestCount("info")).toBe(0);
  });

  test("error: the list cannot be read → no state change, logged once per streak", async () => {
    const t = await setup();
    await t.watch.checkNow();
    t.sim.faults.set("info", { errorRate: 1, types: ["extraAgents"] });
    expect(await t.watch.checkNow()).toBeNull();
    expect(await t.watch.checkNow()).toBeNull();
    expect(t.states.map((s) => s.state)).toEqual(["ok"]);
    expect(t.log.events("agent.check_failed")).toHaveLength(1);
  });
});
