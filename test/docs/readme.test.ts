/**
 * What the README (and docs/getting-started.md, where its detail moved) tells a trader is what the program does:
 * - every `hl-deadman` command in a code block names a real command and only flags that command takes, each flag
 *   that needs a value given one (the checks `--help` would make, against the program's own definition); every
 *   `npm` command is a script of package.json;
 * - the figures it quotes are the code's: the push interval and deadline defaults, the 10 triggers a UTC day, the
 *   exchange's $1,000,000 requirement and the refusal's words, the actions a day, the status page's address, the
 *   exit codes, the Debian packages `npm test` installs and the way to decline them;
 * - the quick start is three lines with `npm ci && npm start` and `npm test`, and the build details moved out.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Command, Option } from "commander";
import { describe, expect, test } from "vitest";
import { DEMO_HEALTH_PORT } from "../../src/cli/commands/run.js";
import { effectiveExplorerUrl } from "../../src/config/networks.js";
import { OPTIONS } from "../../src/config/options.js";
import { actionsPerDay } from "../../src/config/rules.js";
import { ExitCode } from "../../src/core/exit-codes.js";
import { classifyExchangeError } from "../../src/protocol/hyperliquid/errors.js";
import { demoUser } from "../../src/sim/demo.js";
import { VOLUME_GATE_USD } from "../../src/sim/exchange.js";
import { ROOT } from "../helpers/process.js";
import { quietProgram } from "./generated.js";
import { codeBlocks, hlDeadmanArgs, sectionOf, shellCommands } from "./shell.js";

const read = (f: string) => readFileSync(path.join(ROOT, f), "utf8");
const readme = read("README.md");
const gettingStarted = read("docs/getting-started.md");
const squash = (s: string) => s.replace(/\s+/g, " ");
/** milliseconds as the README writes them: "15 s" */
const seconds = (ms: unknown) => `${(ms as number) / 1000} s`;
const defaults = Object.fromEntries(OPTIONS.map((o) => [o.key, o.default])) as Record<string, unknown>;

// ---------------------------------------------------------------- commands

const program = quietProgram();

/** What `hl-deadman ARGS` would refuse before doing anything (commander's checks), or null. */
function usageProblem(args: readonly string[]): string | null {
  let cmd: Command = program;
  const options: Option[] = [...program.options];
  let i = 0;
  for (; i < args.length; i++) {
    const sub = cmd.commands.find((c) => c.name() === args[i] || c.aliases().includes(args[i]!));
    if (!sub) break;
    cmd = sub;
    options.push(...sub.options);
  }
  if (cmd === program && !args.some((a) => a === "--help" || a === "-v" || a === "--version"))
    return `no command: ${args.join(" ")}`;
  if (cmd.commands.length > 0 && cmd.options.length === 0 && i < args.length && !args[i]!.startsWith("-"))
    return `${cmd.name()} has no subcommand ${args[i]}`;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("-") || arg === "-") continue;
    const [flag, inline] = arg.split("=", 2) as [string, string | undefined];
    if (flag === "--help" || flag === "-h") continue;
    const option = options.find((o) => o.long === flag || o.short === flag);
    if (!option) return `${cmd.name()}: unknown option ${flag}`;
    if (option.required && inline === undefined) {
      const value = args[i + 1];
      if (value === undefined || /^--?[a-z]/.test(value)) return `${cmd.name()}: ${flag} needs a value`;
      i++;
    }
  }
  return null;
}

const documents = { "README.md": readme, "docs/getting-started.md": gettingStarted };
const invocations = Object.entries(documents).flatMap(([doc, text]) =>
  codeBlocks(text)
    .filter((b) => b.lang === "sh" || b.lang === "")
    .flatMap((b) => shellCommands(b.text))
    .map((words) => ({ doc, words, args: hlDeadmanArgs(words) })),
);

describe("the README's commands", () => {
  test("default: the checker refuses what the program would refuse (it can fail)", () => {
    expect(usageProblem(["doctor", "--probe", "--config", "c.json"])).toBeNull();
    expect(usageProblem(["doctor", "--prob"])).toBe("doctor: unknown option --prob");
    expect(usageProblem(["run", "--config"])).toBe("run: --config needs a value");
    expect(usageProblem(["evm", "blocks"])).toBe("evm has no subcommand blocks");
    expect(usageProblem(["start"])).toBe("no command: start");
  });

  test("behavior: every hl-deadman command in a code block parses against the CLI", () => {
    const commands = invocations.filter((c) => c.args !== null);
    expect(commands.length).toBeGreaterThanOrEqual(7);
    expect(commands.filter((c) => c.doc === "README.md").map((c) => c.args![0])).toEqual(
      expect.arrayContaining(["doctor", "--help"]),
    );
    for (const c of commands) expect(usageProblem(c.args!), `${c.doc}: ${c.words.join(" ")}`).toBeNull();
  });

  test("behavior: every npm command is npm's own or a script of package.json", () => {
    const scripts = Object.keys((JSON.parse(read("package.json")) as { scripts: object }).scripts);
    const npm = invocations.filter(
      (c) => c.words[0] === "npm" || (c.words[0] === "sudo" && c.words[1] === "npm"),
    );
    expect(npm.length).toBeGreaterThan(3);
    for (const c of npm) {
      const words = c.words[0] === "sudo" ? c.words.slice(1) : c.words;
      const [, verb, name] = words;
      if (verb === "run") expect(scripts, words.join(" ")).toContain(name);
      else if (verb === "start" || verb === "test") expect(scripts, words.join(" ")).toContain(verb);
      else expect(["ci", "install", "pack", "prune"], words.join(" ")).toContain(verb);
    }
  });
});

// ---------------------------------------------------------------- figures

describe("the README's figures are the code's", () => {
  const orders = sectionOf(readme, "What happens to my orders");

  test("default: interval and deadline, 10 fires a UTC day, actions a day", () => {
    expect(readme).toContain(`every ${seconds(defaults.interval)} while`);
    expect(readme).toContain(`(${seconds(defaults.deadline)} after the last push`);
    expect(orders).toContain(`**${defaults.triggerLimit} fires a UTC day.**`);
    expect(orders).toContain(`one of the account's ${defaults.triggerLimit} triggers`);
    expect(orders).toContain("resets at 00:00 UTC");
    const perDay = actionsPerDay(defaults.interval as number).toLocaleString("en-US");
    expect(orders).toContain(`(${perDay} a day at ${seconds(defaults.interval)})`);
  });

  test("default: the exchange's $1M requirement, and its refusal in the exchange's words", () => {
    expect(orders).toContain(`less than $${VOLUME_GATE_USD.toLocaleString("en-US")} in total`);
    const quoted = /`(Cannot set scheduled cancel time[^`]*?)…`/.exec(squash(orders))?.[1];
    expect(quoted, "the refusal quoted").toBeDefined();
    expect(quoted).toBe(
      `Cannot set scheduled cancel time until enough volume traded. Required: $${VOLUME_GATE_USD}. Traded: $`,
    );
    expect(classifyExchangeError(`${quoted}123.`).kind).toBe("volume_gate");
    expect(orders).toContain("`volume_gate`");
    expect(squash(orders)).toContain(
      `asks again only every ${(defaults.permanentRecheckInterval as number) / 60_000} min`,
    );
    // every order, reduce-only stops included
    expect(orders).toContain("**Every open order of the account is cancelled at the deadline**");
    expect(orders).toContain("reduce-only stops included");
  });

  test("default: the status page's address and doctor's exit code", () => {
    expect(readme).toContain(`http://127.0.0.1:${DEMO_HEALTH_PORT}/`);
    expect(
      JSON.parse(codeBlocks(sectionOf(readme, "Next to your engine")).find((b) => b.lang === "json")!.text)
        .health,
    ).toBe(`127.0.0.1:${DEMO_HEALTH_PORT}`);
    expect(squash(readme)).toContain(`changes nothing else. Exit ${ExitCode.ok} when all pass`);
  });

  test("default: the exit codes listed are the program's, every one", () => {
    const sentence = squash(gettingStarted).match(/Exit codes: (.*?); all of them in/)?.[1];
    expect(sentence).toBeDefined();
    const listed = [...sentence!.matchAll(/(?:^|, )(\d+) /g)].map((m) => Number(m[1]));
    expect(listed.sort((a, b) => a - b)).toEqual(Object.values(ExitCode).sort((a, b) => a - b));
  });

  test("default: the quick start is three lines with npm ci && npm start and npm test; the build details moved out", () => {
    const quick = codeBlocks(sectionOf(readme, "Quick start"))[0]!;
    const lines = quick.text.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^npm ci && npm start\b/);
    expect(lines[1]).toMatch(/^npm test\b/);
    expect(readme).not.toMatch(/\b130\b/);
    expect(readme).not.toContain("build-stamp");
    expect(read("docs/development.md")).toContain("then exits **130**");
    // the trader's questions come first
    expect(readme.indexOf("## What happens to my orders")).toBeLessThan(readme.indexOf("## Quick start"));
    expect(readme.indexOf("## Quick start")).toBeLessThan(readme.indexOf("## Next to your engine"));
  });

  test("default: the Debian packages and the way to decline them are scripts/test-deps.sh's", () => {
    const script = read("scripts/test-deps.sh");
    const installed = [...script.matchAll(/want ([a-z0-9-]+) "/g)].map((m) => m[1]!).sort();
    const table = sectionOf(readme, "Quick start")
      .split("\n")
      .filter((l) => l.startsWith("| `"))
      .flatMap((l) => [...l.split("|")[1]!.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!))
      .sort();
    expect(table).toEqual(installed);
    expect(script).toMatch(/HL_DEADMAN_TEST_DEPS:-}" = "print"/);
    expect(readme).toContain("HL_DEADMAN_TEST_DEPS=print npm test");
  });

  test("default: the README is well under its old 2,480 words", () => {
    expect(readme.split(/\s+/).filter(Boolean).length).toBeLessThan(1_300);
  });
});

describe("docs/getting-started.md's rehearsal is what the simulator does", () => {
  test("default: the TRIGGER line's count is the demo account's open orders", () => {
    const quoted = /TRIGGER 0xf069… cancelled\s+(\d+) open order\(s\)/.exec(gettingStarted);
    expect(quoted, "the rehearsal quotes the simulator's TRIGGER line").not.toBeNull();
    expect(Number(quoted![1])).toBe(demoUser("0x0000000000000000000000000000000000000001").orders?.length);
  });

  test("behavior: with a custom --api-url and no --explorer-url there is no explorer, as the rehearsal says", () => {
    expect(
      effectiveExplorerUrl({ ...defaults, apiUrl: "http://127.0.0.1:8080" } as Parameters<
        typeof effectiveExplorerUrl
      >[0]),
    ).toBeNull();
    expect(gettingStarted).toContain("no record is read at all");
    expect(gettingStarted).not.toContain("reach for the mainnet explorer");
  });
});
