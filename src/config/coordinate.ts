/**
 * The `coordinate` option (docs/operations.md, "High availability"): `etcd://HOST:PORT[,HOST:PORT...][/PREFIX]`,
 * the etcd cluster the replicas of one account set elect their lease holder in. Parsed here once: the config
 * schema refuses a bad value with the rule (exit 78), and the coordination component connects with the result.
 */

export type CoordinateTarget = {
  /** `http://HOST:PORT` for each member, in the order given */
  endpoints: string[];
  /** the key prefix the replicas' election lives under (default `hl-deadman`), without slashes at its ends */
  prefix: string;
};

export const DEFAULT_COORDINATE_PREFIX = "hl-deadman";

const HOST = String.raw`(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)`;
const MEMBER = new RegExp(String.raw`^(${HOST}):(\d{1,5})$`);
const PREFIX = /^[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/;

/** What is wrong with a `coordinate` value, or null when it is one (the rule, without the value). */
export function coordinateProblem(value: string): string | null {
  const parsed = parseCoordinate(value);
  return typeof parsed === "string" ? parsed : null;
}

/** `etcd://h1:2379,h2:2379/prefix` → its endpoints and prefix, or the rule it breaks (a string). */
export function parseCoordinate(value: string): CoordinateTarget | string {
  const text = value.trim();
  const scheme = "etcd://";
  if (!text.toLowerCase().startsWith(scheme))
    return "must start with etcd:// (etcd://HOST:PORT[,HOST:PORT...][/PREFIX]; TLS and authentication are not supported: reach etcd over a private network)";
  const rest = text.slice(scheme.length);
  const slash = rest.indexOf("/");
  const members = (slash < 0 ? rest : rest.slice(0, slash)).split(",");
  const rawPrefix = slash < 0 ? "" : rest.slice(slash + 1).replace(/\/+$/, "");
  if (members.length > 9) return "at most 9 etcd members";
  const endpoints: string[] = [];
  for (const member of members) {
    const m = MEMBER.exec(member);
    if (!m) return `member ${JSON.stringify(member.slice(0, 100))} is not HOST:PORT`;
    const port = Number(m[2]);
    if (port < 1 || port > 65_535) return `member ${member}: port ${port} is not 1-65535`;
    endpoints.push(`http://${m[1]}:${port}`);
  }
  if (rawPrefix !== "" && (rawPrefix.length > 100 || !PREFIX.test(rawPrefix)))
    return "the prefix must be up to 100 characters of letters, digits, '.', '_', '-' and '/'";
  return { endpoints, prefix: rawPrefix === "" ? DEFAULT_COORDINATE_PREFIX : rawPrefix };
}
