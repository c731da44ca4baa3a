import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { FaultController } from "../../src/sim/faults.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { post, signedScheduleCancel, testWallet } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const user = testWallet("faults-user");
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(seed = 1) {
  sim = await startSimulator({ clock: new ManualClock(T0), seed, users: [{ address: user.address }] });
  return sim;
}
const infoBody = { type: "batchClearinghouseStates", users: [user.address] };
const rpcBody = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };

describe("faults", () => {
  test("default", async () => {
    await start();
    expect(sim?.faults.get("exchange")).toEqual({});
    expect((await post(`${sim?.apiUrl}/info`, infoBody)).status).toBe(200);
  });

  test("behavior: latency delays the answer", async () => {
    await start();
    sim?.faults.set("info", { latencyMs: 300 });
    const t0 = performance.now();
    const res = await post(`${sim?.apiUrl}/info`, infoBody);
    expect(res.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    sim?.faults.clear("info");
    const t1 = performance.now();
    await post(`${sim?.apiUrl}/info`, infoBody);
    expect(performance.now() - t1).toBeLessThan(250);
  });

  test.each([500, 502, 503] as const)("behavior: errorRate 1 answers %i with body null", async (status) => {
    await start();
    sim?.faults.set("exchange", { errorRate: 1, errorStatus: status });
    const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce: T0, time: T0 + 60_000 });
    const res = await post(`${sim?.apiUrl}/exchange`, body);
    expect(res.status).toBe(status);
    expect(res.text).toBe("null");
    // Faults act before the handler: nothing was scheduled, but the request was counted.
    expect(sim?.state.getSchedule(user.address)).toBeNull();
    expect(sim?.state.requestCount("exchange")).toBe(1);
  });

  test("behavior: rateLimit answers 429", async () => {
    await start();
    sim?.faults.set("info", { rateLimit: true });
    expect((await post(`${sim?.apiUrl}/info`, infoBody)).status).toBe(429);
  });

  test("behavior: resetRate 1 destroys the connection", async () => {
    await start();
    sim?.faults.set("exchange", { resetRate: 1 });
    const error = await post(`${sim?.apiUrl}/exchange`, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(String((error as Error & { cause?: unknown }).cause)).toMatch(
      /other side closed|ECONNRESET|socket/i,
    );
  });

  test("behavior: blackhole never answers; the client times out and close() still returns", async () => {
    await start();
    sim?.faults.set("info", { blackhole: true });
    const t0 = performance.now();
    const error = await post(`${sim?.apiUrl}/info`, infoBody, { signal: AbortSignal.timeout(300) }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).name).toBe("TimeoutError");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    // Other endpoints are unaffected.
    expect((await post(sim?.rpcUrl as string, rpcBody)).json).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: "0x3e7",
    });
    const c0 = performance.now();
    await sim?.close();
    expect(performance.now() - c0).toBeLessThan(1_000);
  });

  test("behavior: malformed, wrongShape and hugeBody", async () => {
    await start();
    sim?.faults.set("info", { malformed: true });
    const bad = await post(`${sim?.apiUrl}/info`, infoBody);
    expect(bad.status).toBe(200);
    expect(() => JSON.parse(bad.text)).toThrow();
    sim?.faults.set("info", { wrongShape: true });
    expect((await post(`${sim?.apiUrl}/info`, infoBody)).json).toEqual({ hello: "world" });
    sim?.faults.set("evm", { malformed: true });
    expect((await post(sim?.rpcUrl as string, rpcBody)).json).toBeUndefined();
    sim?.faults.set("info", { hugeBody: true });
    const huge = await post(`${sim?.apiUrl}/info`, infoBody);
    expect(huge.text.length).toBeGreaterThan(3 * 1024 * 1024);
    expect(Array.isArray(huge.json)).toBe(true);
  });

  test("behavior: `all` covers every endpoint and clear() restores them", async () => {
    await start();
    sim?.faults.set("all", { rateLimit: true });
    expect((await post(`${sim?.apiUrl}/info`, infoBody)).status).toBe(429);
    expect((await post(`${sim?.apiUrl}/exchange`, {})).status).toBe(429);
    expect((await post(sim?.rpcUrl as string, rpcBody)).status).toBe(429);
    expect((await post(`${sim?.apiUrl}/KEY123/evm`, rpcBody)).status).toBe(429);
    sim?.faults.clear();
    expect((await post(`${sim?.apiUrl}/KEY123/evm`, rpcBody)).status).toBe(200);
    expect(sim?.state.requestCount("evm")).toBe(3);
    expect(sim?.state.requestCount()).toBe(5);
  });

  test("behavior: random faults are deterministic for a seed", async () => {
    const pattern = (seed: number) => {
      const f = new FaultController(seed);
      f.set("info", { errorRate: 0.5 });
      return Array.from({ length: 40 }, () => f.decide("info").kind).join(",");
    };
    expect(pattern(7)).toBe(pattern(7));
    expect(pattern(7)).not.toBe(pattern(8));
    const kinds = pattern(7).split(",");
    expect(kinds.filter((k) => k === "status").length).toBeGreaterThan(8);
    expect(kinds.filter((k) => k === "pass").length).toBeGreaterThan(8);
    // And over HTTP, two simulators with the same seed fail the same requests.
    const statuses = async (seed: number) => {
      await start(seed);
      sim?.faults.set("info", { errorRate: 0.5, errorStatus: 503 });
      const out: number[] = [];
      for (let i = 0; i < 12; i++) out.push((await post(`${sim?.apiUrl}/info`, infoBody)).status);
      await sim?.close();
      return out;
    };
    const first = await statuses(11);
    expect(await statuses(11)).toEqual(first);
    expect(first).toContain(503);
    expect(first).toContain(200);
  });

  test("error: a bad fault spec names the field", () => {
    const f = new FaultController();
    expect(() => f.set("info", { errorRate: 2 })).toThrow(/errorRate/);
    expect(() => f.set("info", { errorStatus: 404 } as never)).toThrow(/errorStatus/);
    expect(() => f.set("nope" as never, {})).toThrow(/exchange, info, evm, explorer or all/);
  });
});
