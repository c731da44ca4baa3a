/**
 * The write-ahead, a sub-reducer of the switch machine: what the ledger file is known to hold for the account
 * (`SwitchModel.disk`, from the driver's `persisted` events), and whether a push's intent must be durable before
 * its request leaves (the Ready's `mustSync`) or the file already tells a restart all the intent would
 * (docs/daemon.md "The ledger"). The store only writes; this rule is the machine's.
 *
 * What a crash may leave on disk: the file as the last write known durable left it, or any entry handed to the
 * store since (a write in flight, or done and not yet reported). A push needs no write-ahead of its own only
 * when every one of them covers it (ledger-model.ts `intentCovered`) and a restart from the file starts its
 * nonces above the one this push is signed with (protocol/hyperliquid/nonce.ts `floorCovers`). Before this run
 * knows anything durable (its first write), nothing is covered.
 */
import { floorCovers, NONCE_SIGN_SLACK_MS, type NonceSpan } from "../protocol/hyperliquid/nonce.js";
import type { Ctx, Decision } from "./context.js";
import type { LedgerEntry } from "./ledger.js";
import { intentCovered } from "./ledger-model.js";
import { type Disk, type Event, type SwitchModel, UNSYNCED_KEPT } from "./model.js";

/**
 * Whether a push whose intent is `next`, signed with a nonce of at most `signAt`, is covered by what may be on
 * disk, in its two halves: `entry` (every entry a crash may find tells a restart what `next` would) and `floor`
 * (a restart's nonces start above this push's).
 */
export function writeAheadCoverage(
  disk: Disk,
  next: LedgerEntry,
  span: NonceSpan | undefined,
  signAt: number,
): { entry: boolean; floor: boolean } {
  const entry =
    disk.entry !== null &&
    !disk.overflow &&
    intentCovered(disk.entry, next) &&
    disk.unsynced.every((u) => intentCovered(u.entry, next));
  const floor = span !== undefined && floorCovers(disk.updatedAt, span, signAt + NONCE_SIGN_SLACK_MS);
  return { entry, floor };
}

/** The nonce a push is signed with now, at most: the signer's clock (the exchange's time) or above its last. */
export const signBound = (ctx: Ctx) => Math.max(Math.floor(ctx.now.wall), ctx.now.nonce ?? 0);

/**
 * A push's intent `next` is the model's entry now: whether it must be persisted with mustSync (the request waits
 * until it is durable, within the push's budget), or the file already covers it: then nothing is written for it
 * and the request leaves at once (counted in `disk.covered`). Returns the decision and the disk as it leaves it.
 */
export function writeAhead(ctx: Ctx, next: LedgerEntry): { sync: boolean; disk: Disk } {
  const m = ctx.m;
  const c = writeAheadCoverage(m.disk, next, m.cfg.nonceSpan, signBound(ctx));
  if (c.entry && c.floor) return { sync: false, disk: { ...m.disk, covered: m.disk.covered + 1 } };
  return { sync: true, disk: m.disk };
}

/** The step hands the model's entry to the store: numbered, and unsynced until a `persisted` event says so. */
export function handOver(m: SwitchModel): number {
  const seq = m.disk.seq + 1;
  const unsynced = [...m.disk.unsynced, { seq, entry: m.entry }];
  const overflow = m.disk.overflow || unsynced.length > UNSYNCED_KEPT;
  m.disk = { ...m.disk, seq, unsynced: unsynced.slice(-UNSYNCED_KEPT), overflow };
  return seq;
}

/**
 * The store's write of entry `seq` is durable: the file holds it (or a later one, still unsynced here) with
 * `updatedAt`. Entries handed over before it are on disk or replaced. Decided, not applied (context.ts `Decision`).
 */
export function persisted(m: SwitchModel, ev: Extract<Event, { type: "persisted" }>): Decision {
  const d = m.disk;
  const done = d.unsynced.find((u) => u.seq === ev.seq);
  // (an entry dropped by the overflow, or one of an earlier run, says nothing about what is on disk now)
  if (done === undefined) return {};
  const unsynced = d.unsynced.filter((u) => u.seq > ev.seq);
  const updatedAt = ev.updatedAt === null ? d.updatedAt : Math.max(d.updatedAt ?? 0, ev.updatedAt);
  return { set: { disk: { ...d, entry: done.entry, updatedAt, unsynced, overflow: false } } };
}
