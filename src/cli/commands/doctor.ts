import { type Command, Option } from "commander";
import { doctorHelpText } from "../../app/doctor/catalogue.js";
import { loadConfig } from "../../config/load.js";
import type { CliDeps } from "../deps.js";
import { stateDirOf } from "../state-dir.js";
import { addRunOptions } from "./run.js";

/**
 * `hl-deadman doctor [--probe] [--json]`: the pre-flight check (docs/cli.md, "doctor"). Takes `run`'s flags and
 * configuration, checks what a go-live needs and changes nothing; `--probe` sends one signed noop per signer.
 * Exits 0 when every check passes (warnings included), else the most severe failure's code.
 */
export function registerDoctor(program: Command, deps: CliDeps): void {
  // Its own option first, then run's (the configuration it checks), then the checks and the exit codes.
  const command = program
    .command("doctor")
    .description("pre-flight check of everything a go-live needs, per account; changes nothing")
    .optionsGroup("Options of doctor:")
    .addOption(
      new Option(
        "--probe",
        "also send one signed noop per signer: proves the network (it changes nothing but one unit of the address budget)",
      ),
    )
    .optionsGroup("The configuration it checks (run's options):");
  addRunOptions(command)
    .addHelpText("after", doctorHelpText())
    .action(async (opts: Record<string, unknown>) => {
      const loaded = loadConfig({ options: opts, env: deps.env, cwd: deps.cwd });
      // The checks (the clients, the key, the guard) are loaded when doctor runs (src/cli/program.ts).
      const { exitCodeOf, formatTable, runDoctor, summaryLine } = await import("../../app/doctor/index.js");
      const results = await runDoctor({
        loaded,
        stateDir: stateDirOf(loaded.config, deps),
        env: deps.env,
        cwd: deps.cwd,
        clock: deps.clock,
        probe: opts.probe === true,
      });
      const code = exitCodeOf(results);
      if (opts.json)
        deps.stdout.write(
          `${JSON.stringify({ ok: code === 0, exitCode: code, probe: opts.probe === true, checks: results }, null, 2)}\n`,
        );
      else deps.stdout.write(`${formatTable(results)}\n\n${summaryLine(results)}\n`);
      process.exitCode = code;
    });
}
