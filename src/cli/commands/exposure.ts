import type { Command } from "commander";
import type { CliDeps } from "../deps.js";
import { notBuilt } from "../not-built.js";
import { addServiceOptions } from "../options.js";

export function registerExposure(program: Command, _deps: CliDeps): void {
  addServiceOptions(
    program.command("exposure").description("one batchClearinghouseStates query, shown as a table"),
  ).action(notBuilt("exposure"));
}
