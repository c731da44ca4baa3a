/**
 * Compatibility wrapper: the drift-free loop is `every` in core/runtime.ts (monotonic clock, stall detection).
 * `createLoop` keeps the start/stop shape the engine guard uses.
 */

import type { Clock } from "../core/clock.js";
import { ArgumentError } from "../core/errors/argument.js";
import type { Logger } from "../core/logger.js";
import { every, type Repeating, type TickInfo, type Timers } from "../core/runtime.js";
import type { Metrics } from "../surface/metrics.js";

export {
  ManualTimers,
  systemTimers,
  type TickInfo,
  type TimerHandle,
  type Timers,
} from "../core/runtime.js";

export type CreateLoopParameters = {
  intervalMs: number;
  clock: Clock;
  timers: Timers;
  onTick: (info: TickInfo) => void | Promise<void>;
  logger?: Logger | undefined;
  metrics?: Metrics | undefined;
  /** default max(1 s, interval / 2) */
  stallThresholdMs?: number | undefined;
  /** what the loop is for, in log lines */
  name?: string;
};

export type Loop = {
  /** Starts the loop; the first tick runs at once. */
  start(): void;
  stop(): void;
  readonly running: boolean;
  /** ticks run so far */
  readonly ticks: number;
  /** stalls detected so far */
  readonly stalls: number;
};

/** A drift-free loop: tick k is due at start + k x interval (on the monotonic clock). */
export function createLoop({
  intervalMs,
  clock,
  timers,
  onTick,
  logger,
  metrics,
  stallThresholdMs,
  name = "push",
}: CreateLoopParameters): Loop {
  if (!(intervalMs > 0)) throw new ArgumentError(`loop interval must be > 0 ms, got ${intervalMs}`);
  let rep: Repeating | undefined;
  let ticks = 0;
  let stalls = 0;
  return {
    start() {
      if (rep?.running) return;
      rep = every(intervalMs, onTick, {
        clock,
        timers,
        logger,
        onStall: () => metrics?.eventLoopStalls.inc(),
        stallThresholdMs,
        name,
      });
    },
    stop() {
      if (rep) {
        ticks += rep.ticks;
        stalls += rep.stalls;
      }
      rep?.stop();
      rep = undefined;
    },
    get running() {
      return rep?.running ?? false;
    },
    get ticks() {
      return ticks + (rep?.ticks ?? 0);
    },
    get stalls() {
      return stalls + (rep?.stalls ?? 0);
    },
  };
}
