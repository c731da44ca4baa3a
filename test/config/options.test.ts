/**
 * Every row of the table of options (src/config/options.ts) shows up, with the same default and the same words,
 * everywhere it is derived: the flag in `run --help` (with its environment variable and default), the flag and the
 * HL_* variable read by the loader (through commander, in-process), the entry of the JSON schema, and the row of the
 * option table in docs/operations.md. Defaults are compared as values (a help's `15s` is parsed back), so a wrong
 * default in any rendering fails here.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, expect, test } from "vitest";
import { RUN_HELP_AFTER } from "../../src/cli/commands/run.js";
import { runCli } from "../../src/cli/program.js";
import { configJsonSchema } from "../../src/config/json-schema.js";
import { type ConfigOption, DEFAULTS, OPTIONS } from "../../src/config/options.js";
import { parseDurationText } from "../../src/core/duration.js";
import { optionTableRows } from "../docs/generated.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

function sink(): Writable & { text: string; columns: number } {
  const out = new Writable({
    write(chunk, _enc, done) {
      out.text += String(chunk);
      done();
    },
  }) as Writable & { text: string; columns: number };
  out.text = "";
  out.columns = 120;
  return out;
}

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(["node", "hl-deadman", ...argv], {
    stdout,
    stderr,
    env,
    cwd: ROOT,
    clock: { now: () => Date.UTC(2026, 0, 1) },
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** `run --help`'s options, by long flag: the text after the flag column, wrapped lines joined. */
async function helpEntries(): Promise<Map<string, string>> {
  const { code, stdout } = await cli(["run", "--help"]);
  expect(code).toBe(0);
  const entries = new Map<string, string>();
  let current: string | undefined;
  // The option groups only, from `Options:` to the text after them (which shows `--key-file FILE` again, as prose).
  const section = stdout.slice(stdout.indexOf("Options:\n"), stdout.indexOf(RUN_HELP_AFTER.trim()));
  for (const line of section.split("\n")) {
    const head = /^ {2}(?:-\w, )?(--[a-z-]+)(?: <[^>]+>)?\s+(.*)$/.exec(line);
    if (head) {
      current = head[1]!;
      entries.set(current, head[2]!);
    } else if (current && /^\s{8,}\S/.test(line)) {
      entries.set(current, `${entries.get(current)} ${line.trim()}`);
    } else current = undefined;
  }
  return entries;
}

/** A default as people read it (`15s`, `[""]`, `127.0.0.1:9464`), back to the value it stands for. */
function readBack(text: string, option: ConfigOption): unknown {
  switch (option.kind) {
    case "duration":
      return parseDurationText(text);
    case "int":
    case "number":
      return Number(text);
    case "boolean":
      return text === "true" ? true : text === "false" ? false : text;
    case "list":
      return JSON.parse(text);
    default:
      return text;
  }
}

/** The JSON-schema entry of a key (nested keys under their group's properties). */
function schemaEntry(key: string): Record<string, unknown> | undefined {
  let props = (configJsonSchema() as { properties: Record<string, Record<string, unknown>> }).properties;
  const parts = key.split(".");
  for (const part of parts.slice(0, -1))
    props = props[part]?.properties as Record<string, Record<string, unknown>>;
  return props[parts.at(-1)!];
}

/** docs/operations.md's option table (the committed file), by key: [key, flag, environment, default, meaning]. */
const docRows = (): Map<string, string[]> =>
  optionTableRows(readFileSync(path.join(ROOT, "docs/operations.md"), "utf8"));

/** A valid value for the flag or variable, other than the default, and what the loader makes of it. */
function sample(option: ConfigOption): { text: string | undefined; value: unknown } {
  const address = "0x1111111111111111111111111111111111111111";
  if (option.kind === "boolean") return { text: undefined, value: true };
  if (option.choices) {
    const other = option.choices.find((c) => c !== option.default)!;
    return { text: other, value: other };
  }
  // guardConnectGrace has no default of its own (deadline - interval): a value within its bounds
  if (option.key === "guardConnectGrace") return { text: "20s", value: 20_000 };
  if (option.kind === "duration") {
    const ms = 2 * (option.default as number);
    return { text: `${ms}ms`, value: ms };
  }
  // orderFeedAccounts' default is its maximum (the exchange's 10 users per IP): a value below it
  if (option.key === "orderFeedAccounts") return { text: "5", value: 5 };
  if (option.kind === "int" || option.kind === "number") {
    const n = option.default === undefined ? 3 : 2 * (option.default as number);
    return { text: String(n), value: n };
  }
  const one =
    option.metavar === "ADDR"
      ? address
      : option.metavar === "URL"
        ? "http://127.0.0.1:1/x"
        : option.metavar === "DIR" || option.metavar === "FILE"
          ? "/tmp/hl-deadman-options-test"
          : option.key === "health"
            ? "127.0.0.1:9465"
            : option.key === "coordinate"
              ? "etcd://127.0.0.1:2379/x"
              : option.metavar === "SOCKET"
                ? "/tmp/hl-deadman-options-test.sock"
                : "xyz";
  return { text: one, value: option.kind === "list" ? [one] : one };
}

/** What a key needs beside it to pass the cross-field rules. */
const ESCALATION_NEEDS = {
  flags: ["--on-engine-down", "cancel", "--escalate-after", "1m"],
  env: { HL_ON_ENGINE_DOWN: "cancel", HL_ESCALATE_AFTER: "1m" },
};
const NEEDS: Record<string, { flags: string[]; env: NodeJS.ProcessEnv }> = {
  escalateAccounts: ESCALATION_NEEDS,
  actAlone: {
    flags: ["--coordinate", "etcd://127.0.0.1:2379"],
    env: { HL_COORDINATE: "etcd://127.0.0.1:2379" },
  },
  guardConnectGrace: {
    flags: ["--guard-socket", "/run/hl-deadman/guard.sock"],
    env: { HL_GUARD_SOCKET: "/run/hl-deadman/guard.sock" },
  },
  watchAddresses: {
    flags: ["--rpc-url", "http://127.0.0.1:1/evm"],
    env: { HL_RPC_URL: "http://127.0.0.1:1/evm" },
  },
};

const at = (obj: unknown, key: string) =>
  key.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], obj);

describe("the table of options, and everything derived from it", () => {
  test("behavior: the options shown redacted as URLs are those whose type is a URL (or a list of URLs)", () => {
    expect(OPTIONS.filter((o) => o.url).map((o) => o.key)).toEqual([
      "apiUrl",
      "rpcUrl",
      "explorerUrl",
      "guardUrl",
      "notifyUrls",
    ]);
  });

  test("default: every row has its flag in run --help, with its environment variable and its default", async () => {
    const help = await helpEntries();
    for (const option of OPTIONS) {
      const entry = help.get(`--${option.flag}`);
      expect(entry, `run --help lists --${option.flag}`).toBeDefined();
      const text = entry!.replace(/\s+/g, " ");
      const words = option.description
        .replaceAll("`", "")
        .replaceAll(" (ms)", "")
        .replace(/\.$/, "")
        .replace(/\s+/g, " ");
      expect(text.toLowerCase().startsWith(words.toLowerCase()), `--${option.flag}: "${text}"`).toBe(true);
      expect(text, option.key).toContain(`env ${option.env.join(", then ")}`);
      const shown = /; default (\S+)\)/.exec(text)?.[1];
      const json = schemaEntry(option.key);
      if (json?.default === undefined) expect(shown, `--${option.flag} shows no default`).toBeUndefined();
      else if (Array.isArray(json.default) && json.default.length === 0) expect(shown).toBeUndefined();
      else expect(readBack(shown ?? "(none)", option), `--${option.flag}'s default`).toEqual(json.default);
    }
  });

  test("default: every row's JSON-schema entry has the row's description and default (DEFAULTS)", () => {
    for (const option of OPTIONS) {
      const json = schemaEntry(option.key);
      expect(json, option.key).toBeDefined();
      expect(json!.description, option.key).toBe(option.description);
      expect(json!.default, option.key).toEqual(at(DEFAULTS, option.key));
    }
  });

  test("default: every row has its row in docs/operations.md, with the same flag, variables, default and words", () => {
    const rows = docRows();
    expect([...rows.keys()]).toEqual(OPTIONS.map((o) => o.key));
    for (const option of OPTIONS) {
      const [, flag, env, def, meaning] = rows.get(option.key)!;
      expect(flag, option.key).toMatch(new RegExp(`^\`--${option.flag}[ \`]`));
      for (const name of option.env) expect(env, option.key).toContain(`\`${name}\``);
      expect(meaning, option.key).toBe(option.description.replaceAll("|", "\\|"));
      const json = schemaEntry(option.key)!;
      if (def === "—")
        expect(json.default === undefined || (Array.isArray(json.default) && json.default.length === 0)).toBe(
          true,
        );
      else
        expect(readBack(def!.replaceAll("`", ""), option), `${option.key}'s default`).toEqual(json.default);
    }
  });

  test("behavior: every row's flag and environment variable set the key (commander and the loader, in-process)", async () => {
    for (const option of OPTIONS) {
      const { text, value } = sample(option);
      const needs = NEEDS[option.key] ?? { flags: [], env: {} };
      const byFlag = await cli([
        "config",
        "check",
        "--no-key",
        "--json",
        ...needs.flags,
        `--${option.flag}`,
        ...(text === undefined ? [] : [text]),
      ]);
      expect(byFlag.stderr, `--${option.flag}`).toBe("");
      const flagged = JSON.parse(byFlag.stdout) as { config: unknown; sources: Record<string, string> };
      expect(flagged.sources[option.key]).toBe(`flag --${option.flag}`);
      if (option.metavar !== "URL") expect(at(flagged.config, option.key), `--${option.flag}`).toEqual(value);

      const name = option.env[0]!;
      const byEnv = await cli(["config", "check", "--no-key", "--json"], {
        ...needs.env,
        [name]: text ?? "true",
      });
      expect(byEnv.stderr, name).toBe("");
      const envied = JSON.parse(byEnv.stdout) as { config: unknown; sources: Record<string, string> };
      expect(envied.sources[option.key]).toBe(`env ${name}`);
      if (option.metavar !== "URL") expect(at(envied.config, option.key), name).toEqual(value);
    }
  });
});
