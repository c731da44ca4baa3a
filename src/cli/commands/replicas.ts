/**
 * `hl-deadman replicas list|forget` (docs/cli.md; docs/operations.md, "High availability"): the replicas'
 * membership in etcd. A coordinated stop removes the schedule only when every other member is marked stopped;
 * a replica that died (or was retired) without a graceful stop keeps its `running` mark, and so keeps every
 * other replica's stop from removing, until the operator declares it gone for good here.
 *
 * Rules, and why:
 * - `forget` refuses a member whose candidacy is live (its lease is held: it is not gone), exit 1; an id that is no
 *   member is exit 66; etcd not answering is exit 69; a missing or bad --coordinate is exit 2 / 78.
 * - `forget` asks for confirmation (or --yes): it is what lets a later stop remove the schedule.
 * - A forgotten replica that is in fact alive (cut off from etcd) writes its membership again at its next poll
 *   once it reaches etcd: forgetting is undone by the replica itself, never kept against it.
 */
import { type Command, Option } from "commander";
import { type CoordinateTarget, parseCoordinate } from "../../config/coordinate.js";
import { loadConfig } from "../../config/load.js";
import { optionOf } from "../../config/options.js";
import { ExitCode } from "../../core/exit-codes.js";
import { electionName } from "../../replicas/candidacy.js";
import {
  EtcdUnavailableError,
  forgetMember,
  isReplicaId,
  listMembers,
  type MemberView,
} from "../../replicas/membership.js";
import type { CliDeps } from "../deps.js";
import { CliError, usageError } from "../errors.js";
import { collect, configFlag } from "../options.js";
import { confirm } from "./control.js";

const TIMEOUT_MS = 5_000;

function addOptions(cmd: Command): Command {
  return cmd
    .addOption(configFlag(optionOf("coordinate")))
    .addOption(
      new Option(
        "--account <addr>",
        "only the election of this account set (repeatable; the replicas' --account list); default: every election under the prefix",
      ).argParser(collect),
    )
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(new Option("--json", "one JSON document on stdout"));
}

/** The etcd target and the election (when --account names the set) from the flags, the environment or the file. */
function targetOf(
  opts: Record<string, unknown>,
  deps: CliDeps,
): { target: CoordinateTarget; election: string | undefined } {
  const { config } = loadConfig({
    options: { config: opts.config, coordinate: opts.coordinate, account: opts.account },
    env: deps.env,
    cwd: deps.cwd,
  });
  if (config.coordinate === undefined)
    throw usageError(
      "replicas needs --coordinate etcd://HOST:PORT[,...][/PREFIX] (or HL_COORDINATE): the replicas' etcd.",
    );
  const target = parseCoordinate(config.coordinate) as CoordinateTarget;
  const election =
    opts.account === undefined || config.accounts.length === 0 ? undefined : electionName(config.accounts);
  return { target, election };
}

const unavailable = (error: unknown) =>
  error instanceof EtcdUnavailableError ? new CliError(error.message, ExitCode.unavailable) : error;

function line(m: MemberView): string {
  return `${m.id}  ${m.state.padEnd(10)} ${(m.live ? "live" : "-").padEnd(5)} ${m.election}  ${m.at ?? "-"}  ${m.replica ?? "-"}`;
}

export function registerReplicas(program: Command, deps: CliDeps): void {
  const replicas = program
    .command("replicas")
    .description("the coordinated replicas' membership in etcd (see docs/operations.md, High availability)");

  addOptions(
    replicas.command("list").description("every replica's membership: running or stopped, live or not"),
  ).action(async (opts: Record<string, unknown>) => {
    const { target, election } = targetOf(opts, deps);
    const members = await listMembers({
      endpoints: target.endpoints,
      prefix: target.prefix,
      election,
      timeoutMs: TIMEOUT_MS,
      now: () => deps.clock.now(),
    }).catch((error: unknown) => {
      throw unavailable(error);
    });
    if (opts.json === true) {
      deps.stdout.write(`${JSON.stringify({ prefix: target.prefix, members })}\n`);
      return;
    }
    if (members.length === 0) {
      deps.stdout.write(`No replica's membership under ${target.prefix}/members/.\n`);
      return;
    }
    deps.stdout.write(
      `ID                STATE      LIVE  ELECTION          SINCE  REPLICA\n${members.map(line).join("\n")}\n`,
    );
    const blocking = members.filter((m) => m.state !== "stopped" && !m.live);
    if (blocking.length > 0)
      deps.stdout.write(
        `\n${blocking.length} member(s) neither live nor marked stopped (dead, or cut off from etcd): while they are, no other replica's stop removes the schedule. A replica gone for good: hl-deadman replicas forget ID.\n`,
      );
  });

  addOptions(
    replicas
      .command("forget")
      .description(
        "declare a replica gone for good: its membership no longer keeps the other replicas' stops from removing",
      )
      .argument("<id>", "the replica's id (hl-deadman replicas list)"),
  )
    .addOption(new Option("--yes", "confirm without asking (required when stdin is not a terminal)"))
    .action(async (id: string, opts: Record<string, unknown>) => {
      if (!isReplicaId(id))
        throw usageError(
          `${JSON.stringify(id.slice(0, 40))} is not a replica id (16 hex digits; hl-deadman replicas list)`,
        );
      const { target, election } = targetOf(opts, deps);
      await confirm(
        opts,
        deps,
        `Forget replica ${id}? Declare it gone for good only when it is: with no other member unmarked, the next replica's graceful stop removes the schedule.`,
        "forget",
      );
      const { forgotten, live } = await forgetMember({
        endpoints: target.endpoints,
        prefix: target.prefix,
        id,
        election,
        timeoutMs: TIMEOUT_MS,
        now: () => deps.clock.now(),
      }).catch((error: unknown) => {
        throw unavailable(error);
      });
      if (live.length > 0)
        throw new CliError(
          `Replica ${id} is a live candidate (its lease is held, election ${live.map((m) => m.election).join(", ")}): it is not gone. Stop it (a graceful stop marks it stopped), or wait for its lease to expire.`,
          ExitCode.runtime,
        );
      if (forgotten.length === 0)
        throw new CliError(
          `No replica ${id} under ${target.prefix}/members/${election ? `${election}/` : ""} (hl-deadman replicas list).`,
          ExitCode.noInput,
        );
      if (opts.json === true) deps.stdout.write(`${JSON.stringify({ ok: true, forgotten })}\n`);
      else
        deps.stdout.write(
          `Forgot replica ${id} (${forgotten.map((m) => `${m.state} in election ${m.election}`).join("; ")}). Should it run again, it writes its membership back at its next poll.\n`,
        );
    });
}
