// The kill switch's benchmark (issue 39; a section of bench/run.mjs: `npm run bench -- kill`): `hl-deadman kill
// --account A` and `kill --all`, carried out by a running daemon through the control channel and alone when no
// daemon runs, against the simulator in its own process (bench/fleet-sim.mjs). Before each kill every account rests
// three orders and a reduce-only stop on each listed dex; the figure is the kill command's spawn to the last cancel
// as the simulator records it (each order's statusTimestamp, its wall clock on this machine), never a log line.
// After each kill the account is released with `hl-deadman reset` (not timed); alone, each kill has a fresh state
// directory instead (only a daemon carries out `reset`). Weight: what the simulator priced
// while the kill ran (a running daemon's own pushes in that window included; one push weighs 1).
// BENCH_KILL_RUNS (default 20) kills per row; BENCH_KILL_DEXES (comma-separated, default ",xyz": the first perp dex
// and the simulator's builder dex `xyz`, both listed with --dex)
// the dexes the orders rest on and the daemon lists, once the simulator knows builder dexes.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { f0, fleetOf, machineLine, pct, RESTING, STOP, sleep, startFleetSim, waitExit } from "./fleet.mjs";

const ACCOUNTS = 3;

function rows() {
  return [
    {
      key: "daemon-account",
      daemon: true,
      all: false,
      title: "`kill --account A`, through the running daemon",
    },
    {
      key: "daemon-all",
      daemon: true,
      all: true,
      title: `\`kill --all\` (${ACCOUNTS} accounts), through the running daemon`,
    },
    { key: "alone-account", daemon: false, all: false, title: "`kill --account A`, alone (no daemon runs)" },
    { key: "alone-all", daemon: false, all: true, title: `\`kill --all\` (${ACCOUNTS} accounts), alone` },
  ];
}

async function cli(root, cli, flags, args, env) {
  const started = performance.now();
  const child = spawn(process.execPath, [...flags, cli, ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const { code } = await waitExit(child, 60_000);
  return { code, out: out.slice(-1500), ms: performance.now() - started };
}

async function runRow({ root, cliPath, flags, row, runs, dexes, log }) {
  const fleet = await fleetOf(`kill ${row.key}`, ACCOUNTS);
  const sim = await startFleetSim(root, {
    seed: 39,
    users: fleet.users,
    ipWeightPerMinute: null,
    demo: false,
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), "hl-bench-kill-"));
  const config = path.join(dir, "config.json");
  writeFileSync(config, JSON.stringify(fleet.config({ exposureInterval: 0, budgetInterval: 0, dexes })));
  const env = { ...process.env, ...fleet.env, NODE_OPTIONS: "", HL_HEALTH: "127.0.0.1:0" };
  // alone, the kill signs with HL_PRIVATE_KEY (or --key-file): it does not read the config's signers' keyEnv
  if (!row.daemon) env.HL_PRIVATE_KEY = fleet.signers[0].wallet.privateKey;
  let common = ["--config", config, "--state-dir", path.join(dir, "state")];
  let daemon;
  const samples = [];
  const weights = [];
  const cancelled = [];
  let failures = 0;
  let lastError = "";
  try {
    if (row.daemon) {
      daemon = spawn(process.execPath, [...flags, cliPath, "run", ...common, "--api-url", sim.apiUrl], {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      daemon.stderr.resume();
      const armed = new Set();
      await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("the daemon did not arm every account in 30 s")), 30_000);
        createInterface({ input: daemon.stdout }).on("line", (l) => {
          const m = l.includes('"event":"heartbeat.ok"') && /"account":"(0x[0-9a-f]{40})"/.exec(l);
          if (m) armed.add(m[1]);
          if (armed.size >= ACCOUNTS) {
            clearTimeout(t);
            resolve();
          }
        });
        daemon.once("exit", (c) => reject(new Error(`the daemon exited (${c})`)));
      });
    }
    const targets = row.all ? fleet.accounts : [fleet.accounts[0]];
    const orders = dexes.flatMap((dex) => [...RESTING, STOP].map((o) => (dex ? { ...o, dex } : o)));
    for (let i = 0; i < runs; i++) {
      if (!row.daemon) {
        // alone, the kill latches the account in this state directory and only a daemon carries out `reset`: each
        // kill gets a fresh one (the kill refuses a directory that is not there)
        common = ["--config", config, "--state-dir", path.join(dir, `state-${i}`)];
        mkdirSync(path.join(dir, `state-${i}`), { mode: 0o700 });
      }
      // this kill's orders: what rests after placing them (a failed kill's leftovers are not counted again)
      const earlier = await sim.ask({ op: "open", accounts: targets });
      const old = new Set(Object.values(earlier).flatMap((xs) => xs.map((o) => o.oid)));
      await sim.ask({ op: "place", accounts: targets, orders });
      const open = await sim.ask({ op: "open", accounts: targets });
      const owner = new Map(
        Object.entries(open).flatMap(([a, xs]) => xs.filter((o) => !old.has(o.oid)).map((o) => [o.oid, a])),
      );
      const oids = new Set(owner.keys());
      await sleep(100 + Math.random() * 200); // a random phase against the daemon's timers
      const before = await sim.ask({ op: "counters", accounts: [] });
      const started = Date.now();
      const args = [
        "kill",
        ...(row.all ? ["--all"] : ["--account", targets[0]]),
        ...common,
        "--yes",
        "--json",
      ];
      const k = await cli(root, cliPath, flags, row.daemon ? args : [...args, "--api-url", sim.apiUrl], env);
      const after = await sim.ask({ op: "counters", accounts: [] });
      const ended = (await sim.ask({ op: "ended", accounts: targets, since: started })).filter((e) =>
        oids.has(e.oid),
      );
      const left = oids.size - ended.length;
      if (k.code !== 0 || left > 0) {
        failures++;
        const named = /"accounts":\[(.*)\]\}/.exec(k.out)?.[1]?.match(/"account":"0x/g)?.length ?? "?";
        const ended1 = new Set(ended.map((e) => e.oid));
        const untouched = new Set([...owner].filter(([o]) => !ended1.has(o)).map(([, a]) => a)).size;
        lastError = `exit ${k.code}; the kill's answer named ${named} of ${targets.length} accounts; ${left} of ${oids.size} orders left, on ${untouched} accounts`;
        log(`kill ${row.key} run ${i}: ${lastError}`);
      } else {
        samples.push(Math.max(...ended.map((e) => e.at)) - started);
        cancelled.push(ended.length);
        weights.push(after.weight - before.weight);
      }
      for (const a of row.daemon ? targets : []) {
        const r = await cli(root, cliPath, flags, ["reset", "--account", a, ...common, "--yes"], env);
        if (r.code !== 0) throw new Error(`reset ${a}: exit ${r.code}: ${r.out.slice(0, 300)}`);
      }
    }
  } finally {
    if (daemon) {
      daemon.kill("SIGTERM");
      await waitExit(daemon, 10_000);
    }
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const r = {
    key: row.key,
    title: row.title,
    runs: samples.length,
    failures,
    lastError,
    ordersPerKill: cancelled.length ? Math.max(...cancelled) : 0,
    p50: pct(samples, 50),
    p99: pct(samples, 99),
    max: samples.length ? Math.max(...samples) : Number.NaN,
    weightP50: pct(weights, 50),
    weightMax: weights.length ? Math.max(...weights) : Number.NaN,
  };
  log(
    `kill ${row.key}: p50 ${f0(r.p50)} ms, p99 ${f0(r.p99)} ms, max ${f0(r.max)} ms over ${r.runs}, ${failures} failed`,
  );
  return r;
}

/** The reference: `hl-deadman --version`, spawn → exit, with the same flags (what any command pays to start). */
async function versionMs(root, cliPath, flags) {
  const xs = [];
  for (let i = 0; i < 5; i++)
    xs.push((await cli(root, cliPath, flags, ["--version"], { ...process.env, NODE_OPTIONS: "" })).ms);
  return pct(xs, 50);
}

export async function benchKill({ root, cli: cliPath, flags, log }) {
  const started = performance.now();
  const machine = await machineLine();
  const runs = Number(process.env.BENCH_KILL_RUNS ?? 20);
  const dexes = (process.env.BENCH_KILL_DEXES ?? ",xyz").split(",");
  const results = [];
  for (const row of rows()) {
    try {
      results.push(await runRow({ root, cliPath, flags, row, runs, dexes, log }));
    } catch (error) {
      log(`kill ${row.key}: FAILED: ${error?.stack ?? error}`);
      results.push({ key: row.key, title: row.title, error: String(error?.message ?? error).split("\n")[0] });
    }
  }
  const reference = await versionMs(root, cliPath, flags);
  return { machine, runs, dexes, rows: results, reference, seconds: (performance.now() - started) / 1000 };
}

export function renderKill(kill) {
  const L = ["## The operator's kill switch: command → last cancel (issue 39)", ""];
  if (!kill.ok) return [...L, `Not measured: ${kill.error}`, ""].join("\n");
  L.push(kill.machine, "");
  L.push(
    `\`hl-deadman kill\` against the simulator (its own process, no weight limit here: the kill's own weight is the figure) with the deployed node flags. Before each kill each named account rests 3 orders and a reduce-only stop on each listed dex (${kill.dexes.map((d) => (d === "" ? '"" (the first perp dex)' : `"${d}"`)).join(", ")}); the figure is the kill's spawn to the last cancel as the simulator records it (the orders' statusTimestamp), over ${kill.runs} kills per row; every order, the stop included, must be cancelled or the kill counts as failed. Weight: what the simulator priced while the kill ran (exchange actions 1, reads by type), a running daemon's pushes in that window included. Reference: \`hl-deadman --version\`, spawn → exit, same flags: ${f0(kill.reference)} ms (what any command pays to start). Section run time ${f0(kill.seconds)} s.`,
  );
  L.push("");
  L.push("| kill | runs | orders per kill | p50 | p99 | max | weight per kill (p50 / max) | failed |");
  L.push("|---|---|---|---|---|---|---|---|");
  for (const r of kill.rows)
    L.push(
      r.error
        ? `| ${r.title} | | | FAILED: ${r.error} | | | | |`
        : `| ${r.title} | ${r.runs} | ${r.ordersPerKill} | ${f0(r.p50)} ms | ${f0(r.p99)} ms | ${f0(r.max)} ms | ${f0(r.weightP50)} / ${f0(r.weightMax)} | ${r.failures}${r.failures ? ` (last: ${r.lastError.replace(/\|/g, "/").slice(0, 160)})` : ""} |`,
    );
  L.push("");
  const aloneAll = kill.rows.find((r) => r.key === "alone-all");
  if (aloneAll?.failures)
    L.push(
      `\`kill --all\` alone missed: ${aloneAll.failures} of ${kill.runs} kills left orders (${aloneAll.lastError}). Alone, the command signs with one key (\`HL_PRIVATE_KEY\` or \`--key-file\`, src/cli/commands/control.ts \`killWithoutDaemon\`) and does not read the configuration's \`signers\` (here one signer, a master and two subaccounts), so \`--all\` takes the key's own account only, and the subaccounts' orders stay; its answer still says \`"ok": true\` and it exits 0. Through the daemon the same configuration is killed whole (the rows above).`,
      "",
    );
  L.push(
    "Every listed dex: each kill covers each dex named above (the daemon and the command list them with `--dex`); `BENCH_KILL_DEXES` changes the list (comma-separated; empty: the first perp dex only).",
  );
  L.push("");
  return L.join("\n");
}
