/**
 * The watchers on the bus (src/core/events.ts): the guard, the budget monitor, the agent watch and the chain watch
 * publish typed events and write nothing themselves; their log lines and metrics are the subscribers'
 * (`...Log`, `...Metrics`, src/surface/watchers/), the ones the daemon subscribes once (src/app/parts/notifications.ts). Each watcher runs twice on
 * the same input: on a bus without subscribers (events, no line, no metric) and on a bus with its two subscribers
 * (the lines and the metric).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import {
  createEventBus,
  type DaemonEvent,
  type EventBus,
  type EventSubscriber,
} from "../../src/core/events.js";
import type { Logger } from "../../src/core/logger.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import type { EvmClient } from "../../src/protocol/evm/client.js";
import type { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { createMetrics, type Metrics } from "../../src/surface/metrics.js";
import {
  agentLog,
  agentMetrics,
  budgetLog,
  budgetMetrics,
  chainLog,
  chainMetrics,
  guardLog,
  guardMetrics,
} from "../../src/surface/watchers/index.js";
import { createAgentWatch } from "../../src/watchers/agent-watch.js";
import { createBudgetMonitor } from "../../src/watchers/budget.js";
import { createChainWatch } from "../../src/watchers/chain-watch.js";
import { createGuard } from "../../src/watchers/guard.js";
import { captureLogger } from "../app/helpers.js";

const ACCOUNT = "0x00000000000000000000000000000000000000aa";
const AGENT = "0x00000000000000000000000000000000000000bb";

type World = { bus: EventBus; logger: Logger; metrics: Metrics; runtime: ReturnType<typeof createRuntime> };

/**
 * Runs `watch` on a bus without subscribers, then on one with the watcher's log and metrics subscribers; returns
 * what each run published, logged and left in `metric`.
 */
async function bothWays(
  subscribers: (logger: Logger, metrics: Metrics) => EventSubscriber[],
  metric: string,
  watch: (w: World) => Promise<void>,
) {
  const run = async (subscribed: boolean) => {
    const log = captureLogger();
    const metrics = createMetrics({ defaultMetrics: false });
    const bus = createEventBus(...(subscribed ? subscribers(log.logger, metrics) : []));
    const events: DaemonEvent[] = [];
    bus.subscribe((e) => events.push(e));
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const timers = new ManualTimers(clock);
    try {
      await watch({ bus, logger: log.logger, metrics, runtime: createRuntime({ clock, timers }) });
    } finally {
      timers.dispose();
    }
    const values = (await metrics.registry.getSingleMetric(metric)?.get())?.values ?? [];
    return { events, lines: log.lines, values: values.map((v) => v.value) };
  };
  return { bare: await run(false), subscribed: await run(true) };
}

const types = (events: DaemonEvent[]) => events.map((e) => `${e.module}:${"type" in e ? e.type : e.event}`);

describe("the watchers publish typed events; their log lines and metrics are subscribers", () => {
  test("behavior: the guard: configured, checked, engine down", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "hl-deadman-guard-")), "missing");
    const { bare, subscribed } = await bothWays(
      (l, m) => [guardLog(l), guardMetrics(m)],
      "hl_deadman_engine_up",
      async ({ bus, runtime }) => {
        const guard = createGuard({
          file,
          intervalMs: 1_000,
          runtime,
          bus,
          onChange: () => {},
        });
        await guard!.check();
        guard!.stop();
      },
    );
    expect(types(bare.events)).toEqual([
      "guard:guardConfigured",
      "guard:guardChecked",
      "guard:engineChanged",
    ]);
    expect(bare.events[2]).toMatchObject({ kind: "file", up: false, detail: `${file}: ENOENT` });
    expect(bare.lines).toEqual([]);
    expect(bare.values).toEqual([]);
    expect(subscribed.lines).toMatchObject([
      { module: "guard", event: "guard.check", ok: false, detail: `${file}: ENOENT`, msg: "guard checked" },
    ]);
    expect(subscribed.values).toEqual([0]);
  });

  test("behavior: the budget monitor: a read, low", async () => {
    const info = {
      userRateLimit: async () => ({ cumVlm: "0", nRequestsUsed: 9_000, nRequestsCap: 10_000 }),
    } as unknown as Pick<InfoClient, "userRateLimit">;
    const { bare, subscribed } = await bothWays(
      (l, m) => [budgetLog(l), budgetMetrics(m)],
      "hl_deadman_address_requests_left",
      async ({ bus, runtime }) => {
        const monitor = createBudgetMonitor({
          info,
          accounts: [ACCOUNT],
          runtime,
          bus,
          intervalMs: 600_000,
          actionsPerDay: 5_760,
          warnDays: 14,
        });
        await monitor.checkNow();
        monitor.stop();
      },
    );
    expect(types(bare.events)).toEqual(["budget:budgetLow", "budget:budgetRead"]);
    expect(bare.events[1]).toMatchObject({
      account: ACCOUNT,
      used: 9_000,
      cap: 10_000,
      left: 1_000,
      first: true,
    });
    expect(bare.lines).toEqual([]);
    expect(bare.values).toEqual([]);
    const fields = {
      module: "budget",
      account: ACCOUNT,
      used: 9_000,
      cap: 10_000,
      left: 1_000,
      daysLeft: 0.2,
    };
    expect(subscribed.lines).toMatchObject([
      { event: "budget.low", ...fields, actionsPerDay: 5_760, warnDays: 14 },
      { event: "budget", ...fields, msg: "address budget: 9000 of 10000 actions used" },
    ]);
    expect(subscribed.values).toEqual([1_000]);
  });

  test("behavior: the agent watch: a missing agent", async () => {
    const info = {
      extraAgents: async () => [],
      userRole: async () => ({ role: "missing" }),
    } as unknown as Pick<InfoClient, "extraAgents" | "userRole">;
    const { bare, subscribed } = await bothWays(
      (l, m) => [agentLog(l), agentMetrics(m)],
      "hl_deadman_agent_valid_until_timestamp_seconds",
      async ({ bus, runtime }) => {
        const watch = createAgentWatch({
          info,
          account: ACCOUNT,
          signer: AGENT,
          runtime,
          bus,
          onAgentState: () => {},
        });
        await watch.checkNow();
        watch.stop();
      },
    );
    expect(types(bare.events)).toEqual(["agent:agentState"]);
    expect(bare.events[0]).toMatchObject({ account: ACCOUNT, agent: AGENT, state: "missing", changed: true });
    expect(bare.lines).toEqual([]);
    expect(bare.values).toEqual([]);
    expect(subscribed.lines).toMatchObject([
      {
        level: 50,
        module: "agent",
        account: ACCOUNT,
        agent: AGENT,
        event: "agent.missing",
        validUntil: null,
      },
    ]);
    expect(subscribed.values).toEqual([0]);
  });

  test("behavior: the chain watch: started, head and lag", async () => {
    const client = {
      url: "http://127.0.0.1:1/rpc",
      supportsOtterscan: async () => ({ supported: true, apiLevel: 8 }),
      blockNumber: async () => 7n,
      getHeaderByNumber: async () => ({
        timestamp: `0x${(Date.UTC(2026, 0, 1, 12) / 1000).toString(16)}`,
        gasUsed: "0x0",
      }),
      close: () => {},
    } as unknown as EvmClient;
    const { bare, subscribed } = await bothWays(
      (l, m) => [chainLog(l), chainMetrics(m)],
      "hl_deadman_chain_head_block",
      async ({ bus, runtime }) => {
        const watch = createChainWatch({
          client,
          addresses: [ACCOUNT],
          runtime,
          bus,
          pollIntervalMs: 1_000,
          stallThresholdMs: 30_000,
          maxLagBlocks: 100,
          pageSize: 25,
        });
        await watch.tick();
        await watch.stop();
      },
    );
    expect(types(bare.events)).toEqual(["chain:chainStarted", "chain:chainHead", "chain:chainLag"]);
    expect(bare.events[1]).toMatchObject({ block: 7 });
    expect(bare.lines).toEqual([]);
    expect(bare.values).toEqual([0]); // an unlabelled gauge starts at 0
    expect(subscribed.lines).toMatchObject([
      { module: "chain", event: "chain.watch.started", rpc: client.url, apiLevel: 8, addresses: [ACCOUNT] },
    ]);
    expect(subscribed.values).toEqual([7]);
  });
});
