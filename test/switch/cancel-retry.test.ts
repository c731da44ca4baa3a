/**
 * The engine-down cancel pass gives up last (issue 38, finding 3): a pass refused for the IP's weight (429) or a
 * transient read error is tried again, with the pushes still held, while the deadline the exchange holds leaves
 * room for the fall-back (a push at the 5 s minimum); only then does it fall back, and `engine.cancel_failed` says
 * why. Table tests of the pure machine: no clock, no sockets.
 */
import { describe, expect, test } from "vitest";
import { logLineOf } from "../../src/surface/switch/index.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import {
  type CancelFailure,
  type Event,
  EXPEDITE_LEAD_MS,
  initialModel,
  type Now,
  type SwitchConfig,
} from "../../src/switch/machine.js";
import { type ReadyView, type StepView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const CFG: SwitchConfig = { ...SWITCH_CFG, onEngineDown: "cancel" };
const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });
const logOf = (r: ReadyView, name: string) => r.events.map(logLineOf).find((l) => l?.event === name);
const LIMITED: CancelFailure = { kind: "rate_limited", request: "read", retryable: true };
const refused = (failure: CancelFailure | undefined, cancelled = 0): Event => ({
  type: "ordersCancelled",
  confirmed: false,
  cancelled,
  kept: 0,
  weight: cancelled > 0 ? 1 : 0,
  ...(failure ? { failure } : {}),
  detail: "reading the open orders failed (rate_limited)",
});

/** Armed at 0 (deadline T0 + 60 s), the engine down at 1 s: the first pass is asked for. */
function down(): StepView {
  let r: StepView = { model: initialModel(CFG, newEntry(CFG.account, T0, { limit: 10 })), ready: null! };
  for (const [e, now] of [
    [{ type: "start" }, at(0)],
    [{ type: "pushConfirmed", id: 1, latencyMs: 10 }, at(0)],
    [{ type: "engine", up: false }, at(1_000)],
  ] as [Event, Now][])
    r = step(r.model, e, now);
  expect(r.ready.cancelOrders).toEqual({ cancelStops: false });
  return r;
}

describe("the cancel pass gives up last", () => {
  test("behavior: a pass refused for the IP's weight is tried again, backing off, with no push in between; confirmed → renewed, no trigger", () => {
    let r = down();
    const retries: number[] = [];
    let t = 1_100;
    for (let i = 0; i < 3; i++) {
      r = step(r.model, refused(LIMITED), at(t));
      // no fall-back: no push (the deadline the exchange holds stays as it is), a wake-up to try again
      expect(r.ready.send).toBeUndefined();
      expect(logOf(r.ready, "engine.cancel_failed")).toBeUndefined();
      const line = logOf(r.ready, "engine.cancel_retry")!;
      expect(line.fields).toMatchObject({ reason: "rate_limited", request: "read", attempt: i + 1 });
      retries.push(r.ready.wakeAt! - t);
      // the tick of an interval neither pushes nor asks for a pass while the try again waits
      const tick = step(r.model, { type: "tick" }, at(t + 1));
      expect(tick.ready.send).toBeUndefined();
      expect(tick.ready.cancelOrders).toBeUndefined();
      // an answer with no pass out is not taken
      expect(step(r.model, refused(LIMITED), at(t + 2)).ready.events).toEqual([]);
      t = r.ready.wakeAt!;
      r = step(r.model, { type: "wake" }, at(t));
      expect(r.ready.cancelOrders).toEqual({ cancelStops: false });
      expect(r.ready.send).toBeUndefined();
      t += 100;
    }
    expect(retries).toEqual([2_000, 4_000, 8_000]);
    r = step(r.model, { type: "ordersCancelled", confirmed: true, cancelled: 3, kept: 0 }, at(t));
    expect(logOf(r.ready, "engine.orders_cancelled")).toBeDefined();
    // the first confirmed pass: the schedule renewed a full deadline ahead, never expedited
    expect(r.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + t + 60_000 });
    expect(r.model.cancelRetries).toBe(0);
  });

  test("behavior: the last try is at the latest moment that leaves room for the fall-back; then the fall-back says rate_limited", () => {
    let r = down();
    // deadline T0 + 60 s: the fall-back must leave by 60 − 5.5 − 5 (the request time-out) = 49.5 s, and a try takes
    // up to two request time-outs: the last one starts by 39.5 s
    const giveUp = 60_000 - EXPEDITE_LEAD_MS - CFG.requestTimeoutMs;
    let t = 1_100;
    const wakes: number[] = [];
    for (;;) {
      r = step(r.model, refused(LIMITED, 2), at(t));
      if (r.ready.send) break;
      wakes.push(r.ready.wakeAt!);
      expect(logOf(r.ready, "engine.cancel_retry")!.fields.giveUpInMs).toBe(giveUp - t);
      t = r.ready.wakeAt!;
      r = step(r.model, { type: "wake" }, at(t));
      t += 100;
    }
    expect(wakes.at(-1)).toBe(giveUp - 2 * CFG.requestTimeoutMs);
    expect(wakes.length).toBeGreaterThanOrEqual(4);
    // the fall-back: a push at the 5 s minimum, and the line says why and how often it tried
    expect(r.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + t + EXPEDITE_LEAD_MS });
    expect(logOf(r.ready, "engine.cancel_failed")!.fields).toMatchObject({
      reason: "rate_limited",
      retries: wakes.length,
      weight: 1,
    });
    expect(logOf(r.ready, "engine.cancel_failed")!.msg).toContain("rate_limited");
  });

  test("behavior: a transient read error (5xx) is tried again after 0.5 s; a refused cancel action (5xx) or an unconfirmed pass falls back at once", () => {
    const a = step(
      down().model,
      refused({ kind: "server_error", request: "read", retryable: true }),
      at(1_100),
    );
    expect(a.ready.send).toBeUndefined();
    expect(a.ready.wakeAt).toBe(1_600);
    for (const failure of [
      { kind: "server_error", request: "cancel", retryable: true } as const,
      { kind: "bad_request", request: "read", retryable: false } as const,
      undefined,
    ]) {
      const b = step(down().model, refused(failure), at(1_100));
      expect(b.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_100 + EXPEDITE_LEAD_MS });
      expect(logOf(b.ready, "engine.cancel_failed")!.fields).toMatchObject({
        reason: failure?.kind ?? "unconfirmed",
        retries: 0,
      });
    }
    // a cancel action refused for the IP's weight is the same cause as a read's: tried again
    const c = step(
      down().model,
      refused({ kind: "rate_limited", request: "cancel", retryable: true }),
      at(1_100),
    );
    expect(c.ready.send).toBeUndefined();
    expect(c.ready.wakeAt).toBe(3_100);
  });

  // issue 41: the death gate (src/fleet-death/gate.ts) answers a pass it cannot afford with this failure
  test("behavior: a pass the IP's weight cannot afford (weight_unaffordable) falls back at once, never tried again", () => {
    const b = step(
      down().model,
      {
        type: "ordersCancelled",
        confirmed: false,
        cancelled: 0,
        kept: 0,
        detail: "the IP's weight cannot afford this pass before the deadline",
        failure: { kind: "weight_unaffordable", request: "read", retryable: false },
      },
      at(1_100),
    );
    expect(b.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_100 + EXPEDITE_LEAD_MS });
    expect(b.ready.wakeAt).not.toBe(3_100);
    expect(logOf(b.ready, "engine.cancel_failed")!.fields).toMatchObject({
      reason: "weight_unaffordable",
      retries: 0,
      detail: expect.stringContaining("cannot afford"),
    });
  });

  test("behavior: the engine back while a try again waits: no pass, the pushes resume at full deadlines", () => {
    const r = step(down().model, refused(LIMITED), at(1_100));
    const up = step(r.model, { type: "engine", up: true }, at(1_500));
    expect(up.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_500 + 60_000 });
    expect(up.model.wake.cancel).toBeNull();
    const woken = step(up.model, { type: "wake" }, at(3_100));
    expect(woken.ready.cancelOrders).toBeUndefined();
  });

  test("behavior: a repeat pass (after a confirmed one) refused for the weight holds the renewal and is tried again, never an expedite at once", () => {
    let r = down();
    r = step(r.model, { type: "ordersCancelled", confirmed: true, cancelled: 1, kept: 0 }, at(1_100));
    r = step(r.model, { type: "pushConfirmed", id: 2, latencyMs: 10 }, at(1_200));
    r = step(r.model, { type: "tick" }, at(16_000));
    expect(r.ready.cancelOrders).toBeDefined();
    // the interval's renewal went out with the pass
    expect(r.ready.send).toMatchObject({ kind: "push", id: 3 });
    r = step(r.model, { type: "pushConfirmed", id: 3, latencyMs: 10 }, at(16_050));
    r = step(r.model, refused(LIMITED), at(16_100));
    expect(r.ready.send).toBeUndefined();
    expect(logOf(r.ready, "engine.cancel_retry")).toBeDefined();
    r = step(r.model, { type: "tick" }, at(17_000));
    expect(r.ready.send).toBeUndefined();
    r = step(r.model, { type: "wake" }, at(18_100));
    expect(r.ready.cancelOrders).toBeDefined();
    r = step(r.model, { type: "ordersCancelled", confirmed: true, cancelled: 0, kept: 0 }, at(18_200));
    // confirmed again: the renewal resumes at a full deadline; the pass is still said to be a repeat
    expect(r.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + 18_200 + 60_000 });
    expect(r.ready.events.find((e) => e.type === "ordersCancelled")).toMatchObject({ repeat: true });
  });
});
