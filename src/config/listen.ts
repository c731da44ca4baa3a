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
