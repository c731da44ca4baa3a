import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { demoAccount } from "../../src/sim/demo.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { post, signedScheduleCancel } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12);
// Well-known development keys (Hardhat/Anvil account #0 and the "1" key) must never be the demo key.
const WELL_KNOWN = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x0000000000000000000000000000000000000000000000000000000000000001",
];
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe("demo", () => {
  test("default", async () => {
    sim = await startSimulator({ clock: new ManualClock(T0), demo: true, seed: 42 });
    const demo = sim.demo;
    expect(demo).toEqual(demoAccount(42));
    expect(demo?.privateKey).toMatch(/^0x[0-9a-f]{64}$/);
    expect(WELL_KNOWN).not.toContain(demo?.privateKey);
    const address = demo?.address as string;
    const positions = sim.state.getPositions(address);
    expect(positions.map((p) => p.coin).sort()).toEqual(["BTC", "ETH", "SOL"]);
    expect(positions.some((p) => p.szi > 0)).toBe(true);
    expect(positions.some((p) => p.szi < 0)).toBe(true);
    expect(new Set(positions.map((p) => p.marginMode))).toEqual(new Set(["cross", "isolated"]));
    expect(sim.state.getOpenOrders(address).length).toBeGreaterThanOrEqual(3);
    // The demo key can arm the switch (registered, above the volume gate).
    const body = await signedScheduleCancel({
      privateKey: demo?.privateKey as string,
      nonce: T0,
      time: T0 + 60_000,
    });
    expect((await post(`${sim.apiUrl}/exchange`, body)).json).toMatchObject({ status: "ok" });
  });

  test("behavior: the key depends on the seed", () => {
    expect(demoAccount(1)).toEqual(demoAccount(1));
    expect(demoAccount(1).privateKey).not.toBe(demoAccount(2).privateKey);
  });

  test("behavior: marks random-walk once per simulated second, reproducibly", async () => {
    const run = async (seed: number) => {
      const clock = new ManualClock(T0);
      const s = await startSimulator({ clock, demo: true, seed });
      const seen: number[] = [s.state.getMark("BTC") as number];
      clock.advance(999);
      seen.push(s.state.getMark("BTC") as number);
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        seen.push(s.state.getMark("BTC") as number);
      }
      const info = await post(`${s.apiUrl}/info`, {
        type: "batchClearinghouseStates",
        users: [s.demo?.address],
      });
      await s.close();
      return {
        seen,
        info: info.json as Array<{
          assetPositions: Array<{ position: { coin: string; positionValue: string } }>;
        }>,
      };
    };
    const a = await run(3);
    expect(a.seen[1]).toBe(a.seen[0]); // < 1 s: no step
    expect(new Set(a.seen.slice(1)).size).toBeGreaterThan(3); // moves each second
    for (const px of a.seen) expect(Math.abs(px / 97_000 - 1)).toBeLessThan(0.05);
    expect((await run(3)).seen).toEqual(a.seen);
    expect((await run(4)).seen).not.toEqual(a.seen);
    const btc = a.info[0]?.assetPositions.find((p) => p.position.coin === "BTC");
    expect(Number(btc?.position.positionValue)).toBeCloseTo(0.25 * (a.seen.at(-1) as number), 4);
  });

  test("behavior: a large clock jump is walked in bounded steps", async () => {
    const clock = new ManualClock(T0);
    sim = await startSimulator({ clock, demo: true });
    // counted, not timed: 30 days are at most 3,600 steps of the three demo marks (src/sim/demo.ts), not 2.6 million
    let marks = 0;
    const setMark = sim.state.setMark.bind(sim.state);
    sim.state.setMark = (coin, px) => {
      marks++;
      setMark(coin, px);
    };
    clock.advance(30 * 86_400_000);
    expect(marks).toBeGreaterThan(0);
    expect(marks).toBeLessThanOrEqual(3_600 * 3);
    expect(sim.state.getMark("ETH")).toBeGreaterThan(0);
  });
});
