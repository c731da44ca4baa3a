/**
 * What an engine-down cancel pass knows of an account's orders without a read (docs/operations.md, "Cancel on
 * disconnect"): the asset indices (`meta`, read once in the background under `cancel`), the order feed's fresh
 * lists over the WebSocket, and what the engines announce over the guard. Wired by the record component
 * (src/app/parts/record.ts).
 */
import type { Config } from "../../config/schema.js";
import type { Logger } from "../../core/logger.js";
import type { Runtime } from "../../core/runtime.js";
import { announcedOpenOrders } from "../../protocol/hyperliquid/announced.js";
import { createMetaCache, type MetaCache } from "../../protocol/hyperliquid/cancel.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import { loadWsClient, OpenOrderFeed, wsUrlOf } from "../../protocol/hyperliquid/order-feed.js";
import type { FrontendOpenOrder } from "../../protocol/hyperliquid/schemas.js";
import type { ScheduleCancelClient } from "../../switch/index.js";
import { type AnnouncedOrders, createAnnouncedOrders } from "../../watchers/announced-orders.js";
import type { StartDaemonParameters } from "../context.js";
import { hasCancel } from "./signers.js";

export type KnownOrders = {
  metaCache: MetaCache | undefined;
  /** the orders a pass for `user` knows now, or null (the pass reads first) */
  knownOrders: (user: string) => FrontendOpenOrder[] | null;
  /** what the engines announce of their orders (the connection guard writes it, the cancel pass reads it) */
  announcedOrders: AnnouncedOrders;
  /** the order feed, when one follows the accounts (stopped on close) */
  feed: OpenOrderFeed | null;
};

export async function startKnownOrders({
  params,
  config,
  runtime,
  plan,
  apiUrl,
  info,
  client,
  log,
  track,
}: {
  params: StartDaemonParameters;
  config: Config;
  runtime: Runtime;
  plan: readonly { account: string; vaultAddress: string | undefined }[];
  apiUrl: string;
  info: InfoClient;
  client: ScheduleCancelClient;
  log: Logger;
  /** keeps a promise until it settles (the component awaits them on close) */
  track: (work: Promise<unknown>) => void;
}): Promise<KnownOrders> {
  let feed: OpenOrderFeed | null = null;
  // Under `cancel`, `meta` (the asset indices) is read once now and kept for every signer's executor: a pass
  // reads it again only for a coin it does not know. Read in the background: a slow exchange must not hold back
  // the first push (until it is read, a pass reads it at death). Awaited on close.
  let metaCache: MetaCache | undefined;
  if (!params.cancelOpenOrders && config.onEngineDown === "cancel") {
    metaCache = createMetaCache(info);
    const priming = metaCache.prime();
    track(priming);
  }
  // With the connection guard, the orders of the first `orderFeedAccounts` accounts (at most 10, the exchange's
  // limit per IP) are kept fresh over the WebSocket, so that a cancel on engine death names them at once,
  // without a read first; the other accounts read their orders at death (docs/operations.md).
  if (
    !params.cancelOpenOrders &&
    config.onEngineDown === "cancel" &&
    config.guardSocket &&
    config.orderFeedAccounts > 0 &&
    hasCancel(client)
  ) {
    const users = [...new Set(plan.map((p) => (p.vaultAddress ?? p.account).toLowerCase()))];
    const followed = users.slice(0, config.orderFeedAccounts);
    if (users.length > followed.length)
      log.info(
        {
          event: "order_feed.limit",
          followed: followed.length,
          readAtDeath: users.slice(followed.length),
        },
        `open orders kept fresh for ${followed.length} account(s); the other ${users.length - followed.length} read theirs at engine death`,
      );
    const url = wsUrlOf(apiUrl);
    feed = new OpenOrderFeed({
      url,
      users: followed,
      timers: runtime.timers,
      connect: await loadWsClient(),
      onEvent: (e) => {
        if (e.type === "connected") log.info({ event: "order_feed.connected", url }, "order feed connected");
        else if (e.type === "disconnected")
          log.warn(
            { event: "order_feed.disconnected", url, retryInMs: e.retryInMs, detail: e.detail },
            "order feed disconnected: cancels read the open orders first until it is back",
          );
        else if (e.type === "snapshot" && e.first)
          log.info(
            { event: "order_feed.fresh", account: e.user, orders: e.orders },
            "open orders known: a cancel on engine death names them at once",
          );
        else if (e.type === "refused" || e.type === "invalid")
          log.warn({ event: `order_feed.${e.type}`, detail: e.detail }, `order feed: ${e.detail}`);
      },
    });
    feed.start();
  }
  const knownFeed = feed;
  // The orders a pass knows without a read (docs/operations.md, "Cancel on disconnect"): the order feed's fresh
  // list where it follows the account, else what the account's engine last announced over the guard (turned
  // into coins through the cached `meta`), else none (the pass reads first). The pass always reads to confirm.
  const announcedOrders = createAnnouncedOrders(plan.map((p) => (p.vaultAddress ?? p.account).toLowerCase()));
  const knownOrders = (user: string) => {
    const fresh = knownFeed?.fresh(user) ?? null;
    if (fresh !== null) return fresh;
    const a = announcedOrders.get(user);
    return a ? announcedOpenOrders(a.orders, metaCache?.get() ?? null, a.at) : null;
  };
  return { metaCache, knownOrders, announcedOrders, feed };
}
