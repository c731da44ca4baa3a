/**
 * The driver (src/switch/driver.ts) carries out each Ready and decides nothing: what it owes the machine about
 * the ledger. Over a fake store and exchange client, a ManualClock and ManualTimers.
 */
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import type { ScheduleCancelParameters } from "../../src/protocol/hyperliquid/exchange.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createSwitch, type SwitchLedger, type SwitchTestSeams } from "../../src/switch/driver.js";
import type { LedgerEntry } from "../../src/switch/ledger.js";
import { HISTORY_SIZE, newEntry } from "../../src/switch/ledger-model.js";
import { step } from "../../src/switch/machine.js";
import { captureLogger } from "../app/helpers.js";
import { switchBus } from "../helpers/switch-bus.js";
import { FEATURES } from "./features.js";
import { SWITCH_CADENCE } from "./world.js";

const ACCOUNT = "0x00000000000000000000000000000000000000aa";
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function rig(store: Partial<SwitchLedger>, testSeams?: SwitchTestSeams) {
  const clock = new ManualClock(T0);
  const timers = new ManualTimers(clock);
  const log = captureLogger();
  const sent: ScheduleCancelParameters[] = [];
  const ledger: SwitchLedger = {
    historySize: HISTORY_SIZE,
    initial: () => newEntry(ACCOUNT, T0, { limit: 10 }),
    put: () => undefined,
    durable: async () => "written",
    writtenUpdatedAt: T0,
    ...store,
  };
  const sw = createSwitch({
    account: { address: ACCOUNT },
    features: FEATURES,
    policy: {
      ...SWITCH_CADENCE,
      nonceSpan: { requestTimeoutMs: 5_000, deadlineMs: 60_000 },
    },
    io: {
      client: {
        async scheduleCancel(params) {
          sent.push(params);
          const serverDate = Math.floor(clock.now() / 1000) * 1000;
          return {
            nonce: clock.now(),
            expiresAfter: undefined,
            time: params.time,
            responseType: "default",
            latencyMs: 5,
            serverDate,
          };
        },
      },
      ledger,
    },
    runtime: createRuntime({ clock, timers }),
    bus: switchBus(log.logger, createMetrics({ defaultMetrics: false })),
    testSeams,
  });
  return { sw, sent, log, timers, clock };
}

describe("driver", () => {
  test("behavior: every durable write is reported to the machine with the file's updatedAt; a write-ahead holds its request until then", async () => {
    const puts: LedgerEntry[] = [];
    let release: (d: "written") => void = () => {};
    const r = rig({
      put: (e) => void puts.push(e),
      durable: () =>
        new Promise<"written">((resolve) => {
          release = resolve;
        }),
      writtenUpdatedAt: T0 + 7,
    });
    r.sw.dispatch({ type: "start" });
    await Promise.resolve();
    // the first push's intent is handed to the store; the request waits for it
    expect(puts).toHaveLength(1);
    expect(puts[0]!.pendingUntil).toBe(T0 + 60_000);
    expect(r.sent).toHaveLength(0);
    release("written");
    await r.sw.settle();
    expect(r.sent).toHaveLength(1);
    // the machine knows what the file holds: the intent, at the store's updatedAt
    expect(r.sw.testSeams.model.disk.entry?.pendingUntil).toBe(T0 + 60_000);
    expect(r.sw.testSeams.model.disk.updatedAt).toBe(T0 + 7);
    await r.sw.dispatch({ type: "stop" });
  });

  test("behavior: a store that throws holds no request back: the push leaves, the throw is logged", async () => {
    const r = rig({
      put: () => {
        throw new Error("store broken");
      },
    });
    r.sw.dispatch({ type: "start" });
    await r.sw.settle();
    expect(r.sent).toHaveLength(1);
    expect(r.log.events("switch.effect_failed")[0]).toMatchObject({ effect: "persist" });
    expect(r.sw.status().state).toBe("armed");
    await r.sw.dispatch({ type: "stop" });
  });

  test("behavior: a tick whose step throws is published and said (loop.tick_failed, the push loop's); the next tick runs", async () => {
    let ticks = 0;
    const r = rig(
      {},
      {
        machineStep: (model, event, now) => {
          if (event.type === "tick" && ++ticks === 1) throw new Error("step broken");
          return step(model, event, now);
        },
      },
    );
    r.sw.dispatch({ type: "start" });
    await r.sw.settle();
    r.clock.advance(SWITCH_CADENCE.intervalMs);
    r.timers.run();
    expect(r.log.events("loop.tick_failed")).toHaveLength(1);
    expect(r.log.events("loop.tick_failed")[0]).toMatchObject({
      loop: "push",
      module: "switch",
      account: ACCOUNT,
    });
    r.clock.advance(SWITCH_CADENCE.intervalMs);
    r.timers.run();
    expect(ticks).toBe(2);
    await r.sw.dispatch({ type: "stop" });
  });
});
