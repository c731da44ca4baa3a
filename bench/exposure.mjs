// Exposure poll of 1,000 accounts against the simulator: CPU per cycle and heap growth over 100 cycles.
//
// Usage: npm run build && node --expose-gc bench/exposure.mjs [--accounts 1000] [--cycles 100]
// Prints one JSON document on stdout. The simulator runs in a child process (this same script with --serve),
// so the CPU measured here (process.cpuUsage around each poll) is the poller's alone: InfoClient requests in
// chunks of 50 with 2 in flight, zod parsing of every state, the exact BigInt figures, one JSON `exposure`
// log line per account (written to /dev/null, as pino writes to a pipe in production) and the metrics.
// Heap: heapUsed after a forced GC, before and after the measured cycles (after a warm-up).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const ACCOUNTS = opt("accounts", 1000);
const CYCLES = opt("cycles", 100);
const WARMUP = 5;
const DIST = new URL("../dist/", import.meta.url);

/** Deterministic accounts: a third flat, a third with one cross position, a third with a cross and an isolated one. */
function users(n) {
  const coins = ["BTC", "ETH", "SOL"];
  const entry = { BTC: 60000, ETH: 3000, SOL: 150 };
  return Array.from({ length: n }, (_, i) => {
    const address = `0x${(i + 1).toString(16).padStart(40, "0")}`;
    const positions = [];
    if (i % 3 >= 1) {
      const coin = coins[i % 3];
      positions.push({ coin, szi: (i % 7) + 1, entryPx: entry[coin], leverage: 5, marginMode: "cross" });
    }
    if (i % 3 === 2) {
      positions.push({
        coin: "ETH",
        szi: -((i % 5) + 1),
        entryPx: 3000,
        leverage: 10,
        marginMode: "isolated",
      });
    }
    return { address, balanceUsd: 50_000 + i, positions };
  });
}

async function startChild() {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), "--serve", "--accounts", String(ACCOUNTS)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("simulator did not start in 15 s")), 15_000);
    createInterface({ input: child.stdout }).once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once("exit", (code) => reject(new Error(`simulator exited ${code}`)));
  });
  return { child, apiUrl: JSON.parse(line).apiUrl };
}

const cpuMs = (u) => (u.user + u.system) / 1000;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const round = (x, d = 2) => Number(x.toFixed(d));

async function main() {
  if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
  const { createExposurePoller } = await import(new URL("watchers/exposure.js", DIST).href);
  const { createExposureReporter } = await import(new URL("watchers/exposure-report.js", DIST).href);
  const { createMetrics } = await import(new URL("surface/metrics.js", DIST).href);
  const { watcherSubscribers } = await import(new URL("surface/watchers/index.js", DIST).href);
  const { createEventBus } = await import(new URL("core/events.js", DIST).href);
  const { InfoClient } = await import(new URL("protocol/hyperliquid/info.js", DIST).href);
  const { createLogger } = await import(new URL("core/logger.js", DIST).href);
  const { systemClock } = await import(new URL("core/clock.js", DIST).href);
  const { createRuntime, systemTimers } = await import(new URL("core/runtime.js", DIST).href);
  const { pino } = await import("pino");

  const { child, apiUrl } = await startChild();
  try {
    const addresses = users(ACCOUNTS).map((u) => u.address);
    const info = new InfoClient({ apiUrl, chunkSize: 50, concurrency: 2, timeoutMs: 10_000 });
    const logger = createLogger({
      level: "info",
      destination: pino.destination({ dest: "/dev/null", sync: true }),
    });
    const metrics = createMetrics();
    const poller = createExposurePoller({
      info,
      users: addresses,
      runtime: createRuntime({ clock: systemClock, timers: systemTimers() }),
      logger,
      // the poll publishes; its lines and metrics are the daemon's subscribers (src/surface/watchers/)
      bus: createEventBus(...watcherSubscribers(logger, metrics)),
      intervalMs: 30_000,
      clockSkewWarnMs: 2_000,
      thresholds: { maxLeverage: 20, minLiquidationDistancePct: 5, maxNotionalUsd: 1_000_000 },
    });

    // Reference: the same requests through InfoClient alone (HTTP + JSON + zod), without figures, logs, metrics.
    const fetchOnce = async () => {
      const c0 = process.cpuUsage();
      const states = await info.batchClearinghouseStates({ users: addresses });
      if (states.length !== ACCOUNTS) throw new Error(`got ${states.length} states`);
      return cpuMs(process.cpuUsage(c0));
    };
    const pollOnce = async () => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await poller.pollNow("interval");
      wall.push(performance.now() - t0);
      cpu.push(cpuMs(process.cpuUsage(c0)));
      if (poller.status().lastError) throw new Error(`poll failed: ${poller.status().lastError}`);
    };
    const fetchOnly = [];
    const cpu = [];
    const wall = [];

    // warm-up of both, so JIT and connection-pool allocations settle before the baseline
    for (let i = 0; i < 4 * WARMUP; i++) await fetchOnce();
    for (let i = 0; i < 4 * WARMUP; i++) await poller.pollNow("interval");
    if (poller.status().lastError) throw new Error(`poll failed: ${poller.status().lastError}`);
    globalThis.gc();
    globalThis.gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const heapTrend = [];
    // The poll and the reference in turn (each first every other cycle), so both are measured in the same minute
    // of this shared machine and in the same JIT state; medians of CYCLES each.
    for (let i = 0; i < CYCLES; i++) {
      if (i % 2 === 0) {
        await pollOnce();
        fetchOnly.push(await fetchOnce());
      } else {
        fetchOnly.push(await fetchOnce());
        await pollOnce();
      }
      if ((i + 1) % 20 === 0) {
        globalThis.gc();
        heapTrend.push(process.memoryUsage().heapUsed);
      }
    }
    globalThis.gc();
    globalThis.gc();
    const heapAfter = process.memoryUsage().heapUsed;
    const fetchInPollPhase = median(fetchOnly);

    // Derive + log + metrics alone, on the states of one fetch: (a) the same states again (what the static
    // simulator answers every poll: only unchanged values), (b) every value changed on every cycle (a moving
    // market: every gauge is set again), alternating between the states and a copy with every decimal changed.
    const states = await info.batchClearinghouseStates({ users: addresses });
    const bump = (d) =>
      typeof d === "string" && /^-?\d+(\.\d+)?$/.test(d) ? (d.includes(".") ? `${d}1` : `${d}.1`) : d;
    const changed = states.map((st) => ({
      ...st,
      marginSummary: Object.fromEntries(Object.entries(st.marginSummary).map(([k, v]) => [k, bump(v)])),
      withdrawable: bump(st.withdrawable),
      assetPositions: st.assetPositions.map((a) => ({
        ...a,
        position: { ...a.position, szi: bump(a.position.szi), positionValue: bump(a.position.positionValue) },
      })),
    }));
    // The two reporters and the reference in turn, as above: one fetch (its CPU joins the reference's samples),
    // one cycle on unchanged values, one on changed values, WARMUP + 40 times; medians after the warm-up.
    const reporterFor = () =>
      createExposureReporter({ bus: createEventBus(...watcherSubscribers(logger, createMetrics())) });
    const unchangedReporter = reporterFor();
    const changedReporter = reporterFor();
    const reportOnce = (reporter, set) => {
      const c0 = process.cpuUsage();
      for (let a = 0; a < addresses.length; a++)
        reporter.report(addresses[a], "", set[a], { reason: "interval" });
      return cpuMs(process.cpuUsage(c0));
    };
    const unchangedCpu = [];
    const changedCpu = [];
    for (let i = 0; i < WARMUP + 40; i++) {
      const f = await fetchOnce();
      const u = reportOnce(unchangedReporter, states);
      const c = reportOnce(changedReporter, i % 2 ? changed : states);
      if (i < WARMUP) continue;
      fetchOnly.push(f);
      unchangedCpu.push(u);
      changedCpu.push(c);
    }
    const reportUnchangedMs = median(unchangedCpu);
    const reportChangedMs = median(changedCpu);
    const growth = heapAfter - heapBefore;
    info.close();
    const result = {
      accounts: ACCOUNTS,
      positions: users(ACCOUNTS).reduce((a, u) => a + u.positions.length, 0),
      cycles: CYCLES,
      requestsPerCycle: Math.ceil(ACCOUNTS / 50),
      cpuMsPerCycle: round(median(cpu)),
      cpuMsMean: round(mean(cpu)),
      cpuMsMax: round(Math.max(...cpu)),
      wallMsPerCycle: round(median(wall)),
      fetchOnlyCpuMs: round(median(fetchOnly)),
      /** poll minus fetch: what the figures, the log lines and the metrics cost in a poll */
      deriveLogMetricsCpuMs: round(median(cpu) - fetchInPollPhase),
      reportUnchangedCpuMs: round(reportUnchangedMs),
      reportChangedCpuMs: round(reportChangedMs),
      heapBeforeBytes: heapBefore,
      heapAfterBytes: heapAfter,
      heapGrowthBytes: growth,
      heapTrendBytes: heapTrend,
      noGrowth: growth < 1024 * 1024,
      reference: `InfoClient alone (HTTP + JSON + zod, no figures/logs/metrics): ${round(median(fetchOnly))} ms CPU`,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    child.kill("SIGTERM");
  }
}

if (args.includes("--serve")) {
  const { startSimulator } = await import(new URL("sim/server.js", DIST).href);
  const sim = await startSimulator({ ipWeightPerMinute: null, users: users(ACCOUNTS) });
  sim.state.setMark("BTC", 61000);
  sim.state.setMark("ETH", 2950);
  sim.state.setMark("SOL", 155);
  process.stdout.write(`${JSON.stringify({ apiUrl: sim.apiUrl })}\n`);
  const stop = async () => {
    await sim.close();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
} else {
  await main();
}
