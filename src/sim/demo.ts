/**
 * The demo account: a throwaway key derived from the seed (never a well-known key), registered above the
 * volume gate, with open orders and positions on BTC, ETH and SOL whose marks random-walk once per second
 * of the simulator clock (seeded, so a ManualClock run is reproducible).
 */
import { simulatorDemoKey } from "../protocol/hyperliquid/simulator-id.js";
import { createRng, deriveSeed, type Rng } from "./prng.js";
import type { SimUserInput } from "./records.js";
import type { SimStore } from "./state.js";

export type DemoAccount = { privateKey: string; address: string };

export const DEMO_START_MARKS: Readonly<Record<string, number>> = Object.freeze({
  BTC: 97_000,
  ETH: 3_400,
  SOL: 180,
});

/** The demo key for a seed (reproducible, not guessable from lists): src/protocol/hyperliquid/simulator-id.ts. */
export function demoAccount(seed: number): DemoAccount {
  return simulatorDemoKey(seed);
}

export function demoUser(address: string): SimUserInput {
  return {
    address,
    volumeUsd: 5_000_000,
    balanceUsd: 25_000,
    positions: [
      { coin: "BTC", szi: 0.25, entryPx: 96_500, leverage: 10, marginMode: "cross" },
      { coin: "ETH", szi: -3, entryPx: 3_450, leverage: 5, marginMode: "isolated" },
      { coin: "SOL", szi: 40, entryPx: 175, leverage: 5, marginMode: "cross" },
    ],
    orders: [
      { coin: "BTC", side: "B", limitPx: 95_000, sz: 0.1 },
      { coin: "BTC", side: "A", limitPx: 99_000, sz: 0.1 },
      { coin: "ETH", side: "B", limitPx: 3_300, sz: 1 },
      { coin: "SOL", side: "A", limitPx: 195, sz: 20, reduceOnly: true },
      {
        coin: "BTC",
        side: "A",
        limitPx: 91_000,
        sz: 0.25,
        reduceOnly: true,
        orderType: "Stop Market",
        triggerPx: 92_000,
      },
      // A native take-profit on the ETH short: a reduce-only trigger order, kept by `cancel` mode by default.
      {
        coin: "ETH",
        side: "B",
        limitPx: 3_000,
        sz: 3,
        reduceOnly: true,
        orderType: "Take Profit Market",
        triggerPx: 3_050,
      },
    ],
  };
}

/** Per-second volatility of the walk (about 3% a day). */
const SIGMA_PER_SECOND = 0.0001;
/** A clock jump of hours is walked in at most this many steps (the rest is skipped, not replayed). */
const MAX_STEPS_PER_CALL = 3_600;

export class DemoMarket {
  readonly #store: SimStore;
  readonly #rng: Rng;
  #last: number;

  constructor(store: SimStore, seed: number) {
    this.#store = store;
    this.#rng = createRng(deriveSeed(seed, "demo-marks"));
    this.#last = store.clock.now();
    for (const [coin, px] of Object.entries(DEMO_START_MARKS)) store.setMark(coin, px);
  }

  /** Moves the marks one step per whole second elapsed on the simulator clock since the last call. */
  walk(): void {
    const now = this.#store.clock.now();
    if (now < this.#last) {
      this.#last = now;
      return;
    }
    const steps = Math.floor((now - this.#last) / 1000);
    if (steps === 0) return;
    this.#last += steps * 1000;
    for (let i = 0; i < Math.min(steps, MAX_STEPS_PER_CALL); i++) {
      for (const coin of Object.keys(DEMO_START_MARKS)) {
        const px = this.#store.getMark(coin) ?? (DEMO_START_MARKS[coin] as number);
        this.#store.setMark(coin, roundPx(px * Math.exp(SIGMA_PER_SECOND * this.#gaussian())));
      }
    }
  }

  #gaussian(): number {
    const u = Math.max(this.#rng(), Number.EPSILON);
    const v = this.#rng();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}

function roundPx(px: number): number {
  const digits = px >= 10_000 ? 0 : px >= 1_000 ? 1 : px >= 100 ? 2 : 3;
  return Number(px.toFixed(digits));
}
