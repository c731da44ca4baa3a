import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { recoverL1ActionSignerSync } from "../../src/protocol/hyperliquid/signing.js";
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from "../../src/sim/server.js";
import { post, signedScheduleCancel, testWallet } from "./helpers.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const DAY = 86_400_000;
const user = testWallet("exchange-user");
const agent = testWallet("exchange-agent");
const stranger = testWallet("exchange-stranger");
const vault = "0x1111111111111111111111111111111111111111";
const DESERIALIZE = "Failed to deserialize the JSON body into the target type";

let sim: SimulatorHandle | undefined;
let clock: ManualClock;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  clock = new ManualClock(T0);
  sim = await startSimulator({
    clock,
    users: [{ address: user.address, agents: [agent.address], vaults: [vault] }],
    ...options,
  });
  return sim;
}

type Args = Parameters<typeof signedScheduleCancel>[0];
async function send(args: Partial<Args> = {}) {
  const nonce = args.nonce ?? clock.now();
  const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce, ...args });
  return post(`${(sim as SimulatorHandle).apiUrl}/exchange`, body);
}
const err = (response: string) => ({ status: "err", response });

describe("POST /exchange scheduleCancel", () => {
  test("default", async () => {
    await start();
    const res = await send({ time: T0 + 60_000 });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(res.json).toEqual({ status: "ok", response: { type: "scheduleCancel" } });
    expect(sim?.state.getSchedule(user.address)).toBe(T0 + 60_000);
    const last = sim?.state.actions.at(-1);
    expect(last).toMatchObject({
      receivedAt: T0,
      signer: user.address.toLowerCase(),
      user: user.address.toLowerCase(),
      nonce: T0,
      accepted: true,
      httpStatus: 200,
      action: { type: "scheduleCancel", time: T0 + 60_000 },
    });
  });

  test("behavior: successType default answers like the real API", async () => {
    await start({ successType: "default" });
    expect((await send({ time: T0 + 60_000 })).json).toEqual({ status: "ok", response: { type: "default" } });
  });

  test("behavior: a new time replaces the schedule and no time removes it", async () => {
    await start();
    await send({ time: T0 + 60_000, nonce: T0 });
    expect((await send({ time: T0 + 90_000, nonce: T0 + 1 })).json).toMatchObject({ status: "ok" });
    expect(sim?.state.getSchedule(user.address)).toBe(T0 + 90_000);
    expect((await send({ nonce: T0 + 2 })).json).toMatchObject({ status: "ok" });
    expect(sim?.state.getSchedule(user.address)).toBeNull();
    // Removing when nothing is scheduled is fine too.
    expect((await send({ nonce: T0 + 3 })).json).toMatchObject({ status: "ok" });
  });

  test("behavior: the minimum lead time is 5000 ms exactly", async () => {
    await start();
    expect((await send({ time: T0 + 4_999, nonce: T0 })).json).toEqual(
      err("Scheduled cancel time too early, must be at least 5 seconds from now."),
    );
    expect((await send({ time: T0 + 5_000, nonce: T0 + 1 })).json).toMatchObject({ status: "ok" });
  });

  test("error: undeserializable bodies get 422 text/plain", async () => {
    await start();
    const url = `${sim?.apiUrl}/exchange`;
    const good = await signedScheduleCancel({ privateKey: user.privateKey, nonce: T0, time: T0 + 60_000 });
    const cases: unknown[] = [
      "{not json",
      { ...good, action: { type: "order", orders: [] } },
      { action: good.action, signature: good.signature },
      { action: good.action, nonce: T0 },
      { ...good, action: { type: "scheduleCancel", time: 1.5 } },
      { ...good, action: { type: "scheduleCancel", time: "1767225660000" } },
      { ...good, action: { type: "scheduleCancel", tim: T0 + 60_000 } },
      { ...good, nonce: -1 },
      { ...good, signature: { r: "zz", s: good.signature.s, v: 27 } },
      [],
    ];
    for (const body of cases) {
      const res = await post(url, typeof body === "string" ? body : body, { raw: typeof body === "string" });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.text).toBe(DESERIALIZE);
      expect(res.headers.get("content-type")).toMatch(/text\/plain/);
    }
    expect(sim?.state.getSchedule(user.address)).toBeNull();
    expect(sim?.state.actions.filter((a) => a.httpStatus === 422)).toHaveLength(cases.length);
  });

  test("error: expiresAfter in the past", async () => {
    await start();
    expect((await send({ time: T0 + 60_000, expiresAfter: T0 - 1 })).json).toEqual(
      err("Action already expired"),
    );
    // expiresAfter is part of the signed hash and a future one is fine.
    expect((await send({ time: T0 + 60_000, expiresAfter: T0 + 1000, nonce: T0 + 1 })).json).toMatchObject({
      status: "ok",
    });
  });

  test("behavior: check order — expired wins over nonce, signer and too-early", async () => {
    await start();
    const body = await signedScheduleCancel({
      privateKey: stranger.privateKey,
      nonce: T0 - 3 * DAY,
      time: T0 + 1,
      expiresAfter: T0 - 1,
    });
    expect((await post(`${sim?.apiUrl}/exchange`, body)).json).toEqual(err("Action already expired"));
    // Nonce window comes before the signer (no address in the reply).
    const body2 = await signedScheduleCancel({
      privateKey: stranger.privateKey,
      nonce: T0 - 3 * DAY,
      time: T0 + 1,
    });
    expect((await post(`${sim?.apiUrl}/exchange`, body2)).json).toEqual(
      err(`Invalid nonce: nonce too low ${T0 - 3 * DAY} < ${T0 - 2 * DAY}`),
    );
    // Unknown signer comes before too-early.
    const body3 = await signedScheduleCancel({ privateKey: stranger.privateKey, nonce: T0, time: T0 + 1 });
    expect((await post(`${sim?.apiUrl}/exchange`, body3)).json).toEqual(
      err(`L1 error: User or API Wallet ${stranger.address.toLowerCase()} does not exist.`),
    );
    // Too early comes before the volume gate.
    sim?.state.setVolume(user.address, 10);
    expect((await send({ time: T0 + 1 })).json).toEqual(
      err("Scheduled cancel time too early, must be at least 5 seconds from now."),
    );
  });

  test("error: nonce outside (T - 2 d, T + 1 d)", async () => {
    await start();
    expect((await send({ nonce: T0 - 2 * DAY, time: T0 + 60_000 })).json).toEqual(
      err(`Invalid nonce: nonce too low ${T0 - 2 * DAY} < ${T0 - 2 * DAY}`),
    );
    expect((await send({ nonce: T0 + DAY, time: T0 + 60_000 })).json).toEqual(
      err(`Invalid nonce: nonce too high ${T0 + DAY} > ${T0 + DAY}`),
    );
    expect((await send({ nonce: T0 - 2 * DAY + 1, time: T0 + 60_000 })).json).toMatchObject({ status: "ok" });
    expect((await send({ nonce: T0 + DAY - 1, time: T0 + 60_000 })).json).toMatchObject({ status: "ok" });
  });

  test("error: duplicate nonce, and a refused action still spends its nonce", async () => {
    await start();
    expect((await send({ nonce: T0 + 7, time: T0 + 60_000 })).json).toMatchObject({ status: "ok" });
    expect((await send({ nonce: T0 + 7, time: T0 + 70_000 })).json).toEqual(
      err(`Invalid nonce: duplicate nonce ${T0 + 7}`),
    );
    // Too early is an L1 refusal after the nonce check: the nonce is used.
    expect((await send({ nonce: T0 + 8, time: T0 })).json).toMatchObject({ status: "err" });
    expect((await send({ nonce: T0 + 8, time: T0 + 60_000 })).json).toEqual(
      err(`Invalid nonce: duplicate nonce ${T0 + 8}`),
    );
    // An unknown signer's request does not spend anything for the user.
    expect(sim?.state.getSchedule(user.address)).toBe(T0 + 60_000);
  });

  test("behavior: the 100 highest nonces are kept; a new one must exceed the smallest", async () => {
    await start({ ipWeightPerMinute: null });
    for (let i = 1; i <= 100; i++) {
      expect((await send({ nonce: T0 + i * 10 })).json).toMatchObject({ status: "ok" });
    }
    // Set = {10..1000}; out of order but unused and above the smallest: fine.
    expect((await send({ nonce: T0 + 15 })).json).toMatchObject({ status: "ok" });
    // Now the set lost T0+10; T0+20 is the smallest.
    expect((await send({ nonce: T0 + 12 })).json).toEqual(
      err(`Invalid nonce: nonce too low ${T0 + 12} < ${T0 + 15}`),
    );
    expect((await send({ nonce: T0 + 20 })).json).toEqual(err(`Invalid nonce: duplicate nonce ${T0 + 20}`));
    expect((await send({ nonce: T0 + 1001 })).json).toMatchObject({ status: "ok" });
  });

  test("error: unknown signer echoes the recovered lower-case address", async () => {
    await start();
    const body = await signedScheduleCancel({
      privateKey: stranger.privateKey,
      nonce: T0,
      time: T0 + 60_000,
    });
    const res = await post(`${sim?.apiUrl}/exchange`, body);
    expect(res.json).toEqual(
      err(`L1 error: User or API Wallet ${stranger.address.toLowerCase()} does not exist.`),
    );
    expect(sim?.state.actions.at(-1)).toMatchObject({ signer: stranger.address.toLowerCase(), user: null });
  });

  test("error: `time: null` hashes differently, so another signer is recovered", async () => {
    await start();
    const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce: T0 });
    const res = await post(`${sim?.apiUrl}/exchange`, {
      ...body,
      action: { type: "scheduleCancel", time: null },
    });
    const text = (res.json as { response: string }).response;
    expect(text).toMatch(/^L1 error: User or API Wallet 0x[0-9a-f]{40} does not exist\.$/);
    expect(text).not.toContain(user.address.toLowerCase());
  });

  test("error: a mainnet signature is a stranger on a testnet simulator", async () => {
    await start({ network: "testnet" });
    expect((await send({ time: T0 + 60_000 })).json).toMatchObject({ status: "err" });
    expect((await send({ time: T0 + 60_000, isMainnet: false, nonce: T0 + 1 })).json).toMatchObject({
      status: "ok",
    });
  });

  test("error: unrecoverable signature", async () => {
    await start();
    const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce: T0, time: T0 + 60_000 });
    const res = await post(`${sim?.apiUrl}/exchange`, { ...body, signature: { ...body.signature, v: 31 } });
    expect(res.json).toEqual(err("Unable to recover signer."));
  });

  test("behavior: an approved agent signs for its user", async () => {
    await start();
    const res = await send({ privateKey: agent.privateKey, time: T0 + 60_000 });
    expect(res.json).toMatchObject({ status: "ok" });
    expect(sim?.state.getSchedule(user.address)).toBe(T0 + 60_000);
    expect(sim?.state.actions.at(-1)).toMatchObject({
      signer: agent.address.toLowerCase(),
      user: user.address.toLowerCase(),
    });
    // Nonces are per signer: the user may reuse the agent's nonce.
    expect((await send({ time: T0 + 60_000 })).json).toMatchObject({ status: "ok" });
  });

  test("behavior: vaultAddress acts for a registered vault; others are refused", async () => {
    await start();
    expect((await send({ time: T0 + 60_000, vaultAddress: vault })).json).toMatchObject({ status: "ok" });
    expect(sim?.state.getSchedule(vault)).toBe(T0 + 60_000);
    expect(sim?.state.getSchedule(user.address)).toBeNull();
    const other = "0x2222222222222222222222222222222222222222";
    expect((await send({ time: T0 + 60_000, vaultAddress: other, nonce: T0 + 1 })).json).toEqual(
      err(`Vault not registered: ${other}`),
    );
    // An agent of the master may act for the vault as well.
    expect(
      (await send({ privateKey: agent.privateKey, vaultAddress: vault, nonce: T0 + 2 })).json,
    ).toMatchObject({ status: "ok" });
    expect(sim?.state.getSchedule(vault)).toBeNull();
  });

  test("error: volume gate, formatted like the real message; removal gated by default", async () => {
    await start({ users: [{ address: user.address, volumeUsd: 373.47205 }] });
    const gate = err(
      "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $373.47205.",
    );
    expect((await send({ time: T0 + 60_000 })).json).toEqual(gate);
    expect((await send({ nonce: T0 + 1 })).json).toEqual(gate);
    sim?.state.setVolume(user.address, 0);
    expect((await send({ time: T0 + 60_000, nonce: T0 + 2 })).json).toEqual(
      err("Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $0."),
    );
    sim?.state.setVolume(user.address, 1_000_000);
    expect((await send({ time: T0 + 60_000, nonce: T0 + 3 })).json).toMatchObject({ status: "ok" });
  });

  test("behavior: volume gate switches (simulator, per user, removal)", async () => {
    await start({ volumeGateOnRemove: false, users: [{ address: user.address, volumeUsd: 5 }] });
    expect((await send({ nonce: T0 })).json).toMatchObject({ status: "ok" });
    expect((await send({ time: T0 + 60_000, nonce: T0 + 1 })).json).toMatchObject({ status: "err" });
    await sim?.close();
    await start({ volumeGate: false, users: [{ address: user.address, volumeUsd: 5 }] });
    expect((await send({ time: T0 + 60_000 })).json).toMatchObject({ status: "ok" });
    await sim?.close();
    await start({ users: [{ address: user.address, volumeUsd: 5, volumeGate: false }] });
    expect((await send({ time: T0 + 60_000 })).json).toMatchObject({ status: "ok" });
  });

  test("error: address budget exhausted", async () => {
    await start({ users: [{ address: user.address, volumeUsd: 2_000_000.5, addressBudget: 2 }] });
    expect((await send({ time: T0 + 60_000, nonce: T0 })).json).toMatchObject({ status: "ok" });
    expect((await send({ time: T0 + 60_000, nonce: T0 + 1 })).json).toMatchObject({ status: "ok" });
    expect((await send({ time: T0 + 60_000, nonce: T0 + 2 })).json).toEqual(
      err(
        "Too many cumulative requests sent (3 > 2) for cumulative volume traded $2000000.5. Place taker orders to free up 1 request per USDC traded.",
      ),
    );
  });

  test("error: 429 once the per-IP weight budget of the minute is spent", async () => {
    await start({ ipWeightPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await send({ nonce: T0 + i })).status).toBe(200);
    const limited = await send({ nonce: T0 + 3 });
    expect(limited.status).toBe(429);
    expect(sim?.state.getSchedule(user.address)).toBeNull();
    // Info shares the budget.
    const info = await post(`${sim?.apiUrl}/info`, {
      type: "batchClearinghouseStates",
      users: [user.address],
    });
    expect(info.status).toBe(429);
    clock.advance(60_000);
    expect((await send({ nonce: clock.now() })).status).toBe(200);
  });

  test("error: an explicit non-JSON content type gets 415", async () => {
    await start();
    const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce: T0, time: T0 + 60_000 });
    const res = await post(`${sim?.apiUrl}/exchange`, body, { headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(415);
  });
});

describe("triggers", () => {
  test("behavior: at the scheduled time every open order is cancelled and the trigger recorded", async () => {
    await start();
    sim?.state.addOrder(user.address, { coin: "BTC", side: "B", limitPx: 90_000, sz: 0.01 });
    sim?.state.addOrder(user.address, { coin: "ETH", side: "A", limitPx: 4_000, sz: 1 });
    await send({ time: T0 + 10_000 });
    clock.advance(9_999);
    expect(sim?.state.getOpenOrders(user.address)).toHaveLength(2);
    expect(sim?.state.getTriggers(user.address)).toHaveLength(0);
    clock.advance(1);
    expect(sim?.state.getOpenOrders(user.address)).toHaveLength(0);
    expect(sim?.state.getTriggers(user.address)).toEqual([
      { time: T0 + 10_000, day: "2026-01-01", cancelledOrders: 2, counted: true },
    ]);
    expect(sim?.state.getSchedule(user.address)).toBeNull();
    expect(sim?.state.triggersOn(user.address, "2026-01-01")).toBe(1);
    // The info endpoint shows no open orders any more.
    const res = await post(`${sim?.apiUrl}/info`, { type: "openOrders", user: user.address });
    expect(res.json).toEqual([]);
  });

  test("behavior: a schedule pushed forward never fires", async () => {
    await start();
    sim?.state.addOrder(user.address, { coin: "BTC", side: "B", limitPx: 90_000, sz: 0.01 });
    for (let i = 0; i < 20; i++) {
      expect((await send({ time: clock.now() + 15_000, nonce: clock.now() })).json).toMatchObject({
        status: "ok",
      });
      clock.advance(5_000);
    }
    expect(sim?.state.getTriggers(user.address)).toHaveLength(0);
    expect(sim?.state.getOpenOrders(user.address)).toHaveLength(1);
  });

  test("behavior: countEmptyTriggers off does not count a trigger that cancelled nothing", async () => {
    await start({ countEmptyTriggers: false });
    await send({ time: T0 + 10_000 });
    clock.advance(10_000);
    expect(sim?.state.getTriggers(user.address)).toEqual([
      { time: T0 + 10_000, day: "2026-01-01", cancelledOrders: 0, counted: false },
    ]);
    expect(sim?.state.triggersOn(user.address, "2026-01-01")).toBe(0);
  });

  test("behavior: 10 triggers, then the limit message until 00:00 UTC, then accepted again", async () => {
    const start0 = Date.UTC(2026, 0, 1, 23, 0, 0);
    await start();
    clock.set(start0);
    for (let i = 0; i < 10; i++) {
      sim?.state.addOrder(user.address, { coin: "SOL", side: "B", limitPx: 100, sz: 1 });
      const res = await send({ time: clock.now() + 10_000, nonce: clock.now() });
      expect(res.json, `trigger ${i + 1}`).toMatchObject({ status: "ok" });
      clock.advance(10_000);
      expect(sim?.state.getOpenOrders(user.address)).toHaveLength(0);
    }
    expect(sim?.state.triggersOn(user.address, "2026-01-01")).toBe(10);
    expect(sim?.state.getTriggers(user.address).every((t) => t.cancelledOrders === 1 && t.counted)).toBe(
      true,
    );
    expect((await send({ time: clock.now() + 10_000, nonce: clock.now() })).json).toEqual(
      err("Too many scheduled cancel triggers today"),
    );
    // Removing is still allowed.
    expect((await send({ nonce: clock.now() + 1 })).json).toMatchObject({ status: "ok" });
    clock.set(Date.UTC(2026, 0, 1, 23, 59, 59, 999));
    expect((await send({ time: clock.now() + 10_000, nonce: clock.now() })).json).toMatchObject({
      status: "err",
    });
    clock.advance(1); // 00:00:00.000 UTC
    expect((await send({ time: clock.now() + 10_000, nonce: clock.now() })).json).toMatchObject({
      status: "ok",
    });
    clock.advance(10_000);
    expect(sim?.state.triggersOn(user.address, "2026-01-02")).toBe(1);
    expect(sim?.state.triggersOn(user.address, "2026-01-01")).toBe(10);
  });

  test("behavior: custom limit and message", async () => {
    await start({ dailyTriggerLimit: 1, dailyLimitMessage: "limit reached" });
    await send({ time: T0 + 10_000 });
    clock.advance(10_000);
    expect((await send({ time: clock.now() + 10_000, nonce: clock.now() })).json).toEqual(
      err("limit reached"),
    );
  });

  test("behavior: with the real clock a timer fires the schedule promptly", async () => {
    sim = await startSimulator({ users: [{ address: user.address }] });
    sim.state.addOrder(user.address, { coin: "BTC", side: "B", limitPx: 90_000, sz: 0.01 });
    const nonce = Date.now();
    const body = await signedScheduleCancel({ privateKey: user.privateKey, nonce, time: nonce + 5_050 });
    expect((await post(`${sim.apiUrl}/exchange`, body)).json).toMatchObject({ status: "ok" });
    // Pull the schedule in (same state the exchange writes) so the test needs no 5 s wait.
    sim.state.setSchedule(user.address, Date.now() + 150);
    const t0 = Date.now();
    while (sim.state.getTriggers(user.address).length === 0 && Date.now() - t0 < 2_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const elapsed = Date.now() - t0;
    expect(sim.state.getTriggers(user.address)).toHaveLength(1);
    expect(sim.state.getOpenOrders(user.address)).toHaveLength(0);
    expect(elapsed).toBeGreaterThanOrEqual(100);
    expect(elapsed).toBeLessThan(1_000);
  });
});

describe("triggers on a real clock", () => {
  test("behavior: a fire timer that wakes before the schedule by the simulator's clock aims again, and fires", async () => {
    // Node's timers run on their own millisecond clock; the simulator's reads another (here one 10% slow, so
    // every timer wakes early by it). The schedule must still fire, not be left without a timer.
    const base = Date.now();
    const slow = {
      now: () => base + Math.floor((Date.now() - base) * 0.9),
      monotonic: () => performance.now(),
    };
    sim = await startSimulator({ users: [{ address: user.address }], clock: slow });
    sim.state.addOrder(user.address, { coin: "BTC", side: "B", limitPx: 90_000, sz: 0.01 });
    const due = slow.now() + 100;
    sim.state.setSchedule(user.address, due);
    const t0 = Date.now();
    while (sim.state.getTriggers(user.address).length === 0 && Date.now() - t0 < 2_000) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(sim.state.getTriggers(user.address)).toMatchObject([{ time: due, cancelledOrders: 1 }]);
    expect(slow.now()).toBeGreaterThanOrEqual(due);
  });
});

describe("signature verification", () => {
  /** What the real exchange answers for a signature: the signer ethers recovers, or "Unable to recover signer." */
  const answerFor = (params: Parameters<typeof recoverL1ActionSignerSync>[0]) => {
    try {
      return err(
        `L1 error: User or API Wallet ${recoverL1ActionSignerSync(params).toLowerCase()} does not exist.`,
      );
    } catch {
      return err("Unable to recover signer.");
    }
  };
  const hex32 = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;

  test("behavior: a signature whose r, s or v was altered is refused, even right after its signer was accepted", async () => {
    await start();
    const url = `${(sim as SimulatorHandle).apiUrl}/exchange`;
    let refused = 0;
    for (let i = 0; i < 6; i++) {
      // the user and its agent, alternately: both are known signers whose last signature was good
      const signer = i % 2 === 0 ? user : agent;
      const accepted = await signedScheduleCancel({
        privateKey: signer.privateKey,
        nonce: T0 + 10 * i,
        time: T0 + 60_000 + i,
      });
      expect((await post(url, accepted)).json).toMatchObject({ status: "ok" });
      expect(sim?.state.getSchedule(user.address)).toBe(T0 + 60_000 + i);
      const genuine = await signedScheduleCancel({
        privateKey: signer.privateKey,
        nonce: T0 + 10 * i + 1,
        time: T0 + 90_000 + i,
      });
      const { r, s, v } = genuine.signature;
      const altered = [
        { ...genuine.signature, v: v === 27 ? 28 : 27 },
        { ...genuine.signature, s: hex32(BigInt(s) - 1n) },
        { ...genuine.signature, r: hex32(BigInt(r) + 1n) },
        // the accepted request's signature on the new request
        accepted.signature,
      ];
      for (const signature of altered) {
        const body = { ...genuine, signature };
        const want = answerFor({ ...body, isMainnet: true });
        expect(want.response).not.toContain(signer.address.toLowerCase());
        expect((await post(url, body)).json).toEqual(want);
        // nothing changed, and the nonce was not spent (the genuine request below is not a duplicate)
        expect(sim?.state.getSchedule(user.address)).toBe(T0 + 60_000 + i);
        refused++;
      }
      // the same request with the original action or nonce changed under the genuine signature
      for (const body of [
        { ...genuine, action: { type: "scheduleCancel", time: T0 + 91_000 + i } },
        { ...genuine, nonce: genuine.nonce + 1 },
      ]) {
        expect((await post(url, body)).json).toEqual(answerFor({ ...body, isMainnet: true }));
        refused++;
      }
      // the genuine signature still goes through afterwards
      expect((await post(url, genuine)).json).toMatchObject({ status: "ok" });
      expect(sim?.state.getSchedule(user.address)).toBe(T0 + 90_000 + i);
    }
    expect(refused).toBe(36);
  });

  test("behavior: the recorded signer of every request is the address ethers recovers, known or not", async () => {
    await start();
    const url = `${(sim as SimulatorHandle).apiUrl}/exchange`;
    const third = testWallet("exchange-third");
    for (let i = 0; i < 8; i++) {
      const wallet = [user, agent, third, stranger][i % 4] as typeof user;
      const body = await signedScheduleCancel({
        privateKey: wallet.privateKey,
        nonce: T0 + i,
        time: T0 + 60_000,
      });
      for (const signature of [body.signature, { ...body.signature, v: body.signature.v === 27 ? 28 : 27 }]) {
        await post(url, { ...body, signature });
        const expected = recoverL1ActionSignerSync({ ...body, signature, isMainnet: true }).toLowerCase();
        expect(sim?.state.actions.at(-1)?.signer).toBe(expected);
        expect(expected === wallet.address.toLowerCase()).toBe(signature === body.signature);
      }
    }
  });
});
