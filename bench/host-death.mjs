// A host's death (issue 41; a section of bench/run.mjs: `npm run bench -- host-death`): N accounts whose engines
// are held by ONE load process (bench/fleet-engines.mjs), each account resting three orders and a reduce-only stop,
// all engines dying at once (the load process SIGKILLed: every connection closes together), against the simulator
// at its per-IP weight limit (1,200 a minute, the exchange's; bench/fleet-sim.mjs, whose 429 answers are counted).
// Per row the interval is the shortest of a list of candidates that the plan ACCEPTS on the official API: `hl-deadman
// config check` accepts it (the steady spend) and the death room fits (src/config/weight.ts `deathRoom`, which the
// daemon only warns about against the simulator, a non-official host, and refuses on the official API); a row no
// interval makes acceptable is recorded as refused, with the plan's words. The connection guard's engines announce
// their orders (guard protocol 2) and the configuration says so (`guardAnnouncedOrders`). The figure per account: the death → the last of its orders that is not a reduce-only stop
// cancelled, as the simulator records it (statusTimestamp, its wall clock), or never (counted, and the orders a
// fired trigger took are counted as the trigger's). Percentiles over every account's kill of every run.
// A run ends once every order is gone and every account's pass answered (or the deadline + 15 s passed); a pass that
// fell back is given 7 s more (its 5 s schedule fires). The engines then come back at once, and a run that spent more
// than 200 weight is followed by a minute without deaths, so that the next death finds the IP's minute as a death
// would.
// Knobs: BENCH_HOST_DEATH_RUNS (default 3), BENCH_HOST_DEATH_ROWS (default 1,10,100,300),
// BENCH_GUARD_MAX_CONNECTIONS (default 64: the daemon's cap today; accounts per connection = ceil(N / it)),
// BENCH_HOST_DEATH_PARALLEL (default 1: the rows of N >= 100, which mostly wait for the IP's weight, run at the same
// time, each with its own simulator and daemon; 0: one after the other).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { f0, fleetOf, machineLine, pct, RESTING, STOP, sleep, startFleetSim, waitExit } from "./fleet.mjs";

const CANDIDATES = ["1s", "2s", "3s", "5s", "10s", "15s", "20s", "30s", "45s", "60s", "2m", "5m"];
const ms = (d) => Number.parseFloat(d) * (d.endsWith("m") ? 60_000 : 1_000);
/** The deadline each interval runs with: the default minute, or three intervals when longer. */
const deadlineOf = (interval) => `${Math.max(60, (3 * ms(interval)) / 1000)}s`;

function configFor(fleet, guard, interval, g) {
  return fleet.config({
    interval,
    deadline: deadlineOf(interval),
    // the reads a fleet slows (docs/operations.md, "The IP's weight"): the pushes and the death's passes are what
    // the row measures
    exposureInterval: 0,
    budgetInterval: 0,
    onEngineDown: "cancel",
    ...(guard === "socket"
      ? { guardSocket: g.socket, guardAnnouncedOrders: true }
      : { guardFile: g.file, guardMaxAge: "300ms", guardInterval: "100ms" }),
  });
}

/**
 * The shortest candidate interval the plan accepts on the official API: `config check` accepts it, and the death
 * room fits (read with the daemon's own code, dist/config/weight.js, on the configuration as loaded); or the
 * refusal of the longest.
 */
async function shortestInterval({ root, cliPath, fleet, guard, g, dir, env }) {
  const { loadConfig } = await import(pathToFileURL(path.join(root, "dist/config/load.js")).href);
  const { deathRoom } = await import(pathToFileURL(path.join(root, "dist/config/weight.js")).href);
  let last = "";
  for (const interval of CANDIDATES) {
    const file = path.join(dir, `check-${interval}.json`);
    writeFileSync(file, JSON.stringify(configFor(fleet, guard, interval, g)));
    const r = spawnSync(process.execPath, [cliPath, "config", "check", "--config", file, "--json"], {
      env,
      encoding: "utf8",
    });
    if (r.status !== 0) {
      last = `${(r.stderr || r.stdout).replace(/\s+/g, " ").trim().slice(0, 400)} (exit ${r.status})`;
      continue;
    }
    const room = deathRoom(loadConfig({ options: { config: file }, env: {}, cwd: dir }).config);
    if (room === null || room.fits) return { interval, room };
    last = `at ${interval}: ${room.arithmetic}: no room (only ${room.afforded} of ${room.accounts} passes fit)`;
  }
  return { refused: last };
}

/** A child's stdout as lines awaited one at a time. */
function linesOf(child) {
  const queue = [];
  const waiting = [];
  createInterface({ input: child.stdout }).on("line", (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else queue.push(l);
  });
  child.once("exit", (c) => {
    for (const w of waiting.splice(0)) w(`exit ${c}`);
  });
  return () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r)));
}

async function runRow({ root, cliPath, flags, n, guard, runs, maxConnections, log }) {
  const fleet = await fleetOf(`host-death ${n}`, n);
  const dir = mkdtempSync(path.join(os.tmpdir(), "hl-bench-host-"));
  const g = { socket: path.join(dir, "guard.sock"), file: path.join(dir, "alive") };
  const env = { ...process.env, ...fleet.env, NODE_OPTIONS: "", HL_HEALTH: "127.0.0.1:0" };
  const plan = await shortestInterval({ root, cliPath, fleet, guard, g, dir, env });
  if (plan.refused) {
    rmSync(dir, { recursive: true, force: true });
    log(`host-death ${guard} N=${n}: refused: ${plan.refused}`);
    return { n, guard, refused: plan.refused };
  }
  const { interval, room } = plan;
  const per = Math.max(1, Math.ceil(n / maxConnections));
  const config = path.join(dir, "config.json");
  writeFileSync(config, JSON.stringify(configFor(fleet, guard, interval, g)));
  const sim = await startFleetSim(root, { seed: 41, users: fleet.users, demo: false }); // the 1,200-a-minute limit on
  const started = performance.now();
  let daemon;
  let engines;
  const kills = [];
  let never = 0;
  let byTrigger = 0;
  const tally = { triggers: 0, limited: 0, weight: 0, fallbacks: 0, retries: 0, failed: {} };
  const answeredIn = []; // per run: the death → the last account's pass answered (ms)
  let nextLine;
  const startEngines = async () => {
    engines = spawn(
      process.execPath,
      guard === "socket"
        ? [
            path.join(root, "bench/fleet-engines.mjs"),
            "socket",
            g.socket,
            String(per),
            fleet.accounts.join(","),
          ]
        : [path.join(root, "bench/fleet-engines.mjs"), "file", g.file],
      { cwd: root, env: { ...process.env, NODE_OPTIONS: "" }, stdio: ["pipe", "pipe", "inherit"] },
    );
    nextLine = linesOf(engines);
    const line = await nextLine();
    if (line !== "up") throw new Error(`the engines were not taken: ${line}`);
  };
  try {
    if (guard === "file") await startEngines();
    daemon = spawn(
      process.execPath,
      [
        ...flags,
        cliPath,
        "run",
        "--config",
        config,
        "--api-url",
        sim.apiUrl,
        "--state-dir",
        path.join(dir, "state"),
      ],
      {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    daemon.stderr.on("data", (d) => {
      stderr = (stderr + d).slice(-1500);
    });
    const armed = new Set();
    // each account's pass answered since the death: the first engine.orders_cancelled or engine.cancel_failed
    let answered = new Map();
    createInterface({ input: daemon.stdout }).on("line", (l) => {
      const e = /"event":"([^"]+)"/.exec(l)?.[1];
      if (!e) return;
      const a = /"account":"(0x[0-9a-f]{40})"/.exec(l)?.[1];
      if (e === "heartbeat.ok") {
        if (a) armed.add(a);
      } else if ((e === "engine.orders_cancelled" || e === "engine.cancel_failed") && a && !answered.has(a)) {
        answered.set(a, { at: Date.now(), e });
        if (e === "engine.cancel_failed") {
          const reason = /"reason":"([^"]+)"/.exec(l)?.[1] ?? "?";
          if (reason === "weight_unaffordable") tally.fallbacks++;
          else tally.failed[reason] = (tally.failed[reason] ?? 0) + 1;
        }
      } else if (e === "engine.cancel_retry") tally.retries++;
    });
    const armedBy = performance.now() + ms(interval) + 60_000;
    while (armed.size < n) {
      if (performance.now() > armedBy || daemon.exitCode !== null)
        throw new Error(`${armed.size} of ${n} accounts armed: ${stderr.slice(-300)}`);
      await sleep(100);
    }
    // a start reads every account's record (20 or more each: 2,000 at 100 accounts, more than the IP's minute): a
    // death right after it is another question; the first death waits until the start's weight left the minute
    if (n >= 100) await sleep(61_000);
    for (let run = 0; run < runs; run++) {
      if (guard === "socket" && run === 0) await startEngines();
      await sleep(500); // the guard counts the engines up
      await sim.ask({ op: "place", accounts: fleet.accounts, orders: [...RESTING, STOP] });
      const open = await sim.ask({ op: "open", accounts: fleet.accounts });
      const targets = new Map(); // oid → account, the orders that are not reduce-only stops
      for (const [a, xs] of Object.entries(open)) for (const o of xs) if (!o.stop) targets.set(o.oid, a);
      if (guard === "socket") {
        // the engines announce what rests (guard protocol 2), as an engine does after each change of its orders
        const announced = Object.fromEntries(
          Object.entries(open).map(([a, xs]) => [
            a,
            xs.map((o) => ({ oid: o.oid, asset: o.asset, trigger: o.trigger, reduceOnly: o.reduceOnly })),
          ]),
        );
        engines.stdin.write(`${JSON.stringify(announced)}\n`);
        const said = await nextLine();
        if (said !== "announced") throw new Error(`the engines did not announce: ${said}`);
      }
      await sleep(150 + Math.random() * 100);
      const before = await sim.ask({ op: "counters", accounts: fleet.accounts });
      answered = new Map();
      engines.kill("SIGKILL");
      const death = Date.now();
      const giveUp = performance.now() + ms(deadlineOf(interval)) + 15_000;
      for (;;) {
        const now = await sim.ask({ op: "open", accounts: fleet.accounts });
        const left = Object.values(now)
          .flat()
          .filter((o) => targets.has(o.oid)).length;
        if ((left === 0 && answered.size >= n) || performance.now() > giveUp) break;
        await sleep(250);
      }
      const lastAnswer = Math.max(death, ...[...answered.values()].map((x) => x.at));
      answeredIn.push(answered.size >= n ? lastAnswer - death : Number.NaN);
      // a pass that fell back: its 5 s schedule fires (the trigger it costs is counted)
      if ([...answered.values()].some((x) => x.e === "engine.cancel_failed")) await sleep(7_000);
      await waitExit(engines, 2_000);
      const after = await sim.ask({ op: "counters", accounts: fleet.accounts });
      const ended = await sim.ask({ op: "ended", accounts: fleet.accounts, since: death - 1 });
      const last = new Map();
      const fired = new Set(fleet.accounts.filter((a) => after.triggers[a] > before.triggers[a]));
      for (const e of ended) {
        const a = targets.get(e.oid);
        if (!a) continue;
        last.set(a, Math.max(last.get(a) ?? 0, e.at));
      }
      for (const a of fleet.accounts) {
        const gone = ended.filter((e) => targets.get(e.oid) === a).length;
        const had = [...targets.values()].filter((x) => x === a).length;
        if (gone < had) never++;
        else if (fired.has(a)) byTrigger++;
        if (gone === had) kills.push(last.get(a) - death);
      }
      tally.triggers +=
        fired.size === 0
          ? 0
          : Object.keys(after.triggers).reduce((s, a) => s + after.triggers[a] - before.triggers[a], 0);
      tally.limited += after.limited - before.limited;
      tally.weight += after.weight - before.weight;
      log(
        `host-death ${guard} N=${n} run ${run}: p99 so far ${f0(pct(kills, 99))} ms, triggers ${tally.triggers}, 429 ${tally.limited}, fallbacks ${tally.fallbacks}, answered ${answered.size}/${n} in ${f0(answeredIn.at(-1))} ms`,
      );
      if (run < runs - 1) {
        // the engines back at once (their accounts' passes repeated each interval while down stop), then the next
        // death finds the IP's minute as a death would: a heavy run's weight leaves the window first
        await startEngines();
        if (after.weight - before.weight > 200) await sleep(61_000);
      }
    }
  } finally {
    engines?.kill("SIGKILL");
    if (daemon) {
      daemon.kill("SIGTERM");
      await waitExit(daemon, 10_000);
    }
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    n,
    guard,
    interval,
    per,
    runs,
    kills: kills.length,
    p50: pct(kills, 50),
    p99: pct(kills, 99),
    max: kills.length ? Math.max(...kills) : Number.NaN,
    never,
    byTrigger,
    answeredMax: answeredIn.some(Number.isNaN) ? Number.NaN : Math.max(...answeredIn),
    reserve: room?.reserve,
    available: room?.available,
    ...tally,
    seconds: (performance.now() - started) / 1000,
  };
}

export async function benchHostDeath({ root, cli: cliPath, flags, log }) {
  const started = performance.now();
  const machine = await machineLine();
  const runs = Number(process.env.BENCH_HOST_DEATH_RUNS ?? 3);
  const ns = (process.env.BENCH_HOST_DEATH_ROWS ?? "1,10,100,300").split(",").map(Number);
  const maxConnections = Number(process.env.BENCH_GUARD_MAX_CONNECTIONS ?? 64);
  const parallel = process.env.BENCH_HOST_DEATH_PARALLEL !== "0";
  const row = async (n, guard) => {
    try {
      return await runRow({ root, cliPath, flags, n, guard, runs, maxConnections, log });
    } catch (error) {
      log(`host-death ${guard} N=${n}: FAILED: ${error?.stack ?? error}`);
      return {
        n,
        guard,
        error: String(error?.message ?? error)
          .split("\n")[0]
          .slice(0, 300),
      };
    }
  };
  const all = ns.flatMap((n) => ["socket", "file"].map((guard) => ({ n, guard })));
  const results = new Map();
  for (const r of all.filter((r) => !parallel || r.n < 100)) results.set(r, await row(r.n, r.guard));
  const heavy = all.filter((r) => parallel && r.n >= 100);
  await Promise.all(heavy.map(async (r) => results.set(r, await row(r.n, r.guard))));
  const rows = all.map((r) => results.get(r));
  return { machine, runs, rows, parallel, seconds: (performance.now() - started) / 1000 };
}

const GUARDS = {
  socket:
    "connection guard (`guardSocket`), `onEngineDown: cancel`, engines announcing their orders (`guardAnnouncedOrders`)",
  file: "file guard at its fastest (`guardMaxAge 300ms`, `guardInterval 100ms`), `cancel`",
};

export function renderHostDeath(h) {
  const L = ["## A host's death: every account's orders cancelled, inside the IP's weight (issue 41)", ""];
  if (!h.ok) return [...L, `Not measured: ${h.error}`, ""].join("\n");
  L.push(h.machine, "");
  L.push(
    `N accounts (signers of up to 100: a master and its subaccounts) whose engines are held by one load process (bench/fleet-engines.mjs; the connection guard's connections name ceil(N / 64) accounts each, in guard protocol 2, and announce each account's orders after they are placed; the file guard's engines share one file), each account resting 3 orders and a reduce-only stop; the load process is SIGKILLed (every connection closes at once). The simulator runs in its own process at the exchange's per-IP limit (1,200 weight a minute, fixed windows; over it, 429). Interval: the shortest of ${CANDIDATES.join(", ")} that the plan accepts on the official API (\`hl-deadman config check\` accepts the steady spend, and the death room fits: against the simulator, a non-official host, the daemon only warns about it; exposure and budget polls off; deadline the default minute, or three intervals when longer); the row states the death room's reserve and the weight left for it. The daemon runs the passes of the deaths in risk order inside the weight left (src/fleet-death/). Per account: the death → the last of its orders that is not a reduce-only stop cancelled, by the simulator's record (statusTimestamp); percentiles over every account of every run (${h.runs} runs a row). "Never": accounts whose orders were not all gone within the deadline + 15 s. "All answered": the death → the last account's pass answered (its confirming read included; the slowest run). Fallbacks: passes the weight could not afford, answered at once with \`engine.cancel_failed\` \`weight_unaffordable\` (each costs a trigger). Triggers: scheduled cancels that fired during the runs (the orders they took count in the percentiles). 429 answers and weight: as the simulator counted them from each death to the end of its wait (the daemon's pushes in that time included). A run ends once every order is gone and every pass answered; the engines then come back at once (the passes repeated each interval for a dead engine stop) and a run that spent more than 200 weight is followed by a minute without deaths, and at N ≥ 100 the first death comes a minute after every account was armed (the start's record reads, 20 or more an account, fill the IP's minute).${h.parallel ? " The rows of N ≥ 100 ran at the same time (each its own simulator, daemon and load process: they mostly wait for the IP's weight)." : ""} Section run time ${f0(h.seconds)} s.`,
  );
  L.push("");
  L.push(
    "| N | guard | interval (the plan's reserve / weight left) | p50 | p99 | max | never | all answered | fallbacks | triggers spent | 429 answers | weight spent | row time |",
  );
  L.push("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of h.rows) {
    const guard = GUARDS[r.guard];
    if (r.refused)
      L.push(
        `| ${r.n} | ${guard} | refused by the plan: ${r.refused.replace(/\|/g, "/")} | | | | | | | | | | |`,
      );
    else if (r.error)
      L.push(`| ${r.n} | ${guard} | | FAILED: ${r.error.replace(/\|/g, "/")} | | | | | | | | | |`);
    else
      L.push(
        `| ${r.n} | ${guard} | ${r.interval}${r.guard === "socket" ? ` (${r.per} per connection)` : ""}${r.reserve !== undefined ? `, ${f0(r.reserve)} / ${f0(r.available)}` : ""} | ${f0(r.p50)} ms | ${f0(r.p99)} ms | ${f0(r.max)} ms | ${r.never} | ${Number.isNaN(r.answeredMax) ? "not all" : `${f0(r.answeredMax)} ms`} | ${r.fallbacks} | ${r.triggers} | ${r.limited} | ${f0(r.weight)} | ${f0(r.seconds)} s |`,
      );
  }
  L.push("");
  L.push(
    "Goals (issue 41): at N = 10, p99 ≤ 1,000 ms and 0 triggers; at 100 and 300, 0 triggers wherever the plan accepted the configuration.",
  );
  L.push("");
  for (const r of h.rows) {
    const why = missOf(r);
    if (why) L.push(`- ${why}`);
  }
  L.push("");
  return L.join("\n");
}

/** Why a measured row misses its goal, in the row's own measurements (null when it meets it or has no goal). */
export function missOf(r) {
  if (r.refused || r.error || r.interval === undefined) return null;
  const goal = r.n === 10 ? r.p99 <= 1_000 && r.triggers === 0 : r.n >= 100 ? r.triggers === 0 : true;
  if (goal) return null;
  const deadline = ms(deadlineOf(r.interval)) / 1_000;
  return `N = ${r.n}, ${r.guard === "socket" ? "connection" : "file"} guard, missed (p99 ${f0(r.p99)} ms, ${r.triggers} triggers over ${r.runs} runs): the plan accepted ${r.interval} (deadline ${deadline} s) with a reserve of ${f0(r.reserve)} in ${f0(r.available)} left; the deaths took ${f0(r.weight / r.runs)} weight a run (${(r.weight / r.runs / r.n).toFixed(1)} an account, the pushes of that time included), drew ${f0(r.limited / r.runs)} answers 429 and ${r.retries} passes tried again over the runs, ${r.fallbacks} passes fell back for weight${
    Object.keys(r.failed ?? {}).length > 0
      ? `, ${Object.entries(r.failed)
          .map(([k, v]) => `${v} not confirmed (${k})`)
          .join(", ")}`
      : ""
  }${r.never ? `; ${r.never} account-kills were never completed in the wait` : ""}; the slowest run's last pass answered ${Number.isNaN(r.answeredMax) ? "never within the wait" : `${f0(r.answeredMax)} ms after the death`}.`;
}
