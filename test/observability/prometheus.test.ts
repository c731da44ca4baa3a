/**
 * A real Prometheus (Debian's `prometheus`) on 127.0.0.1 with temporary storage, 1 s scrape and evaluation,
 * scraping the built daemon (`hl-deadman run`) against the simulator, with the shipped rules
 * (deploy/prometheus/hl-deadman.rules.yml). Their time windows are scaled for the test — every minute of a
 * `for:` or a range becomes one second (ranges at least 4 s) and the protection margin follows the test's
 * 10 s deadline — the expressions, names and labels are the shipped ones; promtool's unit tests
 * (rules.test.ts) cover the real windows. The simulator is driven into faults through its admin route:
 * the volume gate (HlDeadmanNotProtected fires, then resolves) and an exchange outage longer than the
 * deadline (HlDeadmanTriggerFired, HlDeadmanPushesFailing and HlDeadmanProtectionLow fire, then resolve).
 * Then every query of the Grafana dashboard (deploy/grafana/hl-deadman.json) must return series.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { requireBinary } from "../helpers/binaries.js";
import { fastCadence } from "../helpers/process.js";
import { assertBuilt, type DaemonProcess, ROOT, spawnCli } from "../reliability/harness.js";

const wallet = Wallet.createRandom();
const account = wallet.address.toLowerCase();
const dir = mkdtempSync(join(tmpdir(), "hl-prometheus-"));
let sim: SimulatorHandle;
let daemon: DaemonProcess;
let prometheus: ChildProcess;
let promUrl: string;
let promLog = "";
let guardTimer: NodeJS.Timeout;

/** The shipped rules with their windows scaled for a 1 s scrape (see the file comment). */
function scaleRules(text: string, { marginSeconds }: { marginSeconds: number }): string {
  const minutes = (m: string) => Number(m.replace("m", ""));
  return text
    .replace(/for: (\d+)m\b/g, (_all, m: string) => `for: ${minutes(m)}s`)
    .replace(/\[(\d+)m\]/g, (_all, m: string) => `[${Math.max(4, minutes(m))}s]`)
    .replace(/time\(\), 0\) < 30\b/g, `time(), 0) < ${marginSeconds}`);
}

/** Binds port 0, reads the port, releases it: Prometheus cannot listen on port 0 itself. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${promUrl}${path}`);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== "success") throw new Error(`${path}: ${body.error}`);
  return body.data;
}

type Alert = { labels: Record<string, string>; state: "pending" | "firing"; value: string };
const alerts = () => api<{ alerts: Alert[] }>("/api/v1/alerts").then((d) => d.alerts);
const query = (expr: string) =>
  api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  ).then((d) => d.result);

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 25_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) {
      const firing = await alerts().catch(() => []);
      throw new Error(
        `timed out waiting for ${what}; alerts now: ${JSON.stringify(firing.map((a) => [a.labels.alertname, a.state]))}\n` +
          `--- daemon (tail)\n${daemon.stdout().slice(-2500)}\n--- prometheus (tail)\n${promLog.slice(-1500)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

const firing = (name: string, match: (a: Alert) => boolean = () => true) =>
  until(`${name} firing`, async () =>
    (await alerts()).find((a) => a.labels.alertname === name && a.state === "firing" && match(a)),
  );
const resolved = (name: string) =>
  until(`${name} resolved`, async () => !(await alerts()).some((a) => a.labels.alertname === name));

async function admin(path: string, body: unknown) {
  const res = await fetch(`${sim.adminUrl}/${path}`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status, await res.text()).toBe(200);
}

beforeAll(async () => {
  assertBuilt();
  const bin = requireBinary("prometheus");
  sim = await startSimulator({
    ipWeightPerMinute: null,
    users: [
      {
        address: account,
        balanceUsd: 20_000,
        positions: [{ coin: "BTC", szi: "0.5", entryPx: "95000", leverage: 10 }],
        orders: [{ coin: "BTC", side: "B", limitPx: 90_000, sz: 0.1 }],
      },
    ],
  });
  const guardFile = join(dir, "engine.alive");
  writeFileSync(guardFile, "");
  guardTimer = setInterval(() => utimesSync(guardFile, new Date(), new Date()), 300);
  daemon = spawnCli(
    [
      "run",
      "--api-url",
      sim.apiUrl,
      "--state-dir",
      join(dir, "state"),
      ...fastCadence("1s"),
      "--permanent-recheck-interval",
      "1s",
      "--guard-file",
      guardFile,
      "--guard-interval",
      "500ms",
      "--health",
      "127.0.0.1:0",
    ],
    { HL_PRIVATE_KEY: wallet.privateKey },
  );
  const listening = await daemon.waitForEvent("health.listening", 10_000);
  const target = String(listening.url).replace("http://", "");

  // readiness margin at 1 s / 10 s: max(10 - 2, (10 - 1) / 2) = 8 s
  const rules = scaleRules(readFileSync(join(ROOT, "deploy/prometheus/hl-deadman.rules.yml"), "utf8"), {
    marginSeconds: 8,
  });
  writeFileSync(join(dir, "rules.yml"), rules);
  writeFileSync(
    join(dir, "prometheus.yml"),
    [
      "global: {scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 900ms}",
      "rule_files: [rules.yml]",
      "scrape_configs:",
      "  - job_name: hl-deadman",
      `    static_configs: [{targets: ["${target}"]}]`,
      "",
    ].join("\n"),
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    bin,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  prometheus.stdout?.on("data", (c: Buffer) => (promLog += c.toString()));
  prometheus.stderr?.on("data", (c: Buffer) => (promLog += c.toString()));
  await until("prometheus ready", async () => (await fetch(`${promUrl}/-/ready`)).ok, 20_000);
  await until("the daemon scraped", async () => (await query('up{job="hl-deadman"} == 1')).length === 1);
}, 60_000);

afterAll(async () => {
  clearInterval(guardTimer);
  prometheus?.kill("SIGKILL");
  daemon?.kill("SIGKILL");
  await daemon?.exited;
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("live Prometheus scraping the daemon", () => {
  test("behavior: the volume gate fires HlDeadmanNotProtected (by reason); healing resolves it", async () => {
    expect((await alerts()).map((a) => a.labels.alertname)).not.toContain("HlDeadmanNotProtected");
    await admin("users", { address: account, volumeUsd: 500, balanceUsd: 20_000 });
    const alert = await firing("HlDeadmanNotProtected");
    expect(alert.labels).toMatchObject({
      account,
      reason: "volume_gate",
      severity: "critical",
      job: "hl-deadman",
    });
    await admin("users", { address: account, volumeUsd: 5_000_000, balanceUsd: 20_000 });
    await resolved("HlDeadmanNotProtected");
  }, 40_000);

  test("behavior: an outage longer than the deadline fires HlDeadmanTriggerFired; healing resolves it", async () => {
    await admin("faults", { endpoint: "exchange", fault: { errorRate: 1, errorStatus: 503 } });
    const low = await firing("HlDeadmanProtectionLow", (a) => a.labels.account === account);
    expect(low.labels.severity).toBe("critical");
    const failing = await firing("HlDeadmanPushesFailing", (a) => a.labels.account === account);
    expect(failing.labels.severity).toBe("warning");
    const trigger = await firing("HlDeadmanTriggerFired", (a) => a.labels.account === account);
    expect(trigger.labels.severity).toBe("warning");
    expect(daemon.lines.some((l) => l.event === "trigger.counted")).toBe(true);
    await admin("faults", { endpoint: "exchange", fault: null });
    await resolved("HlDeadmanProtectionLow");
    await resolved("HlDeadmanTriggerFired");
    await resolved("HlDeadmanPushesFailing");
  }, 60_000);

  test("the event-loop figures come from the daemon's own timers (docs/observability.md, Event loop)", async () => {
    // Its timers (1 s pushes, 500 ms guard, 1 s polls) come due between two scrapes: the lag gauges move.
    await until("timer lateness in a scrape", async () => {
      const r = await query("max_over_time(hl_deadman_nodejs_eventloop_lag_max_seconds[20s])");
      return r.length === 1 && Number(r[0]!.value[1]) > 0;
    });
    const p99 = await query("hl_deadman_nodejs_eventloop_lag_p99_seconds");
    expect(p99).toHaveLength(1);
    // well under a second on an idle loop: lateness, not the timers' periods
    expect(Number(p99[0]!.value[1])).toBeLessThan(1);
    const busy = await query("hl_deadman_event_loop_utilization_ratio");
    expect(busy).toHaveLength(1);
    expect(Number(busy[0]!.value[1])).toBeGreaterThan(0);
    expect(Number(busy[0]!.value[1])).toBeLessThan(1);
  }, 30_000);

  test("every query of the Grafana dashboard returns series from the live Prometheus", async () => {
    const dashboard = JSON.parse(readFileSync(join(ROOT, "deploy/grafana/hl-deadman.json"), "utf8")) as {
      templating: { list: Array<{ name: string; type: string; query?: unknown }> };
      panels: Array<{ title: string; type: string; targets?: Array<{ expr: string }> }>;
    };
    expect(dashboard.templating.list.map((v) => [v.name, v.type])).toEqual([
      ["datasource", "datasource"],
      ["account", "query"],
    ]);
    const accounts = await api<string[]>(
      `/api/v1/label/account/values?${new URLSearchParams({ "match[]": "hl_deadman_triggers_left" })}`,
    );
    expect(accounts).toEqual([account]);
    const exprs = dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })),
    );
    expect(exprs.length).toBeGreaterThanOrEqual(17);
    const empty: string[] = [];
    for (const { panel, expr } of exprs) {
      const q = expr.replaceAll("$account", account).replaceAll("$__rate_interval", "15s");
      const result = await query(q);
      if (result.length === 0) empty.push(`${panel}: ${q}`);
    }
    expect(empty, `panels with no series:\n${empty.join("\n")}`).toEqual([]);
  }, 30_000);
});
