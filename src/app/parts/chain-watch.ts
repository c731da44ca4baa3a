import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Component } from "../components.js";
import type { Base, DaemonChainWatch } from "../context.js";

/**
 * The chain watch and its EVM client, loaded only when addresses are watched. Built here (a module that cannot be
 * loaded fails the start before anything is armed); the pollers start and stop it.
 */
export function chainWatchComponent(): Component<
  Base & { logger: Logger; bus: EventBus },
  { chain: DaemonChainWatch | null }
> {
  return {
    name: "chain watch",
    async start({ params, config, runtime, logger, metrics, bus }) {
      if (config.watchAddresses.length === 0) return { chain: null };
      if (params.createChainWatch)
        return { chain: params.createChainWatch({ runtime, logger, metrics, bus }) };
      if (!config.rpcUrl) return { chain: null };
      const [{ createChainWatch }, { EvmClient }] = await Promise.all([
        import("../../watchers/chain-watch.js"),
        import("../../protocol/evm/client.js"),
      ]);
      const chain = createChainWatch({
        client: new EvmClient({ rpcUrl: config.rpcUrl, timeoutMs: config.requestTimeout }),
        addresses: config.watchAddresses,
        runtime,
        bus,
        pollIntervalMs: config.chainPollInterval,
        stallThresholdMs: config.chainStallThreshold,
        maxLagBlocks: config.chainMaxLagBlocks,
        pageSize: config.chainPageSize,
      });
      return { chain };
    },
    // Nothing runs yet: the pollers own its start and its stop.
    close() {},
  };
}
