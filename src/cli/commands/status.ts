import type { Command } from "commander";
import type { CliDeps } from "../deps.js";
import { notBuilt } from "../not-built.js";

export function registerStatus(program: Command, _deps: CliDeps): void {
  program
    .command("status")
    .description("the local trigger ledger and armed deadline of each account")
    .action(notBuilt("status"));
}
