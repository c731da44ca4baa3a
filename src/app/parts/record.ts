/** The exchange record component (src/app/daemon.ts, `daemonComponents`). */
import { dexesToActOn } from "../../config/rules.js";
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { DrillIo } from "../../core/orders-port.js";
import type { DeathGate } from "../../fleet-death/gate.js";
import type { ExplorerClient } from "../../protocol/hyperliquid/explorer.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { OpenOrderFeed } from "../../protocol/hyperliquid/order-feed.js";
import type { CancelOpenOrders, ClosePositions, ScheduleCancelClient } from "../../switch/index.js";
import type { Ledger } from "../../switch/ledger.js";
import type { RecordResult } from "../../switch/record.js";
import type { AnnouncedOrders } from "../../watchers/announced-orders.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";
import { buildCancels } from "./cancels.js";
import { buildCloses } from "./closes.js";
import { startKnownOrders } from "./known-orders.js";
import { openRecord } from "./record-read.js";
import { bySigner } from "./signers.js";

/**
 * The exchange's record (docs/exchange-record.md): read at start-up (before the first push, bounded by one request
 * time-out), after every guessed trigger and again while guesses remain; each switch applies it where it is fresh
 * (both directions) and it never stops the pushes. Unavailable: said once, nothing changes. With an API URL given
 * to the daemon (a simulator, a third-party host) the record is read only from an explicit --explorer-url: an
 * official explorer never describes another host's exchange. Also the order canceller (engine-down `cancel`).
 */
export function recordComponent(): Component<
  Base & {
    log: Logger;
    bus: EventBus;
    ledger: Ledger;
    info: InfoClient;
    client: ScheduleCancelClient;
    signerClients: ReadonlyMap<string, ScheduleCancelClient>;
  },
  {
    readRecord: ((account: string) => Promise<RecordResult>) | undefined;
    startRecords: Map<string, RecordResult>;
    cancelOpenOrders: CancelOpenOrders | undefined;
    /** the operator's kill: every resting order, whatever the engine-down policy */
    killOrders: CancelOpenOrders | undefined;
    closePositions: ClosePositions | undefined;
    drillIo: DrillIo | undefined;
    /** the daemon's own cancel after a fire, on the listed dexes it missed (fire-check.ts); keeps no feed */
    fireCancel: CancelOpenOrders | undefined;
    /** the dexes the cancels, closes and fire checks cover */
    actOnDexes: string[];
    /** what the engines announce of their orders (the connection guard writes it, the cancel pass reads it) */
    announcedOrders: AnnouncedOrders;
    /** the engine-down passes of a simultaneous death, in risk order within the IP's weight (src/fleet-death/) */
    deathGate: DeathGate | undefined;
  }
> {
  let explorer: ExplorerClient | null = null;
  let feed: OpenOrderFeed | null = null;
  let deathGate: DeathGate | undefined;
  const reconciling = new Set<Promise<unknown>>();
  return {
    name: "exchange record",
    async start(ctx) {
      const { config, plan, signer, signerClients } = ctx;
      // Each account's requests are signed by its own signer (plan); its record is read for that signer too.
      const signers = new Map(plan.map((p) => [p.account, p.signer]));
      const signerOf = (account: string) => signers.get(account) ?? signer;
      // the reads and primings in flight, awaited on close
      const track = (work: Promise<unknown>) => {
        reconciling.add(work);
        void work.finally(() => reconciling.delete(work));
      };
      const record = await openRecord({ ...ctx, signerOf, track });
      explorer = record.explorer;
      const known = await startKnownOrders({ ...ctx, track });
      feed = known.feed;
      const perSigner = bySigner(signerClients, signerOf);
      // The cancels and closes act on the first perp dex and on every dex of `--dex` (the exposure poll's list).
      const actOnDexes = dexesToActOn(config.dexes);
      const cancels = buildCancels({ ...ctx, actOnDexes, known, perSigner, track });
      deathGate = cancels.deathGate;
      const { raw, killOrders } = cancels;
      const { closePositions, drillIo } = buildCloses({ ...ctx, actOnDexes, perSigner, raw, killOrders });
      return {
        readRecord: record.readRecord,
        startRecords: record.startRecords,
        cancelOpenOrders: cancels.cancelOpenOrders,
        killOrders,
        closePositions,
        drillIo,
        fireCancel: cancels.fireCancel,
        actOnDexes,
        announcedOrders: known.announcedOrders,
        deathGate,
      };
    },
    async close() {
      feed?.stop();
      deathGate?.close();
      await Promise.allSettled([...reconciling]);
      explorer?.close();
    },
  };
}
