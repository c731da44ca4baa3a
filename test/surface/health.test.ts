import { request } from "node:http";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { createRuntime, systemTimers } from "../../src/core/runtime.js";
import { type ExposureStatus, NO_GUARD, type Readiness, type SwitchStatus } from "../../src/core/status.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import type { ClearinghouseState } from "../../src/protocol/hyperliquid/schemas.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import {
  computeReadiness,
  createHealthServer,
  defaultMinMarginMs,
  type HealthServer,
  ListenAddressError,
  parseListenAddress,
} from "../../src/surface/health.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createExposurePoller } from "../../src/watchers/exposure.js";
import { captureLogger } from "../app/helpers.js";
import { watcherBus } from "../helpers/watcher-bus.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const ACCOUNT = "0x1111111111111111111111111111111111111111";

function account(over: Partial<SwitchStatus> = {}): SwitchStatus {
  return {
    account: ACCOUNT,
    state: "armed",
    armedUntil: NOW + 50_000,
    lastPushAt: NOW - 10_000,
    consecutiveFailures: 0,
    lastError: null,
    notProtectedReason: null,
    day: "2026-01-01",
    triggersToday: 0,
    triggerLimit: 10,
    exhausted: false,
    ...over,
  };
}
const exposure = (over: Partial<ExposureStatus> = {}): ExposureStatus => ({
  enabled: true,
  intervalMs: 30_000,
  lastSuccessAt: NOW - 5_000,
  lastAttemptAt: NOW - 5_000,
  lastError: null,
  clockSkewMs: 12,
  ...over,
});
const base = { now: NOW, intervalMs: 15_000, deadlineMs: 60_000, guard: NO_GUARD };

describe("computeReadiness", () => {
  test("behavior: 503 with the reason while the exchange's time is unverified, or the local clock is beyond clock.suspect off the verified time (issue 40)", () => {
    const unverified = computeReadiness({
      ...base,
      accounts: [account({ clockUnverified: true, clockOffMs: 7_200_000 })],
      exposure: exposure(),
    });
    expect(unverified.ready).toBe(false);
    expect(unverified.reasons.join()).toMatch(/not verified yet .*the local clock is never one/);
    const off = computeReadiness({
      ...base,
      accounts: [account({ clockSuspect: true, clockUnverified: false, clockOffMs: 7_200_000 })],
      exposure: exposure(),
    });
    expect(off.ready).toBe(false);
    expect(off.reasons.join()).toMatch(
      /local clock is .* off the exchange's verified time \(clock\.suspect, limit 5 s\)/,
    );
    // verified, within the limit: ready
    expect(
      computeReadiness({
        ...base,
        accounts: [account({ clockSuspect: false, clockUnverified: false, clockOffMs: 3_000 })],
        exposure: exposure(),
      }).ready,
    ).toBe(true);
  });

  test("default", () => {
    const r = computeReadiness({ ...base, accounts: [account()], exposure: exposure() });
    expect(r.ready).toBe(true);
    expect(r.reasons).toEqual([]);
  });

  test("behavior: the default margin tolerates one missed push and not two", () => {
    expect(defaultMinMarginMs({ intervalMs: 15_000, deadlineMs: 60_000 })).toBe(30_000);
    expect(defaultMinMarginMs({ intervalMs: 15_000, deadlineMs: 20_000 })).toBe(2_500);
    // pushed at t, 60 s ahead: right before the next push (t + 15 s) 45 s are left: ready
    expect(
      computeReadiness({ ...base, accounts: [account({ armedUntil: NOW + 45_000 })], exposure: exposure() })
        .ready,
    ).toBe(true);
    // one push missed: 30 s left: still ready
    expect(
      computeReadiness({
        ...base,
        accounts: [account({ armedUntil: NOW + 30_000, state: "retrying", consecutiveFailures: 1 })],
        exposure: exposure(),
      }).ready,
    ).toBe(true);
    const r = computeReadiness({
      ...base,
      accounts: [
        account({
          armedUntil: NOW + 29_000,
          state: "retrying",
          consecutiveFailures: 2,
          lastError: { kind: "timeout", message: "request timed out" },
        }),
      ],
      exposure: exposure(),
    });
    expect(r.ready).toBe(false);
    expect(r.reasons).toEqual([
      `account ${ACCOUNT}: only 29.0 s of protection left (needs 30.0 s), 2 consecutive push failure(s); last error timeout: request timed out`,
    ]);
  });

  test("behavior: one reason line per failure", () => {
    const r = computeReadiness({
      ...base,
      accounts: [
        account({ exhausted: true, state: "exhausted", triggersToday: 10 }),
        account({
          account: "0x2222222222222222222222222222222222222222",
          state: "not_protected",
          notProtectedReason: "volume_gate",
        }),
        account({
          account: "0x3333333333333333333333333333333333333333",
          state: "starting",
          armedUntil: null,
        }),
      ],
      exposure: exposure({ lastSuccessAt: NOW - 91_000, lastError: "timeout: request timed out" }),
      guard: {
        configured: true,
        up: false,
        kind: "file",
        lastCheckAt: NOW,
        detail: "heartbeat file is 31 s old",
      },
    });
    expect(r.ready).toBe(false);
    expect(r.reasons).toMatchInlineSnapshot(`
      [
        "account 0x1111111111111111111111111111111111111111: daily trigger limit reached (10/10 on 2026-01-01); cannot protect until 00:00 UTC",
        "account 0x2222222222222222222222222222222222222222: refused permanently by the exchange (volume_gate)",
        "account 0x3333333333333333333333333333333333333333: switch is starting, not armed",
        "engine guard (file) reports the trading engine down: heartbeat file is 31 s old",
        "exposure: last successful poll 91.0 s ago (limit 90.0 s); last error: timeout: request timed out",
      ]
    `);
  });

  test("behavior: a disabled exposure poll does not count; no poll yet does", () => {
    const accounts = [account()];
    expect(
      computeReadiness({ ...base, accounts, exposure: exposure({ enabled: false, lastSuccessAt: null }) })
        .ready,
    ).toBe(true);
    expect(
      computeReadiness({ ...base, accounts, exposure: exposure({ lastSuccessAt: null }) }).reasons,
    ).toEqual(["exposure: no successful poll yet"]);
    expect(computeReadiness({ ...base, accounts: [], exposure: exposure() }).reasons).toEqual([
      "no account is configured",
    ]);
  });
});

describe("parseListenAddress", () => {
  test("default", () => {
    expect(parseListenAddress("127.0.0.1:9464")).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(parseListenAddress("[::1]:0")).toEqual({ host: "::1", port: 0 });
    expect(parseListenAddress(":9100")).toEqual({ host: "0.0.0.0", port: 9100 });
    expect(parseListenAddress("localhost:8080")).toEqual({ host: "localhost", port: 8080 });
    expect(parseListenAddress("off")).toBeNull();
    expect(parseListenAddress("OFF")).toBeNull();
  });

  test("error: bad addresses name the value and the rule", () => {
    expect(() => parseListenAddress("127.0.0.1")).toThrow(ListenAddressError);
    expect(() => parseListenAddress("::1:9464")).toThrow(/expected HOST:PORT/);
    expect(() => parseListenAddress("127.0.0.1:70000")).toThrowErrorMatchingInlineSnapshot(`
      [ListenAddressError: Invalid health address "127.0.0.1:70000": port 70000 is above 65535.

      Write HOST:PORT (127.0.0.1:9464, [::1]:9464, :9464 for every interface) or off.]
    `);
  });
});

type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string };
function get(url: string, method = "GET"): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, timeout: 2_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

describe("createHealthServer", () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  test("default", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.accountValue.set({ account: ACCOUNT, dex: "" }, 1234.5);
    let readiness: Readiness = computeReadiness({ ...base, accounts: [account()], exposure: exposure() });
    let live = true;
    const { logger, lines } = captureLogger();
    server = await createHealthServer({
      host: "127.0.0.1",
      port: 0,
      metrics,
      readiness: () => readiness,
      liveness: () => ({ ok: live, detail: live ? "2 switch(es) running" : "push loop stalled" }),
      logger,
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines.find((l) => l.event === "health.listening")?.url).toBe(server.url);

    const healthz = await get(`${server.url}/healthz`);
    expect([healthz.status, JSON.parse(healthz.body)]).toEqual([200, { status: "ok" }]);
    live = false;
    const failing = await get(`${server.url}/healthz`);
    expect([failing.status, JSON.parse(failing.body)]).toEqual([
      503,
      { status: "failing", detail: "push loop stalled" },
    ]);

    const ready = await get(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ ready: true, reasons: [] });
    readiness = computeReadiness({
      ...base,
      accounts: [account({ armedUntil: NOW + 1_000 })],
      exposure: exposure(),
    });
    const notReady = await get(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.body).reasons[0]).toMatch(/only 1\.0 s of protection left/);

    const m = await get(`${server.url}/metrics`);
    expect(m.status).toBe(200);
    expect(m.headers["content-type"]).toBe(metrics.registry.contentType);
    expect(m.body).toContain(`hl_deadman_account_value_usd{account="${ACCOUNT}",dex=""} 1234.5`);
  });

  test("behavior: 404 for unknown paths, 405 for other methods, HEAD allowed", async () => {
    server = await createHealthServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => computeReadiness({ ...base, accounts: [account()], exposure: exposure() }),
      liveness: () => ({ ok: true }),
      logger: captureLogger().logger,
    });
    expect((await get(`${server.url}/`)).status).toBe(404);
    expect((await get(`${server.url}/metricsx`)).status).toBe(404);
    const post = await get(`${server.url}/readyz`, "POST");
    expect([post.status, post.headers.allow]).toEqual([405, "GET, HEAD"]);
    const head = await get(`${server.url}/healthz?verbose=1`, "HEAD");
    expect([head.status, head.body]).toEqual([200, ""]);
  });

  test("behavior: close() ends keep-alive sockets and is idempotent", async () => {
    const s = await createHealthServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => computeReadiness({ ...base, accounts: [account()], exposure: exposure() }),
      liveness: () => ({ ok: true }),
      logger: captureLogger().logger,
    });
    const agentRes = await fetch(`${s.url}/healthz`, { keepalive: true });
    expect(agentRes.status).toBe(200);
    await agentRes.text();
    const started = Date.now();
    await Promise.all([s.close(), s.close()]);
    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(get(`${s.url}/healthz`)).rejects.toThrow(/ECONNREFUSED/);
  });

  test("behavior: a readiness callback that throws gives 500 with the message", async () => {
    const { logger, lines } = captureLogger();
    server = await createHealthServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => {
        throw new Error("switch not started");
      },
      liveness: () => ({ ok: true }),
      logger,
    });
    const r = await get(`${server.url}/readyz`);
    expect([r.status, JSON.parse(r.body)]).toEqual([500, { error: "switch not started" }]);
    expect(lines.some((l) => l.event === "health.error")).toBe(true);
  });

  test("error: a port in use rejects", async () => {
    server = await createHealthServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => computeReadiness({ ...base, accounts: [account()], exposure: exposure() }),
      liveness: () => ({ ok: true }),
      logger: captureLogger().logger,
    });
    const port = Number(new URL(server.url).port);
    await expect(
      createHealthServer({
        host: "127.0.0.1",
        port,
        metrics: createMetrics({ defaultMetrics: false }),
        readiness: () => computeReadiness({ ...base, accounts: [account()], exposure: exposure() }),
        liveness: () => ({ ok: true }),
        logger: captureLogger().logger,
      }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});

// ------------------------------------------------------------------------------ against the simulator

/** A tiny Prometheus text-format (0.0.4) parser: every line must be a comment, HELP/TYPE, or a sample. */
function parsePrometheus(text: string) {
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === "TYPE") {
        expect(["counter", "gauge", "histogram", "summary", "untyped"]).toContain(meta[3]);
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|Nan|\+Inf|-Inf)(?: \d+)?$/.exec(
      line,
    ); // prom-client writes NaN as "Nan"; Prometheus parses either
    if (!m) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!;
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

describe("health server against the simulator", () => {
  let sim: SimulatorHandle | undefined;
  let info: InfoClient | undefined;
  afterEach(async () => {
    info?.close();
    await server?.close();
    await sim?.close();
    server = undefined;
    sim = undefined;
  });
  let server: HealthServer | undefined;

  test("behavior: /metrics parses as Prometheus text and carries the simulator's account value", async () => {
    sim = await startSimulator({
      ipWeightPerMinute: null,
      users: [{ address: ACCOUNT, positions: [{ coin: "BTC", szi: 0.25, entryPx: 60000, leverage: 5 }] }],
    });
    sim.state.setMark("BTC", 64_000);
    const metrics = createMetrics(); // with the default process metrics
    info = new InfoClient({ apiUrl: sim.apiUrl, retryLimit: 0 });
    const poller = createExposurePoller({
      info,
      users: [ACCOUNT],
      runtime: createRuntime({ clock: systemClock, timers: systemTimers() }),
      bus: watcherBus(captureLogger().logger, metrics),
      intervalMs: 30_000,
      clockSkewWarnMs: 2_000,
    });
    await poller.pollNow("start");
    server = await createHealthServer({
      host: "127.0.0.1",
      port: 0,
      metrics,
      readiness: () =>
        computeReadiness({ ...base, now: Date.now(), accounts: [account()], exposure: poller.status() }),
      liveness: () => ({ ok: true }),
      logger: captureLogger().logger,
    });
    const res = await get(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    const { samples, types } = parsePrometheus(res.body);
    const body = await fetch(`${sim.apiUrl}/info`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "batchClearinghouseStates", users: [ACCOUNT] }),
    });
    const [state] = (await body.json()) as ClearinghouseState[];
    const find = (name: string, labels: Record<string, string>) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    expect(res.body).toContain(
      `hl_deadman_account_value_usd{account="${ACCOUNT}",dex=""} ${Number(state!.marginSummary.accountValue)}`,
    );
    expect(find("hl_deadman_account_value_usd", { account: ACCOUNT, dex: "" })!.value).toBe(
      Number(state!.marginSummary.accountValue),
    );
    expect(find("hl_deadman_total_notional_usd", { account: ACCOUNT, dex: "" })!.value).toBe(16_000);
    expect(find("hl_deadman_position_size", { account: ACCOUNT, coin: "BTC" })!.value).toBe(0.25);
    const liq = Number(state!.assetPositions[0]!.position.liquidationPx);
    expect(
      find("hl_deadman_liquidation_distance_ratio", { account: ACCOUNT, coin: "BTC" })!.value,
    ).toBeCloseTo((64_000 - liq) / 64_000, 9);
    expect(types.get("hl_deadman_exposure_poll_failures_total")).toBe("counter");
    expect(types.get("hl_deadman_exposure_poll_duration_seconds")).toBe("histogram");
    expect(find("hl_deadman_exposure_poll_duration_seconds_count", {})!.value).toBe(1);
    expect(find("hl_deadman_process_cpu_user_seconds_total", {})).toBeDefined();
    expect(find("hl_deadman_exposure_last_success_timestamp_seconds", {})!.value).toBeGreaterThan(1e9);
  });

  test("behavior: /readyz flips to 503 when the exchange is blackholed past the deadline margin, and back", async () => {
    const clock = new ManualClock(NOW);
    sim = await startSimulator({ clock, ipWeightPerMinute: null, users: [{ address: ACCOUNT }] });
    info = new InfoClient({ apiUrl: sim.apiUrl, clock, timeoutMs: 300, retryLimit: 0 });
    const poller = createExposurePoller({
      info,
      users: [ACCOUNT],
      runtime: createRuntime({ clock, timers: systemTimers() }),
      bus: watcherBus(captureLogger().logger, createMetrics({ defaultMetrics: false })),
      intervalMs: 15_000,
      clockSkewWarnMs: 2_000,
    });
    // A synthetic switch (the daemon wires the real one): it re-arms 60 s ahead whenever the exchange answers.
    const sw = account({ armedUntil: null, state: "starting", lastPushAt: null });
    const cycle = async () => {
      await poller.pollNow("interval");
      if (poller.status().lastSuccessAt === clock.now()) {
        Object.assign(sw, {
          state: "armed",
          armedUntil: clock.now() + 60_000,
          lastPushAt: clock.now(),
          consecutiveFailures: 0,
          lastError: null,
        });
      } else {
        Object.assign(sw, {
          state: "retrying",
          consecutiveFailures: sw.consecutiveFailures + 1,
          lastError: { kind: "transport", message: poller.status().lastError },
        });
      }
    };
    server = await createHealthServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () =>
        computeReadiness({
          now: clock.now(),
          accounts: [sw],
          exposure: poller.status(),
          guard: NO_GUARD,
          intervalMs: 15_000,
          deadlineMs: 60_000,
        }),
      liveness: () => ({ ok: true }),
      logger: captureLogger().logger,
    });
    const readyz = async () => {
      const r = await get(`${server!.url}/readyz`);
      return { status: r.status, reasons: (JSON.parse(r.body) as Readiness).reasons };
    };

    expect((await readyz()).status).toBe(503); // nothing armed yet
    await cycle();
    expect(await readyz()).toEqual({ status: 200, reasons: [] });

    sim.faults.set("all", { blackhole: true });
    clock.advance(15_000);
    await cycle(); // one missed push: 45 s left, still ready
    expect(await readyz()).toEqual({ status: 200, reasons: [] });
    clock.advance(16_000);
    await cycle(); // 29 s left: below the 30 s margin
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.reasons).toHaveLength(1);
    expect(down.reasons[0]).toMatch(
      /only 29\.0 s of protection left \(needs 30\.0 s\), 2 consecutive push failure\(s\); last error transport: transport: /,
    );

    sim.faults.clear("all");
    clock.advance(5_000);
    await cycle();
    expect(await readyz()).toEqual({ status: 200, reasons: [] });
  });
});
