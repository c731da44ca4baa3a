/**
 * Flags made from the one table of options (src/config/options.ts): each configuration key's flag, placeholder,
 * choices and help (its description, its environment variable and its default, formatted by formatDefault) come
 * from its row; nothing here repeats a name, a default or a description.
 */
import { type Command, Option } from "commander";
import {
  type ConfigOption,
  formatDefault,
  OPTION_TOPICS,
  OPTIONS,
  type OptionTopic,
} from "../config/options.js";

/** The parsed values of addServiceOptions, as commander hands them to an action. */
export type ServiceOptions = {
  config?: string;
  network?: string;
  apiUrl?: string;
  rpcUrl?: string;
  json?: boolean;
  logLevel?: string;
};

/** The configuration keys every command that talks to the service takes (README.md, "Commands"; docs/operations.md, "Options"). */
export const SERVICE_KEYS: readonly string[] = ["network", "apiUrl", "rpcUrl", "logLevel"];

/**
 * The help line of a configuration flag: the row's description for a terminal (no backticks, no "(ms)": flags take
 * a unit), then whether it repeats, its environment variable(s) and its default.
 */
export function flagHelp(option: ConfigOption): string {
  const text = option.description
    .replaceAll("`", "")
    .replaceAll(" (ms)", "")
    .replace(/\.$/, "")
    // "Push cadence" -> "push cadence", "HyperEVM ..." and "HOST:PORT ..." kept
    .replace(/^[A-Z](?=[a-z]*[\s,.;:])/, (c) => c.toLowerCase());
  const def = formatDefault(option);
  const notes = [
    option.kind === "list" ? "repeatable" : undefined,
    `env ${option.env.join(", then ")}`,
    def === undefined ? undefined : `default ${def === "" ? '""' : def}`,
  ].filter((n) => n !== undefined);
  return `${text} (${notes.join("; ")})`;
}

/** The placeholder commander shows: `<duration>`, `<addr>`, `<host:port|off>`; none for a boolean. */
function placeholder(option: ConfigOption): string {
  if (option.kind === "boolean") return "";
  return ` <${option.placeholder.toLowerCase()}>`;
}

/** The commander option of one configuration key. */
export function configFlag(option: ConfigOption): Option {
  const flag = new Option(`--${option.flag}${placeholder(option)}`, flagHelp(option));
  if (option.choices) flag.choices(option.choices);
  if (option.kind === "list") flag.argParser(collect);
  return flag;
}

/** Adds the flags of `keys` (configuration keys, dotted), in the table's order. */
export function addConfigFlags(cmd: Command, keys: readonly string[]): Command {
  for (const option of OPTIONS.filter((o) => keys.includes(o.key))) cmd.addOption(configFlag(option));
  return cmd;
}

/**
 * The heading of each topic's group in the help of a command that takes every configuration key (`run`, `config
 * check`, `doctor`), in OPTION_TOPICS' order. The general keys have none: they stay in the command's own first
 * group (`Options:`), beside --config, --json and --help.
 */
export const HELP_HEADINGS: Readonly<Record<Exclude<OptionTopic, "general">, string>> = {
  switch: "The switch (which accounts, how each one's cancel is kept armed):",
  guard: "The engine guard:",
  escalation: "Escalation (closing positions while the engine is down):",
  exposure: "Exposure:",
  chain: "The chain watch:",
  fleet: "Fleet and replicas (one set of accounts, several daemons):",
  observability: "Observability:",
};

/**
 * Adds the flags of `keys` group by group: the general keys first (in the command's current group), then each
 * topic's under its heading, each group in the table's order. Commander shows the groups in the order their first
 * flag was added, so this order is the help's.
 */
export function addGroupedConfigFlags(cmd: Command, keys: readonly string[]): Command {
  for (const topic of OPTION_TOPICS)
    for (const option of OPTIONS.filter((o) => o.topic === topic && keys.includes(o.key))) {
      const flag = configFlag(option);
      if (topic !== "general") flag.helpGroup(HELP_HEADINGS[topic]);
      cmd.addOption(flag);
    }
  return cmd;
}

/** Options shared by every command that talks to the service (README.md, "Commands": every command that talks to the service). */
export function addServiceOptions(cmd: Command): Command {
  cmd.addOption(configFileFlag());
  addConfigFlags(cmd, SERVICE_KEYS);
  return cmd.addOption(jsonFlag());
}

/** --config: the config file, read under the environment and the flags. */
export const configFileFlag = (): Option => new Option("--config <file>", "JSON config file (env HL_CONFIG)");

/** --json: one JSON document on stdout (`run` gives it its own meaning: JSON log lines). */
export const jsonFlag = (): Option =>
  new Option("--json", "machine-readable output: one JSON document on stdout");

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
