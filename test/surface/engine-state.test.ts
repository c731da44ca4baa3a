/**
 * The guard's state per account in words and figures (issue 38, "Words"): readiness, the status page's guard line
 * and each account's engine, and `hl_deadman_engine_state{account,state}` bounded by `--metrics-per-account`. A
 * socket guard's account that waits for its first engine is never "engine up", nor reported down.
 */
import { describe, expect, test } from "vitest";
import type { GuardStatus, SwitchStatus } from "../../src/core/status.js";
import { computeReadiness } from "../../src/surface/health.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { engineOf, guardView } from "../../src/surface/status-page/index.js";
import { guardMetrics } from "../../src/surface/watchers/guard.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const A = "0x1111111111111111111111111111111111111111";
const B = "0x2222222222222222222222222222222222222222";
const armed = (account: string): SwitchStatus => ({
  account,
  state: "armed",
  armedUntil: NOW + 55_000,
  lastPushAt: NOW - 5_000,
  consecutiveFailures: 0,
  lastError: null,
  notProtectedReason: null,
  day: "2026-01-01",
  triggersToday: 0,
  triggerLimit: 10,
  exhausted: false,
});
const socket = (accounts: Record<string, "waiting" | "up" | "detached" | "down">): GuardStatus => ({
  configured: true,
  up: !Object.values(accounts).some((s) => s === "down" || s === "waiting"),
  kind: "socket",
  lastCheckAt: null,
  detail: "listening on /run/hl-deadman/guard.sock",
  accounts,
});
const readiness = (guard: GuardStatus) =>
  computeReadiness({
    now: NOW,
    intervalMs: 15_000,
    deadlineMs: 60_000,
    accounts: [armed(A), armed(B)],
    exposure: {
      enabled: false,
      intervalMs: 0,
      lastSuccessAt: null,
      lastAttemptAt: null,
      lastError: null,
      clockSkewMs: null,
    },
    guard,
  });

describe("the guard's state per account", () => {
  test("waiting: not ready for its own reason, never 'engine down' nor 'engine up'", () => {
    const r = readiness(socket({ [A]: "waiting", [B]: "up" }));
    expect(r.ready).toBe(false);
    expect(r.reasons).toEqual([`engine guard (socket): waiting for the engine to connect for ${A}`]);
    const view = guardView(r.guard);
    expect(view.text).not.toMatch(/engine up/i);
    expect(view).toMatchObject({
      level: "warn",
      text: "WAITING for the engine to connect for 1 account · connected for 1 account (socket: listening on /run/hl-deadman/guard.sock)",
      counts: { waiting: 1, up: 1, detached: 0, down: 0 },
    });
    expect(engineOf(r.guard, A)).toBe("waiting");
    expect(engineOf(r.guard, B)).toBe("up");
  });

  test("down beside waiting: reported down once, red, worst first", () => {
    const r = readiness({
      ...socket({ [A]: "down", [B]: "waiting" }),
      detail: `${A}: engine connection closed`,
    });
    expect(r.reasons).toEqual([
      `engine guard (socket) reports the trading engine down: ${A}: engine connection closed`,
      `engine guard (socket): waiting for the engine to connect for ${B}`,
    ]);
    expect(guardView(r.guard)).toMatchObject({
      level: "bad",
      text: expect.stringMatching(
        /^ENGINE DOWN for 1 account · WAITING for the engine to connect for 1 account \(/,
      ),
    });
  });

  test("every account connected: engine up; the file and URL guards and none say theirs", () => {
    const r = readiness(socket({ [A]: "up", [B]: "up" }));
    expect(r.ready).toBe(true);
    expect(guardView(r.guard)).toMatchObject({
      level: "ok",
      text: expect.stringMatching(/^engine up for 2 accounts \(socket/),
    });
    const file: GuardStatus = {
      configured: true,
      up: false,
      kind: "file",
      lastCheckAt: NOW,
      detail: "31 s old",
    };
    expect(guardView(file)).toEqual({ text: "ENGINE DOWN (file: 31 s old)", level: "bad", counts: null });
    expect(engineOf(file, A)).toBe("down");
    expect(engineOf({ ...file, up: true }, A)).toBe("up");
    const none: GuardStatus = { configured: false, up: true, kind: null, lastCheckAt: null, detail: null };
    expect(guardView(none).text).toBe("no guard configured");
    expect(engineOf(none, A)).toBeNull();
  });
});

describe("hl_deadman_engine_state{account,state}", () => {
  const series = async (perAccount: "all" | "alerts") => {
    const metrics = createMetrics({ defaultMetrics: false, perAccount });
    const on = guardMetrics(metrics);
    on({ module: "guard", type: "guardConfigured", kind: "socket" });
    // an engine that connected while the socket's mode was set: its state stands when `guardListening` follows
    on({ module: "guard", type: "engineAccount", account: B, state: "up", detail: "connected" });
    on({ module: "guard", type: "guardListening", kind: "socket", address: "/s", accounts: [A, B] });
    const read = async () =>
      (await metrics.registry.getSingleMetric("hl_deadman_engine_state")!.get()).values
        .map((v) => `${v.labels.account === A ? "A" : "B"} ${v.labels.state} ${v.value}`)
        .sort();
    const first = await read();
    on({ module: "guard", type: "engineAccount", account: A, state: "up", detail: "connected" });
    on({ module: "guard", type: "engineAccount", account: B, state: "down", detail: "closed" });
    return { first, after: await read(), text: await metrics.registry.metrics() };
  };

  test("all: four series an account, 1 for its state; waiting from the start", async () => {
    const { first, after, text } = await series("all");
    expect(first).toEqual([
      "A detached 0",
      "A down 0",
      "A up 0",
      "A waiting 1",
      "B detached 0",
      "B down 0",
      "B up 1",
      "B waiting 0",
    ]);
    expect(after.filter((s) => s.endsWith(" 1"))).toEqual(["A up 1", "B down 1"]);
    expect(after).toHaveLength(8);
    expect(text).toContain(`hl_deadman_engine_state{account="${A}",state="up"} 1`);
  });

  test("alerts: only the state an account is in (one series an account)", async () => {
    const { first, after } = await series("alerts");
    expect(first).toEqual(["A waiting 1", "B up 1"]);
    expect(after).toEqual(["A up 1", "B down 1"]);
  });
});
