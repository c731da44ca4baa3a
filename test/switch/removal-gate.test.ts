/** The volume gate on removal, against the simulator over real HTTP (removal is gated like setting). */
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { HyperliquidApiError } from "../../src/protocol/hyperliquid/errors.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { localSigner } from "../../src/protocol/hyperliquid/signing.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { judgeRefusedRemoval } from "../../src/switch/removal-gate.js";
import { testWallet } from "../sim/helpers.js";

const wallet = testWallet("removal-gate");
let sim: SimulatorHandle | undefined;
const closers: Array<() => void> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c();
  await sim?.close();
  sim = undefined;
});

async function refusedRemoval(volumeUsd: number) {
  const clock = new ManualClock();
  sim = await startSimulator({ clock, users: [{ address: wallet.address, volumeUsd }] });
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
  const error = await exchange.scheduleCancel({}).then(
    () => null,
    (e: unknown) => e,
  );
  return { error, info, sim };
}

describe("a removal refused by the volume gate", () => {
  test("default: below the gate → nothing_armed, read from userRateLimit.cumVlm", async () => {
    const { error, info } = await refusedRemoval(373.47205);
    expect(error).toBeInstanceOf(HyperliquidApiError);
    expect((error as HyperliquidApiError).kind).toBe("volume_gate");
    const v = await judgeRefusedRemoval(error, wallet.address, (a) => info.cumulativeVolume(a));
    expect(v).toMatchObject({ verdict: "nothing_armed", cumVlm: 373.47205 });
  });

  test("the volume cannot be read (fault) → a real failure", async () => {
    const { error, info, sim } = await refusedRemoval(10);
    sim.faults.set("info", { errorRate: 1, types: ["userRateLimit"] });
    const v = await judgeRefusedRemoval(error, wallet.address, (a) => info.cumulativeVolume(a));
    expect(v.verdict).toBe("failure");
    expect(v.detail).toMatch(/could not be read/);
  });

  test("a gate refusal while cumVlm is above the gate, or another error → a real failure", async () => {
    const gate = new HyperliquidApiError({
      kind: "volume_gate",
      endpoint: "exchange",
      serverMessage: "Cannot set…",
    });
    expect((await judgeRefusedRemoval(gate, wallet.address, async () => 2_000_000)).verdict).toBe("failure");
    const other = new HyperliquidApiError({ kind: "server_error", endpoint: "exchange" });
    let asked = false;
    const v = await judgeRefusedRemoval(other, wallet.address, async () => {
      asked = true;
      return 0;
    });
    expect(v.verdict).toBe("failure");
    expect(asked).toBe(false);
  });
});
