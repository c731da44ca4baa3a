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
 */
/** The newest version this daemon speaks; GUARD_VERSIONS lists every version it accepts. */
export const GUARD_PROTOCOL = "hl-deadman-guard/2";
export const GUARD_PROTOCOL_V1 = "hl-deadman-guard/1";
export type GuardVersion = 1 | 2;
export const GUARD_VERSIONS: readonly GuardVersion[] = [1, 2];
/** The longest line read (a first line naming GUARD_MAX_ACCOUNTS accounts fits in it). */
export const GUARD_MAX_LINE_BYTES = 2048;
export const GUARD_MAX_ACCOUNTS = 32;
/** The longest `detach` grace: a planned restart that takes longer is an engine down. */
export const GUARD_MAX_DETACH_MS = 600_000;

/**
 * A refused first line says what it tried (`version`, `accounts`: bounded, as written, accounts lower-cased) so that
 * the daemon can name them: an engine refused is an engine that guards nothing.
 */
export type GuardHello =
  | { ok: true; version: GuardVersion; accounts: string[] }
  | { ok: false; reason: string; version: string; accounts: string[] };
export type GuardLine =
  | { type: "heartbeat" }
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

/** A line after the first: a heartbeat, or a `detach <ms>`; a malformed detach is only a heartbeat (logged). */
export function parseGuardLine(line: string): GuardLine {
  const text = line.replace(/\r$/, "").trim();
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
