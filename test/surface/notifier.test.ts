/**
 * Notifications: the mapping from log events, the logger tap, delivery to a real loopback receiver (up, down,
 * slow, answering 500), the bounded queue, the protection watcher, and the daemon end to end against the
 * simulator (a trigger reaches the webhook). Loopback only, port 0; every wait is bounded.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { ManualClock } from "../../src/core/clock.js";
import {
  createEventBus,
  type DaemonEvent,
  type DomainEvent,
  publishSwitchEvent,
  type SwitchPublished,
} from "../../src/core/events.js";
import { createRuntime, ManualTimers, systemTimers } from "../../src/core/runtime.js";
import type { SwitchStatus } from "../../src/core/status.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { toNotification } from "../../src/surface/notify/events.js";
import { createDaemonNotifications } from "../../src/surface/notify/index.js";
import { createNotifier } from "../../src/surface/notify/notifier.js";
import { watchProtection } from "../../src/surface/notify/protection.js";
import { describeSwitchEvent, switchLog, switchMetrics } from "../../src/surface/switch/index.js";
import { captureLogger, type Harness, harness } from "../app/helpers.js";

type Received = { body: Record<string, unknown>; headers: IncomingMessage["headers"]; url: string };

/** A loopback webhook: `answer` decides each request's status (or "hang" to never answer). */
async function receiver(answer: (n: number) => number | "hang" = () => 200) {
  const got: Received[] = [];
  let n = 0;
  const hung: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      const a = answer(++n);
      if (a === "hang") {
        hung.push(() => res.destroy());
        return;
      }
      if (a === 200) got.push({ body: JSON.parse(text), headers: req.headers, url: req.url ?? "" });
      res.writeHead(a).end(a === 200 ? "ok" : "error");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    got,
    requests: () => n,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const h of hung) h();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function until(pred: () => boolean, ms = 5_000) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A free loopback port with nothing listening on it. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const TRIGGER: DomainEvent = {
  event: "trigger.counted",
  level: "warn",
  module: "switch",
  account: "0xAbCdEf0000000000000000000000000000001234",
  triggersToday: 3,
  triggerLimit: 10,
  triggersLeft: 7,
  deadline: Date.UTC(2026, 0, 1, 12, 0, 0),
};

async function counter(registry: Registry) {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === "hl_deadman_notifications_total");
  const value = (outcome: string) =>
    (m?.values.find((v) => v.labels.outcome === outcome)?.value as number | undefined) ?? 0;
  return { sent: value("sent"), failed: value("failed"), dropped: value("dropped") };
}

describe("notification documents", () => {
  test("a counted trigger: event, severity, account, one-line text, times and figures", () => {
    const n = toNotification(TRIGGER, { now: Date.UTC(2026, 0, 1, 12, 0, 1), host: "box", version: "1.2.3" });
    expect(n).toEqual({
      event: "trigger.counted",
      severity: "critical",
      account: "0xabcdef0000000000000000000000000000001234",
      text: "[hl-deadman critical] TRIGGER on account 0xabcd…1234: the scheduled cancel fired at 2026-01-01T12:00:00.000Z; the exchange cancelled its open orders (positions stay open). 3/10 triggers today, 7 left.",
      time: "2026-01-01T12:00:01.000Z",
      timeMs: Date.UTC(2026, 0, 1, 12, 0, 1),
      host: "box",
      version: "1.2.3",
      figures: { triggersToday: 3, triggerLimit: 10, triggersLeft: 7, deadline: "2026-01-01T12:00:00.000Z" },
    });
    expect(n!.text).not.toContain("\n");
  });

  test("every notifying event has a text of its own; other events do not notify", () => {
    const base = { level: "info" as const, account: "0x1111111111111111111111111111111111111111" };
    const events = [
      "trigger.counted",
      "trigger.low",
      "trigger.exhausted",
      "trigger.limit_suspected",
      "trigger.reset",
      "switch.not_protected",
      "switch.protected",
      "protection.low",
      "protection.restored",
      "engine.down",
      "engine.up",
      "shutdown.removed",
      "shutdown.kept",
      "shutdown.remove_failed",
      "escalation.held",
      "escalation.stopped_at_restart",
      "kill.started",
    ];
    const texts = new Set<string>();
    for (const event of events) {
      const n = toNotification(
        { ...base, event, reason: "volume_gate" },
        { now: 0, host: "h", version: "v" },
      );
      expect(n, event).not.toBeNull();
      texts.add(n!.text);
    }
    expect(texts.size).toBe(events.length);
    for (const event of ["heartbeat.ok", "exposure", "health.listening"])
      expect(toNotification({ ...base, event }, { now: 0, host: "h", version: "v" })).toBeNull();
  });
});

describe("configuration: --notify-url, notifyUrls, HL_NOTIFY_URLS", () => {
  test("the flag is repeatable, the env comma-separated, the file a list", () => {
    const a = "https://hooks.example.com/services/T0/B0/X";
    const b = "http://127.0.0.1:8080/hook";
    expect(loadConfig({ options: { notifyUrl: [a, b] }, env: {} }).config.notifyUrls).toEqual([a, b]);
    expect(loadConfig({ env: { HL_NOTIFY_URLS: `${a}, ${b}` } }).config.notifyUrls).toEqual([a, b]);
    expect(loadConfig({ env: {} }).config.notifyUrls).toEqual([]);
  });

  test("a bad URL is refused without echoing its credentials", () => {
    let message = "";
    try {
      loadConfig({ options: { notifyUrl: ["ftp://user:pw-s3cret@hooks.example.com/T0KEN-xyz"] }, env: {} });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("notifyUrls.0");
    expect(message).toContain("flag --notify-url");
    expect(message).not.toMatch(/pw-s3cret|T0KEN|user/);
  });
});

describe("the event bus", () => {
  test("hands each event to every subscriber in order; one that throws stops nothing; unsubscribing works", () => {
    const bus = createEventBus();
    const seen: string[] = [];
    const name = (e: DaemonEvent) => ("event" in e ? String(e.event) : e.type);
    bus.subscribe((e) => seen.push(`a:${name(e)}`));
    bus.subscribe(() => {
      throw new Error("a broken subscriber");
    });
    const off = bus.subscribe((e) => seen.push(`c:${name(e)}`));
    bus.publish({ event: "protection.low", level: "warn", module: "notify" });
    off();
    bus.publish({ module: "guard", type: "guardConfigured", kind: "file" });
    expect(seen).toEqual(["a:protection.low", "c:protection.low", "a:guardConfigured"]);
  });

  test("the switch publishes its typed event only; its log line and metrics are subscribers' (whatever --log-level is)", async () => {
    const { logger, lines } = captureLogger();
    logger.level = "error";
    const metrics = createMetrics({ defaultMetrics: false });
    const account = "0x00000000000000000000000000000000000000aa";
    const counted = {
      type: "triggerCounted",
      triggersToday: 1,
      triggerLimit: 10,
      triggersLeft: 9,
      deadline: Date.UTC(2026, 0, 1, 12, 1),
      day: "2026-01-01",
    } as const;
    const triggers = async () =>
      (await metrics.registry.getSingleMetric("hl_deadman_triggers_total")?.get())?.values[0]?.value ?? 0;
    // a bus with no subscriber: the switch neither logs nor counts by itself
    const bare = createEventBus();
    const seen: DaemonEvent[] = [];
    bare.subscribe((e) => seen.push(e));
    publishSwitchEvent(bare, account, counted);
    expect(seen).toEqual([{ ...counted, module: "switch", account }]);
    expect(await triggers()).toBe(0);
    // the daemon's subscribers: the log line (at its level, filtered here), the metric, the description
    logger.level = "info";
    const bus = createEventBus(switchLog(logger), switchMetrics(metrics));
    publishSwitchEvent(bus, account, counted);
    expect(await triggers()).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: "trigger.counted", module: "switch", account, triggersToday: 1 });
    expect(describeSwitchEvent(seen[0] as SwitchPublished)).toMatchObject({
      event: "trigger.counted",
      level: "warn",
      module: "switch",
      account,
      triggersToday: 1,
      proof: "guess",
    });
  });
});

describe("delivery to a loopback receiver", () => {
  const fast = { backoffMs: 20, maxBackoffMs: 100, timeoutMs: 300, timers: systemTimers() };
  const doc = toNotification(TRIGGER, { now: 1, host: "h", version: "v" })!;

  test("behavior: posts the JSON document; user:pass goes in an Authorization header, never in a log", async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const { logger, lines } = captureLogger();
    const registry = new Registry();
    const url = `http://alice:s3cr3t-pass@127.0.0.1:${r.port}/hooks/T0KEN-SECRET-123?token=QUERY-SECRET`;
    const notifier = createNotifier({ urls: [url], logger, registry, ...fast });
    notifier.send(doc);
    expect(notifier.pending()).toBe(1); // enqueued synchronously; nothing has reached the receiver yet
    expect(r.requests()).toBe(0);
    await until(() => r.got.length === 1);
    expect(r.got[0]!.body).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(r.got[0]!.url).toBe("/hooks/T0KEN-SECRET-123?token=QUERY-SECRET");
    expect(r.got[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from("alice:s3cr3t-pass").toString("base64")}`,
    );
    expect(r.got[0]!.headers["content-type"]).toBe("application/json");
    await notifier.close();
    expect(await counter(registry)).toEqual({ sent: 1, failed: 0, dropped: 0 });
    const text = JSON.stringify(lines);
    for (const secret of ["s3cr3t-pass", "T0KEN-SECRET", "QUERY-SECRET", "alice"])
      expect(text).not.toContain(secret);
  });

  test("behavior: a receiver answering 500 is retried with back-off until it accepts", async () => {
    const r = await receiver((n) => (n <= 2 ? 500 : 200));
    cleanups.push(r.close);
    const { logger } = captureLogger();
    const registry = new Registry();
    const notifier = createNotifier({ urls: [r.url], logger, registry, ...fast });
    notifier.send(doc);
    await until(() => r.got.length === 1);
    expect(r.requests()).toBe(3);
    await notifier.close();
    expect(await counter(registry)).toEqual({ sent: 1, failed: 0, dropped: 0 });
  });

  test("behavior: a receiver that is down: gives up after maxAttempts, logged (redacted) and counted", async () => {
    const port = await deadPort();
    const { logger, events } = captureLogger();
    const registry = new Registry();
    const notifier = createNotifier({
      urls: [`http://bob:hunter2-pw@127.0.0.1:${port}/secret-path-xyz`],
      logger,
      registry,
      maxAttempts: 3,
      ...fast,
    });
    notifier.send(doc);
    await until(() => events("notify.gave_up").length === 1);
    const gaveUp = events("notify.gave_up")[0]!;
    expect(gaveUp).toMatchObject({
      target: `http://127.0.0.1:${port}/***`,
      notification: "trigger.counted",
      attempts: 3,
      err: "ECONNREFUSED",
    });
    expect(await counter(registry)).toEqual({ sent: 0, failed: 1, dropped: 0 });
    expect(JSON.stringify(gaveUp)).not.toMatch(/hunter2|secret-path|bob/);
    await notifier.close();
  });

  test("behavior: a slow receiver times out, is retried, then given up; a 4xx is not retried", async () => {
    const slow = await receiver(() => "hang");
    cleanups.push(slow.close);
    const refusing = await receiver(() => 404);
    cleanups.push(refusing.close);
    const { logger, events } = captureLogger();
    const registry = new Registry();
    const notifier = createNotifier({
      urls: [slow.url, refusing.url],
      logger,
      registry,
      maxAttempts: 2,
      ...fast,
    });
    notifier.send(doc);
    await until(() => events("notify.gave_up").length === 2);
    const byTarget = Object.fromEntries(events("notify.gave_up").map((l) => [l.target, l]));
    expect(byTarget[slow.url]).toMatchObject({ attempts: 2, err: "timed out after 300 ms" });
    expect(byTarget[refusing.url]).toMatchObject({ attempts: 1, err: "HTTP 404" });
    expect(slow.requests()).toBe(2);
    expect(refusing.requests()).toBe(1);
    expect(await counter(registry)).toEqual({ sent: 0, failed: 2, dropped: 0 });
    await notifier.close();
  });

  test("behavior: the queue is bounded: behind a stuck receiver the oldest waiting ones are dropped and counted", async () => {
    const slow = await receiver(() => "hang");
    cleanups.push(slow.close);
    const { logger, events } = captureLogger();
    const registry = new Registry();
    const notifier = createNotifier({
      urls: [slow.url],
      logger,
      registry,
      queueSize: 3,
      maxAttempts: 1,
      timeoutMs: 2_000,
      timers: systemTimers(),
    });
    for (let i = 0; i < 10; i++) notifier.send({ ...doc, event: `e${i}` });
    expect(notifier.pending()).toBe(3);
    expect(await counter(registry)).toEqual({ sent: 0, failed: 0, dropped: 7 });
    expect(events("notify.dropped").map((l) => l.notification)).toEqual([
      "e1",
      "e2",
      "e3",
      "e4",
      "e5",
      "e6",
      "e7",
    ]);
    await notifier.close(10);
  });
});

/** One account armed for a minute from now, nothing wrong. */
const healthy = (clock: ManualClock): SwitchStatus => ({
  account: "0xaaaa",
  state: "armed",
  armedUntil: clock.now() + 60_000,
  lastPushAt: clock.now(),
  consecutiveFailures: 0,
  lastError: null,
  notProtectedReason: null,
  day: "2026-01-01",
  triggersToday: 0,
  triggerLimit: 10,
  exhausted: false,
});

describe("protection low (derived from the switches' status)", () => {
  test("emits protection.low once below the readiness margin, then protection.restored", () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    const status = healthy(clock);
    const seen: DomainEvent[] = [];
    const w = watchProtection({
      status: () => [status],
      clock,
      timers,
      intervalMs: 15_000,
      deadlineMs: 60_000,
      onEvent: (e) => seen.push(e),
    });
    clock.advance(29_000); // 31 s left: above the 30 s margin
    expect(seen).toHaveLength(0);
    status.state = "retrying";
    status.consecutiveFailures = 2;
    clock.advance(2_000); // 29 s left
    clock.advance(5_000);
    expect(seen.map((e) => e.event)).toEqual(["protection.low"]);
    expect(seen[0]).toMatchObject({ account: "0xaaaa", marginMs: 30_000, consecutiveFailures: 2 });
    expect(seen[0]!.protectionLeftMs).toBeLessThan(30_000);
    status.state = "armed";
    status.armedUntil = clock.now() + 60_000;
    clock.advance(1_000);
    expect(seen.map((e) => e.event)).toEqual(["protection.low", "protection.restored"]);
    w.stop();
    timers.dispose();
  });
});

describe("protection watcher: when it looks", () => {
  /** A watcher over one account on a manual clock, with the events it logs and how often it looked. */
  const watch = () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    const status = healthy(clock);
    const seen: DomainEvent[] = [];
    const counted = { looks: 0 };
    const w = watchProtection({
      status: () => {
        counted.looks++;
        return [status];
      },
      clock,
      timers,
      intervalMs: 15_000,
      deadlineMs: 60_000,
      onEvent: (e) => seen.push(e),
    });
    return { clock, timers, status, seen, counted, w };
  };

  test("a healthy switch pushed every 15 s is looked at once per push (its nudge), never by a timer", () => {
    const { clock, timers, status, seen, counted, w } = watch();
    for (let push = 0; push < 8; push++) {
      // a second at a time: every timer due gets its turn; each answer comes 200 ms after its tick
      for (let s = 0; s < 15; s++) clock.advance(1_000);
      clock.advance(push === 0 ? 200 : 0);
      status.armedUntil = clock.now() + 60_000;
      w.nudge(); // the push's heartbeat.ok
    }
    expect(seen).toHaveLength(0);
    // the first look a second after the start, then the 8 nudges; a timer at one push interval would fire before
    // each answer (8 more), a 1 s poll 120 times
    expect(counted.looks).toBe(1 + 8);
    w.stop();
    timers.dispose();
  });

  test("with no event at all, protection.low comes the moment the margin is crossed", () => {
    const { clock, timers, seen, w } = watch();
    clock.advance(30_000); // exactly 30 s left: not below the margin yet
    expect(seen).toHaveLength(0);
    clock.advance(1);
    expect(seen.map((e) => e.event)).toEqual(["protection.low"]);
    expect(seen[0]!.protectionLeftMs).toBe(29_999);
    w.stop();
    timers.dispose();
  });

  test("a fleet: each push looks at its own account, the whole fleet at most once a second; a low one still said", () => {
    // 1,000 accounts pushing every 60 s, spread 60 ms apart; each push's event names its account
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    const fleet = Array.from({ length: 1_000 }, (_, i) => ({
      ...healthy(clock),
      account: `0x${i.toString(16).padStart(40, "0")}`,
      armedUntil: clock.now() + 180_000 + i * 60,
    }));
    const byAccount = new Map(fleet.map((s) => [s.account, s]));
    const seen: DomainEvent[] = [];
    const counted = { whole: 0, one: 0 };
    const w = watchProtection({
      status: () => {
        counted.whole++;
        return fleet;
      },
      statusOf: (account) => {
        counted.one++;
        return byAccount.get(account);
      },
      clock,
      timers,
      intervalMs: 60_000,
      deadlineMs: 180_000,
      onEvent: (e) => seen.push(e),
    });
    const stuck = fleet[500]!;
    for (let t = 0; t < 120_000; t += 60) {
      clock.advance(60);
      const s = fleet[(t / 60) % 1_000]!;
      if (s === stuck) continue; // its push hangs: no event, no new deadline
      s.armedUntil = clock.now() + 180_000;
      w.nudge(s.account);
    }
    // two minutes: 2,000 pushes looked at one account each; the whole fleet at most once a second (120 times),
    // never once per push (2,000 × 1,000 statuses)
    expect(counted.one).toBe(1_997); // the first push looks at them all: the watch learns it watches a fleet
    expect(counted.whole).toBeLessThanOrEqual(121);
    // the stuck account (its two pushes skipped) is said low, with no event of its own
    clock.advance(200_000);
    expect(seen.filter((e) => e.account === stuck.account).map((e) => e.event)).toContain("protection.low");
    w.stop();
    timers.dispose();
  });

  test("a nudge (a logged event) reports protection.restored at once, and a stopped watcher stays quiet", () => {
    const { clock, timers, status, seen, w } = watch();
    clock.advance(45_000);
    expect(seen.map((e) => e.event)).toEqual(["protection.low"]);
    status.armedUntil = clock.now() + 60_000;
    w.nudge();
    expect(seen.map((e) => e.event)).toEqual(["protection.low", "protection.restored"]);
    w.stop();
    status.armedUntil = clock.now();
    w.nudge();
    clock.advance(120_000);
    expect(seen).toHaveLength(2);
    expect(timers.pending).toBe(0);
    timers.dispose();
  });
});

describe("the daemon notifies (in process, against the simulator)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  test("behavior: a blackhole longer than the deadline posts trigger.counted to --notify-url", async () => {
    const r = await receiver();
    cleanups.push(r.close);
    h = await harness({ config: { notifyUrls: [`${r.url}/hook`] } });
    await h.advance(15_000);
    h.sim.faults.set("exchange", { blackhole: true });
    await h.advance(70_000, 1_000, { bounded: true });
    h.sim.faults.clear();
    await h.advance(7_000, 1_000, { bounded: true });
    await h.advance(10_000);
    await until(() => r.got.some((g) => g.body.event === "trigger.counted"));
    const events = r.got.map((g) => g.body.event);
    expect(events).toContain("protection.low");
    const trigger = r.got.find((g) => g.body.event === "trigger.counted")!.body;
    expect(trigger).toMatchObject({ severity: "critical", account: h.account });
    expect(trigger.figures).toMatchObject({ triggersToday: 1, triggerLimit: 10, triggersLeft: 9 });
    expect(String(trigger.text)).toContain("TRIGGER on account");
  });
});

describe("protection watcher: what makes it look again", () => {
  test("behavior: a switch's event does; an exposure or notification event does not", () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    const { logger } = captureLogger();
    const bus = createEventBus();
    const n = createDaemonNotifications({
      urls: [],
      logger,
      registry: new Registry(),
      runtime: createRuntime({ clock, timers }),
      bus,
    });
    let looks = 0;
    n.watch({
      status: () => {
        looks++;
        return [healthy(clock)];
      },
      intervalMs: 15_000,
      deadlineMs: 60_000,
    });
    const before = looks;
    bus.publish({ event: "exposure", level: "info", module: "exposure", account: "0xaaaa" });
    bus.publish({ event: "notify.sent", level: "info", module: "notify" });
    expect(looks).toBe(before);
    bus.publish({ module: "guard", type: "engineChanged", kind: "file", up: false, detail: "stale" });
    expect(looks).toBe(before);
    bus.publish({
      module: "switch",
      account: "0xaaaa",
      type: "pushConfirmed",
      deadline: clock.now() + 60_000,
      latencyMs: 5,
      expedited: false,
    });
    expect(looks).toBe(before + 1);
    void n.close(0);
    timers.dispose();
  });
});

describe("the daemon's notifications run on the runtime's timers", () => {
  test("behavior: a failed delivery's back-off waits on the runtime's timers, not on real ones", async () => {
    const r = await receiver((n) => (n === 1 ? 500 : 200));
    cleanups.push(r.close);
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const timers = new ManualTimers(clock);
    cleanups.push(() => timers.dispose());
    const { logger } = captureLogger();
    const bus = createEventBus();
    const n = createDaemonNotifications({
      urls: [r.url],
      logger,
      registry: new Registry(),
      runtime: createRuntime({ clock, timers }),
      bus,
      notifier: { backoffMs: 60_000, maxBackoffMs: 60_000, timeoutMs: 2_000 },
    });
    cleanups.push(() => n.close(0));
    bus.publish({
      module: "switch",
      account: "0xaaaa",
      type: "triggerCounted",
      triggersToday: 1,
      triggerLimit: 10,
      triggersLeft: 9,
      deadline: clock.now(),
      day: "2026-01-01",
    });
    await until(() => r.requests() === 1);
    // a minute of back-off on real timers would still be waiting; on the runtime's it waits for the clock
    await new Promise((done) => setTimeout(done, 100));
    expect(r.requests()).toBe(1);
    clock.advance(60_000);
    await until(() => r.got.length === 1);
    expect(r.got[0]!.body).toMatchObject({ event: "trigger.counted" });
  });
});
