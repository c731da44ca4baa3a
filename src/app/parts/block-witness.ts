/**
 * The second witness of the exchange's time (issue 40): the HyperEVM block time, read on the push interval and
 * handed to every switch. Wired by the switches component (src/app/parts/switches.ts).
 */

import { effectiveBlockTimeUrl } from "../../config/networks.js";
import type { Config } from "../../config/schema.js";
import type { EventBus } from "../../core/events.js";
import type { Runtime } from "../../core/runtime.js";
import { EvmClient } from "../../protocol/evm/client.js";
import type { Switch } from "../../switch/index.js";
import { type BlockWitness, createBlockWitness } from "../../watchers/block-time.js";
import type { StartDaemonParameters } from "../context.js";

/** The witness started for `switches`, with what stops it; none when there is no block time URL. */
export function startBlockWitness({
  params,
  config,
  runtime,
  bus,
  switches,
}: {
  params: StartDaemonParameters;
  config: Config;
  runtime: Runtime;
  bus: EventBus;
  switches: readonly Switch[];
}): { stop(): void } | null {
  let witness: BlockWitness | undefined;
  let closeWitness: (() => void) | undefined;
  // The second witness of the exchange's time (issue 40): the HyperEVM block time, handed to every switch.
  // An API URL given by the caller (a test, an embedder) without an RPC URL has none, as for the explorer.
  const blockUrl = params.apiUrl && !config.rpcUrl ? null : effectiveBlockTimeUrl(config);
  if (blockUrl !== null) {
    const all = switches;
    const client = new EvmClient({ rpcUrl: blockUrl, timeoutMs: config.requestTimeout });
    closeWitness = () => client.close();
    witness = createBlockWitness({
      client,
      runtime,
      intervalMs: config.interval,
      bus,
      onSample: (sample) => {
        for (const s of all) s.dispatch({ type: "blockSample", ...sample });
      },
    });
    void witness.readNow();
    witness.start();
  }
  return witness
    ? {
        stop: () => {
          witness?.stop();
          closeWitness?.();
        },
      }
    : null;
}
