/**
 * The one listen-address rule (`health`, docs/operations.md "Options", `health`): `HOST:PORT`, `[IPv6]:PORT`, `:PORT`
 * or `off`. The config schema, the health server and anything else that binds use parseListenAddress; the JSON
 * schema's pattern is LISTEN_ADDRESS_PATTERN, the same expression.
 */
import { BaseError } from "../core/errors/base.js";

export class ListenAddressError extends BaseError {
  override name = "ListenAddressError";
  /** the rule broken, without the value (for config issues, which show the value themselves) */
  readonly rule: string;
  constructor(value: string, rule: string) {
    super(`Invalid health address ${JSON.stringify(value)}: ${rule}.`, {
      metaMessages: ["Write HOST:PORT (127.0.0.1:9464, [::1]:9464, :9464 for every interface) or off."],
    });
    this.rule = rule;
  }
}

export type ListenAddress = { host: string; port: number };

/** `[IPv6]:PORT` or `HOST:PORT` (HOST may be empty): the bracketed host is group 1, the plain one group 2. */
const ADDRESS = String.raw`(?:\[([0-9a-fA-F:.%a-zA-Z]+)\]|([^:[\]\s]*)):(\d{1,5})`;
const ADDRESS_RE = new RegExp(`^${ADDRESS}$`);

/** The JSON-schema pattern of a listen address (surrounding blanks allowed, `off` in any case). */
export const LISTEN_ADDRESS_PATTERN = String.raw`^\s*(?:[oO][fF][fF]|${ADDRESS})\s*$`;

/**
 * Parses `HOST:PORT`, `[IPv6]:PORT` or `:PORT`; `off` (any case) gives null. An empty host means every
 * interface (0.0.0.0), as in Prometheus exporters' `:9100`; the default stays loopback-only.
 */
export function parseListenAddress(value: string): ListenAddress | null {
  const text = value.trim();
  if (text.toLowerCase() === "off") return null;
  const match = ADDRESS_RE.exec(text);
  if (!match) {
    // A bare port (`--health 9464`) is the likeliest slip: name the loopback address it most probably meant.
    const hint = /^\d{1,5}$/.test(text)
      ? `; did you mean 127.0.0.1:${text} (or :${text} for every interface)?`
      : "";
    throw new ListenAddressError(value, `expected HOST:PORT, [IPv6]:PORT or off${hint}`);
  }
  const port = Number(match[3]);
  if (port > 65_535) throw new ListenAddressError(value, `port ${port} is above 65535`);
  const host = match[1] ?? match[2] ?? "";
  return { host: host === "" ? "0.0.0.0" : host, port };
}

/** The rule `value` breaks, or null when it is a listen address (for schema refinements). */
export function listenAddressProblem(value: string): string | null {
  try {
    parseListenAddress(value);
    return null;
  } catch (error) {
    if (error instanceof ListenAddressError) return error.rule;
    throw error;
  }
}

/** Where the connection guard listens (`guardSocket`): a Unix socket path, or a loopback TCP address. */
export type GuardSocketAddress = { kind: "unix"; path: string } | { kind: "tcp"; host: string; port: number };

/**
 * `guardSocket`: `127.0.0.1:PORT` (any 127.x.x.x) or `[::1]:PORT` is loopback TCP (the Kubernetes sidecar, pm2);
 * anything else with a `/` is a Unix socket path. A non-loopback address is refused: the engine's connection
 * decides whether orders are cancelled, and anyone who can reach the port could hold it open or close it; a host
 * name is refused too (it may resolve off the host). Throws ListenAddressError's rule as a plain message.
 */
export function parseGuardSocket(value: string): GuardSocketAddress {
  const text = value.trim();
  if (text.includes("/") && !/^\[?[0-9a-fA-F:.]*\]?:\d+$/.test(text)) return { kind: "unix", path: text };
  const match = ADDRESS_RE.exec(text);
  if (!match)
    throw new Error(
      "expected a Unix socket path (with a /, e.g. /run/hl-deadman/guard.sock), 127.0.0.1:PORT or [::1]:PORT",
    );
  const port = Number(match[3]);
  if (port > 65_535 || port === 0) throw new Error(`port ${port} is not a port to listen on (1..65535)`);
  const host = match[1] ?? match[2] ?? "";
  const loopback = match[1] !== undefined ? host === "::1" : /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  if (!loopback)
    throw new Error(
      `${JSON.stringify(host || "every interface")} is not a loopback address: the guard connection decides when orders are cancelled, so only 127.0.0.1 or [::1] (same host, same pod) or a Unix socket`,
    );
  return { kind: "tcp", host, port };
}

/** The rule `value` breaks as a guard socket, or null. */
export function guardSocketProblem(value: string): string | null {
  try {
    parseGuardSocket(value);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
