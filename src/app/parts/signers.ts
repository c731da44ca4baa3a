/**
 * What the record component builds per signer (src/app/parts/record.ts): an account's cancels, closes and drill
 * orders go out under its own signer's key and nonces, so each executor is built once per signer's client and
 * reached per account.
 */
import type { ExchangeClient } from "../../protocol/hyperliquid/exchange.js";
import type { ScheduleCancelClient } from "../../switch/index.js";

export function hasOrder(client: object): client is Pick<ExchangeClient, "order"> & ScheduleCancelClient {
  return typeof (client as { order?: unknown }).order === "function";
}

export function hasCancel(client: object): client is Pick<ExchangeClient, "cancel"> & ScheduleCancelClient {
  return typeof (client as { cancel?: unknown }).cancel === "function";
}

/** A builder per signer: undefined when one signer's client cannot carry it (then no account has it). */
export type PerSigner = <T>(
  build: (c: ScheduleCancelClient) => T | undefined,
) => ((account: string) => T) | undefined;

export function bySigner(
  signerClients: ReadonlyMap<string, ScheduleCancelClient>,
  signerOf: (account: string) => string,
): PerSigner {
  // Built per signer, reached per account: an account's cancels, closes and drill orders go out under its
  // own signer's key and nonces.
  const perSigner = <T>(build: (c: ScheduleCancelClient) => T | undefined) => {
    const built = new Map<string, T>();
    for (const [address, c] of signerClients) {
      const made = build(c);
      if (made === undefined) return undefined;
      built.set(address, made);
    }
    return (account: string) => built.get(signerOf(account))!;
  };
  return perSigner;
}
