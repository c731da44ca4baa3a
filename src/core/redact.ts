/**
 * Secrets must never reach a log line, an error message, a state file or the process title.
 * RPC URLs may carry an endpoint key as a path segment (`https://host/<ENDPOINT_KEY>/evm`) or in
 * user:pass@, a query string or a fragment. `redactUrl` keeps only what identifies the host.
 */
export function redactUrl(url: string): string {
  // (not a URL: said without a parse that throws, which costs a stack; a test's fake exchange names none)
  if (!URL.canParse(url)) return "[invalid url]";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "[invalid url]";
  }
  const segments = parsed.pathname.split("/").filter((s) => s !== "");
  // Keep well-known segments (evm, nanoreth, info, exchange, rpc, explorer) and hide everything else.
  const known = new Set(["evm", "nanoreth", "info", "exchange", "rpc", "explorer"]);
  const shown = segments.map((s) => (known.has(s) ? s : "***"));
  const path = shown.length > 0 ? `/${shown.join("/")}` : "";
  return `${parsed.protocol}//${parsed.host}${path}${parsed.search ? "?***" : ""}`;
}

/** Replaces every occurrence of each secret in `text` (used as a last line of defence on messages). */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 6) out = out.split(secret).join("***");
  }
  return out;
}

/**
 * 32 bytes of hex, with or without 0x: what a private key looks like (so do tx hashes; we mask those too in
 * messages); and a key pasted with a few digits lost or doubled (60 to 68 digits), which is still nearly all of it.
 * An address (40 digits) stays readable.
 */
const KEY_LIKE = /(?<![0-9a-fA-F])(0x)?[0-9a-fA-F]{60,68}(?![0-9a-fA-F])/g;

/**
 * Masks everything in a message that may be a secret, wherever the value came from (a flag, the environment, a
 * config file): any 64-hex-digit value (or 60 to 68: a key with digits lost or doubled) (a private key pasted in the wrong place: `--account`, `HL_ACCOUNTS`,
 * `apiUrl`, `HL_INTERVAL`...) becomes `0x…[64 hex digits masked]`, and the user:password of any URL becomes `***`.
 * Applied to every error and usage message the CLI prints (docs/security.md, "What is never shown").
 */
export function maskSecrets(text: string): string {
  return text
    .replace(
      KEY_LIKE,
      (m: string, prefix: string | undefined) =>
        `${prefix ?? ""}[${m.length - (prefix?.length ?? 0)} hex digits masked]`,
    )
    .replace(/([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/\s@"']+@/g, "$1***@");
}

/** A URL-valued setting for a message: redactUrl when it parses, else the masked text. */
export function showUrl(value: string): string {
  try {
    new URL(value);
    return redactUrl(value);
  } catch {
    return maskSecrets(value);
  }
}

/**
 * A URL part's percent-decoding, or the part as written when its escapes are malformed (`%E0` alone):
 * the WHATWG parser keeps such text, and a redaction must not throw on what the parser accepted.
 */
export function decodeUrlPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Everything in a URL that could identify a key: the URL, its path segments, user info, query. Never throws. */
export function secretsOf(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url].filter((s) => s.length >= 6);
  }
  return [
    url,
    ...parsed.pathname.split("/"),
    decodeUrlPart(parsed.username),
    decodeUrlPart(parsed.password),
    parsed.username,
    parsed.password,
    parsed.search.slice(1),
  ].filter((s) => s.length >= 6);
}
