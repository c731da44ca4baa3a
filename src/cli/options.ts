import { type Command, Option } from "commander";

/** The parsed values of addServiceOptions, as commander hands them to an action. */
export type ServiceOptions = {
  config?: string;
  network?: string;
  apiUrl?: string;
  rpcUrl?: string;
  json?: boolean;
  logLevel?: string;
};

/** Options shared by every command that talks to the service (docs/cli-contract.md, "Options shared by every command ..."). */
export function addServiceOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(
      new Option("--network <name>", "mainnet or testnet (env HL_NETWORK)").choices(["mainnet", "testnet"]),
    )
    .addOption(new Option("--api-url <url>", "trading API base URL (env HL_API_URL)"))
    .addOption(new Option("--rpc-url <url>", "HyperEVM JSON-RPC endpoint, never logged (env HL_RPC_URL)"))
    .addOption(new Option("--json", "machine-readable output: one JSON document on stdout"))
    .addOption(
      new Option("--log-level <level>", "pino level (env HL_LOG_LEVEL)").choices([
        "fatal",
        "error",
        "warn",
        "info",
        "debug",
        "trace",
        "silent",
      ]),
    );
}

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
