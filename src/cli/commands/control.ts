import { existsSync } from "node:fs";
import { connect } from "node:net";
import { userInfo } from "node:os";
import { createInterface } from "node:readline";
import { type Command, Option } from "commander";
import { controlRequest, controlSocketPath } from "../../app/control.js";
import { describeResting, type RestingOnDex, stopsAtRisk } from "../../app/drill.js";
import type { killAlone } from "../../app/kill-alone.js";
import { StateLockedError } from "../../app/lock.js";
import { loadConfig } from "../../config/load.js";
import { optionOf } from "../../config/options.js";
import type { Config } from "../../config/schema.js";
import { monotonicOf } from "../../core/clock.js";
import { ExitCode } from "../../core/exit-codes.js";
import { systemTimers } from "../../core/runtime.js";
import type { CliDeps } from "../deps.js";
import { CliError, usageError } from "../errors.js";
import { configFlag } from "../options.js";
import { stateDirOf } from "../state-dir.js";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Who asks, for the daemon's log and audit trail: the user name and the pid (never anything secret). */
function whoAsks(): string {
  let name = "unknown user";
  try {
    name = userInfo().username;
  } catch {
    // a uid without a name (a container): the uid says it
    name = `uid ${process.getuid?.() ?? "?"}`;
  }
  return `${name} (pid ${process.pid})`.slice(0, 100);
}

/** Asks on a terminal for `expected`; resolves whether it was typed. */
export async function confirmOnTerminal(deps: CliDeps, question: string, expected: string): Promise<boolean> {
  const rl = createInterface({ input: deps.stdin ?? process.stdin, output: deps.stderr });
  try {
    const typed = await new Promise<string>((resolve) => {
      rl.question(`${question}\nType ${expected} to confirm: `, resolve);
      rl.once("close", () => resolve(""));
    });
    return typed.trim() === expected;
  } finally {
    rl.close();
  }
}

/** Sends one control request to the daemon that holds `stateDir`; errors in the contract's codes. */
export async function askDaemon(
  stateDir: string,
  request: { command: string; account?: string; options?: Record<string, unknown> },
  timeoutMs = 60_000,
) {
  if (!existsSync(stateDir))
    throw new CliError(
      `The state directory ${stateDir} does not exist (check --state-dir).`,
      ExitCode.noInput,
    );
  try {
    return await controlRequest(
      stateDir,
      { ...request, by: whoAsks() },
      { timeoutMs, connect, timers: systemTimers() },
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ECONNREFUSED")
      throw new CliError(
        `No running daemon answers on ${controlSocketPath(stateDir)} (${code}). \`${request.command}\` is carried out by the daemon that holds this state directory: start it (or pass its --state-dir), then try again.`,
        ExitCode.unavailable,
      );
    if (code === "EACCES")
      throw new CliError(
        `${controlSocketPath(stateDir)} refuses this user (EACCES): run as the daemon's user (the socket is 0600).`,
        ExitCode.unavailable,
      );
    throw new CliError(
      `The daemon did not answer: ${error instanceof Error ? error.message : String(error)}`,
      ExitCode.unavailable,
    );
  }
}

/** A command carried out by the running daemon: --account, the state directory, --yes and --json. */
function controlCommand(
  program: Command,
  c: { name: string; description: string; account: string; json: string },
): Command {
  return program
    .command(c.name)
    .description(c.description)
    .addOption(new Option("--account <addr>", c.account).makeOptionMandatory())
    .addOption(configFlag(optionOf("stateDir")))
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(new Option("--yes", "confirm without asking (required when stdin is not a terminal)"))
    .addOption(new Option("--json", c.json));
}

/**
 * What the command will do, confirmed: `--yes`, or `word` typed on a terminal. Off a terminal or with --json,
 * without --yes it is a usage error that says what it would have done.
 */
export async function confirm(
  opts: Record<string, unknown>,
  deps: CliDeps,
  what: string,
  word: string,
): Promise<void> {
  if (opts.yes === true) return;
  const tty = (deps.stdin as { isTTY?: boolean } | undefined)?.isTTY ?? process.stdin.isTTY;
  if (opts.json === true || !tty)
    throw usageError(`${what}\nPass --yes to run it (stdin is not a terminal, or --json).`);
  if (!(await confirmOnTerminal(deps, what, word)))
    throw new CliError("Not confirmed: nothing was changed.", ExitCode.usage);
}

/** The account asked for (lower case) and the state directory of the daemon that carries it out. */
function targetOf(opts: Record<string, unknown>, deps: CliDeps): { account: string; stateDir: string } {
  const account = String(opts.account);
  if (!ADDRESS.test(account)) throw usageError(`--account ${account}: must be 0x followed by 40 hex digits`);
  const { config } = loadConfig({
    options: { stateDir: opts.stateDir, config: opts.config },
    env: deps.env,
    cwd: deps.cwd,
  });
  return { account: account.toLowerCase(), stateDir: stateDirOf(config, deps) };
}

export function registerReset(program: Command, deps: CliDeps): void {
  controlCommand(program, {
    name: "reset",
    description: "release an account latched HALTED by the escalation (through the running daemon)",
    account: "the HALTED account",
    json: "one JSON document on stdout",
  }).action(async (opts: Record<string, unknown>) => {
    const { account, stateDir } = targetOf(opts, deps);
    await confirm(
      opts,
      deps,
      `Release HALTED for ${account}? The escalation may close its positions again if its rule still holds while the engine is down.`,
      "reset",
    );
    const answer = await askDaemon(stateDir, { command: "reset", account });
    if (!answer.ok) throw new CliError(`The daemon refused the reset: ${answer.error}`, ExitCode.runtime);
    if (opts.json === true) deps.stdout.write(`${JSON.stringify({ ok: true, ...answer.result })}\n`);
    else deps.stdout.write(`${account}: HALTED ${String(answer.result.detail ?? "released")}\n`);
  });
}

export function registerDrill(program: Command, deps: CliDeps): void {
  controlCommand(program, {
    name: "drill",
    description:
      "prove the switch on an account: the running daemon places a small resting order, lets a schedule fire on it and checks the exchange cancelled it (spends 1 daily trigger)",
    account: "the account to drill",
    json: "one JSON document on stdout (the drill report)",
  })
    .addOption(new Option("--mainnet", "on mainnet, the second ask: a drill there is refused without it"))
    .addOption(
      new Option(
        "--cancel-stops",
        "drill although reduce-only stops rest: the fire cancels them with every other order (refused without it, exit 77)",
      ),
    )
    .action(async (opts: Record<string, unknown>) => {
      const { account: target, stateDir } = targetOf(opts, deps);
      // First what it costs and what it takes, from the daemon itself (the triggers left are its count, the orders
      // resting its read of every listed dex, not this command's).
      const asked = await askDaemon(stateDir, { command: "drill", account: target });
      if (!asked.ok) throw new CliError(`The daemon refused the drill: ${asked.error}`, ExitCode.runtime);
      const plan = asked.result.plan as {
        network: string;
        coin: string;
        triggersLeft: number;
        state: string;
        resting?: RestingOnDex[];
      };
      const resting = plan.resting ?? null;
      const takes = resting
        ? `\nThe fire cancels whatever rests at fire time, on every dex it reaches. Resting now:\n${describeResting(
            resting,
          )
            .map((l) => `  ${l}`)
            .join("\n")}`
        : "\nThe fire cancels every order resting at fire time, the engine's reduce-only stops included.";
      const cost = `The drill spends 1 of the ${plan.triggersLeft} trigger(s) left today on ${target} (${plan.network}): it places a post-only ${plan.coin} buy worth about $11 at half the mark, pushes a cancel about 8 s ahead, lets it fire, checks the order ended scheduledCancel, and pushes again at once.${takes}`;
      if (plan.network === "mainnet" && opts.mainnet !== true)
        throw usageError(`${cost}\nThis is mainnet: pass --mainnet as well to drill there.`);
      // Reduce-only stops protect positions: --yes alone does not take them.
      const stops = resting ? stopsAtRisk(resting) : 0;
      if (stops !== 0 && opts.cancelStops !== true)
        throw new CliError(
          `${cost}\n${stops === null ? "A listed dex could not be read: reduce-only stops may rest there." : `${stops} reduce-only stop(s) rest: the drill's fire cancels them, leaving their positions without stops until the engine places them again.`} Pass --cancel-stops as well to drill anyway.`,
          ExitCode.noPerm,
        );
      await confirm(opts, deps, cost, "drill");
      if (opts.yes === true && opts.json !== true) deps.stderr.write(`${cost}\n`);
      const answer = await askDaemon(
        stateDir,
        {
          command: "drill",
          account: target,
          options: { confirm: true, mainnet: opts.mainnet === true, cancelStops: opts.cancelStops === true },
        },
        90_000,
      );
      if (!answer.ok)
        throw new CliError(
          `The drill did not run: ${answer.error}`,
          answer.stopsRest === true ? ExitCode.noPerm : ExitCode.runtime,
        );
      const report = answer.result.report as { passed: boolean; reportFiles: string[] };
      // --json: one document, the report when it passed, the error (naming the report's files) when not
      if (!report.passed)
        throw new CliError(
          `The drill FAILED: the switch did not prove itself.${opts.json === true ? "" : `\n${String(answer.result.text)}`} Report: ${report.reportFiles.join(", ")}`,
          ExitCode.runtime,
        );
      if (opts.json === true) deps.stdout.write(`${JSON.stringify(report)}\n`);
      else deps.stdout.write(`${String(answer.result.text)}Report: ${report.reportFiles.join(", ")}\n`);
    });
}

type KillAnswer = {
  account: string;
  done: boolean;
  reason?: string;
  latched?: boolean;
  cancelMs?: number;
  cancel?: { confirmed: boolean; cancelled: number; kept: number; detail?: string };
  close?: {
    flat: boolean;
    orders: unknown[];
    filledUsd: number;
    dust: number;
    refusal: string | null;
    detail?: string;
    remaining?: string;
  } | null;
};

/** One account's kill as people read it. */
function killLine(a: KillAnswer): string {
  if (!a.done) return `${a.account}: NOT killed: ${a.reason ?? "refused"}`;
  const c = a.cancel!;
  const parts = [
    `${a.account}: HALTED${a.latched ? "" : " (it already was)"}`,
    `${c.cancelled} order(s) cancelled, ${c.kept} left ${c.confirmed ? "(confirmed by a read)" : `(NOT confirmed${c.detail ? `: ${c.detail}` : ""})`} in ${Math.round(a.cancelMs ?? 0)} ms`,
  ];
  const x = a.close;
  if (x)
    parts.push(
      x.flat
        ? `positions closed (${x.orders.length} order(s), ${x.filledUsd} USD filled${x.dust > 0 ? `, ${x.dust} left as dust` : ""})`
        : `positions NOT closed (${x.refusal ?? "?"}${x.detail ? `: ${x.detail}` : ""})${x.remaining ? `; left: ${x.remaining}` : ""}`,
    );
  return `${parts.join("; ")}. Release with hl-deadman reset --account ${a.account}`;
}

/** The kill with no daemon (src/app/kill-alone.ts): the configuration's key, the lock, the daemon's executors. */
async function killWithoutDaemon(
  config: Config,
  stateDir: string,
  account: string,
  close: boolean,
  deps: CliDeps,
): Promise<KillAnswer[]> {
  // The keys and the daemon's executors are loaded when no daemon answers (src/cli/program.ts, "Loaded on use").
  const [{ loadSignerKeys, loadSigningKey }, alone] = await Promise.all([
    import("../../config/keys.js"),
    import("../../app/kill-alone.js"),
  ]);
  // the keys the daemon would sign with: each of config `signers` (each with its own accounts), else the one key
  let wallets: Parameters<typeof killAlone>[0]["wallets"];
  try {
    wallets =
      config.signers.length > 0
        ? loadSignerKeys(config.signers, { env: deps.env, cwd: deps.cwd }).map((s) => ({
            address: s.address,
            wallet: s.wallet,
            account: s.account,
            vaults: s.vaults,
          }))
        : [loadSigningKey({ keyFile: config.keyFile, env: deps.env, cwd: deps.cwd })].map((k) => ({
            address: k.address,
            wallet: k.wallet,
          }));
  } catch (error) {
    throw new CliError(
      `No daemon answers, and this command cannot sign alone: ${error instanceof Error ? error.message : String(error)}`,
      ExitCode.config,
    );
  }
  try {
    return await alone.killAlone({
      config,
      stateDir,
      account,
      close,
      by: whoAsks(),
      clock: deps.clock,
      monotonic: () => monotonicOf(deps.clock),
      wallets,
    });
  } catch (error) {
    if (error instanceof StateLockedError)
      throw new CliError(
        `${error.message}: its control channel does not answer; try again`,
        ExitCode.tempFail,
      );
    throw new CliError(
      `The kill could not be carried out alone: ${error instanceof Error ? error.message : String(error)}`,
      ExitCode.runtime,
    );
  }
}

/**
 * `hl-deadman kill`: the operator's kill switch, carried out by the running daemon (docs/operations.md "When
 * cancelling is not enough"). Exit 0 when every named account is latched and its cancels confirmed (and, with
 * --close, flat); 1 when the daemon refused or something remains (said per account); 69 when no daemon answers.
 */
export function registerKill(program: Command, deps: CliDeps): void {
  program
    .command("kill")
    .description(
      "the operator's kill switch: latch an account HALTED, cancel every resting order at once (and with --close close its positions reduce-only), through the running daemon",
    )
    .addOption(new Option("--account <addr>", "the account to kill"))
    .addOption(new Option("--all", "every account the daemon arms"))
    .addOption(new Option("--close", "also close the positions with reduce-only IOC orders"))
    .addOption(configFlag(optionOf("stateDir")))
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(new Option("--yes", "confirm without asking (required when stdin is not a terminal)"))
    .addOption(new Option("--json", "one JSON document on stdout"))
    // with no daemon running, the command signs alone: the daemon's key and exchange
    .addOption(configFlag(optionOf("keyFile")))
    .addOption(configFlag(optionOf("network")))
    .addOption(configFlag(optionOf("apiUrl")))
    .action(async (opts: Record<string, unknown>) => {
      const all = opts.all === true;
      if (all === (opts.account !== undefined))
        throw usageError("name one account (--account <addr>) or --all");
      const account = all ? undefined : String(opts.account);
      if (account !== undefined && !ADDRESS.test(account))
        throw usageError(`--account ${account}: must be 0x followed by 40 hex digits`);
      const { config } = loadConfig({
        options: {
          stateDir: opts.stateDir,
          config: opts.config,
          keyFile: opts.keyFile,
          network: opts.network,
          apiUrl: opts.apiUrl,
        },
        env: deps.env,
        cwd: deps.cwd,
      });
      const stateDir = stateDirOf(config, deps);
      const close = opts.close === true;
      await confirm(
        opts,
        deps,
        `KILL ${account ?? "every account"}: cancel every resting order (stops included)${close ? " and close every position reduce-only" : ""}, and latch HALTED until hl-deadman reset. The engine's orders are gone at once; the switch keeps pushing.`,
        "kill",
      );
      let accounts: KillAnswer[];
      try {
        const answer = await askDaemon(stateDir, {
          command: "kill",
          ...(account ? { account: account.toLowerCase() } : {}),
          options: { close, all },
        });
        if (!answer.ok) throw new CliError(`The daemon refused the kill: ${answer.error}`, ExitCode.runtime);
        accounts = answer.result.accounts as KillAnswer[];
      } catch (error) {
        // No daemon holds the state directory: the command does the daemon's work itself, under its lock.
        if (
          !(
            error instanceof CliError &&
            error.exitCode === ExitCode.unavailable &&
            /No running daemon/.test(error.message)
          )
        )
          throw error;
        deps.stderr.write("hl-deadman: no daemon answers: the kill is carried out by this command alone\n");
        accounts = await killWithoutDaemon(config, stateDir, account?.toLowerCase() ?? "all", close, deps);
      }
      const complete = accounts.every(
        (a) => a.done && a.cancel?.confirmed === true && (!close || a.close?.flat === true),
      );
      if (opts.json === true) deps.stdout.write(`${JSON.stringify({ ok: complete, accounts })}\n`);
      else for (const a of accounts) deps.stdout.write(`${killLine(a)}\n`);
      if (!complete)
        throw new CliError(
          "The kill is not complete: see above what remains (the account stays HALTED).",
          ExitCode.runtime,
        );
    });
}
