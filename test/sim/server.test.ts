import { afterEach, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { ManualClock } from "../../src/utils/clock.js";
import { post, signedScheduleCancel, testWallet } from "./helpers.js";

const user = testWallet("server-user");
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe("startSimulator", () => {
  test("default", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    sim = await startSimulator({ clock, users: [{ address: user.address }] });
    expect(sim.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.rpcUrl).toBe(`${sim.apiUrl}/evm`);
    const now = clock.now();
    const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce: now, time: now + 60_000 });
    const res = await post(`${sim.apiUrl}/exchange`, body);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok", response: { type: "scheduleCancel" } });
    expect(res.headers.get("date")).toBeTruthy();
    expect(sim.state.getSchedule(user.address)).toBe(now + 60_000);
  });
});
