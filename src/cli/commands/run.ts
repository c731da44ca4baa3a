import { type Command, Option } from "commander";
import { configRanBefore } from "../../app/death-room.js";
import { chooseStateDir } from "../../app/state-dir.js";
import { ConfigError } from "../../config/errors.js";
import { type LoadedConfig, loadConfig } from "../../config/load.js";
import { OPTIONS } from "../../config/options.js";
import { officialApi } from "../../config/rules.js";
import { deathRoom, deathRoomVerdict, shortestIntervalWithRoom } from "../../config/weight.js";
import type { CliDeps } from "../deps.js";
import { addGroupedConfigFlags, configFileFlag, HELP_HEADINGS, jsonFlag } from "../options.js";

export { DEMO_HEALTH_HOST, DEMO_HEALTH_PORT } from "../../app/demo-health.js";

/**
 * Every configuration flag of `run` (also taken by `config check` and `doctor`), made from the table of options and
 * shown in its topics' groups (src/cli/options.ts), --config and --json beside the general keys.
 */
export function addRunOptions(cmd: Command): Command {
  addGroupedConfigFlags(
    cmd.addOption(configFileFlag()),
    OPTIONS.map((o) => o.key),
  );
  return cmd.addOption(jsonFlag());
}

/** What `run --help` adds after the options: where the key comes from, examples (docs/cli.md). */
export const RUN_HELP_AFTER = `
The signer's key (never a flag value), the first found wins:
  --key-file FILE       a file of mode 0600 holding the key
  HL_PRIVATE_KEY        the environment (blanked in /proc/PID/environ once read)
  $CREDENTIALS_DIRECTORY/hl-private-key
                        systemd LoadCredential= (recommended)

Durations on flags and in HL_* variables need a unit: 500ms, 15s, 2m, 1h
(0 = off). Exit codes: 0 stopped cleanly, 1 runtime failure, 2 usage,
69 unavailable, 75 another daemon holds the state directory, 78 configuration.

Examples:
  hl-deadman run --sim
      a demo against an embedded simulator (no key, no real orders)
  hl-deadman config check --config /etc/hl-deadman/config.json --no-key
      validate a config file without the key (CI)
  HL_PRIVATE_KEY=0x... hl-deadman run --account 0xMASTER --interval 15s
      keep 0xMASTER's scheduled cancel armed with an agent key. This ARMS A
      REAL CANCEL of all 0xMASTER's open orders if the process stops pushing.
  hl-deadman run --config /etc/hl-deadman/config.json --json
      JSON log lines even on a terminal
`;

export function registerRun(program: Command, deps: CliDeps): void {
  const run = addRunOptions(
    program.command("run").description("run the daemon: keep the scheduled cancel armed"),
  )
    .addOption(
      new Option("--sim", "run against an embedded simulator with a demo account (what npm start runs)"),
    )
    .addHelpText("after", RUN_HELP_AFTER)
    .action(async (opts: Record<string, unknown>) => {
      await runDaemon(opts, deps);
    });
  // For run, --json means JSON log lines (and JSON error lines) even on a terminal: shown with the logs' options.
  const json = run.options.find((o) => o.long === "--json");
  if (json) {
    json.description = "JSON log lines even on a terminal (the default when stdout is not one)";
    json.helpGroup(HELP_HEADINGS.observability);
  }
}

/**
 * `run`: the options and the configuration are read here; everything else (the lock, the key, the simulator, the
 * daemon's start, the signals and the exit codes) is the service's (src/app/service.ts).
 */
async function runDaemon(opts: Record<string, unknown>, deps: CliDeps): Promise<void> {
  // The daemon's code is loaded by `run` only: the other commands start without it (src/cli/program.ts).
  const { prepareRun, runService } = await import("../../app/service.js");
  const { options, sim } = await prepareRun(opts, deps.env);
  // Nothing reaches stdout before the configuration, the lock and the key are known good (docs/cli.md).
  const loaded: LoadedConfig = loadConfig({ options, env: deps.env, cwd: deps.cwd, simulator: sim !== null });
  const state = chooseStateDir({
    configured: loaded.config.stateDir,
    cwd: deps.cwd,
    env: deps.env,
    move: true,
  });
  // The room for a death of every guarded engine at once (docs/operations.md, "The IP's weight"): a new
  // configuration without it is refused; one that ran before this version starts, loudly (an upgrade never stops
  // the pushes): on stderr now, and in the log as a config warning. The 1,200 a minute is the official API's:
  // against another host (the simulator included, as for the steady spend) it is only a warning.
  const room = deathRoom(loaded.config);
  const verdict = deathRoomVerdict(room, {
    heldBefore: await configRanBefore(state.dir, loaded.config),
    official: officialApi(loaded.config, sim !== null),
    shortest: room && !room.fits ? shortestIntervalWithRoom(loaded.config) : undefined,
  });
  if (verdict.kind === "refuse") throw new ConfigError([verdict.message], { file: loaded.file });
  if (verdict.kind === "warn") {
    deps.stderr.write(`WARNING: ${verdict.message}\n`);
    loaded.warnings.push(verdict.message);
  }
  await runService({
    loaded,
    stateDir: state.dir,
    stateLegacy: state.legacy,
    sim,
    json: opts.json === true,
    env: deps.env,
    cwd: deps.cwd,
    clock: deps.clock,
    // The simulator is loaded only for --sim.
    startSimulator: async (network) => {
      const { startSimulator } = await import("../../sim/server.js");
      return startSimulator({ demo: true, network });
    },
  });
}
