/**
 * The volume gate on removal (removal is gated like setting), through the driver: against the simulator over real
 * HTTP, the switch asks the traded volume when a removal meets the gate and the machine judges it
 * (machine.ts VOLUME_GATE_USD); a fake client shows the volume is asked for nothing else.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { HyperliquidApiError } from "../../src/protocol/hyperliquid/errors.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { localSigner } from "../../src/protocol/hyperliquid/signing.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createSwitch, type ScheduleCancelClient } from "../../src/switch/index.js";
import { Ledger } from "../../src/switch/ledger.js";
import { captureLogger } from "../app/helpers.js";
import { ledgerBus, switchBus } from "../helpers/switch-bus.js";
import { testWallet } from "../sim/helpers.js";
import { FEATURES } from "./features.js";
import { SWITCH_CADENCE } from "./world.js";

const wallet = testWallet("removal-gate");
let sim: SimulatorHandle | undefined;
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await sim?.close();
  sim = undefined;
});

async function removal(opts: {
  client?: ScheduleCancelClient;
  volumeUsd?: number;
  armedBefore?: boolean;
  infoFault?: boolean;
  /** what the fake's userRateLimit answers */
  fakeVolume?: number;
}) {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const log = captureLogger();
  const asked: number[] = [];
  let client = opts.client;
  let cumulativeVolume = async (_a: string): Promise<number> => {
    asked.push(opts.fakeVolume ?? 0);
    return opts.fakeVolume ?? 0;
  };
  if (!client) {
    sim = await startSimulator({
      clock,
      users: [{ address: wallet.address, volumeUsd: opts.volumeUsd ?? 0 }],
    });
    const exchange = new ExchangeClient({
      apiUrl: sim.apiUrl,
      signer: localSigner(wallet.privateKey),
      isMainnet: true,
      clock,
    });
    const info = new InfoClient({ apiUrl: sim.apiUrl, retryLimit: 0 });
    closers.push(
      () => exchange.close(),
      () => info.close(),
    );
    if (opts.infoFault) sim.faults.set("info", { errorRate: 1, types: ["userRateLimit"] });
    client = exchange;
    cumulativeVolume = async (a) => {
      const v = await info.cumulativeVolume(a);
      asked.push(v);
      return v;
    };
  }
  const ledger = await Ledger.open({
    stateDir: mkdtempSync(join(tmpdir(), "hl-deadman-removal-")),
    clock,
    bus: ledgerBus(log.logger),
    triggerLimit: 10,
  });
  closers.push(() => ledger.close());
  const account = wallet.address.toLowerCase();
  // a schedule armed by an earlier run (the exchange may still hold it)
  if (opts.armedBefore)
    ledger.put({ ...ledger.initial(account), armedUntil: clock.now() + 600_000, lastPushAt: clock.now() });
  const sw = createSwitch({
    account: { address: account },
    features: FEATURES,
    policy: SWITCH_CADENCE,
    io: {
      client,
      ledger,
      cumulativeVolume,
    },
    runtime: createRuntime({ clock, timers }),
    bus: switchBus(log.logger, createMetrics()),
  });
  const outcome = sw.shutdown({ mode: "remove" });
  for (let i = 0; i < 50 && !(await Promise.race([outcome.then(() => true), Promise.resolve(false)])); i++) {
    await sw.settle();
    await new Promise((r) => setTimeout(r, 10));
  }
  return { outcome: await outcome, asked, log };
}

describe("a removal refused by the volume gate", () => {
  test("default: below the gate → nothing armed, read from userRateLimit.cumVlm: skipped, not a failure", async () => {
    const r = await removal({ volumeUsd: 373.47205 });
    expect(r.asked).toEqual([373.47205]);
    expect(r.outcome).toMatchObject({ outcome: "skipped", reason: "volume_gate" });
    expect(r.log.events("shutdown.nothing_armed")).toHaveLength(1);
    expect(r.log.events("shutdown.remove_failed")).toHaveLength(0);
  });

  test("the volume cannot be read (fault) while an earlier run armed → a real failure", async () => {
    const r = await removal({ volumeUsd: 10, armedBefore: true, infoFault: true });
    expect(r.outcome).toMatchObject({ outcome: "failed", reason: "volume_gate" });
    expect(r.log.events("shutdown.remove_failed")).toHaveLength(1);
  });

  test("a gate refusal while cumVlm is above the gate → a real failure; another error → the volume is not asked", async () => {
    const gate: ScheduleCancelClient = {
      scheduleCancel: async () => {
        throw new HyperliquidApiError({
          kind: "volume_gate",
          endpoint: "exchange",
          serverMessage: "Cannot set…",
        });
      },
    };
    const above = await removal({ client: gate, armedBefore: true, fakeVolume: 2_000_000 });
    expect(above.asked).toEqual([2_000_000]);
    expect(above.outcome).toMatchObject({ outcome: "failed", reason: "volume_gate" });
    const other: ScheduleCancelClient = {
      scheduleCancel: async () => {
        throw new HyperliquidApiError({ kind: "server_error", endpoint: "exchange" });
      },
    };
    const r = await removal({ client: other, armedBefore: true });
    expect(r.outcome).toMatchObject({ outcome: "failed", reason: "server_error" });
    expect(r.asked).toEqual([]);
  });
});
