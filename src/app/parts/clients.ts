/** The exchange and info clients component (src/app/daemon.ts, `daemonComponents`). */
import { ExchangeClient } from "../../protocol/hyperliquid/exchange.js";
import { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { NonceSource } from "../../protocol/hyperliquid/nonce.js";
import type { ScheduleCancelClient } from "../../switch/index.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";

/** The exchange client (the pushes, the cancels) and one info client for every read-only query. */

export function clientsComponent(): Component<
  Base & { signerNonces: ReadonlyMap<string, NonceSource> },
  {
    client: ScheduleCancelClient & { close?(): void };
    /** each signer's exchange client, by lower-case address (`client` is the first signer's) */
    signerClients: ReadonlyMap<string, ScheduleCancelClient & { close?(): void }>;
    info: InfoClient;
  }
> {
  const clients = new Map<string, ScheduleCancelClient & { close?(): void }>();
  let info: InfoClient | undefined;
  return {
    name: "clients",
    start({ params, config, time, signerNonces, apiUrl, runtime, signer, wallets }) {
      for (const [address, wallet] of wallets)
        clients.set(
          address,
          params.client ??
            new ExchangeClient({
              apiUrl,
              signer: wallet,
              isMainnet: config.network === "mainnet",
              clock: time,
              nonces: signerNonces.get(address)!,
              expiresAfterMs: config.requestTimeout,
              timeoutMs: config.requestTimeout,
            }),
        );
      const client = clients.get(signer)!;
      info = new InfoClient({
        apiUrl,
        clock: runtime.clock,
        timeoutMs: config.requestTimeout,
        chunkSize: config.exposureChunkSize,
        concurrency: config.exposureConcurrency,
      });
      return { client, signerClients: clients, info };
    },
    close() {
      info?.close();
      for (const c of new Set(clients.values())) c.close?.();
    },
  };
}
