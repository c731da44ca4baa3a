/**
 * Secrets must never reach a log line, an error message, a state file or the process title.
 * RPC URLs may carry an endpoint key as a path segment (`https://host/<ENDPOINT_KEY>/evm`) or in
 * user:pass@, a query string or a fragment. `redactUrl` keeps only what identifies the host.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "[invalid url]";
  }
  const segments = parsed.pathname.split("/").filter((s) => s !== "");
  // Keep well-known trailing segments (evm, nanoreth, info, exchange) and hide everything else.
  const known = new Set(["evm", "nanoreth", "info", "exchange", "rpc"]);
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
