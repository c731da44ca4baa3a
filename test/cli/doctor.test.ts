/**
 * `hl-deadman doctor` as an operator runs it (issue 31): the built CLI, spawned, against the simulator over real
 * HTTP on 127.0.0.1. Each failure class is provoked for real (a testnet simulator for a mainnet signature, an agent
 * given as its own account, an account under the $1M volume gate, an agent whose validUntil has passed, a Date
 * header a minute off, a listener on the health port, a state directory the user cannot write) and its row and the
 * exit code asserted; all well, it passes with exit 0 and prints its table.
 */
import { chmodSync, chownSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { hostname } from "node:os";
import path from "node:path";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { processStartTime } from "../../src/app/lock.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertBuilt, runCliProcess } from "../helpers/process.js";
import { freePort, tempDir, unprivilegedUser } from "../reliability/harness.js";

type Row = {
  check: string;
  account: string | null;
  status: "ok" | "warn" | "fail";
  finding: string;
  action: string;
  exitCode: number;
};
type Report = { ok: boolean; exitCode: number; probe: boolean; checks: Row[] };

const wallet = (name: string) => new Wallet(id(`hl-deadman doctor test: ${name}`));
const master = wallet("master");
const agent = wallet("agent");
const poorMaster = wallet("poor master");
const poorAgent = wallet("poor agent");
const expiredAgent = wallet("expired agent");
const lower = (w: Wallet) => w.address.toLowerCase();

let sim: SimulatorHandle;
/** the same accounts on a simulator that recovers signatures over the testnet chain id */
let testnetSim: SimulatorHandle;
const tmp = tempDir("hl-doctor-");
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  assertBuilt();
  const users = [
    { address: master.address, agents: [agent.address] },
    { address: poorMaster.address, agents: [poorAgent.address], volumeUsd: 250_000 },
  ];
  // The IP limiter off: a dozen doctor runs a minute spend more than one IP's 1,200 weight (each about 200).
  sim = await startSimulator({ users, ipWeightPerMinute: null });
  testnetSim = await startSimulator({ users, network: "testnet", ipWeightPerMinute: null });
  // An agent approved with a validUntil already passed: the exchange prunes it (it signs for no one).
  const res = await fetch(`${sim.adminUrl}/agents`, {
    method: "POST",
    body: JSON.stringify({
      user: master.address,
      agent: expiredAgent.address,
      name: "old",
      validUntil: Date.now() - 60_000,
    }),
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  for (const c of cleanups.reverse()) c();
  tmp.cleanup();
  await Promise.all([sim?.close(), testnetSim?.close()]);
});

let dirs = 0;
/** A fresh state directory of mode 0700 (doctor's own recommendation). */
function stateDir(): string {
  const dir = path.join(tmp.dir, `state-${++dirs}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** A guard file touched now: the engine counts as alive. */
function guardFile(): string {
  const file = path.join(tmp.dir, `engine-${++dirs}.alive`);
  writeFileSync(file, "");
  return file;
}

async function doctor(
  key: Wallet,
  extra: string[],
  {
    on = sim,
    json = true,
    state = stateDir(),
    user,
  }: { on?: SimulatorHandle; json?: boolean; state?: string; user?: { uid: number; gid: number } } = {},
): Promise<{ code: number | null; stdout: string; stderr: string; report: Report | null }> {
  const args = [
    "doctor",
    "--api-url",
    on.apiUrl,
    "--explorer-url",
    on.explorerUrl,
    "--state-dir",
    state,
    "--health",
    `127.0.0.1:${await freePort()}`,
    "--guard-file",
    guardFile(),
    ...extra,
    ...(json ? ["--json"] : []),
  ];
  const r = user
    ? await runAs(args, key, user)
    : await runCliProcess(args, { HL_PRIVATE_KEY: key.privateKey }, { timeoutMs: 20_000 });
  let report: Report | null = null;
  if (json) report = JSON.parse(r.stdout) as Report;
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, report };
}

async function runAs(args: string[], key: Wallet, user: { uid: number; gid: number }) {
  const { spawnCli } = await import("../helpers/process.js");
  const p = spawnCli(args, { HL_PRIVATE_KEY: key.privateKey }, { user });
  const { code } = await p.exitWithin(20_000);
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

const row = (r: Report, check: string) => {
  const found = r.checks.find((c) => c.check === check);
  expect(found, `a ${check} row in ${JSON.stringify(r.checks.map((c) => c.check))}`).toBeDefined();
  return found!;
};
const failing = (r: Report) => r.checks.filter((c) => c.status === "fail").map((c) => c.check);

describe("doctor, all well", () => {
  test("default: every check passes with --probe, exit 0, and the table names each check", async () => {
    const before = sim.state.actions.length;
    const r = await doctor(agent, ["--probe"], { json: false });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const check of [
      "state-dir",
      "lock",
      "health",
      "guard",
      "key",
      "role",
      "account",
      "network",
      "clock",
      "clock-witness",
      "agent",
      "volume",
      "budget",
      "explorer",
      "weight",
    ])
      expect(r.stdout).toMatch(new RegExp(`^${check}\\s+\\S+\\s+ok\\s`, "m"));
    expect(r.stdout).toMatch(/all 15 checks pass: ready to go live/);
    expect(r.stdout).not.toContain(agent.privateKey.slice(2));
    // The probe is one noop, accepted; nothing was armed.
    const sent = sim.state.actions.slice(before);
    expect(sent.map((a) => (a.action as { type: string }).type)).toEqual(["noop"]);
    expect(sent[0]!.accepted).toBe(true);
    expect(sim.state.getSchedule(lower(master))).toBeNull();
  });

  test("default: --json is one document: ok, exit 0, one row per check, the master as the account", async () => {
    const r = await doctor(agent, []);
    expect(r.code).toBe(0);
    expect(r.report!.ok).toBe(true);
    expect(r.report!.exitCode).toBe(0);
    expect(row(r.report!, "account").account).toBe(lower(master));
    // without --probe the network is not proven: a warning, not a failure
    expect(row(r.report!, "network").status).toBe("warn");
    expect(failing(r.report!)).toEqual([]);
  });
});

describe("doctor, each failure class provoked", () => {
  test("error: wrong network: a mainnet signature recovered as a stranger by a testnet host fails network, exit 78", async () => {
    const r = await doctor(agent, ["--probe"], { on: testnetSim });
    expect(r.code).toBe(78);
    expect(failing(r.report!)).toEqual(["network"]);
    const network = row(r.report!, "network");
    expect(network.exitCode).toBe(78);
    expect(network.finding).toContain("wrong network");
    expect(network.finding).toContain(`not the signer ${lower(agent)}`);
    expect(network.action).toContain("--network testnet");
  });

  test("error: an agent given as its own --account fails account, exit 78, naming the master", async () => {
    const r = await doctor(agent, ["--account", lower(agent)]);
    expect(r.code).toBe(78);
    const account = row(r.report!, "account");
    expect(account.status).toBe("fail");
    expect(account.finding).toContain(`--account ${lower(master)}`);
  });

  test("error: an account below the $1M volume gate fails volume, exit 1", async () => {
    const r = await doctor(poorAgent, []);
    expect(r.code).toBe(1);
    expect(failing(r.report!)).toEqual(["volume"]);
    const volume = row(r.report!, "volume");
    expect(volume.account).toBe(lower(poorMaster));
    expect(volume.finding).toContain("$250,000 is below the exchange's $1,000,000");
  });

  test("error: an expired agent fails agent (and role), exit 78", async () => {
    const r = await doctor(expiredAgent, ["--account", lower(master)]);
    expect(r.code).toBe(78);
    const agentRow = row(r.report!, "agent");
    expect(agentRow.status).toBe("fail");
    expect(agentRow.finding).toContain("expired (validUntil passed)");
    expect(failing(r.report!).sort()).toEqual(["agent", "role"]);
  });

  test("error: a Date header a minute off fails clock, exit 1", async () => {
    sim.faults.set("info", { dateOffsetMs: 60_000 });
    try {
      const r = await doctor(agent, []);
      expect(r.code).toBe(1);
      expect(failing(r.report!)).toEqual(["clock"]);
      expect(row(r.report!, "clock").finding).toMatch(
        /the local clock is (59\.\d+s|1m|1m0\.\d+s) behind the exchange's Date \(± .*\): beyond the clock\.suspect limit \(5 s\): readiness would fail \(\/readyz 503\)/,
      );
    } finally {
      sim.faults.clear("info");
    }
  });

  test("error: a listener on the health port fails health, exit 69", async () => {
    const server: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
    );
    try {
      const r = await doctor(agent, ["--health", `127.0.0.1:${port}`]);
      expect(r.code).toBe(69);
      expect(failing(r.report!)).toEqual(["health"]);
      expect(row(r.report!, "health").finding).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    } finally {
      server.close();
    }
  });

  test("error: a state directory this user cannot write fails state-dir, exit 73, and its lock is not called free", async () => {
    const dir = stateDir();
    // Root ignores file modes: then doctor runs as nobody, owning the directory it may not write.
    const as = unprivilegedUser();
    if (as) {
      chownSync(tmp.dir, as.uid, as.gid);
      chownSync(dir, as.uid, as.gid);
    }
    chmodSync(dir, 0o500);
    cleanups.push(() => chmodSync(dir, 0o700));
    const r = await doctor(agent, [], { state: dir, ...(as ? { user: as } : {}) });
    expect(r.code, r.stderr).toBe(73);
    expect(failing(r.report!)).toEqual(["state-dir"]);
    expect(row(r.report!, "state-dir").finding).toContain(`no file can be created in ${dir}`);
    expect(row(r.report!, "lock").finding).toBe("not checked: the state directory failed");
  });

  test("error: a state directory held by a running daemon fails lock, exit 75, naming its pid", async () => {
    const dir = stateDir();
    // This test process is the holder: alive, its start time on record, as `run` writes it (src/app/lock.ts).
    const holder = {
      pid: process.pid,
      start: processStartTime(process.pid),
      host: hostname(),
      at: new Date().toISOString(),
    };
    writeFileSync(path.join(dir, "daemon.lock"), `${JSON.stringify(holder)}\n`);
    const r = await doctor(agent, [], { state: dir });
    expect(r.code).toBe(75);
    expect(failing(r.report!)).toEqual(["lock"]);
    expect(row(r.report!, "lock").finding).toContain(`held by a running hl-deadman, pid ${process.pid}`);
  });

  test("error: several failures: the most severe wins (78 over 1 over 69)", async () => {
    const server: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
    );
    try {
      const taken = ["--health", `127.0.0.1:${port}`];
      const both = await doctor(poorAgent, taken);
      expect(failing(both.report!).sort()).toEqual(["health", "volume"]);
      expect(both.code).toBe(1);
      const three = await doctor(poorAgent, [...taken, "--account", lower(poorAgent)]);
      expect(failing(three.report!)).toContain("account");
      expect(three.code).toBe(78);
    } finally {
      server.close();
    }
  });
});

describe("doctor with several signers (the config's signers block)", () => {
  test("behavior: each signer's key, role and accounts; a signer whose account its pushes would not protect fails 78", async () => {
    const config = path.join(tmp.dir, `signers-${++dirs}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        signers: [
          // right: the agent key arms its master
          { name: "engine-a", keyEnv: "HL_KEY_A", account: master.address },
          // wrong: the agent of poorMaster names master, whom its pushes without vaultAddress never reach
          { name: "engine-b", keyEnv: "HL_KEY_B", account: master.address.replace(/.$/, "0") },
        ],
      }),
    );
    const args = [
      "doctor",
      "--config",
      config,
      "--api-url",
      sim.apiUrl,
      "--explorer-url",
      sim.explorerUrl,
      "--state-dir",
      stateDir(),
      "--health",
      `127.0.0.1:${await freePort()}`,
      "--guard-file",
      guardFile(),
      "--json",
    ];
    const r = await runCliProcess(
      args,
      { HL_KEY_A: agent.privateKey, HL_KEY_B: poorAgent.privateKey },
      { timeoutMs: 20_000 },
    );
    const report = JSON.parse(r.stdout) as Report;
    expect(r.code, r.stderr).toBe(78);
    const keys = report.checks.filter((c) => c.check === "key").map((c) => c.finding);
    expect(keys).toEqual([
      expect.stringContaining(`env HL_KEY_A (signer engine-a) -> signer ${lower(agent)}`),
      expect.stringContaining(`env HL_KEY_B (signer engine-b) -> signer ${lower(poorAgent)}`),
    ]);
    const accounts = report.checks.filter((c) => c.check === "account");
    expect(accounts.map((c) => c.status)).toEqual(["ok", "fail"]);
    expect(accounts[1]!.finding).toContain(`protects ${lower(poorMaster)}, the agent's master`);
    expect(r.stdout + r.stderr).not.toContain(agent.privateKey.slice(2, 14));
    expect(r.stdout + r.stderr).not.toContain(poorAgent.privateKey.slice(2, 14));
  });
});
