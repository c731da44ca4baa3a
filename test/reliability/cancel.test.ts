/**
 * Fault matrix, the fast cancel path (issue 28, docs/operations.md "The cancel path"): the real daemon in-process
 * on the simulator's ManualClock over real HTTP, engine down through a stale guard file with
 * `--on-engine-down cancel`. A cancel that is refused or never answered falls back to the expedite backstop; the
 * executor never asks the exchange for a fast cancel of a trigger order (the simulator would refuse it).
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { FaultSpec } from "../../src/sim/server.js";
import { type InProcess, startInProcess, walletFor } from "./inprocess.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("cancel.test.ts");

let t: InProcess | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const START = Date.UTC(2026, 0, 1, 12, 0, 0);
const ORDERS = [
  { coin: "BTC", side: "B" as const, limitPx: "50000", sz: "0.01" },
  { coin: "ETH", side: "A" as const, limitPx: "5000", sz: "0.5" },
  // an entry stop (a trigger order, not reduce-only): cancelled, but never in a fast cancel
  {
    coin: "ETH",
    side: "B" as const,
    limitPx: "6000",
    sz: "0.5",
    orderType: "Stop Market" as const,
    triggerPx: "6000",
  },
  // a reduce-only stop-loss: kept unless --cancel-stops
  {
    coin: "BTC",
    side: "A" as const,
    limitPx: "40000",
    sz: "0.01",
    reduceOnly: true,
    orderType: "Stop Market" as const,
    triggerPx: "40000",
  },
];

/** The engine touches the guard file for 20 s, then dies; `cancelFault` is set on the exchange's cancels. */
async function engineDies(label: string, opts: { cancelStops: boolean; cancelFault?: FaultSpec }) {
  const dir = mkdtempSync(path.join(tmpdir(), "hl-guard-"));
  dirs.push(dir);
  const guardFile = path.join(dir, "alive");
  writeFileSync(guardFile, "");
  utimesSync(guardFile, START / 1000, START / 1000);
  const user = walletFor(label).address.toLowerCase();
  const run = await startInProcess({
    label,
    startAt: START,
    sim: { users: [{ address: user, orders: ORDERS }] },
    config: {
      guardFile,
      guardMaxAge: 10_000,
      guardInterval: 2_000,
      onEngineDown: "cancel",
      cancelStops: opts.cancelStops,
    },
    ...(opts.cancelFault ? { beforeStart: (s) => s.faults.set("exchange", opts.cancelFault!) } : {}),
  });
  t = run;
  for (let i = 0; i < 4; i++) {
    await run.run(5_000, 1_000);
    const now = run.clock.now() / 1000;
    utimesSync(guardFile, now, now);
  }
  expect(run.daemon.status()[0]!.state).toBe("armed");
  expect(run.sim.state.getOpenOrders(user)).toHaveLength(4);
  return { run, user };
}

const cancelActions = (run: InProcess) =>
  run.sim.state.actions.filter((a) => (a.action as { type?: string } | null)?.type === "cancel");

describe("reliability: the fast cancel path", () => {
  test("behavior: the cancel refused (HTTP 503) falls back to the expedite: the exchange cancels at the 5 s minimum", async () => {
    const { run, user } = await engineDies("cancel-refused", {
      cancelStops: false,
      cancelFault: { errorRate: 1, errorStatus: 503, types: ["cancel"] },
    });
    await run.run(40_000, 1_000);
    expect(run.events("engine.down")).toHaveLength(1);
    expect(run.events("engine.cancel_failed").length).toBeGreaterThanOrEqual(1);
    // The expedite: a push at the 5 s minimum fired, one trigger, every order gone (the exchange's cancel-all).
    const triggers = run.sim.state.getTriggers(user);
    expect(triggers).toHaveLength(1);
    expect(run.sim.state.getOpenOrders(user)).toHaveLength(0);
    // The engine's last sign of life was at START + 20 s: the guard sees it down 10–12 s later, and the expedite
    // push (a cancel time 5 s ahead) fires within seconds of that; the daemon never went back to full deadlines.
    const lastTouch = START + 20_000;
    const expedites = run.sim.state.actions.filter(
      (a) =>
        a.accepted &&
        (a.action as { type?: string }).type === "scheduleCancel" &&
        a.receivedAt > lastTouch &&
        (a.action as { time: number }).time - a.receivedAt <= 6_000,
    );
    expect(expedites.length).toBeGreaterThanOrEqual(1);
    expect(triggers[0]!.time - lastTouch).toBeLessThan(25_000);
    proven("cancel-refused");
  });

  test("behavior: the cancel unanswered (blackholed) falls back to the expedite: one trigger, the orders gone", async () => {
    const { run, user } = await engineDies("cancel-unanswered", {
      cancelStops: false,
      cancelFault: { blackhole: true, types: ["cancel"] },
    });
    await run.run(40_000, 1_000);
    expect(run.events("engine.cancel_failed").length).toBeGreaterThanOrEqual(1);
    expect(String(run.events("engine.cancel_failed")[0]!.detail)).toMatch(/cancel failed/);
    expect(run.sim.state.getTriggers(user)).toHaveLength(1);
    expect(run.sim.state.getOpenOrders(user)).toHaveLength(0);
    proven("cancel-unanswered");
  });

  test("behavior: trigger orders go in a normal cancel, never a fast one (the simulator refuses that); no trigger spent", async () => {
    const { run, user } = await engineDies("fast-trigger-refused", { cancelStops: true });
    await run.run(40_000, 1_000);
    expect(run.sim.state.getOpenOrders(user)).toHaveLength(0);
    expect(run.sim.state.getTriggers(user)).toHaveLength(0);
    const sent = cancelActions(run);
    expect(sent).toHaveLength(2);
    const fast = sent.filter((a) => (a.action as { f?: boolean }).f === true);
    const plain = sent.filter((a) => !("f" in (a.action as object)));
    expect(fast).toHaveLength(1);
    expect(plain).toHaveLength(1);
    // every status "success": no order was refused as a fast cancel of a trigger order
    for (const a of sent) {
      expect(a.accepted).toBe(true);
      const statuses = (a.response as { response: { data: { statuses: unknown[] } } }).response.data.statuses;
      expect(statuses.every((s) => s === "success")).toBe(true);
    }
    expect((plain[0]!.action as { cancels: unknown[] }).cancels).toHaveLength(2);
    expect((fast[0]!.action as { cancels: unknown[] }).cancels).toHaveLength(2);
    expect(run.events("orders.cancelled")[0]).toMatchObject({ confirmed: true, cancelled: 4, kept: 0 });
    proven("fast-trigger-refused");
  });
});
