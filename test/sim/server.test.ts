import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { isLoopback } from "../../src/sim/admin.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { eventually } from "../helpers/eventually.js";
import { post, signedScheduleCancel, testWallet } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12);
const user = testWallet("server-user");
const late = testWallet("server-late");
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function get(url: string) {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("startSimulator", () => {
  test("default", async () => {
    const clock = new ManualClock(T0);
    sim = await startSimulator({ clock, users: [{ address: user.address }] });
    expect(sim.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.rpcUrl).toBe(`${sim.apiUrl}/evm`);
    expect(sim.adminUrl).toBe(`${sim.apiUrl}/admin`);
    expect(sim.clock).toBe(clock);
    expect(sim.demo).toBeUndefined();
    const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce: T0, time: T0 + 60_000 });
    const res = await post(`${sim.apiUrl}/exchange`, body);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok", response: { type: "scheduleCancel" } });
    expect(res.headers.get("date")).toMatch(/GMT$/);
    expect(sim.state.getSchedule(user.address)).toBe(T0 + 60_000);
  });

  test("behavior: /evm and /<key>/evm serve the chain", async () => {
    sim = await startSimulator({ clock: new ManualClock(T0), seed: 5 });
    const call = { jsonrpc: "2.0", id: 9, method: "eth_blockNumber", params: [] };
    const a = await post(sim.rpcUrl, call);
    const b = await post(`${sim.apiUrl}/my-endpoint-key/evm`, call);
    expect(a.json).toEqual({ jsonrpc: "2.0", id: 9, result: `0x${sim.chain.head().toString(16)}` });
    expect(b.json).toEqual(a.json);
    expect(sim.state.requestCount("evm")).toBe(2);
  });

  test("behavior: warmBigBlockOnRpc signs the big block from the first JSON-RPC request on, not before", async () => {
    sim = await startSimulator({
      clock: new ManualClock(T0),
      seed: 31,
      chain: { bigBlockTxs: 120 },
      warmBigBlockOnRpc: true,
    });
    const chain = sim.chain;
    expect((await post(`${sim.apiUrl}/info`, { type: "meta" })).status).toBe(200);
    expect(chain.bigBlockBuilt).toBe(false);
    const call = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
    expect((await post(sim.rpcUrl, call)).json).toMatchObject({ result: "0x3e7" });
    await eventually(() => chain.bigBlockBuilt, { what: "the big block built in the background" });
    expect(chain.transactions(chain.bigBlock)).toHaveLength(120);
  });

  test("behavior: keep-alive connections are reused and close() is idempotent", async () => {
    sim = await startSimulator({ clock: new ManualClock(T0) });
    const body = { type: "batchClearinghouseStates", users: [user.address] };
    for (let i = 0; i < 3; i++) expect((await post(`${sim.apiUrl}/info`, body)).status).toBe(200);
    await Promise.all([sim.close(), sim.close()]);
    await sim.close();
    await expect(post(`${sim.apiUrl}/info`, body)).rejects.toThrow();
    sim = undefined;
  });

  test("behavior: addUser registers at run time", async () => {
    sim = await startSimulator({ clock: new ManualClock(T0) });
    const body = await signedScheduleCancel({ privateKey: late.privateKey, nonce: T0, time: T0 + 60_000 });
    expect((await post(`${sim.apiUrl}/exchange`, body)).json).toMatchObject({ status: "err" });
    sim.addUser({ address: late.address });
    const again = await signedScheduleCancel({
      privateKey: late.privateKey,
      nonce: T0 + 1,
      time: T0 + 60_000,
    });
    expect((await post(`${sim.apiUrl}/exchange`, again)).json).toMatchObject({ status: "ok" });
  });

  test("error: unknown paths and methods", async () => {
    sim = await startSimulator({ clock: new ManualClock(T0) });
    expect((await fetch(`${sim.apiUrl}/nope`)).status).toBe(404);
    expect((await fetch(`${sim.apiUrl}/info`)).status).toBe(405);
  });

  test("error: a bad user is refused with the field named", async () => {
    await expect(startSimulator({ users: [{ address: "0x12" }] })).rejects.toThrow(/address/);
    await expect(
      startSimulator({
        users: [{ address: user.address, positions: [{ coin: "BTC", szi: 0, entryPx: 1 }] }],
      }),
    ).rejects.toThrow(/szi must not be 0/);
  });
});

describe("admin route", () => {
  test("default", async () => {
    sim = await startSimulator({ clock: new ManualClock(T0), users: [{ address: user.address }] });
    const state = await get(`${sim.adminUrl}/state`);
    expect(state.status).toBe(200);
    expect(state.json).toMatchObject({
      now: T0,
      day: "2026-01-01",
      requests: { exchange: 0, info: 0, evm: 0 },
    });
    expect((state.json.accounts as Array<{ address: string }>)[0]?.address).toBe(user.address.toLowerCase());
  });

  test("behavior: faults, clock, users and marks through the admin route", async () => {
    const clock = new ManualClock(T0);
    sim = await startSimulator({ clock, users: [{ address: user.address }] });
    const admin = sim.adminUrl;
    expect(
      (await post(`${admin}/faults`, { endpoint: "info", fault: { errorRate: 1, errorStatus: 502 } })).status,
    ).toBe(200);
    expect(sim.faults.get("info")).toEqual({ errorRate: 1, errorStatus: 502 });
    const info = { type: "batchClearinghouseStates", users: [user.address] };
    expect((await post(`${sim.apiUrl}/info`, info)).status).toBe(502);
    await post(`${admin}/faults`, { endpoint: "info", fault: null });
    expect((await post(`${sim.apiUrl}/info`, info)).status).toBe(200);

    // The clock route moves the manual clock, which fires the trigger.
    sim.state.addOrder(user.address, { coin: "BTC", side: "B", limitPx: 1, sz: 1 });
    const arm = await signedScheduleCancel({ privateKey: user.privateKey, nonce: T0, time: T0 + 10_000 });
    await post(`${sim.apiUrl}/exchange`, arm);
    expect((await post(`${admin}/clock`, { advanceMs: 10_000 })).json).toEqual({
      ok: true,
      now: T0 + 10_000,
    });
    expect(clock.now()).toBe(T0 + 10_000);
    expect(sim.state.getTriggers(user.address)).toHaveLength(1);
    expect((await post(`${admin}/clock`, { setMs: T0 })).json).toEqual({ ok: true, now: T0 });

    expect((await post(`${admin}/users`, [{ address: late.address, volumeUsd: 5 }])).json).toEqual({
      ok: true,
      users: 1,
    });
    const body = await signedScheduleCancel({
      privateKey: late.privateKey,
      nonce: T0 + 5,
      time: T0 + 60_000,
    });
    expect(((await post(`${sim.apiUrl}/exchange`, body)).json as { response: string }).response).toMatch(
      /Traded: \$5\./,
    );
    expect((await post(`${admin}/marks`, { coin: "BTC", px: "123.5" })).status).toBe(200);
    expect(sim.state.getMark("BTC")).toBe(123.5);
  });

  test("error: bad admin bodies name the problem; the real clock cannot be moved", async () => {
    sim = await startSimulator({});
    const bad = await post(`${sim.adminUrl}/faults`, { endpoint: "info", fault: { errorRate: 3 } });
    expect(bad.status).toBe(400);
    expect((bad.json as { error: string }).error).toMatch(/errorRate/);
    expect((await post(`${sim.adminUrl}/clock`, { advanceMs: 1 })).status).toBe(409);
    expect((await post(`${sim.adminUrl}/users`, { address: "nope" })).status).toBe(400);
    expect((await post(`${sim.adminUrl}/nothing`, {})).status).toBe(404);
  });

  test("behavior: only loopback peers are answered", () => {
    expect(isLoopback("127.0.0.1")).toBe(true);
    expect(isLoopback("::1")).toBe(true);
    expect(isLoopback("::ffff:127.0.0.1")).toBe(true);
    expect(isLoopback("10.0.0.5")).toBe(false);
    expect(isLoopback("::ffff:192.168.1.2")).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });
});
