import { type Command, Option } from "commander";
import { isAddress } from "../../core/address.js";
import { utcDay } from "../../core/clock.js";
import { ExitCode } from "../../core/exit-codes.js";
import type { SimulatorHandle, SimulatorUser } from "../../sim/server.js";
import type { CliDeps } from "../deps.js";
import { CliError, usageError } from "../errors.js";
import { collect } from "../options.js";

export type SimCommandOptions = {
  host: string;
  port: string;
  user?: string[];
  agent?: string[];
  seed: string;
  rttMs?: string;
  successType: "scheduleCancel" | "default";
  pageOrder: "fromStart" | "fromEnd";
  network: "mainnet" | "testnet";
  demo: boolean;
};

export type SimInit = {
  host: string;
  port: number;
  seed: number;
  /** injected round-trip time on every API answer, ms */
  rttMs: number;
  users: SimulatorUser[];
  agents: Array<{ agent: string; user: string }>;
  successType: "scheduleCancel" | "default";
  pageOrder: "fromStart" | "fromEnd";
  network: "mainnet" | "testnet";
  demo: boolean;
};

/** `ADDR[:volumeUsd]`; the volume defaults to 2,000,000 (above the $1M gate). */
export function parseUserSpec(value: string): SimulatorUser {
  const [address = "", volume, ...rest] = value.split(":");
  const volumeUsd = volume === undefined ? undefined : Number(volume);
  if (
    !isAddress(address) ||
    rest.length > 0 ||
    (volume !== undefined &&
      (volume.trim() === "" || !Number.isFinite(volumeUsd) || (volumeUsd as number) < 0))
  ) {
    throw usageError(
      `--user ${JSON.stringify(value)} is invalid: expected ADDR[:volumeUsd], ADDR being 0x and 40 hex digits and volumeUsd a number >= 0.`,
    );
  }
  return volumeUsd === undefined ? { address } : { address, volumeUsd };
}

/** The word that names the demo account in `--agent DEMO=USER` (its address is known only once it is made). */
export const DEMO_AGENT = "DEMO";

/**
 * `AGENT=USER`: AGENT (an API wallet) signs for USER. AGENT may be the word DEMO: the demo account, whose key the
 * simulator prints (the mainnet checklist's rehearsal, `sim --user MASTER --agent DEMO=MASTER`).
 */
export function parseAgentSpec(value: string): { agent: string; user: string } {
  const [agent = "", user = "", ...rest] = value.split("=");
  const demo = agent.toUpperCase() === DEMO_AGENT;
  if ((!demo && !isAddress(agent)) || !isAddress(user) || rest.length > 0) {
    throw usageError(
      `--agent ${JSON.stringify(value)} is invalid: expected AGENT=USER, both 0x and 40 hex digits (AGENT may be DEMO, the demo account).`,
    );
  }
  return { agent: demo ? DEMO_AGENT : agent, user };
}

function parseInteger(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw usageError(
      `${flag} ${JSON.stringify(value)} is invalid: expected an integer from ${min} to ${max}.`,
    );
  }
  return n;
}

/** Resolves and validates the flags (pure). */
export function simInit(opts: SimCommandOptions): SimInit {
  return {
    host: opts.host,
    port: parseInteger(opts.port, "--port", 0, 65_535),
    seed: parseInteger(opts.seed, "--seed", 0, 2 ** 32 - 1),
    rttMs: parseInteger(opts.rttMs ?? "0", "--rtt-ms", 0, 60_000),
    users: (opts.user ?? []).map(parseUserSpec),
    agents: (opts.agent ?? []).map(parseAgentSpec),
    successType: opts.successType,
    pageOrder: opts.pageOrder,
    network: opts.network,
    demo: opts.demo,
  };
}

/**
 * A port that is taken (or not ours to bind) is one line and exit 69, as for the daemon's health port
 * (docs/cli.md, "Exit codes"), never a stack trace.
 */
async function listening<T>(init: SimInit, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL")
      throw new CliError(
        `Cannot listen on ${init.host}:${init.port} for the simulator (${code}${code === "EADDRINUSE" ? ": the port is taken" : ""}); use --port N (0 = any free port) or another --host.`,
        ExitCode.unavailable,
      );
    throw error;
  }
}

/** Starts the simulator, prints its URLs (and the demo key with a warning), and runs until `stop` resolves. */
export async function runSim(init: SimInit, deps: CliDeps, stop: Promise<unknown>): Promise<void> {
  const out = (line: string) => deps.stdout.write(`${line}\n`);
  let sim: SimulatorHandle | undefined;
  // Loaded on use: every other command (and the daemon) starts without the simulator's code.
  const { startSimulator } = await import("../../sim/server.js");
  sim = await listening(init, () =>
    startSimulator({
      host: init.host,
      port: init.port,
      seed: init.seed,
      rttMs: init.rttMs,
      clock: deps.clock,
      network: init.network,
      users: init.users,
      demo: init.demo,
      successType: init.successType,
      pageOrder: init.pageOrder,
      // Sign the 5,000-tx block in the background, in slices, from the first JSON-RPC request on, so the first
      // `evm txs` on it does not stall the exchange endpoint for seconds in the middle of a rehearsal.
      warmBigBlockOnRpc: true,
      onTrigger: (user, t) =>
        out(
          `TRIGGER ${user} at ${new Date(t.time).toISOString()}: cancelled ${t.cancelledOrders} open order(s)${t.counted ? "" : " (not counted)"}; ${sim?.state.triggersOn(user, t.day) ?? "?"} trigger(s) on ${t.day}`,
        ),
    }),
  );
  try {
    const registered = new Set([
      ...init.users.map((u) => u.address.toLowerCase()),
      ...(sim.demo ? [sim.demo.address] : []),
    ]);
    for (const spec of init.agents) {
      if (spec.agent === DEMO_AGENT) {
        if (!sim.demo)
          throw usageError(
            `--agent ${DEMO_AGENT}=${spec.user} names the demo account, which --no-demo leaves out.`,
          );
        spec.agent = sim.demo.address;
      }
      const { agent, user } = spec;
      if (!registered.has(user.toLowerCase())) {
        throw usageError(
          `--agent ${agent}=${user} is invalid: ${user} is not a registered user (add it with --user${init.demo ? " or use the demo account" : ""}).`,
        );
      }
      sim.state.addAgent(agent, user);
    }
  } catch (error) {
    await sim.close();
    throw error;
  }
  out(`API    ${sim.apiUrl}`);
  out(`WS     ${sim.wsUrl}  (openOrders, ping; the daemon derives it from the API URL)`);
  out(`RPC    ${sim.rpcUrl}`);
  out(`EXPLORER ${sim.explorerUrl}  (userDetails; pass it as --explorer-url)`);
  out(`ADMIN  ${sim.adminUrl}  (loopback only)`);
  out(
    `NETWORK ${init.network} (signatures with source "${init.network === "mainnet" ? "a" : "b"}"), seed ${init.seed}, day ${utcDay(deps.clock.now())} UTC`,
  );
  if (init.rttMs > 0)
    out(`RTT    ${init.rttMs} ms injected on every API answer (half of it on each WebSocket message pushed)`);
  for (const u of init.users) out(`USER   ${u.address.toLowerCase()} volume $${u.volumeUsd ?? 2_000_000}`);
  for (const a of init.agents) out(`AGENT  ${a.agent.toLowerCase()} signs for ${a.user.toLowerCase()}`);
  if (sim.demo) {
    const demoAgent = init.agents.find((a) => a.agent.toLowerCase() === sim.demo!.address);
    out(
      demoAgent
        ? `DEMO   account ${sim.demo.address}, an API wallet of ${demoAgent.user.toLowerCase()} (its demo orders and positions are now ${demoAgent.user.toLowerCase()}'s: the demo key arms ${demoAgent.user.toLowerCase()})`
        : `DEMO   account ${sim.demo.address}`,
    );
    out(`DEMO   key     ${sim.demo.privateKey}`);
    out(
      "WARNING: THE DEMO KEY IS PUBLIC AND FOR THIS SIMULATOR ONLY. NEVER FUND IT OR USE IT ON A REAL NETWORK.",
    );
  }
  out("Running; stop with Ctrl+C (SIGINT) or SIGTERM.");
  await stop;
  await sim.close();
  out("Simulator stopped.");
}

/** Resolves on the first SIGINT or SIGTERM (the command then closes the simulator and exits 0). */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolve(signal);
    };
    process.once("SIGINT", on);
    process.once("SIGTERM", on);
  });
}

export function registerSim(program: Command, deps: CliDeps): void {
  program
    .command("sim")
    .description(
      "the simulator as a server; registers users; prints its API and RPC URLs; runs until SIGINT/SIGTERM",
    )
    .addOption(new Option("--host <host>", "interface to listen on").default("127.0.0.1"))
    .addOption(new Option("--port <n>", "port (0 = any free port)").default("0"))
    .addOption(
      new Option(
        "--user <addr[:volumeUsd]>",
        "register a user (volume default 2000000, above the $1M gate); repeatable",
      ).argParser(collect),
    )
    .addOption(
      new Option("--agent <agent=user>", "approve an API wallet for a user; repeatable").argParser(collect),
    )
    .addOption(new Option("--seed <n>", "seed of the chain, the demo key and random faults").default("1"))
    .addOption(
      new Option(
        "--rtt-ms <n>",
        "injected round-trip time on every API answer (half before handling, half before answering)",
      ).default("0"),
    )
    .addOption(
      new Option("--success-type <type>", "success body type (the real API answers default)")
        .choices(["scheduleCancel", "default"])
        .default("scheduleCancel"),
    )
    .addOption(
      new Option("--page-order <order>", "ots_getBlockTransactions page order (fromEnd = Erigon)")
        .choices(["fromStart", "fromEnd"])
        .default("fromStart"),
    )
    .addOption(
      new Option("--network <name>", "which signatures are valid (source a or b)")
        .choices(["mainnet", "testnet"])
        .default("mainnet"),
    )
    .option("--no-demo", "do not create the demo account")
    .action(async (opts: SimCommandOptions) => {
      const init = simInit(opts);
      await runSim(init, deps, untilSignal());
    });
}
