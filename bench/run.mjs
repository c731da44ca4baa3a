// `npm run bench` (= npm run build --silent && node --expose-gc bench/run.mjs): measures the product as deployed and
// writes BENCHMARKS.md, each figure beside a reference measured in the same run, with the machine it ran on. Not
// part of `npm test` or CI. It takes about an hour and a half on 2 cores: the cancel section ~42 min (its kills paced
// 2.5 s apart, bench/cancel.mjs), a host's death ~26 min, the 330 s memory/CPU window and the exposure runs.
//
// "As deployed" means with the node flags the shipped deployments start node with, read from the deployment files
// themselves through test/deploy/deployments.ts (the systemd units' ExecStart=, pm2's node_args, the image's
// ENTRYPOINT): the bench refuses to run if they disagree (heap cap aside), and measures the systemd unit's.
//
// Environment knobs (for development only; the committed BENCHMARKS.md uses the defaults):
//   BENCH_WINDOW_MS  length of the daemon's memory/CPU window from its spawn (default 330000: 30 s start-up, 300 s measured; a
//                    window of 120 s read the same daemon anywhere from 4.8 to 6.0 s/h)
//   BENCH_RUNS       start-up runs per variant, median reported (default 5)
//   BENCH_OUT        output file (default BENCHMARKS.md at the repository root)
//   BENCH_ONLY       the same as --only (e.g. BENCH_ONLY=cancel npm run bench)
//   BENCH_CANCEL_SCALE  scales the cancel section's run counts (default 1: 200 kills per RTT for the connection
//                    guard, 100 for it without the kept-fresh list, 25 for the fastest file guard, 3 for the slow modes)
//   BENCH_CANCEL_ROWS   only these rows of the cancel section (keys of bench/cancel.mjs, comma-separated)
//
//   BENCH_KILL_RUNS, BENCH_KILL_DEXES, BENCH_HOST_DEATH_RUNS, BENCH_HOST_DEATH_ROWS, BENCH_GUARD_MAX_CONNECTIONS:
//                    see bench/kill.mjs and bench/host-death.mjs
//
// `npm run bench -- kill host-death` (or `--only kill,host-death`, or BENCH_ONLY=kill) runs only the named sections:
// signing, npm-start, cold, memory (= the memory and CPU window), simulator, exposure, modules (the rows of the
// Results table: printed only, a full run writes them), and the sections with a heading of their own (STANDALONE
// below: cancel, growth, ledger, kill, host-death), which a partial run rewrites in place in BENCHMARKS.md, each with the
// machine and the reference of this run, the rest of the file untouched. A full run writes the whole file.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CLI = path.join(ROOT, "dist/bin/hl-deadman.js");
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 330_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/**
 * The memory/CPU window's CPU measurement starts this long after the daemon was spawned. Start-up ends later than
 * the first push: V8's memory reducer runs its full collections (about 0.3 s of CPU under --jitless) some 10-15 s
 * after start-up's allocations settle, once; a window opening at 10 s took them in or not by chance, and 0.3 s in
 * 50 s reads as 21 s/h. Start-up has its own row; this one is the steady cost of an hour.
 */
const STARTUP_MS = 30_000;
/** The product's ceilings on this kind of machine, default configuration (issue 26). */
const CEILING_RSS_MIB = 80;
const CEILING_CPU_S_PER_H = 5;
const OUT = process.env.BENCH_OUT ?? path.join(ROOT, "BENCHMARKS.md");
/**
 * The sections that are a heading of their own in BENCHMARKS.md, in the file's order: one entry each (a section is a
 * module with a bench and a render function). A partial run rewrites only these, in place, each between its
 * markers (`<!-- bench:NAME -->` … `<!-- /bench:NAME -->`), with the machine it ran on and its own reference.
 */
const STANDALONE = [
  {
    name: "cancel",
    module: "./cancel.mjs",
    bench: "benchCancel",
    render: "renderCancel",
    title: "engine death → orders cancelled",
  },
  {
    name: "growth",
    module: "./growth.mjs",
    bench: "benchGrowth",
    render: "renderGrowth",
    title: "the growth curve",
  },
  {
    name: "ledger",
    module: "./ledger.mjs",
    bench: "benchLedger",
    render: "renderLedger",
    title: "the ledger's write per push",
  },
  { name: "kill", module: "./kill.mjs", bench: "benchKill", render: "renderKill", title: "the kill switch" },
  {
    name: "host-death",
    module: "./host-death.mjs",
    bench: "benchHostDeath",
    render: "renderHostDeath",
    title: "a host's death",
  },
];
/** The sections that are rows of the Results table (or its import-cost table): measured together by a full run. */
const TABLE = ["signing", "npm-start", "cold", "memory", "simulator", "exposure", "modules"];
const SECTIONS = [...TABLE, ...STANDALONE.map((x) => x.name)];
const onlyArg = process.argv.find((a, i) => a.startsWith("--only=") || process.argv[i - 1] === "--only");
// `npm run bench -- kill host-death` names sections as arguments; --only a,b and BENCH_ONLY=a,b do the same
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith("-") && all[i - 1] !== "--only");
const onlyList = [
  onlyArg ? (onlyArg.startsWith("--only=") ? onlyArg.slice(7) : onlyArg) : (process.env.BENCH_ONLY ?? ""),
  ...positional,
]
  .filter((x) => x !== "")
  .join(",");
const ONLY = onlyList ? new Set(onlyList.split(",")) : null;
for (const name of ONLY ?? [])
  if (!SECTIONS.includes(name))
    throw new Error(`unknown bench section ${name} (one of ${SECTIONS.join(", ")})`);
const wanted = (name) => ONLY === null || ONLY.has(name);

const { Wallet, id } = await import("ethers");
for (const x of STANDALONE) {
  const mod = await import(x.module);
  x.benchFn = mod[x.bench];
  x.renderFn = mod[x.render];
}
const { cpuNsMsOf, statusKb } = await import("./proc.mjs");
// the library's public signing API (the bench signs its load through it, as a user of the package would)
const ours = await import(path.join(ROOT, "dist/index.js"));

// Throwaway keys derived from fixed labels: they only ever sign for the simulator on 127.0.0.1.
const daemonWallet = new Wallet(id("hl-deadman bench: daemon key"));
const loadWallet = new Wallet(id("hl-deadman bench: load key"));

const log = (...args) => console.error("[bench]", ...args);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const mib = (kb) => kb / 1024;
const fmt = (n, digits = 1) => (n == null || Number.isNaN(n) ? "n/a" : n.toFixed(digits));
const fmtInt = (n) => (n == null || Number.isNaN(n) ? "n/a" : Math.round(n).toLocaleString("en-US"));

const loadAverage = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" / ");

function waitExit(child, timeoutMs) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    const t = setTimeout(() => {
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal });
    });
  });
}

/** Spawns a process and resolves when a stdout line matches `match` (or the process exits / times out). */
function spawnUntilLine(cmd, args, { env, match, timeoutMs = 15_000 }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let done = false;
    child.stderr.on("data", (d) => {
      stderr += d;
      if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
    });
    const lines = createInterface({ input: child.stdout });
    let cpuMs = Number.NaN;
    const timer = setTimeout(
      () => finish(new Error(`timed out after ${timeoutMs} ms: ${cmd} ${args[0]}`)),
      timeoutMs,
    );
    function finish(error, line) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (error) {
        child.kill("SIGKILL");
        reject(new Error(`${error.message}\n${stderr.slice(-2000)}`));
      } else resolve({ child, ms: performance.now() - started, cpuMs, line, lines });
    }
    lines.on("line", (line) => {
      if (!done && match(line)) {
        try {
          cpuMs = cpuNsMsOf(child.pid);
        } catch {}
        finish(undefined, line);
      }
    });
    child.once("exit", (code, signal) => {
      if (!done)
        finish(
          new Error(`${path.basename(args[0] ?? cmd)} exited (${code ?? signal}) before the expected line`),
        );
    });
  });
}

/** Spawns a process and resolves with its wall time once it exits with code 0. */
async function timeToExit(cmd, args, env) {
  const started = performance.now();
  const child = spawn(cmd, args, { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const { code, signal } = await waitExit(child, 20_000);
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${code ?? signal}: ${out.slice(-1500)}`);
  return ms;
}

function postJson(agent, url, body) {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": data.length },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

async function section(name, fn) {
  log(`${name}…`);
  const started = performance.now();
  try {
    const value = await fn();
    log(`${name}: done in ${fmt((performance.now() - started) / 1000)} s`);
    return { ok: true, ...value };
  } catch (error) {
    log(`${name}: FAILED: ${error?.stack ?? error}`);
    return {
      ok: false,
      error: String(error?.message ?? error)
        .split("\n")[0]
        .slice(0, 200),
    };
  }
}

// ---------------------------------------------------------------------------------------------------------
// The simulator, in its own process (bench/sim-server.mjs).
async function startSimChild() {
  const options = {
    seed: 8,
    users: [
      { address: daemonWallet.address.toLowerCase(), volumeUsd: 5_000_000 },
      { address: loadWallet.address.toLowerCase(), volumeUsd: 5_000_000 },
    ],
    // The load test sends thousands of actions from one IP; the default 1,200 weight/minute would answer 429.
    ipWeightPerMinute: null,
  };
  const { child, line, lines } = await spawnUntilLine(
    process.execPath,
    [path.join(ROOT, "bench/sim-server.mjs"), JSON.stringify(options)],
    { env: { ...process.env }, match: (l) => l.startsWith("{"), timeoutMs: 20_000 },
  );
  lines.on("line", () => {});
  const info = JSON.parse(line);
  return {
    ...info,
    pid: child.pid,
    child,
    async close() {
      child.kill("SIGTERM");
      await waitExit(child, 5_000);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
/**
 * The node flags of the shipped deployments, read from their files by test/deploy/deployments.ts (loaded through
 * tsx, a dev dependency). Every deployment but `npm start` must start node with the same flags, the heap cap aside
 * (the units set it on the command line, the Kubernetes example in NODE_OPTIONS, pm2 and the image leave the heap
 * to their host); the daemon is measured with the systemd unit's, and also without any (docs/operations.md,
 * "Node flags").
 */
async function deployedFlags() {
  const { tsImport } = await import("tsx/esm/api");
  const { deploymentStarts, nodeFlagsOf, unitExecStart } = await tsImport(
    pathToFileURL(path.join(ROOT, "test/deploy/deployments.ts")).href,
    import.meta.url,
  );
  const withoutHeap = (flags) => flags.filter((f) => !f.startsWith("--max-old-space-size"));
  const unit = nodeFlagsOf(unitExecStart("systemd/hl-deadman.service"));
  for (const start of deploymentStarts()) {
    if (start.name === "npm start") continue;
    if (JSON.stringify(withoutHeap(start.flags)) !== JSON.stringify(withoutHeap(unit)))
      throw new Error(
        `${start.name} starts node with ${start.flags.join(" ")}, the unit with ${unit.join(" ")}`,
      );
  }
  return unit;
}
const DEPLOYED_FLAGS = await deployedFlags();

function daemonArgs(sim, stateDir, flags = DEPLOYED_FLAGS, cli = CLI) {
  return [...flags, cli, "run", "--api-url", sim.apiUrl, "--state-dir", stateDir, "--health", "127.0.0.1:0"];
}
const daemonEnv = () => ({ ...process.env, HL_PRIVATE_KEY: daemonWallet.privateKey, NODE_OPTIONS: "" });
const isHeartbeat = (line) => /"event"\s*:\s*"heartbeat\.ok"/.test(line);

/**
 * tsc's own output of the sources, unbundled, in a temporary directory beside a link to node_modules: the
 * reference that decides whether the bundle earns its keep (docs/development.md, "The build").
 */
function tscOutput() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hl-bench-tsc-"));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const r = spawnSync(
    process.execPath,
    [tsc, "-p", "tsconfig.build.json", "--outDir", path.join(dir, "dist")],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  if (r.status !== 0) throw new Error(`tsc exited ${r.status}: ${r.stdout.slice(-500)}`);
  writeFileSync(path.join(dir, "package.json"), readFileSync(path.join(ROOT, "package.json")));
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return { dir, cli: path.join(dir, "dist/bin/hl-deadman.js") };
}

// Start → protected: spawn → the first confirmed push (`heartbeat.ok`), and `--version` (spawn → exit).
async function benchColdStart(sim) {
  const tsc = tscOutput();
  try {
    const variants = [
      { name: "bundle, as deployed", cli: CLI, flags: DEPLOYED_FLAGS },
      { name: "tsc output, as deployed", cli: tsc.cli, flags: DEPLOYED_FLAGS },
      { name: "bundle, no flags", cli: CLI, flags: [] },
      { name: "tsc output, no flags", cli: tsc.cli, flags: [] },
    ];
    const figures = variants.map((v) => ({ ...v, ms: [], cpuMs: [], versionMs: [] }));
    const bare = [];
    const stops = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(await timeToExit(process.execPath, [...DEPLOYED_FLAGS, "-e", "0"], daemonEnv()));
      // interleaved, in a rotating order, so no variant always runs first after the machine was idle
      const order = figures.map((_, k) => figures[(k + i) % figures.length]);
      for (const f of order) {
        const stateDir = mkdtempSync(path.join(os.tmpdir(), "hl-bench-"));
        try {
          const { child, ms, cpuMs } = await spawnUntilLine(
            process.execPath,
            daemonArgs(sim, stateDir, f.flags, f.cli),
            { env: daemonEnv(), match: isHeartbeat, timeoutMs: 30_000 },
          );
          f.ms.push(ms);
          f.cpuMs.push(cpuMs);
          const t = performance.now();
          child.kill("SIGTERM");
          const exit = await waitExit(child, 10_000);
          if (f === figures[0]) stops.push({ ms: performance.now() - t, code: exit.code });
        } finally {
          rmSync(stateDir, { recursive: true, force: true });
        }
        f.versionMs.push(await timeToExit(process.execPath, [...f.flags, f.cli, "--version"], daemonEnv()));
      }
    }
    return {
      flags: DEPLOYED_FLAGS,
      variants: figures.map((f) => ({
        name: f.name,
        flags: f.flags,
        ms: median(f.ms),
        cpuMs: median(f.cpuMs),
        versionMs: median(f.versionMs),
        samples: { ms: f.ms, cpuMs: f.cpuMs, versionMs: f.versionMs },
      })),
      bareMs: median(bare),
      stopMs: median(stops.map((s) => s.ms)),
      stopCodes: [...new Set(stops.map((s) => s.code))],
    };
  } finally {
    rmSync(tsc.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Signing: one scheduleCancel through the public signL1Action, in a fresh process as deployed and without flags.
async function benchSigning() {
  const once = (flags) => {
    const r = spawnSync(process.execPath, [...flags, path.join(ROOT, "bench/signing.mjs"), "200"], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "" },
      timeout: 120_000,
    });
    if (r.status !== 0)
      throw new Error(`bench/signing.mjs exited ${r.status}: ${(r.stderr ?? "").slice(-500)}`);
    return JSON.parse(r.stdout.trim().split("\n").at(-1));
  };
  const deployed = [];
  const plain = [];
  for (let i = 0; i < 3; i++) {
    deployed.push(once(DEPLOYED_FLAGS));
    plain.push(once([]));
  }
  const summary = (xs) => ({
    firstMs: median(xs.map((x) => x.firstMs)),
    medianMs: median(xs.map((x) => x.medianMs)),
  });
  return {
    deployed: summary(deployed),
    plain: summary(plain),
    flags: DEPLOYED_FLAGS,
    samples: { deployed, plain },
  };
}

// ---------------------------------------------------------------------------------------------------------
// npm start -> first heartbeat with dist/ current (no rebuild), as the README's quick start runs it.
async function benchNpmStart() {
  const samples = [];
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    const started = performance.now();
    const child = spawn(npm, ["start", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: "" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let rebuilt = false;
    child.stderr.on("data", (d) => {
      if (String(d).includes("building dist/")) rebuilt = true;
    });
    const ms = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("npm start: no heartbeat in 30 s")), 30_000);
      createInterface({ input: child.stdout }).on("line", (l) => {
        if (isHeartbeat(l)) {
          clearTimeout(timer);
          resolve(performance.now() - started);
        }
      });
      child.once("exit", (code) => reject(new Error(`npm start exited ${code} before a heartbeat`)));
    });
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    await waitExit(child, 10_000);
    samples.push({ ms, rebuilt });
  }
  return { ms: median(samples.map((s) => s.ms)), rebuilt: samples.some((s) => s.rebuilt), samples };
}

// ---------------------------------------------------------------------------------------------------------
// Resident memory after WINDOW_MS at the default cadence, and CPU seconds per hour over the window (start-up
// excluded), as deployed and without flags, next to a bare idle node process.
async function benchSteadyState(sim) {
  const bareChild = spawn(process.execPath, ["-e", "setInterval(()=>{},1000)"], {
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: "ignore",
  });
  const spawnedAt = performance.now();
  // As deployed (the unit's node flags) and the same command without them, side by side in the same window.
  const daemons = [];
  try {
    for (const flags of [DEPLOYED_FLAGS, []]) {
      const stateDir = mkdtempSync(path.join(os.tmpdir(), "hl-bench-"));
      const d = { flags, stateDir, heartbeats: 0, failures: 0 };
      daemons.push(d);
      const { child, lines } = await spawnUntilLine(process.execPath, daemonArgs(sim, stateDir, flags), {
        env: daemonEnv(),
        match: isHeartbeat,
        timeoutMs: 20_000,
      });
      d.child = child;
      d.heartbeats = 1;
      lines.on("line", (l) => {
        if (isHeartbeat(l)) d.heartbeats++;
        else if (/"event"\s*:\s*"heartbeat\.failed"/.test(l)) d.failures++;
      });
    }
    // Start-up (module loading, the first compilations and collections) continues a few seconds past the first
    // heartbeat: the CPU window opens STARTUP_MS after the spawn, so it measures the steady state.
    await sleep(Math.max(0, Math.min(STARTUP_MS, WINDOW_MS / 2) - (performance.now() - spawnedAt)));
    for (const d of daemons) d.cpuStart = cpuNsMsOf(d.child.pid);
    const bareCpuStart = cpuNsMsOf(bareChild.pid);
    const windowStart = performance.now();
    await sleep(Math.max(0, WINDOW_MS - (windowStart - spawnedAt)));
    const windowMs = performance.now() - windowStart;
    const bareCpuMs = cpuNsMsOf(bareChild.pid) - bareCpuStart;
    const bareRssKb = statusKb(bareChild.pid, "VmRSS");
    const figures = [];
    for (const d of daemons) {
      const cpuMs = cpuNsMsOf(d.child.pid) - d.cpuStart;
      const rssKb = statusKb(d.child.pid, "VmRSS");
      const hwmKb = statusKb(d.child.pid, "VmHWM");
      d.child.kill("SIGTERM");
      const exit = await waitExit(d.child, 10_000);
      figures.push({
        flags: d.flags,
        rssMiB: mib(rssKb),
        peakMiB: mib(hwmKb),
        cpuSecPerHour: (cpuMs / windowMs) * 3600,
        cpuMs,
        heartbeats: d.heartbeats,
        failures: d.failures,
        exitCode: exit.code,
      });
    }
    const [deployed, plain] = figures;
    return {
      ...deployed,
      bareRssMiB: mib(bareRssKb),
      bareCpuSecPerHour: (bareCpuMs / windowMs) * 3600,
      bareCpuMs,
      windowMs,
      aliveMs: performance.now() - spawnedAt,
      plain,
    };
  } finally {
    bareChild.kill("SIGTERM");
    for (const d of daemons) {
      d.child?.kill("SIGKILL");
      rmSync(d.stateDir, { recursive: true, force: true });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// What the daemon's resident memory is made of: RSS of a fresh node process (the deployed flags) after loading one
// dependency, then a GC. node-cron's rows say what it costs: each date it computes goes through an
// Intl.DateTimeFormat, and the first Intl object of a process maps ICU's data; got (@sindresorhus/is) builds an
// Intl.ListFormat when it is loaded, so in the daemon ICU is mapped before node-cron's first date.
async function benchModuleCost() {
  const load = (spec) => `await import(${JSON.stringify(spec)});`;
  const cronJob =
    'const cron = (await import("node-cron")).default; cron.schedule("0 0 * * *", () => {}, { timezone: "UTC" });';
  const items = [
    ["bare node", ""],
    [
      "an Intl.DateTimeFormat's first date (ICU's data mapped)",
      'new Intl.DateTimeFormat("en-US", { timeZone: "UTC", hour: "numeric" }).formatToParts(new Date());',
    ],
    ["ethers", load("ethers")],
    ["zod", load("zod")],
    ["pino", load("pino")],
    ["got", load("got")],
    ["prom-client", load("prom-client")],
    ["node-cron with the daemon's 00:00 UTC job", cronJob],
    ["got, then node-cron with the 00:00 UTC job", `${load("got")} ${cronJob}`],
    ["hl-deadman library (dist/index.js)", load(pathToFileURL(path.join(ROOT, "dist/index.js")).href)],
  ];
  const flags = DEPLOYED_FLAGS.filter((f) => !f.startsWith("--max-old-space-size"));
  const rows = [];
  for (const [name, code] of items) {
    const probe =
      `(async()=>{${code} await new Promise(r=>setTimeout(r,500)); globalThis.gc();` +
      "await new Promise(r=>setTimeout(r,300));" +
      "const s=require('fs').readFileSync('/proc/self/status','utf8');" +
      "process.stdout.write(String(Number(s.match(/VmRSS:\\s+(\\d+)/)[1])/1024)); process.exit(0)})()";
    const samples = [];
    for (let i = 0; i < 3; i++) {
      const r = spawnSync(process.execPath, [...flags, "--expose-gc", "--input-type=commonjs", "-e", probe], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, NODE_OPTIONS: "" },
        timeout: 20_000,
      });
      const v = Number.parseFloat(r.stdout);
      if (!Number.isFinite(v)) throw new Error(`${name}: ${r.stderr.slice(-300)}`);
      samples.push(v);
    }
    rows.push({ name, rssMiB: median(samples) });
  }
  return { rows, flags };
}

// ---------------------------------------------------------------------------------------------------------
// The simulator's verified actions per second: signed scheduleCancel requests signed up front, fired over
//    keep-alive with bounded concurrency; every signature is checked by public-key recovery and answered by the simulator.
async function benchSimulator(sim) {
  const N = 2_000;
  /** Rounds of N; the median round (by CPU rate) is reported: this VM's speed drifts by tens of % within minutes. */
  const ROUNDS = 3;
  /** sent first and not counted: the simulator learns the signer's key and its code is compiled, as in a long run */
  const WARMUP = 200;
  const concurrency = 16;
  const base = Date.now();
  const signStart = performance.now();
  const bodies = [];
  for (let i = 0; i < N * ROUNDS + WARMUP; i++) {
    const action = { type: "scheduleCancel", time: base + 120_000 + i };
    const nonce = base + i;
    const signature = await ours.signL1Action({ wallet: loadWallet, action, nonce, isMainnet: true });
    bodies.push({ action, nonce, signature });
  }
  const signMs = performance.now() - signStart;

  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const url = `${sim.apiUrl}/exchange`;
  const warmup = bodies.splice(0, WARMUP);
  for (let i = 0; i < warmup.length; i += concurrency)
    await Promise.all(warmup.slice(i, i + concurrency).map((b) => postJson(agent, url, b)));

  async function round(batch) {
    const cpuStart = cpuNsMsOf(sim.pid);
    const start = performance.now();
    let next = 0;
    let accepted = 0;
    let refused = 0;
    let lastRefusal = "";
    async function worker() {
      while (next < batch.length) {
        const body = batch[next++];
        const res = await postJson(agent, url, body);
        let ok = false;
        try {
          ok = res.status === 200 && JSON.parse(res.text).status === "ok";
        } catch {
          ok = false;
        }
        if (ok) accepted++;
        else {
          refused++;
          lastRefusal = `${res.status} ${res.text.slice(0, 200)}`;
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker));
    const wallMs = performance.now() - start;
    const simCpuMs = cpuNsMsOf(sim.pid) - cpuStart;
    return {
      accepted,
      refused,
      lastRefusal,
      wallMs,
      simCpuMs,
      perSec: (accepted * 1000) / wallMs,
      /** verified actions per second of the simulator's own CPU time (its capacity on one core) */
      perCpuSec: (accepted * 1000) / simCpuMs,
    };
  }
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round(bodies.slice(r * N, (r + 1) * N)));
  agent.destroy();
  const median = [...rounds].sort((a, b) => a.perCpuSec - b.perCpuSec)[Math.floor(ROUNDS / 2)];
  return {
    requests: N,
    rounds: ROUNDS,
    concurrency,
    accepted: median.accepted,
    refused: rounds.reduce((n, r) => n + r.refused, 0),
    lastRefusal: rounds.map((r) => r.lastRefusal).find((x) => x) ?? "",
    perSec: median.perSec,
    perCpuSec: median.perCpuSec,
    wallMs: median.wallMs,
    simCpuMs: median.simCpuMs,
    simCpuUsPerAction: (median.simCpuMs * 1000) / N,
    roundsPerCpuSec: rounds.map((r) => r.perCpuSec),
    signMs,
    rssMiB: mib(statusKb(sim.pid, "VmRSS")),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Exposure of 1,000 accounts: bench/exposure.mjs (prints one JSON document), next to the fetch alone.
async function benchExposure() {
  const script = path.join(ROOT, "bench/exposure.mjs");
  if (!existsSync(script)) throw new Error("bench/exposure.mjs is not there");
  // As deployed (the unit's node flags, as the daemon runs the reporter and the fetch), and without them.
  const once = (flags) => {
    const r = spawnSync(process.execPath, [...flags, "--expose-gc", script], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "" },
      timeout: 180_000,
    });
    if (r.status !== 0)
      throw new Error(`bench/exposure.mjs exited ${r.status}: ${(r.stderr ?? "").slice(-500)}`);
    const text = r.stdout.trim();
    return JSON.parse(text.slice(text.indexOf("{")));
  };
  return { raw: once(DEPLOYED_FLAGS), plain: once([]), flags: DEPLOYED_FLAGS };
}
// ---------------------------------------------------------------------------------------------------------
const verdict = (met) => (met == null ? "not measured" : met ? "**met**" : "**missed**");

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() ?? "unknown",
    cores: cpus.length,
    ramGiB: os.totalmem() / 1024 ** 3,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
    loadStart: loadAverage(),
  };
}

function render(results) {
  const { m, signing, cold, steady, modules, simulator, exposure, npmStart, standalone } = results;
  const flags = `\`node ${DEPLOYED_FLAGS.join(" ")}\``;
  const L = [];
  L.push("# Benchmarks");
  L.push("");
  L.push(
    "Generated by `npm run bench` (bench/run.mjs): the product's figures, measured as deployed (the node flags of",
  );
  L.push(
    "the shipped systemd units, pm2 file and image, read from those files), each beside a reference measured in the",
  );
  L.push("same run on the same machine. Re-run it to get your own numbers. Not part of `npm test` or CI.");
  L.push("");
  L.push("## Machine");
  L.push("");
  L.push(`- CPU: ${m.cpu}, ${m.cores} cores (shared with other work while this ran)`);
  L.push(`- RAM: ${fmt(m.ramGiB)} GiB`);
  L.push(`- Node.js ${m.node} on ${m.os}`);
  L.push(`- Date: ${m.date}`);
  L.push(`- Node flags as deployed: ${flags}`);
  L.push(`- Memory/CPU window: ${fmt(WINDOW_MS / 1000, 0)} s; start-up runs per variant: ${RUNS} (median)`);
  L.push(
    `- Load average (1/5/15 min) at the start: ${m.loadStart}; at the end: ${m.loadEnd ?? "n/a"} (${m.cores} cores shared with other work: wall-clock figures are noisy; CPU-time figures are given beside them)`,
  );
  L.push("");
  L.push("## Results");
  L.push("");
  L.push("| Figure | hl-deadman | Reference (same run) | Ceiling | Result |");
  L.push("|---|---|---|---|---|");

  if (cold.ok) {
    const [deployed, tscDeployed, plain, tscPlain] = cold.variants;
    L.push(
      `| Start → protected: spawn → first confirmed push (\`heartbeat.ok\`) of \`run\`, as deployed (${flags}, the bundle; median of ${RUNS}) | ${fmtInt(deployed.ms)} ms wall, ${fmtInt(deployed.cpuMs)} ms CPU | tsc's output unbundled, same flags: ${fmtInt(tscDeployed.ms)} ms wall, ${fmtInt(tscDeployed.cpuMs)} ms CPU; \`node -e 0\`, same flags: ${fmtInt(cold.bareMs)} ms | — | measured |`,
    );
    L.push(
      `| \`hl-deadman --version\`, spawn → exit, as deployed | ${fmtInt(deployed.versionMs)} ms | tsc's output unbundled: ${fmtInt(tscDeployed.versionMs)} ms | — | measured |`,
    );
    L.push(
      `| The same without node flags (\`node dist/bin/hl-deadman.js\`) | start → protected ${fmtInt(plain.ms)} ms wall, ${fmtInt(plain.cpuMs)} ms CPU; \`--version\` ${fmtInt(plain.versionMs)} ms | tsc's output: ${fmtInt(tscPlain.ms)} ms wall, ${fmtInt(tscPlain.cpuMs)} ms CPU; \`--version\` ${fmtInt(tscPlain.versionMs)} ms | — | measured |`,
    );
    L.push(
      `| Graceful stop: SIGTERM → schedule removed → exit, as deployed (median) | ${fmtInt(cold.stopMs)} ms (exit code ${cold.stopCodes.join(", ")}) | — | < shutdownTimeout (5 s) | ${verdict(cold.stopMs < 5000 && cold.stopCodes.every((c) => c === 0))} |`,
    );
  } else L.push(`| Start → protected | not measured: ${cold.error} | | | not measured |`);

  if (steady.ok) {
    L.push(
      `| Resident memory after ${fmt(steady.aliveMs / 1000, 0)} s at the default cadence (15 s interval, 60 s deadline, exposure every 30 s, health server on), as deployed | ${fmt(steady.rssMiB)} MiB (peak ${fmt(steady.peakMiB)} MiB) | bare \`node\`: ${fmt(steady.bareRssMiB)} MiB | ≤ ${CEILING_RSS_MIB} MiB | ${verdict(steady.rssMiB <= CEILING_RSS_MIB)} |`,
    );
    L.push(
      `| CPU per hour at the default cadence, as deployed (all threads, /proc/PID/task/*/schedstat, from ${fmt(STARTUP_MS / 1000, 0)} s after the spawn to the end of the window, ${fmt(steady.windowMs / 1000, 1)} s, ×${fmt(3600_000 / steady.windowMs, 1)}; ${steady.heartbeats} confirmed pushes, ${steady.failures} failures) | ${fmt(steady.cpuSecPerHour, 2)} s/h | bare idle \`node -e "setInterval(()=>{},1000)"\`: ${fmt(steady.bareCpuSecPerHour, 2)} s/h | ≤ ${CEILING_CPU_S_PER_H} s/h | ${verdict(steady.cpuSecPerHour <= CEILING_CPU_S_PER_H)} |`,
    );
    const p = steady.plain;
    L.push(
      `| The same daemon without node flags, side by side in the same window (${p.heartbeats} confirmed pushes, ${p.failures} failures) | ${fmt(p.rssMiB)} MiB (peak ${fmt(p.peakMiB)} MiB); ${fmt(p.cpuSecPerHour, 2)} s/h | the same bare \`node\` | (≤ ${CEILING_RSS_MIB} MiB, ≤ ${CEILING_CPU_S_PER_H} s/h) | ${p.rssMiB <= CEILING_RSS_MIB && p.cpuSecPerHour <= CEILING_CPU_S_PER_H ? "within" : "over"} |`,
    );
  } else
    L.push(`| Memory and CPU at the default cadence | not measured: ${steady.error} | | | not measured |`);

  if (signing.ok) {
    L.push(
      `| Signing one \`scheduleCancel\` (the public \`signL1Action\`, a fresh process; median of 3 processes), as deployed | first ${fmt(signing.deployed.firstMs)} ms, then ${fmt(signing.deployed.medianMs, 2)} ms each (median of 200) | without node flags: first ${fmt(signing.plain.firstMs)} ms, then ${fmt(signing.plain.medianMs, 2)} ms each | — | measured |`,
    );
  } else L.push(`| Signing | not measured: ${signing.error} | | | not measured |`);

  if (exposure.ok) {
    const x = exposure.raw;
    const q = exposure.plain;
    L.push(
      `| Exposure, 1,000 accounts: derive + log + metrics per cycle (CPU), as deployed | in a poll (poll ${fmt(x.cpuMsPerCycle)} ms − fetch): ${fmt(x.deriveLogMetricsCpuMs)} ms; alone, unchanged values: ${fmt(x.reportUnchangedCpuMs)} ms; alone, every value changed: ${fmt(x.reportChangedCpuMs)} ms; heap growth over ${x.cycles} cycles: ${fmt(x.heapGrowthBytes / 1024)} KiB | the InfoClient fetch alone (HTTP + JSON + zod), same flags: ${fmt(x.fetchOnlyCpuMs)} ms | — | ${fmt(Math.max(x.deriveLogMetricsCpuMs, x.reportChangedCpuMs) / x.fetchOnlyCpuMs, 2)}× the fetch at worst |`,
    );
    L.push(
      `| The same without node flags | in a poll: ${fmt(q.deriveLogMetricsCpuMs)} ms; unchanged: ${fmt(q.reportUnchangedCpuMs)} ms; every value changed: ${fmt(q.reportChangedCpuMs)} ms; heap growth ${fmt(q.heapGrowthBytes / 1024)} KiB | the fetch alone, without flags: ${fmt(q.fetchOnlyCpuMs)} ms | — | ${fmt(Math.max(q.deriveLogMetricsCpuMs, q.reportChangedCpuMs) / q.fetchOnlyCpuMs, 2)}× the fetch at worst |`,
    );
  } else L.push(`| Exposure of 1,000 accounts | not measured: ${exposure.error} | | | not measured |`);

  if (simulator.ok) {
    L.push(
      `| Simulator: verified \`scheduleCancel\` actions per second (${fmtInt(simulator.requests)} pre-signed, keep-alive, ${simulator.concurrency} in flight; median of ${simulator.rounds} rounds: ${simulator.roundsPerCpuSec.map(fmtInt).join(", ")}/s per CPU-second) | ${fmtInt(simulator.perSec)}/s wall, ${fmtInt(simulator.perCpuSec)}/s per second of simulator CPU (${fmtInt(simulator.simCpuUsPerAction)} µs each); ${simulator.accepted} accepted, ${simulator.refused} refused in all | — | — | measured |`,
    );
  } else L.push(`| Simulator verified actions/s | not measured: ${simulator.error} | | | not measured |`);

  if (npmStart.ok)
    L.push(
      `| \`npm start\` → first \`heartbeat.ok\`, a second start after \`npm ci\` (median of ${npmStart.samples.length}) | ${fmtInt(npmStart.ms)} ms${npmStart.rebuilt ? " (REBUILT dist/)" : ", no rebuild"} | — | no rebuild when dist/ is current | ${verdict(!npmStart.rebuilt)} |`,
    );
  else L.push(`| \`npm start\` → first heartbeat | not measured: ${npmStart.error} | | | not measured |`);
  L.push("");

  if (modules.ok && modules.rows.length) {
    L.push(
      `## Resident memory of a fresh node process (\`node ${modules.flags.join(" ")}\`) after loading one dependency, then a GC`,
    );
    L.push("");
    L.push("| What is loaded | RSS | over bare node |");
    L.push("|---|---|---|");
    const bare = modules.rows[0]?.rssMiB ?? 0;
    for (const r of modules.rows)
      L.push(`| ${r.name} | ${fmt(r.rssMiB)} MiB | +${fmt(r.rssMiB - bare)} MiB |`);
    const row = (name) => modules.rows.find((r) => r.name.startsWith(name))?.rssMiB;
    const got = row("got");
    const gotCron = row("got, then node-cron");
    L.push("");
    L.push(
      `node-cron computes each date through an \`Intl.DateTimeFormat\`, and a process's first Intl object maps ICU's data; got (through @sindresorhus/is) builds an \`Intl.ListFormat\` when it is loaded, so in the daemon ICU's data is mapped before node-cron's first date and node-cron with its job adds ${fmt(gotCron - got)} MiB on top of got. The dependencies run as published (no build step rewrites them).`,
    );
    L.push("");
  }

  for (const x of STANDALONE) L.push(standaloneBlock(x, standalone[x.name]));

  L.push("## Method");
  L.push("");
  L.push(
    ...[
      "- **As deployed**: with the node flags of the systemd unit's `ExecStart=`, read through",
      "  test/deploy/deployments.ts, which also reads pm2's `node_args` and the image's `ENTRYPOINT`; the bench stops if",
      "  they disagree (the heap cap aside). The simulator runs in its own process (bench/sim-server.mjs).",
      '- **Start → protected**: spawn → first stdout line with `"event":"heartbeat.ok"` of `node <flags> <cli> run',
      "  --api-url <sim> --state-dir <fresh tmp> --health 127.0.0.1:0` (key in `HL_PRIVATE_KEY`), for the bundle",
      "  (dist/bin/hl-deadman.js) and for tsc's own output of the same sources, unbundled (compiled by the bench into a",
      "  temporary directory beside a link to node_modules), with the deployed flags and without; `--version` spawn →",
      "  exit alike. Runs interleaved in a rotating order; medians. CPU = time on CPU of all the process's threads at",
      "  that line (/proc/PID/task/*/schedstat). Graceful stop: SIGTERM → exit of the bundle as deployed.",
      "- **Memory and CPU**: the same daemon command at the default cadence, with the deployed flags and without them,",
      '  side by side, next to `node -e "setInterval(()=>{},1000)"` started at the same moment; VmRSS from',
      "  /proc/PID/status at the end of the window; CPU from schedstat (ns) from 30 s after the spawn (start-up,",
      "  V8's memory reducer's one-off full collections included, excluded) to the end of the window, extrapolated to",
      "  one hour.",
      "- **Signing**: bench/signing.mjs in a fresh process: the first `signL1Action` of a `scheduleCancel` (what the first",
      "  push pays), then the median of 200 more; three processes per flag set, medians.",
      "- **Exposure**: bench/exposure.mjs, with the deployed flags and without: 1,000 accounts against the simulator in a",
      "  child process; CPU via `process.cpuUsage`; the fetch alone is `InfoClient.batchClearinghouseStates` (HTTP + JSON",
      "  + zod); derive + log + metrics is a full poll minus the fetch, and also the reporter alone on one fetch's states",
      "  (unchanged values) and alternating with a copy whose every decimal differs; heap after `gc()` across 100 cycles.",
      "- **Simulator**: 6,200 requests signed up front through `signL1Action` by a registered user; 200 sent first as a",
      "  warm-up, then three rounds of 2,000 over a keep-alive agent with 16 in flight; each round's rate counts",
      '  `{"status":"ok"}` answers over wall time and over the simulator\'s CPU time (schedstat); the median round.',
      "- **npm start**: `npm start` (prestart = `node scripts/build.mjs --if-stale`, then `hl-deadman run --sim`) with",
      "  dist/ current, spawn → first `heartbeat.ok` line; it must not rebuild.",
    ],
  );
  L.push("");
  L.push("## Raw figures");
  L.push("");
  L.push("```json");
  L.push(
    JSON.stringify({ npmStart, signing, cold, steady, simulator, exposure, modules, ...standalone }, null, 2),
  );
  L.push("```");
  L.push("");
  return L.join("\n");
}

/**
 * A section with a heading of its own, between its markers. A section whose figures do not say where they were
 * measured gets the machine line of this run after its heading (kill and host-death carry their own).
 */
function standaloneBlock(x, result, m) {
  let text = x.renderFn(result).replace(/\n+$/, "");
  if (m && result?.ok && !result.machine) {
    const [heading, ...rest] = text.split("\n");
    text = [
      heading,
      "",
      `Refreshed alone (\`npm run bench -- ${x.name}\`) on ${m.date}: ${m.cpu}, ${m.cores} cores (shared with other work), Node.js ${m.node}; load average ${m.loadStart} at the start, ${m.loadEnd} at the end.`,
      ...rest,
    ].join("\n");
  }
  return `<!-- bench:${x.name} -->\n${text}\n<!-- /bench:${x.name} -->\n`;
}

/**
 * `md` with section `x` replaced by `block`: between its markers; else from its heading (a file written before the
 * markers) to the next heading; else inserted before "## Method" (or at the end).
 */
function replaceSection(md, x, block) {
  const open = `<!-- bench:${x.name} -->`;
  const close = `<!-- /bench:${x.name} -->`;
  const a = md.indexOf(open);
  const b = md.indexOf(close);
  if (a >= 0 && b > a) {
    const end = md.indexOf("\n", b);
    return md.slice(0, a) + block + md.slice(end < 0 ? md.length : end + 1);
  }
  const heading = block.split("\n")[1];
  const lines = md.split("\n");
  const h = lines.indexOf(heading);
  if (h >= 0) {
    let e = lines.findIndex((l, i) => i > h && (l.startsWith("## ") || l.startsWith("<!-- bench:")));
    if (e < 0) e = lines.length;
    return [...lines.slice(0, h), block, ...lines.slice(e)].join("\n");
  }
  const method = lines.indexOf("## Method");
  if (method < 0) return `${md.replace(/\n*$/, "\n\n")}${block}`;
  return [...lines.slice(0, method), block, ...lines.slice(method)].join("\n");
}

// ---------------------------------------------------------------------------------------------------------
const started = performance.now();
const m = machine();
log(`machine: ${m.cpu}, ${m.cores} cores, Node ${m.node}; deployed flags: ${DEPLOYED_FLAGS.join(" ")}`);
const notRun = { ok: false, error: "not run (--only)" };
const npmStart = wanted("npm-start") ? await section("npm start", benchNpmStart) : notRun;
let sim;
const needSim = ["cold", "memory", "simulator"].some(wanted);
const simStart = needSim
  ? await section("simulator start", async () => {
      sim = await startSimChild();
      return {};
    })
  : notRun;
const noSim = { ok: false, error: `simulator did not start: ${simStart.error}` };
const inSim = (name, title, fn) => (!wanted(name) ? notRun : sim ? section(title, () => fn(sim)) : noSim);
const cold = await inSim("cold", "start → protected", benchColdStart);
const steady = await inSim("memory", "memory and CPU window", benchSteadyState);
const simulator = await inSim("simulator", "simulator throughput", benchSimulator);
if (sim) await sim.close();
const signing = wanted("signing") ? await section("signing", benchSigning) : notRun;
const exposure = wanted("exposure") ? await section("exposure", benchExposure) : notRun;
const modules = wanted("modules") ? await section("import cost", benchModuleCost) : notRun;
const standalone = {};
for (const x of STANDALONE)
  standalone[x.name] = wanted(x.name)
    ? await section(x.title, () =>
        x.benchFn({
          root: ROOT,
          cli: CLI,
          flags: DEPLOYED_FLAGS,
          log,
          scale: Number(process.env.BENCH_CANCEL_SCALE ?? 1),
        }),
      )
    : notRun;
m.loadEnd = loadAverage();
if (ONLY !== null) {
  // A partial run: the chosen sections that have a heading of their own are rewritten in place in BENCHMARKS.md,
  // each with the machine it ran on; the rows of the Results table are measured together (a full run) and are only
  // printed here.
  const table = TABLE.filter(wanted);
  if (table.length)
    log(`${table.join(", ")}: rows of the Results table, printed only (a full run writes them)`);
  console.log(JSON.stringify({ m, signing, npmStart, cold, steady, simulator, exposure, modules }, null, 2));
  const chosen = STANDALONE.filter((x) => wanted(x.name));
  // the raw figures of the rewritten sections (the full run keeps them under "Raw figures")
  console.log(JSON.stringify(Object.fromEntries(chosen.map((x) => [x.name, standalone[x.name]])), null, 2));
  if (chosen.length) {
    let md = existsSync(OUT) ? readFileSync(OUT, "utf8") : "# Benchmarks\n\n## Method\n";
    for (const x of chosen) {
      const block = standaloneBlock(x, standalone[x.name], m);
      md = replaceSection(md, x, block);
      console.log(block);
    }
    writeFileSync(OUT, md);
    log(
      `rewrote ${chosen.map((x) => x.name).join(", ")} in ${path.relative(ROOT, OUT)} in ${fmt((performance.now() - started) / 1000)} s`,
    );
  }
} else {
  const md = render({ m, signing, cold, steady, modules, simulator, exposure, npmStart, standalone });
  writeFileSync(OUT, md);
  log(`wrote ${path.relative(ROOT, OUT)} in ${fmt((performance.now() - started) / 1000)} s`);
  console.log(md);
}
