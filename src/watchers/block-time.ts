/**
 * The second witness of the exchange's time (issue 40): the HyperEVM's latest block timestamp, read with
 * `eth_getBlockByNumber("latest", false)` from the network's RPC (or `--rpc-url`), produced by the chain's consensus
 * and not by the host that answers the trading API. Each reading, with its round trip on the monotonic clock, is
 * handed to the switches, whose time machine judges it (src/switch/exchange-time.ts `takeBlock`). Read at start and
 * then every `intervalMs` (the official RPC allows 100 requests a minute per IP: docs/exchange-behaviour.md).
 * A failed read is published once per outage (`blockTimeUnavailable`, its end `blockTimeAvailable`: src/core/events.ts
 * `ClockEvent`, worded in src/surface/watchers/clock.ts); it never stops anything.
 */
import { monotonicOf } from "../core/clock.js";
import type { EventBus } from "../core/events.js";
import type { Repeating, Runtime } from "../core/runtime.js";

/** At most one read per this long: two a minute of the RPC's 100 per IP. */
export const BLOCK_WITNESS_MIN_INTERVAL_MS = 30_000;

export type BlockTimeSample = { timestampSec: number; sentMono: number; receivedMono: number };

export type BlockWitness = { start(): void; stop(): void; readNow(): Promise<void> };

export function createBlockWitness({
  client,
  runtime,
  intervalMs,
  bus,
  onSample,
}: {
  client: { latestBlockTime(opts?: { signal?: AbortSignal }): Promise<number>; url?: string };
  runtime: Runtime;
  intervalMs: number;
  /** the daemon's event bus, where an outage and its end are published */
  bus: EventBus;
  onSample: (s: BlockTimeSample) => void;
}): BlockWitness {
  let loop: Repeating | undefined;
  let failing = false;
  const readNow = async () => {
    const sentMono = monotonicOf(runtime.clock);
    try {
      const timestampSec = await client.latestBlockTime({ signal: runtime.signal });
      const receivedMono = monotonicOf(runtime.clock);
      if (failing) {
        failing = false;
        bus.publish({ module: "clock", origin: "clock", type: "blockTimeAvailable" });
      }
      onSample({ timestampSec, sentMono, receivedMono });
    } catch (error) {
      if (runtime.signal.aborted || failing) return;
      failing = true;
      bus.publish({
        module: "clock",
        origin: "clock",
        type: "blockTimeUnavailable",
        error: error instanceof Error ? error.message : String(error),
      });
    }
  };
  return {
    readNow,
    start() {
      loop ??= runtime.every(Math.max(intervalMs, BLOCK_WITNESS_MIN_INTERVAL_MS), () => readNow(), {
        name: "block time",
        immediate: false,
      });
    },
    stop() {
      loop?.stop();
      loop = undefined;
    },
  };
}
