/**
 * The chain watch's events (src/core/events.ts `ChainEvent`, src/watchers/chain-watch.ts) as log lines and metrics,
 * subscribers of the daemon's bus.
 */
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";

/** The chain watch's log lines, a subscriber of the bus (on the logger's `{ module: "chain" }` child). */
export function chainLog(logger: Logger): EventSubscriber {
  const log = logger.child({ module: "chain" });
  return (e) => {
    if (e.module !== "chain") return;
    switch (e.type) {
      case "chainUnsupported":
        log.error(
          { event: "chain.unsupported", rpc: e.rpc },
          "chain watch disabled: the node does not serve ots_ methods (ots_getHeaderByNumber: method not found); use an RPC that serves the ots_ namespace",
        );
        return;
      case "chainStarted":
        log.info(
          { event: "chain.watch.started", rpc: e.rpc, apiLevel: e.apiLevel, addresses: e.addresses },
          "chain watch started",
        );
        return;
      case "chainStalled":
        log.warn(
          { event: "chain.stalled", headBlock: e.headBlock, lagMs: e.lagMs, thresholdMs: e.thresholdMs },
          `HyperEVM head ${e.headBlock} is ${Math.round(e.lagMs / 1000)} s old: the chain or the node is stalled`,
        );
        return;
      case "chainResumed":
        log.info(
          { event: "chain.resumed", headBlock: e.headBlock, lagMs: e.lagMs, stalledForMs: e.stalledForMs },
          `HyperEVM blocks are coming again (head ${e.headBlock})`,
        );
        return;
      case "chainSkipped":
        log.warn(
          { event: "chain.skipped", count: e.count, from: e.from, to: e.to, reason: e.reason },
          `skipped ${e.count} block(s): ${e.reason}`,
        );
        return;
      case "chainTx": {
        const fields = {
          event: "chain.tx",
          block: e.block,
          hash: e.hash,
          from: e.from,
          to: e.to,
          ...(e.contractAddress ? { contractAddress: e.contractAddress } : {}),
          value: e.value,
          status: e.ok ? "ok" : "failed",
          gasUsed: e.gasUsed,
        };
        if (e.ok) log.info(fields, "watched address transaction");
        else log.warn(fields, "watched address transaction FAILED (receipt status 0x0)");
        return;
      }
      case "chainError":
        log[e.notFound ? "info" : "warn"](
          { event: "chain.error", error: e.error },
          `chain watch: ${e.error} (retrying next tick)`,
        );
        return;
    }
  };
}

/** The chain watch's metrics, a subscriber of the bus: head, lag, skipped blocks, watched transactions. */
export function chainMetrics(metrics: Metrics): EventSubscriber {
  return (e) => {
    if (e.module !== "chain") return;
    if (e.type === "chainHead") metrics.chainHead.set(e.block);
    else if (e.type === "chainLag") metrics.chainHeadLag.set(e.lagMs / 1000);
    else if (e.type === "chainSkipped") metrics.chainBlocksSkipped.inc(e.count);
    else if (e.type === "chainTx") metrics.chainWatchedTxs.inc({ status: e.ok ? "ok" : "failed" });
  };
}
