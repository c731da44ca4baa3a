/** The trigger ledger and the signers' nonces component (src/app/daemon.ts, `daemonComponents`). */
import type { EventBus } from "../../core/events.js";
import { NonceSource, type NonceSpan, nonceFloor } from "../../protocol/hyperliquid/nonce.js";
import { Ledger } from "../../switch/ledger.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";

/**
 * The trigger ledger and the signer's nonces, one component: the ledger persists the nonces' high-water mark, and
 * the nonces start above the floor the ledger's last run left (src/protocol/hyperliquid/nonce.ts).
 */
export function ledgerComponent(): Component<
  Base & { bus: EventBus },
  {
    ledger: Ledger;
    nonces: NonceSource;
    signerNonces: ReadonlyMap<string, NonceSource>;
    nonceSpan: NonceSpan;
  }
> {
  let ledger: Ledger | undefined;
  return {
    name: "ledger",
    async start({ params, config, time, bus, signer, wallets }) {
      // One nonce sequence per signer (the exchange keeps the 100 highest per signer). The ledger keeps one
      // high-water mark, the highest of them: every signer's floor starts above it, which is safe (nonces are
      // times: a floor above a signer's own last nonce only moves its next nonce a little later).
      const signerNonces = new Map<string, NonceSource>();
      // How far above the ledger's last write a restart starts its nonces.
      const nonceSpan: NonceSpan = { requestTimeoutMs: config.requestTimeout, deadlineMs: config.deadline };
      const opened = await Ledger.open({
        stateDir: params.stateDir,
        clock: time,
        // only verified time and nonces taken on it are persisted (they seed a restart's nonce floor)
        verifiedNow: () => time.verifiedNow(),
        nonceHint: () => Math.max(0, ...[...signerNonces.values()].map((n) => n.lastVerified)),
        bus,
        triggerLimit: config.triggerLimit,
        beforeSync: params.beforeLedgerSync,
        // an updatedAt a wrong clock wrote ahead is set back once verified, the nonce floor kept (ledger.ts)
        nonceSpan,
      });
      ledger = opened;
      // The exchange's time is never before the ledger's last write (a clock stepped back while down).
      if (opened.loadedUpdatedAt !== null) time.notBefore(opened.loadedUpdatedAt);
      // Nonces never go below the previous run's, even after the wall clock was stepped back.
      const floor = nonceFloor(opened.loadedUpdatedAt, opened.loadedLastNonce, nonceSpan);
      for (const address of wallets.keys())
        signerNonces.set(address, new NonceSource(time, floor, () => time.verified));
      return { ledger: opened, nonces: signerNonces.get(signer)!, signerNonces, nonceSpan };
    },
    close: () => ledger?.close(),
  };
}
