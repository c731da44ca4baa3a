/**
 * Issue 38, finding 3, through the real CLI and real sockets: `run --sim` (the simulator enforces the IP's 1,200
 * weight a minute, in windows of the wall clock) with the connection guard and `--on-engine-down cancel`. The test
 * is another client of the same IP (127.0.0.1): it spends the minute's weight, then the engine dies.
 * - The weight comes back within the pass's room: the pass is tried again (`engine.cancel_retry`, rate_limited) and
 *   cancels the orders; no push at the 5 s minimum, no trigger, no fall-back.
 * - The IP kept spent: the fall-back (`engine.cancel_failed`) says `rate_limited`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { HyperliquidApiError } from "../../src/protocol/hyperliquid/errors.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { requireBinary } from "../helpers/binaries.js";
import { connectEngine as engine } from "../helpers/engine.js";
import { assertBuilt, type SpawnedProcess, spawnCli } from "../helpers/process.js";
import { libfaketime } from "../reliability/harness.js";

beforeAll(() => assertBuilt());

/**
 * Spends what is left of this minute's weight of the IP (reads of 20, then of 2) until the simulator says 429. A
 * minute may turn while it spends (the windows are the wall clock's), so the reads are bounded by two minutes'
 * weight: 100 reads of 20 once ran to the end without a refusal, a new window having opened mid-way.
 */
async function spendTheIp(info: InfoClient, account: string): Promise<void> {
  const until429 = async (read: () => Promise<unknown>, weight: number) => {
    for (let i = 0; i <= (2 * 1_200) / weight; i++) {
      try {
        await read();
      } catch (error) {
        if (error instanceof HyperliquidApiError && error.kind === "rate_limited") return;
        throw error;
      }
    }
    throw new Error("the simulator never refused: is its IP limit on?");
  };
  await until429(() => info.meta(), 20);
  await until429(() => info.positions({ user: account }), 2);
}

async function daemon(label: string, cadence: string[], env: Record<string, string> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), `hl-weight-${label}-`));
  const guard = path.join(dir, "guard.sock");
  const d = spawnCli(
    [
      "run",
      "--sim",
      "--state-dir",
      path.join(dir, "s"),
      ...cadence,
      "--exposure-interval",
      "0",
      "--guard-socket",
      guard,
      "--on-engine-down",
      "cancel",
    ],
    env,
  );
  const sim = await d.waitForEvent("sim.start", 15_000);
  const account = String(sim.account);
  const info = new InfoClient({ apiUrl: String(sim.apiUrl), timeoutMs: 5_000, retryLimit: 0 });
  await d.waitForEvent("guard.listening", 15_000);
  const e = await engine(guard, account);
  await d.waitForEvent("order_feed.fresh", 15_000);
  await d.waitForEvent("heartbeat.ok", 10_000);
  return { d, account, info, engine: e };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stop(d: SpawnedProcess, info: InfoClient) {
  info.close();
  d.kill("SIGINT");
  await d.exitWithin(15_000);
}

describe.concurrent("a cancel pass at a rate-limited IP (process)", () => {
  test("behavior: the IP's weight spent by another client, the engine dies: the pass tries again and cancels, no trigger spent", async () => {
    // The daemon and its embedded simulator on a wall clock shifted by whole seconds (libfaketime, the monotonic
    // clock untouched; both sides of the exchange in one process, so they agree): the simulator's minute is then
    // 46 s gone when the daemon starts, and the wait below for its phase is none instead of up to 43 s. (The pass's
    // retries back off, the fourth about 15 s after the death: dying 5 to 14 s before the minute, that one finds
    // the weight back; dying earlier, the fifth, 16 s later. A start-up over 9 s waits for the next minute.)
    requireBinary("faketime");
    const offsetS = (((46 - Math.floor(Date.now() / 1000)) % 60) + 60) % 60;
    // deadline 40 s: the pass may be tried again for about 30 s after the death
    const {
      d,
      account,
      info,
      engine: e,
    } = await daemon("back", ["--interval", "2s", "--deadline", "40s", "--request-timeout", "1s"], {
      LD_PRELOAD: libfaketime(),
      FAKETIME: `+${offsetS}s`,
      FAKETIME_DONT_FAKE_MONOTONIC: "1",
    });
    try {
      const before = (await info.frontendOpenOrders({ user: account })).length;
      expect(before).toBe(6);
      // die 5 to 22 s before the simulator's next minute (on its shifted clock): its weight comes back inside the
      // pass's room
      const phase = () => (Date.now() + offsetS * 1000) % 60_000;
      while (phase() < 38_000 || phase() > 55_000) await sleep(250);
      await spendTheIp(info, account);
      e.destroy();
      await d.waitForEvent("engine.down", 5_000);
      const retry = await d.waitForEvent("engine.cancel_retry", 10_000);
      expect(retry).toMatchObject({ reason: "rate_limited", attempt: 1 });
      const done = await d.waitForEvent("engine.orders_cancelled", 40_000);
      expect(done).toMatchObject({ pass: 1 });
      expect(d.lines.filter((l) => l.event === "engine.cancel_failed")).toEqual([]);
      // no push at the 5 s minimum, no trigger counted
      expect(d.lines.filter((l) => l.event === "heartbeat.ok" && l.expedited === true)).toEqual([]);
      expect(d.lines.filter((l) => l.event === "trigger.counted")).toEqual([]);
      // the orders gone but the reduce-only stops (read once the minute's weight is back)
      const left = await info.frontendOpenOrders({ user: account });
      expect(left.map((o) => o.reduceOnly && o.isTrigger)).toEqual([true, true]);
    } finally {
      await stop(d, info);
    }
  }, 120_000);

  test("behavior: the IP kept spent by another client: the fall-back says rate_limited", async () => {
    const {
      d,
      account,
      info,
      engine: e,
    } = await daemon("spent", ["--interval", "1s", "--deadline", "15s", "--request-timeout", "1s"]);
    let burning = true;
    const burner = (async () => {
      while (burning) {
        await spendTheIp(info, account);
        await sleep(100);
      }
    })();
    try {
      await sleep(300);
      e.destroy();
      await d.waitForEvent("engine.down", 5_000);
      const failed = await d.waitForEvent("engine.cancel_failed", 20_000);
      expect(failed).toMatchObject({ reason: "rate_limited" });
      expect(failed.retries as number).toBeGreaterThanOrEqual(1);
      expect(String(failed.msg)).toContain("rate_limited");
      // the failed pass's own tries again (the next pass, an interval later, may have begun by now: its lines too)
      expect(d.lines.filter((l) => l.event === "engine.cancel_retry" && l.pass === failed.pass).length).toBe(
        failed.retries,
      );
    } finally {
      burning = false;
      await burner;
      await stop(d, info);
    }
  }, 60_000);
});
