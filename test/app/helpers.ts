import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { type Daemon, startDaemon } from "../../src/app/daemon.js";
import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Clock, ManualClock } from "../../src/core/clock.js";
import { createLogger } from "../../src/core/logger.js";
import { ManualTimers } from "../../src/core/runtime.js";
import { ManualScheduler } from "../../src/core/scheduler.js";
import {
  type SimulatorHandle,
  type SimulatorOptions,
  type SimulatorUser,
  startSimulator,
} from "../../src/sim/server.js";
import { createMetrics } from "../../src/surface/metrics.js";

export type LogLine = Record<string, unknown> & { event?: string; account?: string; level: number };

export function captureLogger(onLine?: (line: LogLine) => void) {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level: "debug",
    destination: {
      write: (s: string) => {
        const line = JSON.parse(s) as LogLine;
        lines.push(line);
        onLine?.(line);
      },
    },
  });
  return { logger, lines, events: (name: string) => lines.filter((l) => l.event === name) };
}

export const tick = () => new Promise<void>((r) => setImmediate(r));

export type Harness = Awaited<ReturnType<typeof harness>>;

/** A simulator and a daemon sharing one ManualClock; `advance` moves time in steps and lets I/O finish. */
export async function harness({
  start = Date.UTC(2026, 0, 1, 12, 0, 0),
  config = {},
  user = {},
  sim: simOptions = {},
  stateDir = mkdtempSync(join(tmpdir(), "hl-deadman-test-")),
  wallet = Wallet.createRandom() as unknown as Wallet,
  startDaemonNow = true,
  onLine,
  localClock,
  beforeLedgerSync,
  onInterval,
}: {
  start?: number;
  config?: ConfigInput;
  user?: Partial<SimulatorUser>;
  sim?: SimulatorOptions;
  stateDir?: string;
  wallet?: Wallet;
  startDaemonNow?: boolean;
  /** called synchronously with each log line as the daemon writes it */
  onLine?: (line: LogLine) => void;
  /** the daemon's own clock over the simulator's (e.g. a wall clock that can be stepped) */
  localClock?: Clock;
  /** runs before each ledger fsync (a slow disk) */
  beforeLedgerSync?: () => Promise<void>;
  /** the daemon's once-per-interval hook (startDaemon's onInterval) */
  onInterval?: () => void;
} = {}) {
  const clock = new ManualClock(start);
  const account = wallet.address.toLowerCase();
  const sim: SimulatorHandle = await startSimulator({
    clock,
    ipWeightPerMinute: null,
    users: [
      {
        address: account,
        orders: [{ coin: "BTC", side: "B", limitPx: 90_000, sz: 0.1 }],
        ...user,
      },
    ],
    ...simOptions,
  });
  const timers = new ManualTimers(clock);
  const scheduler = new ManualScheduler();
  const log = captureLogger(onLine);
  const cfg = ConfigSchema.parse({ health: "off", exposureInterval: 0, ...config });
  let daemon: Daemon | undefined;
  /** Starts the daemon; `bounded` as for `settle` (a first push into a blackhole never settles). */
  const boot = async ({ bounded = false }: { bounded?: boolean } = {}) => {
    daemon = await startDaemon({
      config: cfg,
      wallet,
      stateDir,
      logger: log.logger,
      clock: localClock ?? clock,
      timers,
      beforeLedgerSync,
      onInterval,
      scheduler,
      apiUrl: sim.apiUrl,
      metrics: createMetrics({ defaultMetrics: false }),
    });
    await settle({ bounded });
    return daemon;
  };
  /** Lets timers, pushes and ledger writes finish; `bounded` gives up after 15 ms (a blackholed push hangs). */
  const settle = async ({ bounded = false }: { bounded?: boolean } = {}) => {
    if (bounded) {
      await tick();
      await Promise.race([daemon?.settle(), new Promise((r) => setTimeout(r, 15))]);
      return;
    }
    for (let i = 0; i < 3; i++) {
      await tick();
      await daemon?.settle();
    }
  };
  /** Advances the clock by `ms` in `stepMs` steps, letting pushes finish after each step. */
  const advance = async (ms: number, stepMs = 1_000, { bounded = false }: { bounded?: boolean } = {}) => {
    let left = ms;
    while (left > 0) {
      const step = Math.min(stepMs, left);
      clock.advance(step);
      left -= step;
      await settle({ bounded });
    }
  };
  if (startDaemonNow) await boot();
  return {
    clock,
    sim,
    timers,
    scheduler,
    stateDir,
    wallet,
    account,
    config: cfg,
    ...log,
    get daemon() {
      if (!daemon) throw new Error("daemon not started");
      return daemon;
    },
    boot,
    settle,
    advance,
    async close() {
      try {
        await daemon?.close({ mode: "keep" });
      } finally {
        timers.dispose();
        await sim.close();
      }
    },
  };
}
