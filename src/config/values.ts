/** Small helpers on configuration values: dotted paths, and how a value is shown in a message. */
import { maskSecrets, showUrl } from "../core/redact.js";
import { OPTIONS } from "./options.js";

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function getPath(obj: Record<string, unknown>, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    // Arrays too: a schema issue at `accounts.1` must show the bad element, not `undefined`.
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(cur[part])) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** URL-valued keys (by their type, options.ts): shown redacted (credentials, endpoint-key segments). */
const URL_KEYS = new Set(OPTIONS.filter((o) => o.url).map((o) => o.key));

/**
 * A value for a message: key-like values and URL credentials masked before any truncation (docs/security.md,
 * "What is never shown"), URL keys redacted.
 */
export const show = (value: unknown, key?: string): string => {
  if (key !== undefined && URL_KEYS.has(key) && typeof value === "string")
    return JSON.stringify(showUrl(value));
  const raw = JSON.stringify(value);
  const text = raw === undefined ? String(value) : maskSecrets(raw);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};
