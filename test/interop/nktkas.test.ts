/**
 * Interoperability with an independent Hyperliquid SDK, @nktkas/hyperliquid (a dev dependency, used only in
 * tests and benchmarks): it signs exactly as we do, and its client arms and removes a schedule on our
 * simulator, whichever success type the simulator answers with (spec `scheduleCancel`, real API `default`).
 */
import { HttpTransport, ExchangeClient as NkExchangeClient } from "@nktkas/hyperliquid";
import { signL1Action as nkSignL1Action } from "@nktkas/hyperliquid/signing";
import { id, Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { ExchangeClient } from "../../src/protocol/hyperliquid/exchange.js";
import { localSigner, recoverL1ActionSigner, signL1Action } from "../../src/protocol/hyperliquid/signing.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe("interop: @nktkas/hyperliquid", () => {
  test("behavior: both SDKs produce the same scheduleCancel signature for every shape of request", async () => {
    const vault: `0x${string}` = "0x1719884eb866cb12b2287399b15f7db5e7d775ea";
    let cases = 0;
    for (let i = 0; i < 4; i++) {
      const wallet = Wallet.createRandom();
      for (const isMainnet of [true, false])
        for (const time of [undefined, 1_735_689_630_000 + i])
          for (const vaultAddress of [undefined, vault])
            for (const expiresAfter of [undefined, 1_735_689_660_000 + i]) {
              const action =
                time === undefined ? { type: "scheduleCancel" } : { type: "scheduleCancel", time };
              const nonce = 1_735_689_600_000 + i;
              const ours = await signL1Action({
                wallet,
                action,
                nonce,
                vaultAddress,
                expiresAfter,
                isMainnet,
              });
              const theirs = await nkSignL1Action({
                wallet,
                action,
                nonce,
                isTestnet: !isMainnet,
                ...(vaultAddress ? { vaultAddress } : {}),
                ...(expiresAfter ? { expiresAfter } : {}),
              });
              expect(ours).toEqual(theirs);
              expect(
                await recoverL1ActionSigner({
                  action,
                  nonce,
                  vaultAddress,
                  expiresAfter,
                  isMainnet,
                  signature: theirs,
                }),
              ).toBe(wallet.address);
              cases++;
            }
    }
    expect(cases).toBe(64);
  });

  test("behavior: the same signature as theirs for keys at the edges and 16 actions per key, always with a low s", async () => {
    // their signer is @noble/curves 2.x (its own copy), ours ethers' SigningKey on @noble/curves 1.2.0
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const keys = [
      `0x${"00".repeat(31)}01`,
      `0x${"00".repeat(31)}02`,
      `0x${"7f".repeat(16)}${"00".repeat(16)}`,
      `0x${(n - 1n).toString(16)}`,
      ...[1, 2, 3].map((i) => id(`fast signer key ${i}`)),
    ];
    let cases = 0;
    for (const key of keys) {
      const wallet = new Wallet(key);
      const signer = localSigner(key);
      for (let i = 0; i < 16; i++) {
        const action =
          i % 5 === 4 ? { type: "scheduleCancel" } : { type: "scheduleCancel", time: 1_735_689_630_000 + i };
        const params = { action, nonce: 1_735_689_600_000 + i, isMainnet: i % 2 === 0 };
        const ours = await signL1Action({ ...params, wallet: signer });
        const theirs = await nkSignL1Action({
          wallet,
          action,
          nonce: params.nonce,
          isTestnet: !params.isMainnet,
        });
        expect(ours).toEqual(theirs);
        expect(BigInt(ours.s) <= n >> 1n).toBe(true);
        expect(await recoverL1ActionSigner({ ...params, signature: ours })).toBe(wallet.address);
        cases++;
      }
    }
    expect(cases).toBe(112);
  });

  test.each(["scheduleCancel", "default"] as const)(
    "behavior: its client arms and removes a schedule on our simulator (success type %s)",
    async (successType) => {
      const wallet = Wallet.createRandom();
      const user = wallet.address.toLowerCase();
      sim = await startSimulator({ successType, users: [{ address: user }] });
      const client = new NkExchangeClient({
        transport: new HttpTransport({ apiUrl: sim.apiUrl, timeout: 5_000 }),
        wallet,
      });
      const time = Date.now() + 60_000;
      const armed = await client.scheduleCancel({ time });
      expect(armed.status).toBe("ok");
      expect(sim.state.getSchedule(user)).toBe(time);
      await client.scheduleCancel();
      expect(sim.state.getSchedule(user)).toBeNull();
      // Our client sees the same simulator state after theirs, and vice versa.
      const ours = new ExchangeClient({
        apiUrl: sim.apiUrl,
        signer: wallet,
        isMainnet: true,
        clock: systemClock,
      });
      await ours.scheduleCancel({ time: time + 1_000 });
      expect(sim.state.getSchedule(user)).toBe(time + 1_000);
      ours.close();
    },
  );

  test("error: its client surfaces our simulator's refusal text verbatim", async () => {
    const wallet = Wallet.createRandom();
    sim = await startSimulator({ users: [{ address: wallet.address.toLowerCase(), volumeUsd: 373.47205 }] });
    const client = new NkExchangeClient({ transport: new HttpTransport({ apiUrl: sim.apiUrl }), wallet });
    await expect(client.scheduleCancel({ time: Date.now() + 60_000 })).rejects.toThrow(
      "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $373.47205.",
    );
  });
});
