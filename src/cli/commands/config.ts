import type { Command } from "commander";
import type { CliDeps } from "../deps.js";
import { notBuilt } from "../not-built.js";

export function registerConfig(program: Command, _deps: CliDeps): void {
  const config = program.command("config").description("configuration tools");
  config
    .command("check")
    .description("validate the effective configuration, print it with secrets masked")
    .action(notBuilt("config check"));
}
