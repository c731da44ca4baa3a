import type { Command } from "commander";
import type { CliDeps } from "../deps.js";
import { notBuilt } from "../not-built.js";

export function registerSim(program: Command, _deps: CliDeps): void {
  program
    .command("sim")
    .description("the simulator as a server; prints its API and RPC URLs")
    .action(notBuilt("sim"));
}
