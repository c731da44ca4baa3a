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
 */
import type { Logger } from "pino";
import { normalizeAddress } from "../core/address.js";
import type { Repeating, Runtime } from "../core/runtime.js";
import type { ChainWatchStatus } from "../core/status.js";
import type { EvmClient } from "../protocol/evm/client.js";
import { EvmNotFoundError } from "../protocol/evm/errors.js";
import type { OtsHeader } from "../protocol/evm/schemas.js";
import type { Metrics } from "../surface/metrics.js";

export type CreateChainWatchParameters = {
  client: EvmClient;
  /** Addresses to report (any case); may be empty (then only head and lag are followed). */
  addresses: string[];
  /** the runtime: its clock, timers, `every` and stop signal (src/core/runtime.ts) */
  runtime: Runtime;
  logger: Logger;
  metrics: Metrics;
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
  logger,
  metrics,
  pollIntervalMs,
  stallThresholdMs,
  maxLagBlocks,
  pageSize,
  concurrency = 2,
  maxBlockFailures = 5,
}: CreateChainWatchParameters): ChainWatch {
  const { clock } = runtime;
  const log = logger.child({ module: "chain" });
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
      log.error(
        { event: "chain.unsupported", rpc: client.url },
        "chain watch disabled: the node does not serve ots_ methods (ots_getHeaderByNumber: method not found); use an RPC that serves the ots_ namespace",
      );
    } else {
      log.info(
        { event: "chain.watch.started", rpc: client.url, apiLevel, addresses: [...watched] },
        "chain watch started",
      );
    }
    return supported;
  }

  function updateLag(): void {
    if (headTimestampMs === null) return;
    const now = clock.now();
    headLagMs = now - headTimestampMs;
    metrics.chainHeadLag.set(headLagMs / 1000);
    if (headLagMs > stallThresholdMs) {
      if (stalledSince === null) {
        stalledSince = headTimestampMs;
        log.warn(
          { event: "chain.stalled", headBlock, lagMs: headLagMs, thresholdMs: stallThresholdMs },
          `HyperEVM head ${headBlock} is ${Math.round(headLagMs / 1000)} s old: the chain or the node is stalled`,
        );
      }
    } else if (stalledSince !== null) {
      log.info(
        { event: "chain.resumed", headBlock, lagMs: headLagMs, stalledForMs: now - stalledSince },
        `HyperEVM blocks are coming again (head ${headBlock})`,
      );
      stalledSince = null;
    }
  }

  function skip(count: number, reason: string, from: number, to: number): void {
    metrics.chainBlocksSkipped.inc(count);
    log.warn({ event: "chain.skipped", count, from, to, reason }, `skipped ${count} block(s): ${reason}`);
  }

  async function processBlock(n: number, signal: AbortSignal): Promise<void> {
    const header: OtsHeader = await client.getHeaderByNumber(n, { signal });
    if (headBlock === null || n >= headBlock) {
      headBlock = n;
      headTimestampMs = Number(BigInt(header.timestamp)) * 1000;
      metrics.chainHead.set(n);
    }
    if (watched.size === 0 || BigInt(header.gasUsed) === 0n) return;
    const all = await client.blockTransactions(n, { pageSize, concurrency, signal });
    all.txs.forEach((tx, i) => {
      const from = tx.from.toLowerCase();
      const to = tx.to?.toLowerCase() ?? null;
      const receipt = all.receipts[i]!;
      const created = receipt.contractAddress?.toLowerCase() ?? null;
      if (!watched.has(from) && !(to && watched.has(to)) && !(created && watched.has(created))) return;
      const ok = receipt.status === "0x1";
      const fields = {
        event: "chain.tx",
        block: n,
        hash: tx.hash,
        from,
        to,
        ...(created ? { contractAddress: created } : {}),
        value: BigInt(tx.value).toString(),
        status: ok ? "ok" : "failed",
        gasUsed: BigInt(receipt.gasUsed).toString(),
      };
      metrics.chainWatchedTxs.inc({ status: ok ? "ok" : "failed" });
      if (ok) log.info(fields, "watched address transaction");
      else log.warn(fields, "watched address transaction FAILED (receipt status 0x0)");
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
      const level = error instanceof EvmNotFoundError ? "info" : "warn";
      log[level](
        { event: "chain.error", error: lastError },
        `chain watch: ${lastError} (retrying next tick)`,
      );
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
