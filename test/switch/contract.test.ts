/**
 * The log contract (docs/cli-contract.md "Logs"): the events the switch promises, each with exactly the fields it
 * carries, driven through the real driver (createSwitch) over a fake exchange client, a ledger in a temp dir and
 * a ManualClock with ManualTimers. The machine emits typed events; log.ts words them: this pins the wording's
 * names and fields, whatever moves behind them.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { HyperliquidApiError, type HyperliquidErrorKind } from "../../src/protocol/hyperliquid/errors.js";
import type { ScheduleCancelParameters } from "../../src/protocol/hyperliquid/exchange.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createSwitch, type Switch } from "../../src/switch/index.js";
import { Ledger } from "../../src/switch/ledger.js";
import { captureLogger, type LogLine } from "../app/helpers.js";
import { ledgerBus, switchBus } from "../helpers/switch-bus.js";
import { FEATURES } from "./features.js";
import { SWITCH_CADENCE } from "./world.js";

const ACCOUNT = "0x00000000000000000000000000000000000000aa";
/** What every pino line carries besides the event's own fields. */
const BASE = new Set(["level", "time", "pid", "hostname", "module", "account", "msg", "event"]);

type Answer =
  | { ok: true; date?: number }
  | { ok: false; kind: HyperliquidErrorKind; message: string; nonceDetail?: "too_low" | "too_high" };

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function world(opts: { onEngineDown?: "expedite" | "lapse" } = {}) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const timers = new ManualTimers(clock);
  const log = captureLogger();
  const ledger = await Ledger.open({
    stateDir: mkdtempSync(join(tmpdir(), "hl-deadman-contract-")),
    clock,
    bus: ledgerBus(log.logger),
    triggerLimit: 10,
  });
  /** the next answers of the fake exchange, in order; an empty queue answers ok with the true Date */
  const answers: Answer[] = [];
  const sent: ScheduleCancelParameters[] = [];
  const client = {
    async scheduleCancel(params: ScheduleCancelParameters) {
      sent.push(params);
      const a = answers.shift() ?? { ok: true };
      if (!a.ok)
        throw new HyperliquidApiError({
          endpoint: "exchange",
          status: 200,
          url: "fake",
          kind: a.kind,
          serverMessage: a.message,
          ...(a.nonceDetail ? { nonceDetail: a.nonceDetail } : {}),
        });
      return {
        nonce: clock.now(),
        expiresAfter: undefined,
        time: params.time,
        responseType: "default",
        latencyMs: 12,
        serverDate: a.date ?? Math.floor(clock.now() / 1000) * 1000,
      };
    },
  };
  const sw: Switch = createSwitch({
    account: { address: ACCOUNT },
    features: FEATURES,
    policy: {
      ...SWITCH_CADENCE,
      onEngineDown: opts.onEngineDown ?? "lapse",
    },
    io: {
      client,
      ledger,
      nonces: { rebase: () => undefined, accepted: () => undefined },
    },
    runtime: createRuntime({ clock, timers }),
    bus: switchBus(log.logger, createMetrics()),
  });
  closers.push(async () => {
    await sw.dispatch({ type: "stop" });
    await ledger.close();
  });
  const settle = async () => {
    for (let i = 0; i < 5; i++) {
      await sw.settle();
      await new Promise((r) => setImmediate(r));
    }
  };
  const advance = async (ms: number, step = 1_000) => {
    for (let t = 0; t < ms; t += step) {
      clock.advance(Math.min(step, ms - t));
      await settle();
    }
  };
  return { clock, log, sw, answers, sent, settle, advance };
}

/** The event's own fields (the line without pino's and the switch's common ones). */
const fieldsOf = (l: LogLine) =>
  Object.keys(l)
    .filter((k) => !BASE.has(k))
    .sort();
const only = (lines: LogLine[], name: string) => {
  const found = lines.filter((l) => l.event === name);
  expect(found.length, `${name} was logged`).toBeGreaterThan(0);
  for (const l of found) expect(l.account).toBe(ACCOUNT);
  return found;
};

describe("the log contract (docs/cli-contract.md), through the driver", () => {
  test("heartbeat.ok carries deadline and latencyMs; trigger.counted triggersToday; engine.down/up", async () => {
    const w = await world();
    w.sw.dispatch({ type: "start" });
    await w.settle();
    const ok = only(w.log.lines, "heartbeat.ok")[0]!;
    expect(fieldsOf(ok)).toEqual(["deadline", "latencyMs"]);
    expect(ok).toMatchObject({ deadline: Date.UTC(2026, 0, 1, 12, 1, 0), latencyMs: 12, level: 30 });
    // the engine goes down (policy lapse): no more pushes; the deadline lapses and a trigger is counted
    w.sw.dispatch({ type: "engine", up: false, detail: "guard says down" });
    const down = only(w.log.lines, "engine.down")[0]!;
    expect(fieldsOf(down)).toEqual(["action", "armedUntil", "cause", "detail"]);
    // a death seen (the default); `absent` after a restart's connect grace (issue 38)
    expect(down).toMatchObject({ action: "lapse", detail: "guard says down", cause: "seen", level: 40 });
    await w.advance(61_000);
    const counted = only(w.log.lines, "trigger.counted")[0]!;
    expect(fieldsOf(counted)).toEqual(["deadline", "proof", "triggerLimit", "triggersLeft", "triggersToday"]);
    expect(counted).toMatchObject({ triggersToday: 1, triggerLimit: 10, triggersLeft: 9, proof: "guess" });
    w.sw.dispatch({ type: "engine", up: true, detail: "back" });
    // engine.up says what the policy does now (issue 38: the words match the machine)
    expect(fieldsOf(only(w.log.lines, "engine.up")[0]!)).toEqual(["action", "detail"]);
  });

  test("heartbeat.failed carries reason and the server's message; trigger.exhausted on the daily limit", async () => {
    const w = await world();
    w.answers.push({ ok: false, kind: "server_error", message: "upstream 502" });
    w.sw.dispatch({ type: "start" });
    await w.settle();
    const failed = only(w.log.lines, "heartbeat.failed")[0]!;
    expect(fieldsOf(failed)).toEqual(["armedUntil", "consecutiveFailures", "message", "reason", "retryInMs"]);
    expect(failed).toMatchObject({ reason: "server_error", message: "upstream 502", consecutiveFailures: 1 });
    w.answers.push({ ok: false, kind: "daily_limit", message: "Too many cancels today" });
    await w.advance(20_000);
    const refused = w.log.lines.filter((l) => l.event === "heartbeat.failed" && l.reason === "daily_limit");
    expect(refused.map(fieldsOf)).toEqual([["consecutiveFailures", "message", "reason"]]);
    const exhausted = only(w.log.lines, "trigger.exhausted")[0]!;
    expect(fieldsOf(exhausted)).toEqual(["message", "resumesAt", "triggerLimit", "triggersToday"]);
    expect(exhausted).toMatchObject({ resumesAt: Date.UTC(2026, 0, 2), level: 50 });
  });

  test("shutdown.removed on a graceful stop", async () => {
    const w = await world();
    w.sw.dispatch({ type: "start" });
    await w.settle();
    const outcome = w.sw.shutdown({ mode: "remove" });
    await w.settle();
    expect(await outcome).toEqual({ account: ACCOUNT, outcome: "removed" });
    const removed = only(w.log.lines, "shutdown.removed")[0]!;
    expect(fieldsOf(removed)).toEqual(["previousDeadline"]);
    expect(w.sent.at(-1)).not.toHaveProperty("time", expect.any(Number));
  });

  test("clock.suspect / clock.agreed carry localMs, exchangeMs, disagreementMs; clock.date_refused reason", async () => {
    const w = await world();
    w.sw.dispatch({ type: "start" });
    await w.settle();
    // the local clock steps 90 s ahead while the exchange's Dates stay true
    const truth = () => Math.floor((w.clock.now() - 90_000) / 1000) * 1000;
    w.clock.step(90_000);
    w.answers.push({ ok: true, date: truth() });
    await w.advance(15_000);
    const suspect = only(w.log.lines, "clock.suspect")[0]!;
    expect(fieldsOf(suspect)).toEqual(["actOnMs", "dayOnMs", "disagreementMs", "exchangeMs", "localMs"]);
    w.clock.step(-90_000);
    await w.advance(15_000);
    expect(fieldsOf(only(w.log.lines, "clock.agreed")[0]!)).toEqual([
      "disagreementMs",
      "exchangeMs",
      "localMs",
    ]);
    w.answers.push({ ok: true, date: Number.NaN });
    await w.advance(15_000);
    const refused = only(w.log.lines, "clock.date_refused");
    for (const l of refused) expect(fieldsOf(l)).toEqual(["date", "detail", "reason"]);
    expect(refused.map((l) => l.reason)).toContain("not_a_date");
  });

  test("clock.source_switched after repeated expired refusals; nonce.rederived from the exchange's bound", async () => {
    const w = await world();
    w.answers.push(
      { ok: false, kind: "expired", message: "Action already expired" },
      { ok: false, kind: "expired", message: "Action already expired" },
    );
    w.sw.dispatch({ type: "start" });
    await w.advance(30_000);
    const switched = only(w.log.lines, "clock.source_switched")[0]!;
    expect(fieldsOf(switched)).toEqual(["message", "reason", "to"]);
    w.answers.push({
      ok: false,
      kind: "nonce",
      nonceDetail: "too_low",
      message: `Invalid nonce: nonce too low 1767225600000 < ${Date.UTC(2026, 0, 1, 11, 0, 0)}`,
    });
    await w.advance(30_000);
    const rederived = only(w.log.lines, "nonce.rederived")[0]!;
    expect(fieldsOf(rederived)).toEqual(["floor", "reason"]);
    expect(rederived).toMatchObject({ floor: Date.UTC(2026, 0, 1, 11, 0, 0), reason: "nonce too_low" });
  });

  test("switch.event_refused: an input the switch cannot take", async () => {
    const w = await world();
    w.sw.dispatch({ type: "start" });
    await w.settle();
    w.sw.dispatch({ type: "clockStep", deltaMs: Number.NaN });
    const refused = only(w.log.lines, "switch.event_refused")[0]!;
    expect(fieldsOf(refused)).toEqual(["eventType", "reason"]);
    expect(refused).toMatchObject({ eventType: "clockStep", level: 50 });
  });
});
