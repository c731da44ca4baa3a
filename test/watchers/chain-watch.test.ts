import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createLogger } from "../../src/core/logger.js";
import { createRuntime, systemTimers } from "../../src/core/runtime.js";
import { EvmClient } from "../../src/protocol/evm/client.js";
import { SimChain } from "../../src/sim/chain.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createChainWatch } from "../../src/watchers/chain-watch.js";
import { watcherBus } from "../helpers/watcher-bus.js";
import { noOtsAnswer, startFakeRpc } from "../protocol/evm/helpers.js";

const KEY = "chainWatchSecretKey42";
const START = Date.UTC(2026, 0, 1, 12, 0, 0);
type Line = Record<string, unknown> & { level: number; event?: string; msg: string };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  opts: { addresses?: string[]; maxLagBlocks?: number; stallThresholdMs?: number; rpcUrl?: string } = {},
) {
  const clock = new ManualClock(START);
  let sim: SimulatorHandle | undefined;
  let rpcUrl = opts.rpcUrl;
  if (!rpcUrl) {
    sim = await startSimulator({ clock, ipWeightPerMinute: null });
    rpcUrl = sim.rpcUrl.replace(/\/evm$/, `/${KEY}/evm`);
  }
  const lines: Line[] = [];
  const logger = createLogger({
    level: "debug",
    destination: { write: (s: string) => lines.push(JSON.parse(s)) },
  });
  const metrics = createMetrics({ defaultMetrics: false });
  const client = new EvmClient({ rpcUrl, timeoutMs: 2_000 });
  const watch = createChainWatch({
    client,
    addresses: opts.addresses ?? [],
    runtime: createRuntime({ clock, timers: systemTimers() }),
    bus: watcherBus(logger, metrics),
    pollIntervalMs: 60_000,
    stallThresholdMs: opts.stallThresholdMs ?? 10_000,
    maxLagBlocks: opts.maxLagBlocks ?? 100,
    pageSize: 3,
  });
  cleanups.push(async () => {
    await watch.stop();
    client.close();
    await sim?.close();
  });
  const events = (name: string) => lines.filter((l) => l.event === name);
  return { clock, sim, watch, lines, events, metrics };
}

describe("createChainWatch", () => {
  test("default: follows the head, records lag, logs watched transactions (a failed one at warn)", async () => {
    // A twin chain (same seed, same clock start) tells which address will have a failed transaction soon.
    const twinClock = new ManualClock(START);
    const twin = new SimChain({ clock: twinClock, seed: 1 });
    const h0 = twin.head();
    twinClock.advance(30_000);
    // The watch starts at the head block h0, then reads h0+1..h0+30.
    const upcoming = Array.from({ length: 31 }, (_, i) => twin.transactions(h0 + i)).flat();
    const failed = upcoming.find((t) => t.receipt.status === "0x0")!;
    expect(failed).toBeDefined();
    const address = failed.tx.from;
    const expected = upcoming.filter((t) => t.tx.from === address || t.tx.to === address);

    const { clock, watch, events, metrics, lines } = await setup({
      addresses: [address.toUpperCase().replace("0X", "0x")],
    });
    await watch.start();
    expect(watch.status()).toMatchObject({
      enabled: true,
      supported: true,
      headBlock: h0,
      headLagMs: 0,
      lastError: null,
    });
    expect(events("chain.watch.started")).toHaveLength(1);
    expect(events("chain.watch.started")[0]!.rpc).toMatch(/\/\*\*\*\/evm$/);

    clock.advance(30_000);
    await watch.tick();
    expect(watch.status().headBlock).toBe(h0 + 30);
    const logged = events("chain.tx");
    expect(logged.map((l) => l.hash)).toEqual(expected.map((t) => t.tx.hash));
    for (const l of logged) {
      const t = expected.find((e) => e.tx.hash === l.hash)!;
      expect(l.status).toBe(t.receipt.status === "0x1" ? "ok" : "failed");
      expect(l.level).toBe(t.receipt.status === "0x1" ? 30 : 40);
      expect(l.block).toBe(Number(t.tx.blockNumber));
      expect(l.value).toBe(BigInt(t.tx.value).toString());
    }
    expect(logged.some((l) => l.hash === failed.tx.hash && l.level === 40)).toBe(true);
    expect((await metrics.chainHead.get()).values[0]!.value).toBe(h0 + 30);
    const failedCount = (await metrics.chainWatchedTxs.get()).values.find(
      (v) => v.labels.status === "failed",
    )!.value;
    expect(failedCount).toBe(expected.filter((t) => t.receipt.status === "0x0").length);
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  test("behavior: a stall is warned once, and its end is logged", async () => {
    const { clock, sim, watch, events, metrics } = await setup({ stallThresholdMs: 10_000 });
    await watch.start();
    sim!.chain.setStalled(true);
    clock.advance(5_000);
    await watch.tick();
    expect(events("chain.stalled")).toHaveLength(0);
    clock.advance(6_000);
    await watch.tick();
    await watch.tick();
    expect(events("chain.stalled")).toHaveLength(1);
    expect(events("chain.stalled")[0]).toMatchObject({
      level: 40,
      lagMs: 11_000,
      headBlock: watch.status().headBlock,
    });
    expect((await metrics.chainHeadLag.get()).values[0]!.value).toBe(11);
    sim!.chain.setStalled(false);
    await watch.tick();
    expect(events("chain.resumed")).toHaveLength(1);
    expect(events("chain.resumed")[0]).toMatchObject({ lagMs: 0, stalledForMs: 11_000 });
    expect(watch.status().headLagMs).toBe(0);
  });

  test("behavior: far behind → skips ahead and says how many blocks", async () => {
    const { clock, watch, events, metrics } = await setup({ maxLagBlocks: 10 });
    await watch.start();
    const h0 = watch.status().headBlock!;
    clock.advance(50_000);
    await watch.tick();
    expect(events("chain.skipped")).toEqual([
      expect.objectContaining({ count: 49, from: h0 + 1, to: h0 + 49, level: 40 }),
    ]);
    expect((await metrics.chainBlocksSkipped.get()).values[0]!.value).toBe(49);
    expect(watch.status().headBlock).toBe(h0 + 50);
    clock.advance(5_000);
    await watch.tick();
    expect(events("chain.skipped")).toHaveLength(1);
  });

  test("behavior: errors are logged and the missed blocks are read next tick", async () => {
    const { clock, sim, watch, events } = await setup({ addresses: [] });
    await watch.start();
    const h0 = watch.status().headBlock!;
    sim!.faults.set("evm", { errorRate: 1, errorStatus: 502 });
    clock.advance(3_000);
    await watch.tick();
    expect(events("chain.error")).toHaveLength(1);
    expect(watch.status().lastError).toMatch(/HTTP 502/);
    expect(watch.status().headBlock).toBe(h0);
    sim!.faults.clear();
    await watch.tick();
    expect(watch.status()).toMatchObject({ headBlock: h0 + 3, lastError: null });
  });

  test("error: a node without the ots_ namespace → reported clearly, watch disabled, no crash", async () => {
    const fake = await startFakeRpc(noOtsAnswer);
    cleanups.push(() => fake.close());
    const { watch, events } = await setup({ rpcUrl: fake.url, addresses: [`0x${"ab".repeat(20)}`] });
    await watch.start();
    expect(watch.status()).toMatchObject({ enabled: false, supported: false });
    const [line] = events("chain.unsupported");
    expect(line).toMatchObject({ level: 50 });
    expect(line!.msg).toContain("does not serve ots_");
    await watch.tick();
    expect(events("chain.error")).toHaveLength(0);
  });
});
