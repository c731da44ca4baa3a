/**
 * Table tests of the switch machine's `step`: (model, event) → (model, Ready), one row per rule of
 * docs/daemon.md "The switch machine". No clock, no sockets, no disk.
 */
import { describe, expect, test } from "vitest";
import { logLineOf } from "../../src/surface/switch/index.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import {
  type Event,
  EXPEDITE_LEAD_MS,
  EXPIRY_MARGIN_MS,
  gateUntil,
  initialModel,
  step as machineStep,
  type Now,
  type Ready,
  type SwitchConfig,
  type SwitchModel,
  status,
} from "../../src/switch/machine.js";
import { type ReadyView, view } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const CFG: SwitchConfig = SWITCH_CFG;
const at = (ms: number, verified = true): Now => ({ mono: ms, wall: T0 + ms, verified });
/** The machine's step, its Ready read field by field (ready-view.ts). */
const step = (model: SwitchModel, event: Event, now: Now) => {
  const r = machineStep(model, event, now);
  return { model: r.model, ready: view(r.ready) };
};

/** Runs events from a fresh model; returns the model and the last step's Ready. */
function run(
  events: [Event, Now][],
  cfg: Partial<SwitchConfig> = {},
  entry = newEntry(CFG.account, T0, { limit: 10 }),
) {
  let model = initialModel({ ...CFG, ...cfg }, entry);
  let ready: ReadyView = { mustSync: false, effects: [], events: [], wakeAt: null };
  for (const [event, now] of events) ({ model, ready } = step(model, event, now));
  return { model, ready };
}

/** A Ready in its fixed order: persist (`sync` when mustSync), send, cancel, read, poll, the events' log names, done. */
const types = (r: ReadyView) => [
  ...(r.entry ? [r.mustSync ? "sync" : "persist"] : []),
  ...(r.send ? [`send:${r.send.kind}`] : []),
  ...(r.cancelOrders ? ["cancelOrders"] : []),
  ...(r.readRecord ? ["readRecord"] : []),
  ...(r.pollExposure ? ["pollExposure"] : []),
  ...r.events.flatMap((e) => {
    const l = logLineOf(e);
    return l ? [`log:${l.event}`] : [];
  }),
  ...(r.done ? ["done"] : []),
];
const logOf = (r: Ready, name: string) => r.events.map(logLineOf).find((l) => l?.event === name);
const pushOk = (id: number, ms: number): [Event, Now] => [
  { type: "pushConfirmed", id, latencyMs: 10 },
  at(ms),
];

describe("step: one row per rule", () => {
  test("start → the intent persisted with mustSync, then the request: one Ready, no round trip", () => {
    const a = run([[{ type: "start" }, at(0)]]);
    expect(types(a.ready)).toEqual(["sync", "send:push"]);
    // the entry carries the intent, the request leaves once it is durable, within the push's budget
    expect(a.ready.entry?.pendingUntil).toBe(T0 + 60_000);
    expect(a.ready).toMatchObject({ mustSync: true, syncBudgetMs: 5_000 });
    expect(a.ready.send).toEqual({ kind: "push", id: 1, cancelAt: T0 + 60_000, expiresAfterMs: 5_000 });
    // the one wake-up follows the earliest deadline that may be armed (the pending one)
    expect(a.ready.wakeAt).toBe(60_000);
    expect(a.model.entry.pendingUntil).toBe(T0 + 60_000);
    expect(status(a.model, at(0))).toMatchObject({ state: "starting", armedUntil: null });
  });

  test("intent not durable within the budget → no request, heartbeat.failed ledger_slow, retry", () => {
    const { model, ready } = run([
      [{ type: "start" }, at(0)],
      [{ type: "syncFailed", id: 1, reason: "disk too slow" }, at(5_000)],
    ]);
    expect(types(ready)).not.toContain("send:push");
    expect(logOf(ready, "heartbeat.failed")?.fields).toMatchObject({ reason: "ledger_slow" });
    expect(model.entry.pendingUntil).toBeNull();
    expect(model.state).toBe("retrying");
  });

  test("push confirmed → armed at exactly the pushed time, earlier or later (no max)", () => {
    const entry = { ...newEntry(CFG.account, T0, { limit: 10 }), armedUntil: T0 + 600_000 };
    const { model, ready } = run([[{ type: "start" }, at(0)], pushOk(1, 50)], {}, entry);
    expect(status(model, at(50))).toMatchObject({ state: "armed", armedUntil: T0 + 60_000 });
    expect(types(ready)).toEqual(expect.arrayContaining(["persist", "log:heartbeat.ok"]));
    expect(ready.entry?.armedUntil).toBe(T0 + 60_000);
    expect(ready.wakeAt).toBe(60_000);
  });

  test("restart with a pending push → not armed, not reported, until a push confirms", () => {
    const entry = {
      ...newEntry(CFG.account, T0, { limit: 10 }),
      armedUntil: T0 + 30_000,
      pendingUntil: T0 + 50_000,
    };
    const { model, ready } = run([[{ type: "start" }, at(0)]], {}, entry);
    expect(types(ready)).toContain("log:ledger.pending");
    expect(status(model, at(0))).toMatchObject({ state: "starting", armedUntil: null });
  });

  test("unknown outcome → the next push waits for the old one's expiresAfter + margin", () => {
    const { model, ready } = run([
      [{ type: "start" }, at(0)],
      [
        {
          type: "pushFailed",
          id: 1,
          sentMono: 0,
          kind: "transport",
          message: "reset",
          permanent: false,
          retryable: true,
          outcomeUnknown: true,
        },
        at(100),
      ],
    ]);
    expect(gateUntil(model)).toBe(5_000 + EXPIRY_MARGIN_MS);
    expect(ready.wakeAt).toBe(5_000 + EXPIRY_MARGIN_MS);
    expect(model.entry.pendingUntil).toBe(T0 + 60_000); // may have landed: stays pending
    const tick = step(model, { type: "wake" }, at(3_000));
    expect(types(tick.ready)).toEqual([]); // gate still closed: wait, send nothing
    expect(tick.ready.wakeAt).toBe(5_000 + EXPIRY_MARGIN_MS);
  });

  test("unknown outcome: when the request left is bounded by when it was asked and the write-ahead's budget", () => {
    const failed = (sentMono?: number): Event => ({
      type: "pushFailed",
      id: 1,
      sentMono,
      kind: "transport",
      message: "reset",
      permanent: false,
      retryable: true,
      outcomeUnknown: true,
    });
    const gate = (sentMono?: number) =>
      gateUntil(
        run([
          [{ type: "start" }, at(1_000)],
          [failed(sentMono), at(9_000)],
        ]).model,
      );
    // not said: the latest it can have left (asked + the write-ahead's budget)
    expect(gate()).toBe(1_000 + 5_000 + 5_000 + EXPIRY_MARGIN_MS);
    expect(gate(3_000)).toBe(3_000 + 5_000 + EXPIRY_MARGIN_MS);
    // an impossible report is clamped: never before it was asked, never after the budget
    expect(gate(0)).toBe(1_000 + 5_000 + EXPIRY_MARGIN_MS);
    expect(gate(60_000)).toBe(1_000 + 5_000 + 5_000 + EXPIRY_MARGIN_MS);
  });

  test("a refused later push keeps the pending deadline of an earlier unknown outcome rather than erasing it", () => {
    const failed = (id: number, outcomeUnknown: boolean): Event => ({
      type: "pushFailed",
      id,
      sentMono: 0,
      kind: outcomeUnknown ? "transport" : "rejected",
      message: "x",
      permanent: false,
      retryable: outcomeUnknown,
      outcomeUnknown,
    });
    const entry = { ...newEntry(CFG.account, T0, { limit: 10 }), armedUntil: T0 + 60_000 };
    const { model } = run(
      [
        [{ type: "start" }, at(0)], // push 1: pending T0 + 60 s
        [failed(1, true), at(100)], // unknown: stays pending
        [{ type: "wake" }, at(20_000)], // the gate is open: push 2, pending min(60 s, 80 s)
        [failed(2, false), at(20_100)], // refused: back to what was pending before it
      ],
      {},
      entry,
    );
    expect(model.entry.pendingUntil).toBe(T0 + 60_000);
    expect(model.entry.armedUntil).toBe(T0 + 60_000);
  });

  test("explicit refusal → the intent is void (pending restored)", () => {
    const { model } = run([
      [{ type: "start" }, at(0)],
      [
        {
          type: "pushFailed",
          id: 1,
          kind: "rejected",
          message: "no",
          permanent: false,
          retryable: false,
          outcomeUnknown: false,
        },
        at(100),
      ],
    ]);
    expect(model.entry.pendingUntil).toBeNull();
  });

  test("lapse → one trigger counted, exposure polled, state lapsed; never twice", () => {
    const armed = run([[{ type: "start" }, at(0)], pushOk(1, 0)]);
    const lapsed = step(armed.model, { type: "wake" }, at(60_000));
    expect(types(lapsed.ready)).toEqual(expect.arrayContaining(["log:trigger.counted", "pollExposure"]));
    expect(lapsed.ready.entry).toMatchObject({ triggersToday: 1, lastCountedDeadline: T0 + 60_000 });
    expect(logOf(lapsed.ready, "trigger.counted")?.fields).toMatchObject({
      triggersToday: 1,
      triggersLeft: 9,
    });
    expect(lapsed.model.entry.triggersToday).toBe(1);
    expect(lapsed.model.state).toBe("lapsed");
    const again = step(lapsed.model, { type: "wake" }, at(60_001));
    expect(again.model.entry.triggersToday).toBe(1);
  });

  test("the exchange's daily-limit refusal → exhausted, no push; after 00:00 UTC (day rolls) → trigger.reset and a push", () => {
    const entry = {
      ...newEntry(CFG.account, T0, { limit: 10 }),
      triggersToday: 10,
      limitRefusedAt: T0 - 1_000,
    };
    const ex = run([[{ type: "start" }, at(0)]], {}, entry);
    expect(ex.model.state).toBe("exhausted");
    expect(status(ex.model, at(0)).exhausted).toBe(true);
    expect(types(ex.ready)).not.toContain("send:push");
    const midnight = Date.UTC(2026, 0, 2) - T0;
    // the day rolls once an answer's Date was applied and every candidate (the estimate, the local clock, that Date)
    // is past 00:00 (issue 40: the Date alone verifies nothing, and while nothing is verified the day is the
    // earliest candidate's; a Date 1 s before 00:00 keeps Jan 1)
    const sampled = step(
      ex.model,
      { type: "clockSample", date: T0 + midnight, sentMono: midnight - 10, receivedMono: midnight },
      at(midnight),
    );
    const next = step(sampled.model, { type: "dayRollover" }, at(midnight + 1));
    expect([...types(sampled.ready), ...types(next.ready)]).toEqual(
      expect.arrayContaining(["log:ledger.rollover", "log:trigger.reset", "send:push"]),
    );
  });

  test("behavior: a count at the limit without the exchange's refusal (guesses) fails readiness, and the pushes go on", () => {
    const guesses = Array.from({ length: 10 }, (_, i) => ({
      deadline: T0 - 3_600_000 + i * 60_000,
      proof: "guess" as const,
      at: T0 - 3_600_000 + i * 60_000,
    }));
    const entry = { ...newEntry(CFG.account, T0, { limit: 10 }), triggersToday: 10, triggers: guesses };
    const r = run([[{ type: "start" }, at(0)]], {}, entry);
    expect(types(r.ready)).toContain("log:trigger.limit_suspected");
    expect(types(r.ready)).not.toContain("log:trigger.exhausted");
    expect(types(r.ready)).toContain("send:push");
    const st = status(r.model, at(0));
    expect(st).toMatchObject({ exhausted: false, limitSuspected: true, limitRefused: false });
    expect(st.triggerProofs).toMatchObject({ guess: 10, orders: 0, limit_error: 0 });
    // an unrecognised refusal is neither the limit nor permanent: the next interval pushes again
    const refused = step(
      r.model,
      {
        type: "pushFailed",
        id: 1,
        kind: "rejected",
        message: "Some text the daemon does not know",
        permanent: false,
        retryable: false,
        outcomeUnknown: false,
      },
      at(100),
    );
    expect(refused.model.state).not.toBe("exhausted");
    expect(refused.model.entry.limitRefusedAt).toBeNull();
    expect(types(step(refused.model, { type: "tick" }, at(15_000)).ready)).toContain("send:push");
  });

  test("a day never rolls on an unverified clock, nor backwards", () => {
    const entry = { ...newEntry(CFG.account, T0, { limit: 10 }), triggersToday: 4 };
    const a = run([[{ type: "start" }, at(Date.UTC(2026, 0, 2) - T0 + 5, false)]], {}, entry);
    expect(a.model.entry).toMatchObject({ day: "2026-01-01", triggersToday: 4 });
    const b = run([[{ type: "start" }, at(-86_400_000)]], {}, entry);
    expect(b.model.entry).toMatchObject({ day: "2026-01-01", triggersToday: 4 });
  });

  test("permanent refusal → NOT PROTECTED, re-checked only after the re-check interval", () => {
    const { model, ready } = run([
      [{ type: "start" }, at(0)],
      [
        {
          type: "pushFailed",
          id: 1,
          kind: "volume_gate",
          message: "gate",
          permanent: true,
          retryable: false,
          outcomeUnknown: false,
        },
        at(10),
      ],
    ]);
    expect(model.state).toBe("not_protected");
    expect(types(ready)).toContain("log:switch.not_protected");
    expect(types(step(model, { type: "tick" }, at(15_000)).ready)).not.toContain("send:push");
    expect(types(step(model, { type: "wake" }, at(300_010)).ready)).toContain("send:push");
  });

  test("engine down: expedite → one push at the 5 s minimum; lapse → nothing; cancel → cancelOpenOrders", () => {
    const base: [Event, Now][] = [[{ type: "start" }, at(0)], pushOk(1, 0)];
    const exp = run([...base, [{ type: "engine", up: false }, at(1_000)]]);
    expect(exp.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_000 + EXPEDITE_LEAD_MS });
    const lapse = run([...base, [{ type: "engine", up: false }, at(1_000)]], { onEngineDown: "lapse" });
    expect(types(lapse.ready)).not.toContain("send:push");
    const cancel = run([...base, [{ type: "engine", up: false }, at(1_000)]], {
      onEngineDown: "cancel",
      cancelStops: true,
    });
    expect(cancel.ready.cancelOrders).toEqual({ cancelStops: true });
    // confirmed → the schedule keeps being renewed a full deadline ahead (never expedited): no trigger spent
    const kept = step(
      cancel.model,
      { type: "ordersCancelled", confirmed: true, cancelled: 2, kept: 0 },
      at(1_100),
    );
    expect(types(kept.ready)).toContain("log:engine.orders_cancelled");
    expect(kept.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_100 + 60_000 });
    // not confirmed → the expedite backstop
    const failed = step(
      cancel.model,
      { type: "ordersCancelled", confirmed: false, cancelled: 0, kept: 2 },
      at(1_100),
    );
    expect(failed.ready.send).toMatchObject({ kind: "push", cancelAt: T0 + 1_100 + EXPEDITE_LEAD_MS });
  });

  test("agent missing/expired → NOT PROTECTED, no pushes; ok → protected and a push", () => {
    const base: [Event, Now][] = [[{ type: "start" }, at(0)], pushOk(1, 0)];
    const missing = run([
      ...base,
      [{ type: "agent", state: "expired", detail: "validUntil passed" }, at(10)],
    ]);
    expect(status(missing.model, at(10))).toMatchObject({
      state: "not_protected",
      notProtectedReason: "agent_expired",
    });
    expect(types(step(missing.model, { type: "tick" }, at(15_000)).ready)).not.toContain("send:push");
    const ok = step(missing.model, { type: "agent", state: "ok" }, at(20_000));
    expect(types(ok.ready)).toEqual(expect.arrayContaining(["log:switch.protected", "send:push"]));
  });

  test("clock step → not ready until a confirmed push; the push clears it", () => {
    const base: [Event, Now][] = [[{ type: "start" }, at(0)], pushOk(1, 0)];
    const stepped = run([...base, [{ type: "clockStep", deltaMs: -600_000 }, at(1_000)]]);
    expect(status(stepped.model, at(1_000)).clockStepped).toBe(true);
    expect(types(stepped.ready)).toEqual(expect.arrayContaining(["log:switch.clock_step", "send:push"]));
    const b = step(stepped.model, { type: "pushConfirmed", id: 2, latencyMs: 5 }, at(1_010));
    expect(status(b.model, at(1_010)).clockStepped).toBe(false);
  });

  test("recovery after failures → heartbeat.recovered with the outage length", () => {
    const { ready } = run([
      [{ type: "start" }, at(0)],
      [
        {
          type: "pushFailed",
          id: 1,
          sentMono: 0,
          kind: "server_error",
          message: "500",
          permanent: false,
          retryable: true,
          outcomeUnknown: true,
        },
        at(100),
      ],
      [{ type: "wake" }, at(6_000)],
      pushOk(2, 6_100),
    ]);
    expect(logOf(ready, "heartbeat.recovered")?.fields).toEqual({ outageMs: 6_000 });
  });

  test("shutdown remove → waits for the gate, sends the removal; below the volume gate → nothing_armed, not a failure", () => {
    const base: [Event, Now][] = [[{ type: "start" }, at(0)], pushOk(1, 0)];
    const s = run([...base, [{ type: "shutdown", mode: "remove" }, at(1_000)]]);
    expect(types(s.ready)).toContain("send:removal");
    const ok = step(s.model, { type: "removalConfirmed" }, at(1_100));
    expect(ok.ready.done).toEqual({ account: CFG.account, outcome: "removed" });
    expect(ok.model.entry.armedUntil).toBeNull();
    const gate = step(
      s.model,
      {
        type: "removalFailed",
        kind: "volume_gate",
        message: "gate",
        permanent: true,
        retryable: false,
        outcomeUnknown: false,
        cumulativeVolume: 373.47,
      },
      at(1_100),
    );
    expect(types(gate.ready)).toContain("log:shutdown.nothing_armed");
    expect(gate.ready.done).toMatchObject({ outcome: "skipped", reason: "volume_gate" });
    const fail = step(
      s.model,
      {
        type: "removalFailed",
        kind: "server_error",
        message: "500",
        permanent: false,
        retryable: true,
        outcomeUnknown: true,
      },
      at(1_100),
    );
    expect(types(fail.ready)).toContain("log:shutdown.remove_failed");
  });

  test("a stop waits for the push in flight: the removal leaves only once the push is answered", () => {
    const asked = run([
      [{ type: "start" }, at(0)],
      [{ type: "shutdown", mode: "remove" }, at(10)],
    ]);
    expect(asked.ready.send).toBeUndefined();
    expect(asked.model.phase.name).toBe("stopping");
    const answered = step(asked.model, { type: "pushConfirmed", id: 1, latencyMs: 10 }, at(20));
    expect(answered.ready.send).toEqual({ kind: "removal", expiresAfterMs: 5_000 });
    expect(answered.model.entry.armedUntil).toBe(T0 + 60_000); // the answer is recorded before the removal
  });

  test("reading never changes the model (status is a projection)", () => {
    const { model } = run([[{ type: "start" }, at(0)], pushOk(1, 0)]);
    // (the configuration holds the feature machines the app hands in: functions, kept by reference)
    const before = { ...structuredClone({ ...model, cfg: null }), cfg: model.cfg };
    for (let i = 0; i < 100; i++) status(model, at(i * 10_000));
    expect(model).toEqual(before);
  });
});
