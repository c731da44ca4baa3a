/**
 * The chain watch: follows new HyperEVM blocks and logs transactions from or to watched addresses.
 *
 * Each tick: eth_blockNumber, then for every new block ots_getHeaderByNumber (head lag = now − header timestamp,
 * metrics chainHeadLag / chainHead), and, when the header's gasUsed is not zero, every transaction of the block via
 * ots_getBlockTransactions (paged by EvmClient.blockTransactions, robust to both page orders). Matches are logged as
 * `chain.tx` (info, or warn when the receipt status is 0x0).
 *
 * - Never falls behind unboundedly: more than `maxLagBlocks` behind, it jumps to the head and logs `chain.skipped`
 *   with the number of blocks skipped (metric chainBlocksSkipped). A block that fails 5 ticks in a row is skipped too.
 * - Stalls: when the newest header is older than `stallThresholdMs`, `chain.stalled` is logged once (warn), and
 *   `chain.resumed` once fresh blocks come again.
 * - At start it probes the namespace; a node that does not serve ots_ is reported at error level once
 *   (`chain.unsupported`) and the watch stays disabled. It never throws into the daemon: errors are logged
 *   (`chain.error`) and retried next tick. Ticks never overlap.
 *
 * What it sees it publishes as typed events on the bus (src/core/events.ts `ChainEvent`); its log lines
 * and metrics are subscribers in src/surface/watchers/chain.ts.
 */
import { normalizeAddress } from "../core/address.js";
import type { ChainEvent, EventBus } from "../core/events.js";
import type { Repeating, Runtime } from "../core/runtime.js";
import type { ChainWatchStatus } from "../core/status.js";
import type { EvmClient } from "../protocol/evm/client.js";
import { EvmNotFoundError } from "../protocol/evm/errors.js";
import type { OtsHeader } from "../protocol/evm/schemas.js";

export type CreateChainWatchParameters = {
  client: EvmClient;
  /** Addresses to report (any case); may be empty (then only head and lag are followed). */
  addresses: string[];
  /** the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts) */
  runtime: Runtime;
  /** the daemon's event bus, where its log lines and metrics subscribe (src/surface/watchers/chain.ts) */
  bus: EventBus;
  /** Time between ticks (ms). */
  pollIntervalMs: number;
  /** Warn when the newest header is older than this (ms). */
  stallThresholdMs: number;
  /** Skip ahead to the head when more than this many blocks behind. */
  maxLagBlocks: number;
  /** ots_getBlockTransactions page size. */
  pageSize: number;
  /** Pages in flight per block. Default 2. */
  concurrency?: number;
  /** Consecutive failures on one block before it is skipped. Default 5. */
  maxBlockFailures?: number;
};

export type ChainWatch = {
  /** Probes the namespace and starts the loop; resolves once the first tick is done (never rejects). */
  start(): Promise<void>;
  /** Stops the loop, aborts requests in flight, waits for the current tick and closes the client. Idempotent. */
  stop(): Promise<void>;
  status(): ChainWatchStatus;
  /** One iteration (for tests); a tick already running is awaited instead of starting another. */
  tick(): Promise<void>;
};

export function createChainWatch({
  client,
  addresses,
  runtime,
  bus,
  pollIntervalMs,
  stallThresholdMs,
  maxLagBlocks,
  pageSize,
  concurrency = 2,
  maxBlockFailures = 5,
}: CreateChainWatchParameters): ChainWatch {
  const { clock } = runtime;
  const publish = (e: ChainEvent) => bus.publish(e);
  const watched = new Set<string>(addresses.map((a) => normalizeAddress(a, "watch address")));
  let supported: boolean | null = null;
  let apiLevel: number | null = null;
  let enabled = true;
  let lastProcessed: number | null = null;
  let headBlock: number | null = null;
  let headTimestampMs: number | null = null;
  let headLagMs: number | null = null;
  let lastError: string | null = null;
  let stalledSince: number | null = null;
  let failingBlock: number | null = null;
  let failures = 0;
  let running: Promise<void> | null = null;
  let repeating: Repeating | null = null;
  let stopped = false;
  let controller = new AbortController();

  const message = (error: unknown) =>
    error instanceof Error
      ? ((error as { shortMessage?: string }).shortMessage ?? error.message)
      : String(error);

  async function probe(): Promise<boolean> {
    if (supported !== null) return supported;
    const result = await client.supportsOtterscan({ signal: controller.signal });
    supported = result.supported;
    apiLevel = result.apiLevel;
    if (!supported) {
      enabled = false;
      lastError = "the node does not serve the ots_ namespace";
      publish({ module: "chain", type: "chainUnsupported", rpc: client.url });
    } else {
      publish({ module: "chain", type: "chainStarted", rpc: client.url, apiLevel, addresses: [...watched] });
    }
    return supported;
  }

  function updateLag(): void {
    if (headTimestampMs === null) return;
    const now = clock.now();
    headLagMs = now - headTimestampMs;
    publish({ module: "chain", type: "chainLag", lagMs: headLagMs });
    if (headLagMs > stallThresholdMs) {
      if (stalledSince === null) {
        stalledSince = headTimestampMs;
        publish({
          module: "chain",
          type: "chainStalled",
          headBlock,
          lagMs: headLagMs,
          thresholdMs: stallThresholdMs,
        });
      }
    } else if (stalledSince !== null) {
      publish({
        module: "chain",
        type: "chainResumed",
        headBlock,
        lagMs: headLagMs,
        stalledForMs: now - stalledSince,
      });
      stalledSince = null;
    }
  }

  function skip(count: number, reason: string, from: number, to: number): void {
    publish({ module: "chain", type: "chainSkipped", count, from, to, reason });
  }

  async function processBlock(n: number, signal: AbortSignal): Promise<void> {
    const header: OtsHeader = await client.getHeaderByNumber(n, { signal });
    if (headBlock === null || n >= headBlock) {
      headBlock = n;
      headTimestampMs = Number(BigInt(header.timestamp)) * 1000;
      publish({ module: "chain", type: "chainHead", block: n });
    }
    if (watched.size === 0 || BigInt(header.gasUsed) === 0n) return;
    const all = await client.blockTransactions(n, { pageSize, concurrency, signal });
    all.txs.forEach((tx, i) => {
      const from = tx.from.toLowerCase();
      const to = tx.to?.toLowerCase() ?? null;
      const receipt = all.receipts[i]!;
      const created = receipt.contractAddress?.toLowerCase() ?? null;
      if (!watched.has(from) && !(to && watched.has(to)) && !(created && watched.has(created))) return;
      publish({
        module: "chain",
        type: "chainTx",
        block: n,
        hash: tx.hash,
        from,
        to,
        ...(created ? { contractAddress: created } : {}),
        value: BigInt(tx.value).toString(),
        ok: receipt.status === "0x1",
        gasUsed: BigInt(receipt.gasUsed).toString(),
      });
    });
  }

  async function runTick(): Promise<void> {
    if (stopped || !enabled) return;
    const signal = controller.signal;
    try {
      if (!(await probe())) return;
      const head = Number(await client.blockNumber({ signal }));
      if (lastProcessed === null) lastProcessed = head - 1;
      if (head - lastProcessed > maxLagBlocks) {
        const skipped = head - lastProcessed - 1;
        skip(skipped, `more than ${maxLagBlocks} blocks behind`, lastProcessed + 1, head - 1);
        lastProcessed = head - 1;
      }
      while (lastProcessed < head && !signal.aborted) {
        const n: number = lastProcessed + 1;
        try {
          await processBlock(n, signal);
          lastProcessed = n;
          failures = 0;
          failingBlock = null;
        } catch (error) {
          if (signal.aborted) return;
          failures = failingBlock === n ? failures + 1 : 1;
          failingBlock = n;
          if (failures >= maxBlockFailures) {
            skip(1, `block failed ${failures} times: ${message(error)}`, n, n);
            lastProcessed = n;
            failures = 0;
            failingBlock = null;
            continue;
          }
          throw error;
        }
      }
      lastError = null;
    } catch (error) {
      if (signal.aborted) return;
      lastError = message(error);
      publish({
        module: "chain",
        type: "chainError",
        error: lastError,
        notFound: error instanceof EvmNotFoundError,
      });
    } finally {
      updateLag();
    }
  }

  function tick(): Promise<void> {
    if (running) return running;
    running = runTick().finally(() => {
      running = null;
    });
    return running;
  }

  function schedule(): void {
    if (stopped || !enabled || repeating) return;
    repeating = runtime.every(pollIntervalMs, () => void tick(), { immediate: false, name: "chain" });
  }

  return {
    async start() {
      stopped = false;
      if (controller.signal.aborted) controller = new AbortController();
      await tick();
      schedule();
    },
    async stop() {
      stopped = true;
      repeating?.stop();
      repeating = null;
      controller.abort();
      if (running) await running;
      // The daemon hands the watch a client of its own; end its keep-alive sockets (close() is idempotent).
      client.close();
    },
    status(): ChainWatchStatus {
      return { enabled: enabled && !stopped, supported, headBlock, headLagMs, lastError };
    },
    tick,
  };
}
