/**
 * The real daemon (`startDaemon`) in the test process against the simulator over real HTTP on 127.0.0.1,
 * sharing the simulator's ManualClock: timers fire when the test moves the clock, so deadlines, outages and
 * 00:00 UTC are crossed in milliseconds. Only the clock is controlled; requests, time-outs and faults are real.
 * The exchange client is wrapped (not replaced) to count calls in flight, which proves pushes never overlap.
 */
import { Writable } from "node:stream";
import { id, Wallet } from "ethers";
import { type Daemon, startDaemon } from "../../src/app/daemon.js";
import { type Config, type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Clock, ManualClock } from "../../src/core/clock.js";
import { createLogger } from "../../src/core/logger.js";
import { createRuntime, ManualTimers, systemTimers } from "../../src/core/runtime.js";
import { ManualScheduler } from "../../src/core/scheduler.js";
import { EvmClient } from "../../src/protocol/evm/client.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from "../../src/sim/server.js";
import { type ChainWatch, createChainWatch } from "../../src/watchers/chain-watch.js";
import type { LogLine } from "./harness.js";
import { jsonLineSplitter, tempDir } from "./harness.js";

export type InProcess = {
  sim: SimulatorHandle;
  daemon: Daemon;
  clock: ManualClock;
  /** the daemon's clock (the simulator's, or an offset of it) */
  localClock: Clock;
  scheduler: ManualScheduler;
  user: string;
  wallet: Wallet;
  config: Config;
  stateDir: string;
  logs: LogLine[];
  events(name: string): LogLine[];
  /** the chain watch, when started with `chainWatch: true` (ticks driven by `run`) */
  chain: ChainWatch | null;
  /** the most calls to the exchange client that were ever in flight at once */
  maxInFlight(): number;
  /** Moves the clock `totalMs` forward in steps of `stepMs`, letting pushes finish after each step. */
  run(totalMs: number, stepMs?: number, onStep?: () => void | Promise<void>): Promise<void>;
  close(): Promise<void>;
};

export type StartInProcessParameters = {
  label: string;
  /** simulator options; `users` defaults to the signer with two open orders */
  sim?: Partial<SimulatorOptions>;
  /** config overrides (ConfigSchema input, ms durations) */
  config?: Partial<ConfigInput>;
  /** start of the clock (default 2026-01-01 12:00 UTC) */
  startAt?: number;
  /** local clock = simulator clock + this (ms) */
  localOffsetMs?: number;
  /** register the signer as a user in the simulator (default true) */
  register?: boolean;
  /** wire the chain watch (HyperEVM) to the simulator's /evm; `run` ticks it after every step */
  chainWatch?: boolean;
  /** called synchronously with each log line as the daemon writes it */
  onLog?: (line: LogLine) => void;
  /** read the exchange's record from the simulator's explorer (`explorerUrl`) */
  record?: boolean;
  /** the HyperEVM block witness from the simulator's RPC (`rpcUrl`, no watched addresses): with the answers' Date,
   * a second witness that verifies the exchange's time (issue 40) */
  blockWitness?: boolean;
  /** runs after the simulator started, before the daemon (faults present from the first request) */
  beforeStart?: (sim: SimulatorHandle) => void;
};

export async function startInProcess({
  label,
  sim: simOptions = {},
  config: overrides = {},
  startAt = Date.UTC(2026, 0, 1, 12, 0, 0),
  localOffsetMs = 0,
  register = true,
  chainWatch = false,
  blockWitness = false,
  onLog,
  record = false,
  beforeStart,
}: StartInProcessParameters): Promise<InProcess> {
  const wallet = walletFor(label);
  const user = wallet.address.toLowerCase();
  const clock = new ManualClock(startAt);
  const localClock: Clock = localOffsetMs === 0 ? clock : { now: () => clock.now() + localOffsetMs };
  const sim = await startSimulator({
    clock,
    users: register
      ? [
          {
            address: user,
            orders: [
              { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" },
              { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" },
            ],
          },
        ]
      : [],
    ...simOptions,
  });
  beforeStart?.(sim);
  const state = tempDir();
  const config = ConfigSchema.parse({
    apiUrl: sim.apiUrl,
    interval: 15_000,
    deadline: 60_000,
    requestTimeout: 250, // real ms for the client's time-out (blackholes); manual ms for expiresAfter
    exposureInterval: 0,
    health: "127.0.0.1:0",
    stateDir: state.dir,
    ...(chainWatch ? { rpcUrl: sim.rpcUrl, watchAddresses: [user] } : {}),
    ...(blockWitness && !chainWatch ? { rpcUrl: sim.rpcUrl } : {}),
    ...(record ? { explorerUrl: sim.explorerUrl } : {}),
    ...overrides,
  });

  const logs: LogLine[] = [];
  const feed = jsonLineSplitter((line) => {
    logs.push(line);
    onLog?.(line);
  });
  const sink = new Writable({
    write(chunk, _enc, cb) {
      feed(chunk.toString());
      cb();
    },
  });
  const logger = createLogger({
    level: "debug",
    destination: sink,
    pretty: false,
    now: () => localClock.now(),
  });

  const real = new ExchangeClient({
    apiUrl: sim.apiUrl,
    signer: wallet,
    isMainnet: true,
    clock: localClock,
    expiresAfterMs: config.requestTimeout,
    timeoutMs: config.requestTimeout,
  });
  const client = countingClient(real);

  const timers = new ManualTimers(clock);
  const scheduler = new ManualScheduler();
  let chain: ChainWatch | null = null;
  const daemon = await startDaemon({
    config,
    wallet,
    stateDir: state.dir,
    logger,
    clock: localClock,
    timers,
    scheduler,
    apiUrl: sim.apiUrl,
    client,
    createChainWatch: chainWatch
      ? (deps) => {
          chain = createChainWatch({
            client: new EvmClient({ rpcUrl: sim.rpcUrl, timeoutMs: 2_000 }),
            addresses: config.watchAddresses,
            bus: deps.bus,
            // the daemon's clock on real timers, whose hour is never due in a test: `run` ticks it
            runtime: createRuntime({ clock: deps.runtime.clock, timers: systemTimers() }),
            pollIntervalMs: 3_600_000,
            stallThresholdMs: config.chainStallThreshold,
            maxLagBlocks: config.chainMaxLagBlocks,
            pageSize: config.chainPageSize,
          });
          return chain;
        }
      : undefined,
  });
  // Let the immediate first push go out and land (and the chain watch's first probe).
  await new Promise((r) => setImmediate(r));
  await daemon.settle();
  await (chain as ChainWatch | null)?.tick();

  let closed = false;
  return {
    sim,
    daemon,
    clock,
    localClock,
    scheduler,
    user,
    wallet,
    config,
    stateDir: state.dir,
    logs,
    events: (name) => logs.filter((l) => l.event === name),
    get chain() {
      return chain;
    },
    maxInFlight: () => client.maxInFlight(),
    async run(totalMs, stepMs = 1_000, onStep) {
      const end = clock.now() + totalMs;
      while (clock.now() < end) {
        clock.advance(Math.min(stepMs, end - clock.now()));
        await new Promise((r) => setImmediate(r));
        await daemon.settle();
        await (chain as ChainWatch | null)?.tick();
        await onStep?.();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      sim.faults.clear();
      await daemon.close({ reason: "test end" });
      timers.dispose();
      await sim.close();
      state.cleanup();
    },
  };
}

/** The signer startInProcess uses for `label` (deterministic, so a test can register it beforehand). */
export function walletFor(label: string): Wallet {
  return new Wallet(id(`hl-deadman reliability in-process: ${label}`));
}

/** The simulator's schedule is in the future at this moment (the exchange would not fire now). */
export function simArmed(t: InProcess): boolean {
  const s = t.sim.state.getSchedule(t.user);
  return s !== null && s > t.clock.now();
}

/** The real exchange client, wrapped to count its concurrent scheduleCancel calls (the switch never overlaps two). */
export function countingClient(real: ExchangeClient) {
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    async scheduleCancel(params: Parameters<ExchangeClient["scheduleCancel"]>[0]) {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        return await real.scheduleCancel(params);
      } finally {
        inFlight--;
      }
    },
    cancel: (...args: Parameters<ExchangeClient["cancel"]>) => real.cancel(...args),
    close: () => real.close(),
    maxInFlight: () => maxInFlight,
  };
}
