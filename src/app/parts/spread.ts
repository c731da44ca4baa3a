/**
 * The switches' first pushes, spread (docs/operations.md, "Many accounts, several signers"): account i pushes
 * first, and then on its slots, `i × step` after the grid's origin, so that N accounts never push in one burst.
 * Each switch applies its start-up record once started. Wired by the switches component (src/app/parts/switches.ts).
 */
import type { Config } from "../../config/schema.js";
import { pushSpacing } from "../../config/weight.js";
import type { Runtime, TimerHandle } from "../../core/runtime.js";
import type { Switch } from "../../switch/index.js";
import type { RecordResult } from "../../switch/record.js";

/** Starts `switches` spread; the later starts' timers go into `pending` (cancelled on close). */
export function startSpread(
  switches: readonly Switch[],
  {
    config,
    runtime,
    slotOrigin,
    startRecords,
    pending,
  }: {
    config: Config;
    runtime: Runtime;
    slotOrigin: number;
    startRecords: ReadonlyMap<string, RecordResult>;
    pending: TimerHandle[];
  },
): { firstPassMs: number } {
  const step = pushSpacing(config.interval, switches.length);
  const begin = (s: Switch, offset: number) => {
    s.dispatch({ type: "start", slotOrigin: slotOrigin + offset });
    const record = startRecords.get(s.account);
    if (record) s.dispatch({ type: "record", result: record });
  };
  for (const [i, s] of switches.entries()) {
    if (i === 0 || step === 0) begin(s, 0);
    else pending.push(runtime.timers.after(i * step, () => begin(s, i * step)));
  }
  /** how long after the first switch the last one starts (the spread's first pass; 0 for one account) */
  return { firstPassMs: step * Math.max(0, switches.length - 1) };
}
