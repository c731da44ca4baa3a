/**
 * The connection guard's wire protocol, versions 1 and 2 (docs/operations.md, "Cancel on disconnect"): pure, shared
 * by the daemon's watcher (src/watchers/connection-guard.ts) and the engine-side client (src/engine/index.ts), so it
 * imports nothing. Lines end with `\n` (a `\r` before it is dropped) and are at most GUARD_MAX_LINE_BYTES long.
 * - the engine's first line: `hl-deadman-guard/<1|2> <account>[,<account>...]` (0x addresses, at most
 *   GUARD_MAX_ACCOUNTS); the daemon answers `ok` or `refused <reason>` and, when refused, closes;
 * - every later line from the engine is a heartbeat; `detach <ms>` (1..GUARD_MAX_DETACH_MS) also announces a planned
 *   restart: the connection may close within that many ms without the engine counting as down;
 * - version 2 only: after `ok` the daemon may write notices to the engine (GuardNotice): `halted <account> <why>`
 *   (the account is latched HALTED: the daemon may be closing its positions; trade it no more until `resumed`),
 *   `resumed <account>` (the operator's reset) and `drill <account> <until>` (a drill's fire cancels whatever rests
 *   on the account until `until`, epoch ms). An engine ignores a notice it does not know (later versions add
 *   kinds); a version 1 engine is never sent one, so engines written for version 1 keep working unchanged.
 * - version 2 only: `orders <account> <part>/<parts> [<oid>:<asset>[:<flags>],...]` announces the account's resting
 *   orders as the engine knows them (flags: `t` a trigger order, `r` reduce-only), split over `parts` lines of at
 *   most GUARD_MAX_LINE_BYTES, sent one after the other (guardOrdersLines); the last part replaces the account's
 *   announced set. On the engine's death the daemon cancels these at once, without a read first, and reads to confirm
 *   (the read catches whatever the engine had not yet announced). Each such line is also a heartbeat.
 */
/** The newest version this daemon speaks; GUARD_VERSIONS lists every version it accepts. */
export const GUARD_PROTOCOL = "hl-deadman-guard/2";
export const GUARD_PROTOCOL_V1 = "hl-deadman-guard/1";
export type GuardVersion = 1 | 2;
export const GUARD_VERSIONS: readonly GuardVersion[] = [1, 2];
/** The longest line read (a first line naming GUARD_MAX_ACCOUNTS accounts fits in it). */
export const GUARD_MAX_LINE_BYTES = 2048;
/**
 * The most accounts one connection names: the first line is one protocol line, and 32 addresses (43 bytes each with
 * the comma) keep it well inside GUARD_MAX_LINE_BYTES. More accounts take more connections (GUARD_MAX_CONNECTIONS).
 */
export const GUARD_MAX_ACCOUNTS = 32;
/**
 * The most orders one account's announcement holds: the exchange's highest open-order limit per user (1,000, raised
 * with volume up to 5,000). A longer announcement is refused as a whole (the account's orders are then read).
 */
export const GUARD_MAX_ORDERS = 5_000;
/** The most lines one announcement is split over (5,000 orders of the longest form take about 70). */
export const GUARD_MAX_ORDER_PARTS = 256;
/** The longest `detach` grace: a planned restart that takes longer is an engine down. */
export const GUARD_MAX_DETACH_MS = 600_000;

/**
 * A refused first line says what it tried (`version`, `accounts`: bounded, as written, accounts lower-cased) so that
 * the daemon can name them: an engine refused is an engine that guards nothing.
 */
export type GuardHello =
  | { ok: true; version: GuardVersion; accounts: string[] }
  | { ok: false; reason: string; version: string; accounts: string[] };
/** An order as its engine announces it: enough to cancel it (oid, asset index) and to choose how (trigger or not). */
export type AnnouncedOrder = { oid: number; asset: number; trigger: boolean; reduceOnly: boolean };
export type GuardLine =
  | { type: "heartbeat" }
  | { type: "orders"; account: string; part: number; parts: number; orders: AnnouncedOrder[] }
  | { type: "detach"; ms: number }
  | { type: "ignored"; reason: string };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The engine's first line: the protocol version and the accounts it guards (lower-cased, deduplicated). */
export function parseGuardHello(line: string): GuardHello {
  const text = line.replace(/\r$/, "").slice(0, GUARD_MAX_LINE_BYTES + 1);
  const space = text.indexOf(" ");
  const version = space < 0 ? text : text.slice(0, space);
  const list = space < 0 ? "" : text.slice(space + 1).trim();
  const accounts = [...new Set(list.split(",").map((a) => a.trim().toLowerCase()))].filter((a) => a !== "");
  const refused = (reason: string): GuardHello => ({
    ok: false,
    reason,
    version: version.slice(0, 40),
    accounts: accounts.slice(0, GUARD_MAX_ACCOUNTS).map((a) => a.slice(0, 50)),
  });
  if (text.length > GUARD_MAX_LINE_BYTES) return refused("first line too long");
  if (!version.startsWith("hl-deadman-guard/"))
    return refused(`expected "${GUARD_PROTOCOL} <account>[,<account>...]"`);
  const n = GUARD_VERSIONS.find((v) => version === `hl-deadman-guard/${v}`);
  if (n === undefined)
    return refused(
      `protocol ${JSON.stringify(version.slice(0, 40))} not supported (this daemon speaks ${GUARD_VERSIONS.map((v) => `hl-deadman-guard/${v}`).join(" and ")})`,
    );
  if (accounts.length === 0) return refused("no account named");
  if (accounts.length > GUARD_MAX_ACCOUNTS)
    return refused(`${accounts.length} accounts named (at most ${GUARD_MAX_ACCOUNTS})`);
  const bad = accounts.find((a) => !ADDRESS.test(a));
  if (bad !== undefined) return refused(`${JSON.stringify(bad.slice(0, 50))} is not a 0x address`);
  return { ok: true, version: n, accounts };
}

const ORDER = /^(\d{1,16}):(\d{1,7})(?::([tr]{1,2}))?$/;

/** An `orders` line (version 2): its account, which part of how many, and the orders in it; or why it is ignored. */
export function parseGuardOrders(text: string): GuardLine {
  const m = /^orders (0x[0-9a-fA-F]{40}) (\d{1,3})\/(\d{1,3})(?: (.*))?$/.exec(text);
  if (!m)
    return {
      type: "ignored",
      reason: '"orders" needs "<account> <part>/<parts> [<oid>:<asset>[:t|r|tr],...]"',
    };
  const part = Number(m[2]);
  const parts = Number(m[3]);
  if (!(part >= 1 && part <= parts && parts <= GUARD_MAX_ORDER_PARTS))
    return { type: "ignored", reason: `"orders" part ${part}/${parts} (1..${GUARD_MAX_ORDER_PARTS} parts)` };
  const orders: AnnouncedOrder[] = [];
  const list = (m[4] ?? "").trim();
  for (const item of list === "" ? [] : list.split(",")) {
    const o = ORDER.exec(item.trim());
    const oid = o ? Number(o[1]) : Number.NaN;
    if (!o || !Number.isSafeInteger(oid))
      return {
        type: "ignored",
        reason: `"orders": ${JSON.stringify(item.slice(0, 40))} is not <oid>:<asset>[:t|r|tr]`,
      };
    const flags = o[3] ?? "";
    orders.push({ oid, asset: Number(o[2]), trigger: flags.includes("t"), reduceOnly: flags.includes("r") });
  }
  return { type: "orders", account: (m[1] as string).toLowerCase(), part, parts, orders };
}

/** An announced order as its item on an `orders` line. */
const orderItem = (o: AnnouncedOrder) =>
  `${Math.trunc(o.oid)}:${Math.trunc(o.asset)}${o.trigger || o.reduceOnly ? ":" : ""}${o.trigger ? "t" : ""}${o.reduceOnly ? "r" : ""}`;

/**
 * The lines that announce `account`'s resting orders (version 2), each at most GUARD_MAX_LINE_BYTES with its `\n`:
 * as few as fit, numbered `part/parts`. No order is one line (the account has none resting). Throws past
 * GUARD_MAX_ORDERS (the daemon would refuse it: the engine must know).
 */
export function guardOrdersLines(account: string, orders: readonly AnnouncedOrder[]): string[] {
  if (orders.length > GUARD_MAX_ORDERS)
    throw new RangeError(`${orders.length} orders announced for ${account} (at most ${GUARD_MAX_ORDERS})`);
  // room for the items: the line less its `\n` and the longest head ("orders " + address + " 256/256 ")
  const room =
    GUARD_MAX_LINE_BYTES - 1 - `orders ${account} ${GUARD_MAX_ORDER_PARTS}/${GUARD_MAX_ORDER_PARTS} `.length;
  const chunks: string[] = [];
  let current = "";
  for (const o of orders) {
    const item = orderItem(o);
    if (current !== "" && current.length + 1 + item.length > room) {
      chunks.push(current);
      current = "";
    }
    current = current === "" ? item : `${current},${item}`;
  }
  if (current !== "" || chunks.length === 0) chunks.push(current);
  return chunks.map((c, i) => `orders ${account} ${i + 1}/${chunks.length}${c === "" ? "" : ` ${c}`}\n`);
}

/**
 * A line after the first on a connection of `version`: a heartbeat, a `detach <ms>`, or (version 2) a part of an
 * `orders` announcement; a malformed detach or announcement is only a heartbeat (logged).
 */
export function parseGuardLine(line: string, version: GuardVersion = 2): GuardLine {
  const text = line.replace(/\r$/, "").trim();
  // version 1 knows no `orders` line: it is a heartbeat there, as every line but `detach` always was
  if (version >= 2 && /^orders(\s|$)/.test(text)) return parseGuardOrders(text);
  if (!/^detach(\s|$)/.test(text)) return { type: "heartbeat" };
  const arg = text.slice("detach".length).trim();
  const ms = /^\d{1,9}$/.test(arg) ? Number(arg) : Number.NaN;
  if (!(ms >= 1 && ms <= GUARD_MAX_DETACH_MS))
    return { type: "ignored", reason: `"detach" needs a grace of 1..${GUARD_MAX_DETACH_MS} ms` };
  return { type: "detach", ms };
}

/** The first line an engine sends for `accounts` (version 2 unless told otherwise). */
export function guardHelloLine(accounts: readonly string[], version: GuardVersion = 2): string {
  return `hl-deadman-guard/${version} ${accounts.join(",")}\n`;
}

/** What the daemon tells a version 2 engine about one of its accounts. */
export type GuardNotice =
  | { type: "halted"; account: string; reason: string }
  | { type: "resumed"; account: string }
  | { type: "drill"; account: string; until: number };

/** One notice as its line (the reason is folded to one line of printable text, bounded). */
export function guardNoticeLine(notice: GuardNotice): string {
  switch (notice.type) {
    case "halted": {
      const why =
        notice.reason
          .replace(/[^\x20-\x7e]+/g, " ")
          .trim()
          .slice(0, 200) || "halted";
      return `halted ${notice.account} ${why}\n`;
    }
    case "resumed":
      return `resumed ${notice.account}\n`;
    case "drill":
      return `drill ${notice.account} ${Math.round(notice.until)}\n`;
  }
}

/**
 * A line the daemon wrote to a version 2 engine after `ok`: a notice, or null for a line this version does not know
 * (ignored by the engine: a newer daemon may say more).
 */
export function parseGuardNotice(line: string): GuardNotice | null {
  const text = line.replace(/\r$/, "");
  const m = /^(halted|resumed|drill) (0x[0-9a-fA-F]{40})(?: (.*))?$/.exec(text);
  if (!m) return null;
  const account = (m[2] as string).toLowerCase();
  const rest = m[3] ?? "";
  if (m[1] === "halted") return { type: "halted", account, reason: rest.trim() || "halted" };
  if (m[1] === "resumed") return rest === "" ? { type: "resumed", account } : null;
  if (!/^\d{1,16}$/.test(rest)) return null;
  return { type: "drill", account, until: Number(rest) };
}
