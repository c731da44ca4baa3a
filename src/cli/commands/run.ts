import type { Command } from "commander";
import type { CliDeps } from "../deps.js";
import { notBuilt } from "../not-built.js";
import { addServiceOptions } from "../options.js";

export function registerRun(program: Command, _deps: CliDeps): void {
  addServiceOptions(
    program.command("run").description("run the daemon: keep the scheduled cancel armed"),
  ).action(notBuilt("run"));
}
