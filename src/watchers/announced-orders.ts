/**
 * What each account's engine last announced of its resting orders (protocol version 2, `orders` lines:
 * src/core/guard-protocol.ts). The connection guard writes it as announcements complete; the cancel pass reads it
 * when no fresh order feed knows the account (src/app/parts/known-orders.ts), so a dead engine's orders are cancelled at once,
 * without a read first. Bounded: one set per account of the daemon, each at most GUARD_MAX_ORDERS.
 */
import { type AnnouncedOrder, GUARD_MAX_ORDERS } from "../core/guard-protocol.js";

export type Announcement = {
  orders: readonly AnnouncedOrder[];
  /** when its last part was read (epoch ms) */
  at: number;
  /** the connection that announced it */
  connection: number;
};

export type AnnouncedOrders = {
  /** `account`'s announced set, replacing the one before (an account the daemon does not guard is not kept) */
  set(account: string, announcement: Announcement): void;
  /** the set last announced, if any: never forgotten on the engine's death, which is when it is needed */
  get(account: string): Announcement | undefined;
  /** forgets `account`'s set (an announcement that could not be read whole: the pass reads instead) */
  forget(account: string): void;
};

export function createAnnouncedOrders(accounts: readonly string[]): AnnouncedOrders {
  const known = new Set(accounts.map((a) => a.toLowerCase()));
  const sets = new Map<string, Announcement>();
  return {
    set(account, announcement) {
      const a = account.toLowerCase();
      if (!known.has(a) || announcement.orders.length > GUARD_MAX_ORDERS) return;
      sets.set(a, { ...announcement, orders: [...announcement.orders] });
    },
    get: (account) => sets.get(account.toLowerCase()),
    forget: (account) => {
      sets.delete(account.toLowerCase());
    },
  };
}
