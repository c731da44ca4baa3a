/**
 * The coordination component (docs/operations.md, "High availability"): with `coordinate` set, this replica's
 * election in etcd (src/replicas/election.ts, an input source beside the watchers) is started here on the daemon's
 * bus (its lines and metrics are the bus's subscribers, src/surface/replicas.ts), and its feed is handed to the
 * switches. Nothing here decides anything.
 */
import { hostname } from "node:os";
import type { EventBus } from "../../core/events.js";
import { type Election, startElection } from "../../replicas/election.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";

export {
  type Coordination,
  type CoordinationState,
  electionName,
  LEASE_MARGIN_MS,
} from "../../replicas/election.js";

export function coordinationComponent(): Component<
  Base & { bus: EventBus },
  { coordination: Election["coordination"] | null }
> {
  let election: Election | undefined;
  return {
    name: "coordination",
    async start({ config, runtime, bus, accounts, listen, params }) {
      const coordinate = config.coordinate;
      if (coordinate === undefined) return { coordination: null };
      election = await startElection({
        config: { ...config, coordinate },
        accounts,
        // this replica for people (the process's own: the election names it, never reads it)
        replica: `${hostname()}:${process.pid}${listen ? ` (health ${listen.host}:${listen.port})` : ""} ${params.stateDir}`,
        stateDir: params.stateDir,
        runtime,
        bus,
      });
      return { coordination: election.coordination };
    },
    close: () => election?.close(),
  };
}
