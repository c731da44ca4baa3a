import { BaseError } from "./errors/base.js";

export class DurationError extends BaseError {
  override name = "DurationError";
  constructor(input: string) {
    super(`Invalid duration ${JSON.stringify(input)}.`, {
      metaMessages: ["Write a duration as 500ms, 15s, 2m, 1h, or a plain number of milliseconds."],
    });
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `15s`, `2m`, `1h`, `1d`, `1.5s` or a plain integer of milliseconds. */
export function parseDuration(input: string | number): number {
  if (typeof input === "number") {
    if (Number.isFinite(input) && input >= 0) return Math.round(input);
    throw new DurationError(String(input));
  }
  const text = input.trim();
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text);
  if (!match) throw new DurationError(input);
  const value = Number(match[1]);
  const unit = UNITS[match[2] ?? "ms"]!;
  const ms = Math.round(value * unit);
  if (!Number.isSafeInteger(ms)) throw new DurationError(input);
  return ms;
}

/** Formats milliseconds compactly for people: 1500 -> "1.5s", 60000 -> "1m", 90061000 -> "1d1h1m1s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${sign}${rest}ms`;
  if (rest < 60_000) return `${sign}${Number((rest / 1000).toFixed(3))}s`;
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return sign + parts.join("");
}

/**
 * A duration from a flag or an environment variable: the unit is required (a bare `15` was silently 15 ms), except
 * for `0` (off). Throws DurationError with "did you mean 15s?" for a bare number. Config files keep plain numbers
 * of milliseconds (docs/cli.md, "Durations").
 */
export function parseDurationText(input: string): number {
  const text = input.trim();
  if (/^\d+(\.\d+)?$/.test(text) && Number(text) !== 0) throw new BareDurationError(input);
  return parseDuration(text);
}

/** A bare number where a duration with a unit is needed. */
export class BareDurationError extends DurationError {
  override name = "BareDurationError";
  readonly suggestion: string;
  constructor(input: string) {
    super(input);
    this.suggestion = `${input.trim()}s`;
  }
}
