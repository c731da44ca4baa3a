/**
 * Reading one value for its row's kind: text from a flag or an HL_* variable (durations need a unit, lists are
 * comma-separated), or a JSON value from the config file (durations may be plain milliseconds).
 */
import { BareDurationError, parseDuration, parseDurationText } from "../core/duration.js";
import type { ConfigOption } from "./options.js";
import { show } from "./values.js";

/** The environment variable that sets `option`, and its text (an empty variable counts as unset). */
export function readEnv(
  option: ConfigOption,
  env: NodeJS.ProcessEnv,
): { name: string; raw: string } | undefined {
  const name = option.env.find((n) => env[n] !== undefined && env[n] !== "");
  if (!name) return undefined;
  let raw = env[name]!;
  // systemd's STATE_DIRECTORY may list several directories separated by colons; the first is ours.
  if (name === "STATE_DIRECTORY") raw = raw.split(":")[0]!;
  return { name, raw };
}

/** Turns one text or JSON value into what the schema expects for the row's kind; pushes an issue when it cannot. */
export function coerce(
  s: ConfigOption,
  raw: unknown,
  origin: string,
  issues: string[],
  { fromText }: { fromText: boolean },
): unknown {
  const fail = (rule: string) => {
    issues.push(`${s.key} = ${show(raw, s.key)} (${origin}): ${rule}`);
    return undefined;
  };
  switch (s.kind) {
    case "duration": {
      if (typeof raw !== "string" && typeof raw !== "number")
        return fail("must be a duration such as 500ms, 15s, 2m, 1h, or a number of milliseconds");
      // Flags and environment need a unit (a bare 15 was silently 15 ms); config files keep numbers of ms.
      if (fromText) {
        try {
          return parseDurationText(String(raw));
        } catch (error) {
          if (error instanceof BareDurationError)
            return fail(
              `needs a unit: did you mean ${error.suggestion}? (write 500ms, 15s, 2m, 1h; 0 means off)`,
            );
          return fail("must be a duration such as 500ms, 15s, 2m or 1h");
        }
      }
      try {
        return parseDuration(raw);
      } catch {
        return fail("must be a duration such as 500ms, 15s, 2m, 1h, or a number of milliseconds");
      }
    }
    case "int":
    case "number": {
      if (!fromText) return raw;
      const text = String(raw).trim();
      const n = Number(text);
      if (text === "" || !Number.isFinite(n))
        return fail(`must be a ${s.kind === "int" ? "whole " : ""}number`);
      return n;
    }
    case "boolean": {
      if (typeof raw === "boolean") return raw;
      const text = String(raw).trim().toLowerCase();
      if (text === "true" || text === "1") return true;
      if (text === "false" || text === "0") return false;
      return fail("must be true or false");
    }
    case "list": {
      if (!fromText) return raw;
      if (Array.isArray(raw)) return raw.flatMap((v) => String(v).split(",")).map((v) => v.trim());
      return String(raw)
        .split(",")
        .map((v) => v.trim())
        .filter((v) => s.key === "dexes" || v !== "");
    }
    default:
      return raw;
  }
}
