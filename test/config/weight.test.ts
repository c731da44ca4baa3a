/**
 * The IP's weight a configuration spends (src/config/weight.ts; issue 30): the arithmetic, the refusal at start
 * and in `config check`, and the interval that would fit.
 */
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/config/errors.js";
import { loadConfig } from "../../src/config/load.js";
import {
  describeWeightPlan,
  IP_WEIGHT_PER_MINUTE,
  OPEN_ORDERS_MAX_ACCOUNTS,
  readsOpenOrders,
  WEIGHT_MARGIN,
  weightPlan,
} from "../../src/config/weight.js";

const accounts = (n: number) =>
  Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
const load = (options: Record<string, unknown>) => loadConfig({ options, env: {}, cwd: "/tmp" }).config;

describe("the IP's weight", () => {
  test("the default configuration: 4 pushes, 40 exposure, 40 open orders, 2 budget and 0.3 agent a minute", () => {
    const p = weightPlan(load({}));
    expect(p.lines.map((l) => [l.what.split(" ")[0], l.perMinute])).toEqual([
      ["pushes", 4],
      ["exposure", 40],
      ["open", 40],
      ["address", 2],
      ["agent", 0.3],
    ]);
    expect(p).toMatchObject({ perMinute: 86.3, budget: IP_WEIGHT_PER_MINUTE * WEIGHT_MARGIN, fits: true });
  });

  test("the status page's open orders are read for at most 10 accounts, on the exposure cadence", () => {
    const ten = weightPlan({ ...load({}), accounts: accounts(OPEN_ORDERS_MAX_ACCOUNTS) });
    expect(ten.lines.find((l) => l.what.startsWith("open orders"))).toMatchObject({ perMinute: 400 });
    const eleven = weightPlan({ ...load({}), accounts: accounts(OPEN_ORDERS_MAX_ACCOUNTS + 1) });
    expect(eleven.lines.some((l) => l.what.startsWith("open orders"))).toBe(false);
    expect(readsOpenOrders(1, 0)).toBe(false);
  });

  test("300 accounts at 15 s do not fit (1,200 pushes a minute alone); the message gives the arithmetic", () => {
    const config = { ...load({}), accounts: accounts(300), exposureInterval: 0, budgetInterval: 0 };
    const p = weightPlan(config);
    expect(p.fits).toBe(false);
    expect(p.lines[0]).toMatchObject({ perMinute: 1200, arithmetic: "300 account(s) × 60 s / 15 s × 1" });
    // 300 × 60 / (1080 − 0.3) = 16.7 s: whole seconds, up
    expect(p.fittingIntervalMs).toBe(17_000);
    expect(describeWeightPlan(p)).toContain("an interval of 17 s or more fits");
    expect(() => load({ account: accounts(300), exposureInterval: 0, budgetInterval: 0 })).toThrow(
      ConfigError,
    );
    try {
      load({ account: accounts(300), exposureInterval: 0, budgetInterval: 0 });
    } catch (error) {
      expect((error as ConfigError).issues[0]).toContain("300 account(s) × 60 s / 15 s × 1 = 1200/min");
    }
  });

  test("another API host (a simulator, a provider's node): the same arithmetic as a warning, not a refusal", () => {
    const options = { account: accounts(300), exposureInterval: 0, budgetInterval: 0 };
    const other = loadConfig({
      options: { ...options, apiUrl: "http://127.0.0.1:8080" },
      env: {},
      cwd: "/tmp",
    });
    expect(other.warnings.join("\n")).toContain("this API host may have its own");
    const sim = loadConfig({ options, env: {}, cwd: "/tmp", simulator: true });
    expect(sim.warnings.join("\n")).toContain("300 account(s) × 60 s / 15 s × 1 = 1200/min");
  });

  test("1,000 accounts fit one IP at 60 s without the exposure poll; a whole poll's minute counts; the reads alone can leave no interval", () => {
    // a poll every 10 min averages 40/min, but its 20 requests of 20 land in one minute: 1,000 + 400
    const slowed = weightPlan({
      ...load({}),
      accounts: accounts(1000),
      interval: 60_000,
      exposureInterval: 600_000,
      budgetInterval: 0,
    });
    expect(slowed).toMatchObject({ fits: false, perMinute: 1040.3, peakPerMinute: 1400.3 });
    expect(describeWeightPlan(slowed)).toContain("the minute with a whole exposure poll in it: 1400.3/min");
    const fits = weightPlan({
      ...load({}),
      accounts: accounts(1000),
      interval: 60_000,
      exposureInterval: 0,
      budgetInterval: 0,
    });
    expect(fits).toMatchObject({ fits: true, perMinute: 1000.3, peakPerMinute: 1000.3 });
    const none = weightPlan({ ...load({}), accounts: accounts(1000), interval: 60_000 });
    expect(none.fits).toBe(false);
    expect(none.fittingIntervalMs).toBeNull();
    expect(describeWeightPlan(none)).toContain("no push interval fits: the reads alone exceed it");
  });

  test("an engine death's cancel pass: 21 an account whose orders the feed knows, 41 one read first; meta once at start", () => {
    const socket = "/run/hl-deadman/guard.sock";
    const fleet = accounts(12);
    const withFeed = weightPlan(load({ account: fleet, guardSocket: socket, onEngineDown: "cancel" }));
    // the feed follows the first 10 accounts: 10 × 21 + 2 × 41
    expect(withFeed.bursts[0]).toMatchObject({ perMinute: 10 * 21 + 2 * 41 });
    expect(withFeed.bursts[0]!.arithmetic).toContain(
      "10 × (20 + 1) with the orders known from the order feed",
    );
    expect(withFeed.bursts[1]).toMatchObject({ perMinute: 12 * 60 + 20 });
    const noFeed = weightPlan(
      load({ account: fleet, guardSocket: socket, onEngineDown: "cancel", orderFeedAccounts: 0 }),
    );
    expect(noFeed.bursts[0]).toMatchObject({ perMinute: 12 * 41 });
    const expedite = weightPlan(load({ account: fleet }));
    expect(expedite.bursts[1]).toMatchObject({ perMinute: 12 * 60 });
  });

  test("every listed dex: a cancel pass per builder dex (read first), perpDexs and its meta once; close steps and fire checks per dex", () => {
    const socket = "/run/hl-deadman/guard.sock";
    const fleet = accounts(3);
    const one = weightPlan(load({ account: fleet, guardSocket: socket, onEngineDown: "cancel" }));
    const two = weightPlan(
      load({ account: fleet, guardSocket: socket, onEngineDown: "cancel", dex: ["", "xyz", "abc"] }),
    );
    // the first dex as before (3 × 21 with the feed), + 3 accounts × 2 builder dexes × 41, + perpDexs and 2 metas
    expect(one.bursts[0]).toMatchObject({ perMinute: 3 * 21 });
    expect(two.bursts[0]).toMatchObject({ perMinute: 3 * 21 + 3 * 2 * 41 + 3 * 20 });
    expect(two.bursts[0]!.arithmetic).toContain("3 × 2 builder dex(es) × (20 + 1 + 20) read first");
    const close = (p: typeof one) => p.bursts.find((b) => b.what.startsWith("a close step"))!.perMinute;
    const check = (p: typeof one) =>
      p.bursts.find((b) => b.what.startsWith("the check after a fire"))!.perMinute;
    expect([close(one), close(two)]).toEqual([22 + 1, 3 * 22 + 1]);
    expect([check(one), check(two)]).toEqual([20, 3 * 20]);
  });
});
