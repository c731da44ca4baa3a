/**
 * Two replicas through a real etcd (issue 30; docs/operations.md "High availability"): two daemons of the real CLI
 * (different state directories and health ports, two agent keys of the same master), the simulator, and an etcd of
 * their own on random ports. Killing the leader hands the lease to the follower within the TTL; a replica cut off
 * from etcd (through a TCP proxy) takes no gated action while the other does; a graceful stop of one leaves the
 * schedule armed by the other, and the stop of both removes it. Plus: a daemon without --coordinate never loads
 * etcd3 (a preload records what is required).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, type OnTestFinishedHandler, test } from "vitest";
import { electionName } from "../../src/replicas/candidacy.js";
import { startSimulator } from "../../src/sim/server.js";
import { cli } from "../helpers/cli.js";
import { type EtcdHandle, startEtcd } from "../helpers/etcd.js";
import { eventually } from "../helpers/eventually.js";
import { assertBuilt, baseEnv, runCliProcess, type SpawnedProcess, spawnCli } from "../helpers/process.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

const TTL_S = 5;
const CADENCE = [
  "--interval",
  "1s",
  "--deadline",
  "10s",
  "--request-timeout",
  "1s",
  "--exposure-interval",
  "0",
];
const agentA = new Wallet(id("hl-deadman coordination test: replica a"));
const agentB = new Wallet(id("hl-deadman coordination test: replica b"));

// One etcd for the file; each test has its own simulator (its own account: the tests run concurrently, and each
// checks the schedule, the removals and the drill of its account) and its own etcd prefix.
let etcd: EtcdHandle;

beforeAll(async () => {
  assertBuilt();
  etcd = await startEtcd();
}, 30_000);

afterAll(async () => {
  await etcd?.stop();
});

type World = Awaited<ReturnType<typeof world>>;

/**
 * A test's own simulator (the demo account as the master, both agents approved), its replicas and its TCP proxies,
 * all stopped when the test finishes (`onTestFinished`: the test context's own hook).
 */
async function world(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const sim = await startSimulator({ demo: true });
  const master = sim.demo!.address;
  sim.state.addAgent(agentA.address, master);
  sim.state.addAgent(agentB.address, master);
  const running: SpawnedProcess[] = [];
  const proxies: TcpProxy[] = [];
  onTestFinished(async () => {
    for (const p of running) {
      p.kill("SIGKILL");
      await p.exited;
    }
    for (const p of proxies) await p.close();
    await sim.close();
  });

  /** One replica: its own state directory and health port, the master's account, coordinated through `endpoint`. */
  function replica(
    agent: Wallet,
    endpoint: string,
    {
      prefix,
      extra = [],
      stateDir = mkdtempSync(path.join(tmpdir(), "hl-coord-")),
    }: { prefix: string; extra?: string[]; stateDir?: string },
  ): { d: SpawnedProcess; stateDir: string } {
    const d = spawnCli(
      [
        "run",
        "--api-url",
        sim.apiUrl,
        "--account",
        master,
        "--state-dir",
        stateDir,
        "--health",
        "127.0.0.1:0",
        ...CADENCE,
        "--coordinate",
        `etcd://${endpoint}/${prefix}`,
        "--coordinate-ttl",
        `${TTL_S}s`,
        ...extra,
      ],
      { HL_PRIVATE_KEY: agent.privateKey },
    );
    running.push(d);
    return { d, stateDir };
  }

  /** removals (scheduleCancel without a time) sent by `agent` since action `since` */
  const removalsBy = (agent: Wallet, since = 0) =>
    sim.state.actions
      .slice(since)
      .filter(
        (a) =>
          a.signer?.toLowerCase() === agent.address.toLowerCase() &&
          (a.action as { type?: string; time?: number }).type === "scheduleCancel" &&
          (a.action as { time?: number }).time === undefined,
      );
  return { sim, master, running, proxies, replica, removalsBy };
}

const has = (d: SpawnedProcess, event: string) => d.lines.some((l) => l.event === event);
/**
 * `hl-deadman replicas ...` against the test's etcd under `prefix`, in-process (its output and exit code are what
 * is checked; the daemons are the processes), with a stdin that is not a terminal, as a spawned command's.
 */
const replicasCli = (args: string[], prefix: string) =>
  cli(["replicas", ...args, "--coordinate", `etcd://${etcd.endpoint}/${prefix}`], {
    env: baseEnv(),
    stdin: Readable.from([]),
  });
type Listed = { id: string; state: string; live: boolean; replica: string | null };
const listed = async (prefix: string): Promise<Listed[]> => {
  const out = await replicasCli(["list", "--json"], prefix);
  expect(out.code, out.stderr).toBe(0);
  return (JSON.parse(out.stdout) as { members: Listed[] }).members;
};
const lastRole = (d: SpawnedProcess) =>
  d.lines
    .filter((l) => typeof l.event === "string" && /^coordination\.(leader|follower|lost)$/.test(l.event))
    .at(-1)?.event;

describe("the election's name", () => {
  test("behavior: the same account set meets in one election whatever the order or case; another set does not", () => {
    const a = "0x1111111111111111111111111111111111111111";
    const b = "0x2222222222222222222222222222222222222222";
    expect(electionName([a, b])).toBe(electionName([b.toUpperCase().replace("0X", "0x"), a, a]));
    expect(electionName([a])).not.toBe(electionName([a, b]));
    expect(electionName([a])).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe.concurrent("two replicas through etcd (process)", () => {
  test("behavior: kill -9 the leader → the follower holds the lease within the TTL; the pushes never stopped", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const a = w.replica(agentA, etcd.endpoint, { prefix: "kill" });
    const leader = await a.d.waitForEvent("coordination.leader", 15_000);
    expect(String(leader.token)).toMatch(/^\d+$/);
    await a.d.waitForEvent("heartbeat.ok", 10_000);
    const b = w.replica(agentB, etcd.endpoint, { prefix: "kill" });
    await b.d.waitForEvent("coordination.follower", 15_000);
    await b.d.waitForEvent("heartbeat.ok", 10_000);
    // the follower pushes too (never gated): its own heartbeats keep coming
    const health = String((await b.d.waitForEvent("health.listening", 5_000)).url);
    expect(await (await fetch(`${health}/metrics`)).text()).toMatch(/hl_deadman_coordination_leader 0/);
    a.d.kill("SIGKILL");
    await a.d.exited;
    // within the TTL (+ one poll of TTL / 4 and the election's watch): the bound of the wait is the assertion
    const won = await b.d.waitForEvent("coordination.leader", TTL_S * 1_000 + 2_500);
    expect(BigInt(String(won.token))).toBeGreaterThan(BigInt(String(leader.token)));
    expect(await (await fetch(`${health}/metrics`)).text()).toMatch(/hl_deadman_coordination_leader 1/);
    const status = (await (await fetch(`${health}/status.json`)).json()) as {
      coordination: { role: string; token: string };
    };
    expect(status.coordination).toMatchObject({ role: "leader", token: String(won.token) });
  }, 60_000);

  test("behavior: etcd partitioned from one replica → it says so (readyz, metric), the other takes the drill; no gated action twice", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const proxy = await startTcpProxy(etcd.port);
    w.proxies.push(proxy);
    const a = w.replica(agentA, `127.0.0.1:${proxy.port}`, { prefix: "partition" });
    await a.d.waitForEvent("coordination.leader", 15_000);
    const b = w.replica(agentB, etcd.endpoint, { prefix: "partition" });
    await b.d.waitForEvent("coordination.follower", 15_000);
    const healthA = String((await a.d.waitForEvent("health.listening", 5_000)).url);
    await a.d.waitForEvent("heartbeat.ok", 10_000);
    await b.d.waitForEvent("heartbeat.ok", 10_000);
    proxy.partition();
    await a.d.waitForEvent("coordination.lost", TTL_S * 1_000 + 5_000);
    await b.d.waitForEvent("coordination.leader", 2 * TTL_S * 1_000 + 5_000);
    // cut off, A still pushes (never gated) and says why it is not ready
    const pushes = a.d.lines.filter((l) => l.event === "heartbeat.ok").length;
    await eventually(() => a.d.lines.filter((l) => l.event === "heartbeat.ok").length > pushes, {
      timeoutMs: 5_000,
      what: "a push from the replica cut off from etcd",
    });
    const ready = await fetch(`${healthA}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain("coordination: etcd is unreachable");
    expect(await (await fetch(`${healthA}/metrics`)).text()).toMatch(/hl_deadman_coordination_lost 1/);
    // the same drill asked of both: only the lease holder carries it out
    const [atA, atB] = (await Promise.all(
      [a, b].map((r) =>
        runCliProcess(
          ["drill", "--account", w.master, "--state-dir", r.stateDir, "--yes", "--cancel-stops", "--json"],
          {},
          {
            timeoutMs: 40_000,
          },
        ),
      ),
    )) as [Awaited<ReturnType<typeof runCliProcess>>, Awaited<ReturnType<typeof runCliProcess>>];
    expect(atA.code).toBe(1);
    expect(atA.stderr).toContain("etcd is unreachable");
    expect(has(a.d, "drill.started")).toBe(false);
    expect(has(a.d, "drill.refused")).toBe(true);
    const started = await b.d.waitForEvent("drill.started", 5_000);
    expect(String(started.token)).toMatch(/^\d+$/);
    expect(atB.stderr).not.toContain("etcd is unreachable");
    // the token is in B's audit record of the drill
    const audit = readFileSync(path.join(b.stateDir, "audit", "audit.jsonl"), "utf8");
    expect(audit).toMatch(new RegExp(`drill\\.started.*"token":"${started.token}"`));
  }, 90_000);

  test("behavior: a graceful stop of one replica keeps the schedule armed by the other; the stop of both removes it", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const a = w.replica(agentA, etcd.endpoint, { prefix: "stop" });
    await a.d.waitForEvent("coordination.leader", 15_000);
    const b = w.replica(agentB, etcd.endpoint, { prefix: "stop" });
    await b.d.waitForEvent("coordination.follower", 15_000);
    await a.d.waitForEvent("heartbeat.ok", 10_000);
    await b.d.waitForEvent("heartbeat.ok", 10_000);
    a.d.kill("SIGTERM");
    expect((await a.d.exitWithin(10_000)).code).toBe(0);
    const kept = a.d.lines.find((l) => l.event === "shutdown.kept");
    expect(String(kept?.reason)).toContain("another replica is alive");
    expect(has(a.d, "shutdown.removed")).toBe(false);
    // still armed, and moved forward by B's pushes
    const armed = w.sim.state.getSchedule(w.master);
    expect(armed).not.toBeNull();
    await eventually(() => (w.sim.state.getSchedule(w.master) ?? 0) > armed!, {
      timeoutMs: 5_000,
      what: "the other replica's push moving the schedule",
    });
    b.d.kill("SIGTERM");
    expect((await b.d.exitWithin(10_000)).code).toBe(0);
    const removed = b.d.lines.find((l) => l.event === "shutdown.removed");
    // under the revision of the read that found no other candidate
    expect(String(removed?.token)).toMatch(/^\d+$/);
    expect(w.sim.state.getSchedule(w.master)).toBeNull();
  }, 60_000);

  test("behavior: both stopped at once → the schedule is removed (at least once)", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const a = w.replica(agentA, etcd.endpoint, { prefix: "both" });
    const b = w.replica(agentB, etcd.endpoint, { prefix: "both" });
    await a.d.waitForEvent("heartbeat.ok", 15_000);
    await b.d.waitForEvent("heartbeat.ok", 15_000);
    await eventually(
      () => [lastRole(a.d), lastRole(b.d)].sort().join() === "coordination.follower,coordination.leader",
      {
        timeoutMs: 15_000,
        what: "one leader and one follower",
      },
    );
    a.d.kill("SIGTERM");
    b.d.kill("SIGTERM");
    expect((await a.d.exitWithin(10_000)).code).toBe(0);
    expect((await b.d.exitWithin(10_000)).code).toBe(0);
    expect(has(a.d, "shutdown.removed") || has(b.d, "shutdown.removed")).toBe(true);
  }, 60_000);
});

describe.concurrent("a replica cut off from etcd, its lease expired (process; issue 40)", () => {
  /**
   * R1 through etcd directly, R2 through a proxy; the proxy cut until R2's lease expires on etcd (R1 then sees no
   * other candidate) while R2 keeps pushing. Returns once R1 has seen R2's candidacy go.
   */
  const cutOff = async (w: World, prefix: string) => {
    const proxy = await startTcpProxy(etcd.port);
    w.proxies.push(proxy);
    const r1 = w.replica(agentA, etcd.endpoint, { prefix });
    await r1.d.waitForEvent("coordination.leader", 15_000);
    const r2 = w.replica(agentB, `127.0.0.1:${proxy.port}`, { prefix });
    await r2.d.waitForEvent("coordination.follower", 15_000);
    await r1.d.waitForEvent("heartbeat.ok", 10_000);
    await r2.d.waitForEvent("heartbeat.ok", 10_000);
    await r1.d.waitForEvent("coordination.leader", 10_000, (l) => l.othersAlive === true);
    const r2Id = String((await r2.d.waitForEvent("coordination.start", 1_000)).member);
    expect(r2Id).toMatch(/^[0-9a-f]{16}$/);
    const from = r1.d.lines.length;
    proxy.partition();
    await r2.d.waitForEvent("coordination.lost", TTL_S * 1_000 + 5_000);
    // R2's lease expired on etcd: R1 counts no other candidate (said after the cut, not R1's first line)
    await eventually(
      () => r1.d.lines.slice(from).some((l) => l.event === "coordination.leader" && l.othersAlive === false),
      { timeoutMs: 2 * TTL_S * 1_000 + 5_000, what: "R1 seeing R2's candidacy expire" },
    );
    return { r1, r2, r2Id, proxy };
  };

  test("behavior: SIGTERM the other replica → shutdown.kept ('not marked stopped'), no removal; the cut-off one still pushes", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    w.sim.state.setSchedule(w.master, null);
    const since = w.sim.state.actions.length;
    const { r1, r2 } = await cutOff(w, "cutoff");
    // cut off, R2 still pushes (it must: it may be the only replica left)
    const pushes = r2.d.lines.filter((l) => l.event === "heartbeat.ok").length;
    await eventually(() => r2.d.lines.filter((l) => l.event === "heartbeat.ok").length > pushes, {
      timeoutMs: 5_000,
      what: "a push from the replica cut off from etcd",
    });
    r1.d.kill("SIGTERM");
    expect((await r1.d.exitWithin(10_000)).code).toBe(0);
    const kept = r1.d.lines.find((l) => l.event === "shutdown.kept");
    expect(String(kept?.reason)).toMatch(/is not marked stopped: its lease expired without a graceful stop/);
    expect(has(r1.d, "shutdown.removed")).toBe(false);
    // nothing removed: no removal ever left R1, and the simulator holds a schedule
    expect(w.removalsBy(agentA, since)).toHaveLength(0);
    expect(w.sim.state.getSchedule(w.master)).not.toBeNull();
    // R1's own membership says stopped; R2's still running (not live)
    const members = await listed("cutoff");
    expect(members.map((m) => [m.state, m.live]).sort()).toEqual([
      ["running", false],
      ["stopped", false],
    ]);
  }, 90_000);

  test("behavior: replicas forget the dead one → the other's stop removes; forget refuses a live replica (1) and an unknown id (66)", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    w.sim.state.setSchedule(w.master, null);
    const { r1, r2, r2Id } = await cutOff(w, "forget");
    r2.d.kill("SIGKILL");
    await r2.d.exited;
    const r1Id = String((await r1.d.waitForEvent("coordination.start", 1_000)).member);
    const before = await listed("forget");
    expect(before).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: r1Id, state: "running", live: true }),
        expect.objectContaining({ id: r2Id, state: "running", live: false }),
      ]),
    );
    // the text list says what keeps the stops from removing
    const text = await replicasCli(["list"], "forget");
    expect(text.stdout).toContain(r2Id);
    expect(text.stdout).toMatch(/1 member\(s\) neither live nor marked stopped/);
    const live = await replicasCli(["forget", r1Id, "--yes"], "forget");
    expect(live.code).toBe(1);
    expect(live.stderr).toContain("is a live candidate");
    const unknown = await replicasCli(["forget", "0123456789abcdef", "--yes"], "forget");
    expect(unknown.code).toBe(66);
    const unconfirmed = await replicasCli(["forget", r2Id], "forget");
    expect(unconfirmed.code).toBe(2);
    const forgot = await replicasCli(["forget", r2Id, "--yes", "--json"], "forget");
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(JSON.parse(forgot.stdout)).toMatchObject({
      ok: true,
      forgotten: [{ id: r2Id, state: "running" }],
    });
    expect((await listed("forget")).map((m) => m.id)).toEqual([r1Id]);
    r1.d.kill("SIGTERM");
    expect((await r1.d.exitWithin(10_000)).code).toBe(0);
    const removed = r1.d.lines.find((l) => l.event === "shutdown.removed");
    expect(String(removed?.token)).toMatch(/^\d+$/);
    expect(w.sim.state.getSchedule(w.master)).toBeNull();
  }, 90_000);

  test("behavior: a graceful stop marks the membership stopped; the same replica standing again clears it under the same id", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const a = w.replica(agentA, etcd.endpoint, { prefix: "mark" });
    await a.d.waitForEvent("coordination.leader", 15_000);
    const id = String((await a.d.waitForEvent("coordination.start", 1_000)).member);
    await a.d.waitForEvent("coordination.member", 5_000, (l) => l.state === "running");
    await a.d.waitForEvent("heartbeat.ok", 10_000);
    a.d.kill("SIGTERM");
    expect((await a.d.exitWithin(10_000)).code).toBe(0);
    expect(await listed("mark")).toEqual([expect.objectContaining({ id, state: "stopped", live: false })]);
    const again = w.replica(agentA, etcd.endpoint, { prefix: "mark", stateDir: a.stateDir });
    await again.d.waitForEvent("coordination.member", 15_000, (l) => l.state === "running");
    expect(String((await again.d.waitForEvent("coordination.start", 1_000)).member)).toBe(id);
    await eventually(
      async () => (await listed("mark")).some((m) => m.id === id && m.state === "running" && m.live),
      {
        timeoutMs: 5_000,
        what: "the membership running and live again",
      },
    );
    w.sim.state.setSchedule(w.master, null);
  }, 60_000);
});

describe.concurrent("etcd unreachable from the start (process)", () => {
  test("behavior: the replica pushes at once, says it is lost (readyz 503, metric), and its graceful stop keeps the schedule", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const dead = await startTcpProxy(etcd.port);
    dead.partition();
    w.proxies.push(dead);
    const a = w.replica(agentA, `127.0.0.1:${dead.port}`, { prefix: "dead" });
    const health = String((await a.d.waitForEvent("health.listening", 15_000)).url);
    await a.d.waitForEvent("heartbeat.ok", 15_000);
    await a.d.waitForEvent("coordination.lost", 5_000);
    const ready = await fetch(`${health}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain(
      "no closing, drill, reset or removal on stop is taken (actAlone is off)",
    );
    expect(await (await fetch(`${health}/metrics`)).text()).toMatch(/hl_deadman_coordination_lost 1/);
    a.d.kill("SIGTERM");
    expect((await a.d.exitWithin(15_000)).code).toBe(0);
    const kept = a.d.lines.find((l) => l.event === "shutdown.kept");
    expect(String(kept?.reason)).toContain("etcd is unreachable");
    expect(w.sim.state.getSchedule(w.master)).not.toBeNull();
    w.sim.state.setSchedule(w.master, null);
  }, 60_000);
});

describe.concurrent("etcd3 is loaded only with --coordinate (process)", () => {
  const trap = (log: string) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "hl-trap-")), "trap.cjs");
    // a preload that records every require of etcd3 or gRPC (etcd3's first require) into `log`
    writeFileSync(
      file,
      `const M=require("node:module"),fs=require("node:fs");const load=M._load;M._load=function(r,...a){if(/^(etcd3|@grpc\\/grpc-js)$/.test(r))fs.appendFileSync(${JSON.stringify(log)},r+"\\n");return load.call(this,r,...a)};`,
    );
    return file;
  };

  test("behavior: without --coordinate the daemon never requires etcd3; with it, it does", async ({
    onTestFinished,
  }) => {
    const w = await world(onTestFinished);
    const dir = mkdtempSync(path.join(tmpdir(), "hl-lazy-"));
    const alone = path.join(dir, "alone.log");
    const d = spawnCli(["run", "--sim", "--state-dir", path.join(dir, "a"), "--health", "off", ...CADENCE], {
      NODE_OPTIONS: `--require ${trap(alone)}`,
    });
    w.running.push(d);
    await d.waitForEvent("heartbeat.ok", 15_000);
    d.kill("SIGTERM");
    await d.exitWithin(10_000);
    expect(() => readFileSync(alone, "utf8")).toThrow(/ENOENT/);
    // the trap works: a coordinated daemon's requires are recorded
    const coordinated = path.join(dir, "coordinated.log");
    const c = spawnCli(
      [
        "run",
        "--sim",
        "--state-dir",
        path.join(dir, "c"),
        "--health",
        "off",
        ...CADENCE,
        "--coordinate",
        `etcd://${etcd.endpoint}/lazy`,
        "--coordinate-ttl",
        `${TTL_S}s`,
      ],
      { NODE_OPTIONS: `--require ${trap(coordinated)}` },
    );
    w.running.push(c);
    await c.waitForEvent("coordination.leader", 15_000);
    expect(readFileSync(coordinated, "utf8")).toContain("@grpc/grpc-js");
  }, 60_000);
});
