/**
 * The fast cancel (`"f": true`) as signed and sent. No pinned SDK sends `f`, so the expected bytes are written out
 * by hand from the msgpack spec and the documented layout (Hyperliquid docs, exchange endpoint, "Cancel order(s)": `f` after `cancels`, left out when false);
 * the f-less form must stay byte-identical to the Rust SDK's `test_cancel_action_hashing` vector.
 */
import { readFileSync } from "node:fs";
import { hexlify } from "ethers";
import { describe, expect, test } from "vitest";
import { ManualClock } from "../../../src/core/clock.js";
import { cancelAction, ExchangeClient } from "../../../src/protocol/hyperliquid/exchange.js";
import { l1ActionHash, l1ActionPreimage, localSigner } from "../../../src/protocol/hyperliquid/signing.js";
import { simulatorPerTest } from "../../sim/helpers.js";

const RUST_KEY = "0xe908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e";
const NONCE = 1583838;
const hex = (s: string) => Buffer.from(s).toString("hex");
// fixmap(2|3) "type" "cancel" "cancels" fixarray(1) fixmap(2) "a" 1 "o" uint32(82382) ["f" true]
const BODY = [
  "a4",
  hex("type"),
  "a6",
  hex("cancel"),
  "a7",
  hex("cancels"),
  "91",
  "82",
  "a161",
  "01",
  "a16f",
  "ce000141ce",
];
const PLAIN_MSGPACK = ["82", ...BODY].join("");
const FAST_MSGPACK = ["83", ...BODY, "a166", "c3"].join("");
// The Rust SDK's signatures of the f-less action (hyperliquid-rust-sdk exchange_client.rs test_cancel_action_hashing).
const RUST_MAINNET_R = "0x02f76cc5b16e0810152fa0e14e7b219f49c361e3325f771544c6f54e157bf9fa";

const fixture = JSON.parse(
  readFileSync(new URL("../../fixtures/fast-cancel-vectors.json", import.meta.url), "utf8"),
) as {
  note: string;
  vectors: Array<{ action: unknown; msgpackHex: string; nonce: number; isMainnet: boolean }>;
};
const sims = simulatorPerTest();
// The demo book's coins and their perp indices in the simulator's meta.
const ASSET = (coin: string) => ({ BTC: 0, ETH: 1, SOL: 5 })[coin as "BTC"] ?? -1;

describe("fast cancel layout (derived from the documented layout)", () => {
  test("f: true comes after cancels, as msgpack fixmap(3) ending a1 66 c3", () => {
    const action = cancelAction([{ asset: 1, oid: 82382 }], true);
    expect(Object.keys(action)).toEqual(["type", "cancels", "f"]);
    const preimage = hexlify(l1ActionPreimage({ action, nonce: NONCE }));
    expect(preimage).toBe(`0x${FAST_MSGPACK}${NONCE.toString(16).padStart(16, "0")}00`);
    expect(fixture.vectors[0]!.msgpackHex).toBe(`0x${FAST_MSGPACK}`);
    expect(fixture.note).toMatch(/derived/i);
  });

  test("not fast: f is left out entirely, byte-identical to the Rust SDK's cancel vector", async () => {
    const action = cancelAction([{ asset: 1, oid: 82382 }], false);
    expect(action).not.toHaveProperty("f");
    expect(hexlify(l1ActionPreimage({ action, nonce: NONCE }))).toBe(
      `0x${PLAIN_MSGPACK}${NONCE.toString(16).padStart(16, "0")}00`,
    );
    const { signL1Action } = await import("../../../src/protocol/hyperliquid/signing.js");
    const sig = await signL1Action({ action, nonce: NONCE, isMainnet: true, privateKey: RUST_KEY });
    expect(sig.r).toBe(RUST_MAINNET_R);
  });

  test("f changes the hash: f:true, f:false and no f are three different connectionIds", () => {
    const cancels = [{ a: 1, o: 82382 }];
    const ids = new Set([
      l1ActionHash({ action: { type: "cancel", cancels }, nonce: NONCE }),
      l1ActionHash({ action: { type: "cancel", cancels, f: true }, nonce: NONCE }),
      l1ActionHash({ action: { type: "cancel", cancels, f: false }, nonce: NONCE }),
    ]);
    expect(ids.size).toBe(3);
  });

  test("ExchangeClient.cancel({ fast }) sends exactly the documented layout, and the simulator recovers its signer", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const sim = await sims.start({ clock, demo: true });
    const demo = sim.demo!;
    const exchange = new ExchangeClient({
      apiUrl: sim.apiUrl,
      signer: localSigner(demo.privateKey),
      isMainnet: true,
      clock,
    });
    sims.onClose(() => exchange.close());
    const resting = sim.state.getOpenOrders(demo.address).find((o) => !o.isTrigger)!;
    const other = sim.state.getOpenOrders(demo.address).find((o) => !o.isTrigger && o.oid !== resting.oid)!;
    await exchange.cancel([{ asset: ASSET(resting.coin), oid: resting.oid }], { fast: true });
    await exchange.cancel([{ asset: ASSET(other.coin), oid: other.oid }], { fast: false });
    const [fast, plain] = sim.state.actions.slice(-2);
    expect(JSON.stringify(fast!.action)).toBe(
      JSON.stringify({
        type: "cancel",
        cancels: [{ a: ASSET(resting.coin), o: resting.oid }],
        f: true,
      }),
    );
    expect(Object.keys(plain!.action as object)).toEqual(["type", "cancels"]);
    expect([fast!.accepted, plain!.accepted]).toEqual([true, true]);
    expect(fast!.signer).toBe(demo.address.toLowerCase());
  });
});
