/**
 * The second witness of the exchange's time (issue 40): the HyperEVM's latest block timestamp, read over real HTTP
 * from the simulator's RPC with the real EvmClient; an RPC that does not answer is logged once per outage and
 * stops nothing.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { createRuntime, systemTimers } from "../../src/core/runtime.js";
import { EvmClient } from "../../src/protocol/evm/client.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { type BlockTimeSample, createBlockWitness } from "../../src/watchers/block-time.js";
import { captureLogger } from "../app/helpers.js";
import { watcherBus } from "../helpers/watcher-bus.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("the block witness", () => {
  test("behavior: reads the latest block's timestamp with its round trip; an RPC that does not answer is logged once per outage, then read again", async () => {
    const sim: SimulatorHandle = await startSimulator({});
    cleanups.push(() => sim.close());
    const runtime = createRuntime({ clock: systemClock, timers: systemTimers() });
    cleanups.push(() => runtime.abort());
    const log = captureLogger();
    const samples: BlockTimeSample[] = [];
    let url = sim.rpcUrl;
    const client = {
      latestBlockTime: (opts?: { signal?: AbortSignal }) =>
        new EvmClient({ rpcUrl: url, timeoutMs: 2_000 }).latestBlockTime(opts),
    };
    const w = createBlockWitness({
      client,
      runtime,
      intervalMs: 1_000,
      bus: watcherBus(log.logger),
      onSample: (s) => samples.push(s),
    });
    const before = Date.now();
    await w.readNow();
    expect(samples).toHaveLength(1);
    // whole seconds of the simulator's (true) time, read within the round trip
    expect(samples[0]!.timestampSec * 1000).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 2_000);
    expect(samples[0]!.timestampSec * 1000).toBeLessThanOrEqual(Date.now());
    expect(samples[0]!.receivedMono).toBeGreaterThanOrEqual(samples[0]!.sentMono);
    // the RPC gone: one line for the outage, however many reads fail; nothing thrown
    url = `http://127.0.0.1:${await deadPort()}/evm`;
    await w.readNow();
    await w.readNow();
    expect(log.events("clock.block_unavailable")).toHaveLength(1);
    expect(samples).toHaveLength(1);
    // back: read again, said once
    url = sim.rpcUrl;
    await w.readNow();
    expect(samples).toHaveLength(2);
    expect(log.events("clock.block_available")).toHaveLength(1);
  }, 20_000);
});
