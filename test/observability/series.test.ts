/**
 * The series per account on /metrics (docs/observability.md, "Series per account"): the real CLI against the
 * simulator, one account with two positions, the exposure poll and the address budget on; /metrics scraped over
 * HTTP. `all` exports every series; `alerts` only those the alert rules and the status read, so a fleet's scrape
 * grows by a small, stated number of series per account. The counts are the documented ones.
 */
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { fastCadence } from "../helpers/process.js";
import { assertBuilt, eventually, freePort, spawnCli, tempDir } from "../reliability/harness.js";

const key = new Wallet(id("hl-deadman series test"));
const account = key.address.toLowerCase();
let sim: SimulatorHandle;
beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({
    ipWeightPerMinute: null,
    users: [
      {
        address: account,
        balanceUsd: 100_000,
        positions: [
          { coin: "BTC", szi: 0.5, entryPx: 60_000, leverage: 10, marginMode: "cross" },
          { coin: "ETH", szi: -2, entryPx: 3_000, leverage: 5, marginMode: "cross" },
        ],
      },
    ],
  });
});
afterAll(async () => {
  await sim?.close();
});

/** The account's series on /metrics, by metric family (histograms' _bucket, _sum and _count counted each). */
async function seriesOf(mode: string): Promise<Map<string, number>> {
  const tmp = tempDir();
  const port = await freePort();
  const d = spawnCli(
    [
      "run",
      "--api-url",
      sim.apiUrl,
      ...fastCadence("1s"),
      "--budget-interval",
      "1s",
      "--state-dir",
      tmp.dir,
      "--health",
      `127.0.0.1:${port}`,
      "--metrics-per-account",
      mode,
    ],
    { HL_PRIVATE_KEY: key.privateKey },
  );
  try {
    await d.waitForEvent("exposure", 15_000);
    await d.waitForEvent("budget", 15_000);
    const text = await eventually(async () => {
      const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      // a push confirmed and a poll reported (the liquidation distance is set with the positions)
      const ready = ["hl_deadman_push_duration_seconds_count", "hl_deadman_liquidation_distance_ratio{"];
      return ready.every((m) => body.includes(m)) ? body : null;
    });
    const families = new Map<string, number>();
    for (const line of text.split("\n")) {
      if (line.startsWith("#") || !line.includes(`account="${account}"`)) continue;
      const name = line.slice(0, line.indexOf("{"));
      families.set(name, (families.get(name) ?? 0) + 1);
    }
    return families;
  } finally {
    d.kill("SIGTERM");
    await d.exited;
    tmp.cleanup();
  }
}

/** The series of one account under `alerts` (the documented table): 9, plus one per position's liquidation distance. */
const ALERTS = {
  hl_deadman_armed_deadline_timestamp_seconds: 1,
  hl_deadman_protection_left_seconds: 1,
  hl_deadman_pushes_total: 1,
  hl_deadman_triggers_today: 1,
  hl_deadman_triggers_left: 1,
  hl_deadman_halted: 1,
  hl_deadman_trigger_budget_exhausted: 1,
  hl_deadman_address_requests_left: 1,
  hl_deadman_address_budget_days_left: 1,
  hl_deadman_liquidation_distance_ratio: 1,
};
/** ...and under `all`: the push histogram (12), the triggers by proof (6), the budget's used and cap, the clock's verdict, the exposure. */
const ALL = {
  ...ALERTS,
  hl_deadman_push_duration_seconds_bucket: 10,
  hl_deadman_push_duration_seconds_sum: 1,
  hl_deadman_push_duration_seconds_count: 1,
  hl_deadman_triggers_today_by_proof: 6,
  hl_deadman_address_requests_used: 1,
  hl_deadman_address_requests_cap: 1,
  hl_deadman_clock_verified: 1,
  hl_deadman_account_value_usd: 1,
  hl_deadman_total_notional_usd: 1,
  hl_deadman_margin_used_usd: 1,
  hl_deadman_withdrawable_usd: 1,
  hl_deadman_leverage_ratio: 1,
  hl_deadman_position_size: 2,
  hl_deadman_position_value_usd: 2,
};

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

describe("metrics: series per account", () => {
  test("behavior: `alerts` keeps every series an alert rule reads and drops the detail", async () => {
    const all = await seriesOf("all");
    const alerts = await seriesOf("alerts");
    // what the alert rules (deploy/prometheus/hl-deadman.rules.yml) read per account stays (not_protected, too,
    // which a healthy switch has no series of)
    for (const name of [
      "hl_deadman_armed_deadline_timestamp_seconds",
      "hl_deadman_pushes_total",
      "hl_deadman_triggers_left",
      "hl_deadman_trigger_budget_exhausted",
      "hl_deadman_address_budget_days_left",
      "hl_deadman_address_requests_left",
      "hl_deadman_liquidation_distance_ratio",
    ])
      expect(alerts.get(name), name).toBeGreaterThan(0);
    // the detail goes
    for (const name of [
      "hl_deadman_account_value_usd",
      "hl_deadman_position_value_usd",
      "hl_deadman_position_size",
      "hl_deadman_leverage_ratio",
      "hl_deadman_triggers_today_by_proof",
      "hl_deadman_address_requests_used",
      "hl_deadman_push_duration_seconds_bucket",
    ]) {
      expect(all.get(name), name).toBeGreaterThan(0);
      expect(alerts.get(name), name).toBeUndefined();
    }
    // The documented counts (docs/observability.md, "Series per account"), for one account with two positions
    // on one perp dex (one of them with a liquidation price) and a healthy switch.
    expect(Object.fromEntries(all)).toEqual(ALL);
    expect(Object.fromEntries(alerts)).toEqual(ALERTS);
    expect({ all: total(all), alerts: total(alerts) }).toEqual({ all: 40, alerts: 10 });
  }, 60_000);
});
