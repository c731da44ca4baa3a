import type { Command } from "commander";
import type { CliDeps } from "../deps.js";
import { notBuilt } from "../not-built.js";
import { addServiceOptions } from "../options.js";

export function registerSchedule(program: Command, _deps: CliDeps): void {
  addServiceOptions(program.command("schedule").description("one push of the scheduled cancel")).action(
    notBuilt("schedule"),
  );
  addServiceOptions(program.command("unschedule").description("remove the scheduled cancel")).action(
    notBuilt("unschedule"),
  );
}
