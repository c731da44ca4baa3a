// The cancel benchmark of issue 28 (a section of bench/run.mjs, `--only cancel` or BENCH_ONLY=cancel): the engine
// is killed with SIGKILL and the figure is the time until the simulator shows every order that is not a
// reduce-only stop gone, at an injected round-trip time of 0, 20 and 100 ms (the simulator's `rttMs`: half before
// a request is handled, half before its answer leaves). One simulator per round-trip time, in its own process
// (bench/sim-server.mjs); a fresh simulator account and daemon per row, so the triggers that expedite and lapse
// spend never meet the daily limit. The figure comes from the simulator's record of each cancel (statusTimestamp),
// not from polling it: a 2 ms poll of /admin/state loaded the simulator and inflated the figures.
//
// A row is daemon arguments plus an engine: `file` (a process touching the guard file every 50 ms) or `socket` (the
// connection guard: bench/engine-socket.mjs holds the daemon's guard socket and sends heartbeats). Adding a mode
// is one more entry in ROWS. The socket row runs only when `hl-deadman run --help` lists --guard-socket.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";

const RTTS = [0, 20, 100];
const RESTING = [
  { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" },
  { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" },
  { coin: "SOL", side: "B", limitPx: "100", sz: "1" },
];
const STOP = {
  coin: "BTC",
  side: "A",
  limitPx: "40000",
  sz: "0.01",
  reduceOnly: true,
  orderType: "Stop Market",
  triggerPx: "40000",
};
const SHORT = ["--deadline", "12s", "--interval", "5s", "--request-timeout", "1s"];
/**
 * The least time between two kills of a row. Every death's cancel pass costs the IP's weight (a read, the cancels,
 * the confirming reads: ~23), and the daemon plans its passes inside the IP's 1,200 a minute (src/config/weight.ts;
 * the death gate of docs/operations.md, "A host's death"): kills every ~0.6 s (~100 a minute) exceed it, and the gate
 * rightly falls back to the 5 s schedule (p99 5.5 s, triggers spent). One kill every 2.5 s (24 a minute, ~550
 * weight) stays well inside, with room for the pushes: each kill is then a death the daemon can afford to cancel.
 */
const KILL_SPACING_MS = 2_500;
const FASTEST_FILE = ["--guard-max-age", "300ms", "--guard-interval", "100ms"];

/** The rows, in the order of the table. `runs` is per round-trip time; `rtts` the times it runs at. */
export function cancelRows(scale = 1) {
  const n = (x) => Math.max(1, Math.round(x * scale));
  return [
    {
      key: "socket",
      title: "connection guard (`--guard-socket`), `--on-engine-down cancel`",
      engine: "socket",
      args: (g) => ["--guard-socket", g.socket, "--on-engine-down", "cancel"],
      rtts: RTTS,
      runs: n(200),
      requires: "--guard-socket",
    },
    {
      key: "socket-read-at-death",
      title: "connection guard, `cancel`, no kept-fresh list (`--order-feed-accounts 0`: read at death)",
      engine: "socket",
      args: (g) => ["--guard-socket", g.socket, "--on-engine-down", "cancel", "--order-feed-accounts", "0"],
      rtts: RTTS,
      runs: n(100),
      requires: "--order-feed-accounts",
    },
    {
      key: "file-fastest-cancel",
      title: "file guard at its fastest (`--guard-max-age 300ms --guard-interval 100ms`), `cancel`",
      engine: "file",
      args: (g) => ["--guard-file", g.file, ...FASTEST_FILE, "--on-engine-down", "cancel"],
      rtts: RTTS,
      runs: n(25),
    },
    {
      key: "file-default-cancel",
      title: "file guard at its defaults (10 s, 2 s), `cancel`",
      engine: "file",
      args: (g) => ["--guard-file", g.file, "--on-engine-down", "cancel"],
      rtts: [20],
      runs: n(3),
    },
    {
      key: "file-fastest-expedite",
      title: "fastest file guard, `expedite` (deadline 12 s)",
      engine: "file",
      args: (g) => ["--guard-file", g.file, ...FASTEST_FILE, "--on-engine-down", "expedite", ...SHORT],
      rtts: [20],
      runs: n(3),
    },
    {
      key: "file-fastest-lapse",
      title: "fastest file guard, `lapse` (deadline 12 s, interval 5 s)",
      engine: "file",
      args: (g) => ["--guard-file", g.file, ...FASTEST_FILE, "--on-engine-down", "lapse", ...SHORT],
      rtts: [20],
      runs: n(3),
    },
  ];
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

function request(agent, url, method, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: data ? { "content-type": "application/json", "content-length": data.length } : {},
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode !== 200)
            reject(new Error(`${method} ${url}: ${res.statusCode} ${text.slice(0, 200)}`));
          else resolve(JSON.parse(text));
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

function waitExit(child, ms) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill("SIGKILL"), ms);
    child.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** Resolves once `predicate()` holds, polling every `everyMs`; rejects after `timeoutMs`. */
async function until(predicate, { timeoutMs, everyMs = 2, what }) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return performance.now();
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function startSim(root, rttMs) {
  const options = { seed: 28, rttMs, ipWeightPerMinute: null, demo: false };
  const child = spawn(process.execPath, [path.join(root, "bench/sim-server.mjs"), JSON.stringify(options)], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const line = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the simulator exited (${code})`)));
  });
  const { apiUrl } = JSON.parse(line);
  return {
    apiUrl,
    adminUrl: `${apiUrl}/admin`,
    close: async () => {
      child.kill("SIGTERM");
      await waitExit(child, 5_000);
    },
  };
}

/** One row at one round-trip time: a fresh account and daemon, `runs` engine kills. */
async function runRow({ root, cli, flags, sim, row, rttMs, Wallet, id, log }) {
  const wallet = new Wallet(id(`hl-deadman bench cancel: ${row.key} rtt ${rttMs}`));
  const account = wallet.address.toLowerCase();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const admin = (p, body) => request(agent, `${sim.adminUrl}${p}`, body === undefined ? "GET" : "POST", body);
  await admin("/users", { address: account, volumeUsd: 5_000_000 });
  const dir = mkdtempSync(path.join(os.tmpdir(), "hl-bench-cancel-"));
  const g = { file: path.join(dir, "alive"), socket: path.join(dir, "guard.sock") };
  writeFileSync(g.file, "");
  const events = [];
  let engine;
  const startEngine = () => {
    engine =
      row.engine === "file"
        ? spawn(
            process.execPath,
            [
              "-e",
              "const fs=require('fs');const f=process.env.GUARD_FILE;const t=()=>{const d=new Date();fs.utimesSync(f,d,d)};t();setInterval(t,50);process.stdout.write('up\\n')",
            ],
            { env: { ...process.env, GUARD_FILE: g.file, NODE_OPTIONS: "" }, stdio: "ignore" },
          )
        : spawn(process.execPath, [path.join(root, "bench/engine-socket.mjs"), g.socket, account, "50"], {
            env: { ...process.env, NODE_OPTIONS: "" },
            stdio: "ignore",
          });
  };
  const account0 = async () => (await admin("/state")).accounts.find((a) => a.address === account);
  const info = (body) => request(agent, `${sim.apiUrl}/info`, "POST", body);
  if (row.engine === "file") startEngine();
  const daemon = spawn(
    process.execPath,
    [
      ...flags,
      cli,
      "run",
      "--api-url",
      sim.apiUrl,
      "--state-dir",
      dir,
      "--health",
      "127.0.0.1:0",
      ...row.args(g),
    ],
    {
      cwd: root,
      env: { ...process.env, HL_PRIVATE_KEY: wallet.privateKey, NODE_OPTIONS: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  createInterface({ input: daemon.stdout }).on("line", (l) => {
    const m = /"event"\s*:\s*"([^"]+)"/.exec(l);
    if (m) events.push({ at: performance.now(), event: m[1] });
  });
  daemon.stderr.resume();
  const seen = (name, since) => events.some((e) => e.event === name && e.at >= since);
  const samples = [];
  let triggers = 0;
  try {
    await until(() => seen("heartbeat.ok", 0), {
      timeoutMs: 30_000,
      everyMs: 20,
      what: "the first heartbeat.ok",
    });
    if (row.engine === "socket") {
      // the engine's connection, before anything is measured: on a busy machine the engine process may take
      // longer than the first run's wait below to connect, and an engine killed before it connected is no death
      const before = performance.now();
      startEngine();
      await until(() => seen("guard.connected", before), {
        timeoutMs: 30_000,
        everyMs: 10,
        what: "the engine's connection (guard.connected)",
      });
    }
    let lastKill = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < row.runs; i++) {
      const since = performance.now();
      if (i > 0) startEngine();
      if (i > 0 || row.engine === "socket") {
        // The guard must see the engine (back) up. A connection guard may not log engine.up for the first
        // connection after a start (the engine was never down): then a short wait stands in for it.
        const first = i === 0;
        await until(() => seen("engine.up", since), {
          timeoutMs: first ? 3_000 : 30_000,
          everyMs: 10,
          what: "engine.up",
        }).catch((e) => {
          if (!first) throw e;
        });
      }
      await admin("/users", { address: account, volumeUsd: 5_000_000, orders: [...RESTING, STOP] });
      const open = await info({ type: "frontendOpenOrders", user: account });
      const targets = open.filter((o) => !(o.reduceOnly && o.isTrigger)).map((o) => o.oid);
      if (targets.length < RESTING.length) throw new Error("the orders were not placed");
      await sleep(150 + Math.random() * 100); // a random phase against the guard's and the daemon's timers
      const spacing = lastKill + KILL_SPACING_MS - performance.now();
      if (spacing > 0) await sleep(spacing);
      lastKill = performance.now();
      engine.kill("SIGKILL");
      // The figure is the simulator's own record of each cancel (the order's statusTimestamp, its wall clock on
      // this machine) minus the kill: the slow poll below only learns that it is over and adds nothing to it.
      const killed = Date.now();
      await until(async () => (await account0()).openOrdersNotStops === 0, {
        timeoutMs: 60_000,
        everyMs: 50,
        what: "the orders cancelled",
      });
      const ended = (await info({ type: "historicalOrders", user: account })).filter((h) =>
        targets.includes(h.order.oid),
      );
      if (ended.length !== targets.length) throw new Error("the simulator's record misses a cancelled order");
      samples.push(Math.max(...ended.map((h) => h.statusTimestamp)) - killed);
      await waitExit(engine, 2_000);
    }
    triggers = (await account0()).triggersToday;
  } finally {
    engine?.kill("SIGKILL");
    daemon.kill("SIGTERM");
    await waitExit(daemon, 10_000);
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  const r = {
    rttMs,
    runs: samples.length,
    p50: pct(samples, 50),
    p99: pct(samples, 99),
    max: Math.max(...samples),
    triggers,
  };
  log(
    `cancel ${row.key} rtt ${rttMs}: p50 ${r.p50.toFixed(0)} ms, p99 ${r.p99.toFixed(0)} ms, max ${r.max.toFixed(0)} ms over ${r.runs}, triggers ${triggers}`,
  );
  return r;
}

/** One `frontendOpenOrders` round trip (weight 20): what reading the open orders at death costs, per RTT. */
async function readCost(sim, account) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const xs = [];
  try {
    for (let i = 0; i < 21; i++) {
      const t = performance.now();
      await request(agent, `${sim.apiUrl}/info`, "POST", { type: "frontendOpenOrders", user: account });
      if (i > 0) xs.push(performance.now() - t);
    }
  } finally {
    agent.destroy();
  }
  return { p50: pct(xs, 50), max: Math.max(...xs) };
}

export async function benchCancel({ root, cli, flags, log, scale = 1 }) {
  const { Wallet, id } = await import("ethers");
  const help = spawnSync(process.execPath, [cli, "run", "--help"], { encoding: "utf8" }).stdout ?? "";
  // BENCH_CANCEL_ROWS=socket,socket-read-at-death measures only the named rows (a comparison under one load)
  const only = process.env.BENCH_CANCEL_ROWS ? new Set(process.env.BENCH_CANCEL_ROWS.split(",")) : null;
  const rows = cancelRows(scale).filter((r) => only === null || only.has(r.key));
  const results = [];
  const reads = [];
  for (const row of rows) {
    if (row.requires && !help.includes(row.requires)) {
      const note = `not measured: ${row.requires} not in this build`;
      log(`cancel ${row.key}: ${note}`);
      results.push({ key: row.key, title: row.title, note, byRtt: [] });
    } else results.push({ key: row.key, title: row.title, byRtt: [] });
  }
  for (const rttMs of RTTS) {
    const sim = await startSim(root, rttMs);
    try {
      reads.push({ rttMs, ...(await readCost(sim, "0x0000000000000000000000000000000000000001")) });
      for (const [i, row] of rows.entries()) {
        if (results[i].note || !row.rtts.includes(rttMs)) continue;
        try {
          results[i].byRtt.push(await runRow({ root, cli, flags, sim, row, rttMs, Wallet, id, log }));
        } catch (error) {
          log(`cancel ${row.key} rtt ${rttMs}: FAILED: ${error?.message ?? error}`);
          results[i].byRtt.push({ rttMs, error: String(error?.message ?? error).split("\n")[0] });
        }
      }
    } finally {
      await sim.close();
    }
  }
  return { rows: results, reads };
}

const f0 = (n) => (n == null || Number.isNaN(n) ? "n/a" : n.toFixed(0));

export function renderCancel(cancel) {
  const L = [];
  L.push("## Engine death → orders cancelled (issue 28)");
  L.push("");
  L.push(
    "The engine is killed with SIGKILL; the figure is the time from the kill to the last cancel of an order that is not a reduce-only stop, as the simulator records it (the orders' `statusTimestamp`, its wall clock; 3 resting orders and a reduce-only stop placed before each kill; the stop is kept). The benchmark learns that the orders are gone from a 50 ms poll that adds nothing to the figure. Round-trip time injected by the simulator (`--rtt-ms`: half before the request is handled, half before the answer; the WebSocket's pushes wait half of it too). With the connection guard the daemon keeps the account's open orders fresh over the simulator's WebSocket (`openOrders`), so the cancel leaves at once. Triggers: the simulator's count for the row's account at the end. Each kill comes 150–250 ms after the engine is (back) up and its orders placed, and at least 2.5 s after the row's previous kill (each death's cancel pass costs ~23 of the IP's 1,200 weight a minute, which the daemon's death gate plans within: faster kills would be deaths it rightly cannot afford to cancel, falling back to the 5 s schedule); the daemon pushes as soon as the engine is back, so `lapse` measures close to its worst case, the full deadline.",
  );
  L.push("");
  L.push("| mode | RTT | runs | p50 | p99 | max | triggers spent |");
  L.push("|---|---|---|---|---|---|---|");
  if (!cancel.ok) L.push(`| all | | | not measured: ${cancel.error} | | | |`);
  else
    for (const r of cancel.rows) {
      if (r.note) {
        L.push(`| ${r.title} | | | ${r.note} | | | |`);
        continue;
      }
      for (const x of r.byRtt)
        L.push(
          x.error
            ? `| ${r.title} | ${x.rttMs} ms | | FAILED: ${x.error} | | | |`
            : `| ${r.title} | ${x.rttMs} ms | ${x.runs} | ${f0(x.p50)} ms | ${f0(x.p99)} ms | ${f0(x.max)} ms | ${x.triggers} |`,
        );
    }
  L.push("");
  if (cancel.ok) {
    L.push(
      `Reading the open orders at death (\`frontendOpenOrders\`, IP weight 20, read together with \`meta\`): one round trip, p50 ${cancel.reads.map((r) => `${f0(r.p50)} ms at RTT ${r.rttMs} ms`).join(", ")}. Polling instead would spend, per account, 20 weight per poll out of the IP's 1,200 a minute (one poll a second is the whole budget). What ships: with the connection guard and \`cancel\`, the list is kept fresh over one WebSocket (\`openOrders\`, no IP weight; at most 10 accounts, the exchange's users per IP) and the cancel of the known orders leaves at once, the read at death confirming it; the accounts beyond 10, and any account whose list is not fresh (WebSocket down), read at death.`,
    );
    L.push("");
  }
  return L.join("\n");
}
