/**
 * What will be armed, said before it is (issue 31, items 3, 4, 9 and 11): `config check` names the account `run`
 * arms with an agent key, `--account AGENT` is refused, the documented rehearsal (`sim --user MASTER --agent
 * DEMO=MASTER` with the demo key) arms the master, each one-shot command says its own words, a signature the
 * exchange recovers as a stranger says "network or signature mismatch", and `status --reconcile` names the URLs it
 * tried.
 */
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { HyperliquidApiError, signerMismatchHint } from "../../src/protocol/hyperliquid/errors.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { describeFailure } from "../../src/switch/driver.js";
import { cli } from "../helpers/cli.js";
import { assertBuilt, freePort, spawnCli, tempDir } from "../reliability/harness.js";

const master = new Wallet(id("hl-deadman agent-account test: master")).address.toLowerCase();
const agent = new Wallet(id("hl-deadman agent-account test: agent"));
const agentAddress = agent.address.toLowerCase();
let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ users: [{ address: master, agents: [agent.address], balanceUsd: 25_000 }] });
});
afterAll(async () => {
  await sim?.close();
});
const env = () => ({ HL_PRIVATE_KEY: agent.privateKey });

describe("config check with an agent key", () => {
  test("behavior: names the master as the account run arms, never the agent", async () => {
    const r = await cli(["config", "check", "--api-url", sim.apiUrl], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`account    ${master} (what run arms)`);
    expect(r.stdout).not.toContain(`account    ${agentAddress}`);
    expect(r.stdout).toContain(`is an API (agent) wallet of ${master}: run would keep ${master}'s`);
    const json = JSON.parse(
      (await cli(["config", "check", "--json", "--api-url", sim.apiUrl], { env: env() })).stdout,
    ) as { accounts: Array<{ account: string }>; key: { agentOf?: string } };
    expect(json.accounts.map((a) => a.account)).toEqual([master]);
    expect(json.key.agentOf).toBe(master);
  });
});

describe("--account naming the agent itself", () => {
  test.each([
    ["config check", ["config", "check"]],
    ["schedule", ["schedule", "--in", "60s"]],
    ["unschedule", ["unschedule"]],
  ])("error: %s --account AGENT is refused, naming the master to give", async (_name, args) => {
    const before = sim.state.actions.length;
    const r = await cli([...args, "--account", agentAddress, "--api-url", sim.apiUrl], { env: env() });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`--account ${agentAddress} is the signer itself`);
    expect(r.stderr).toContain(`--account ${master}`);
    expect(sim.state.actions.length).toBe(before);
  });

  test("error: run --account AGENT exits 78 before anything is armed", async () => {
    const tmp = tempDir();
    try {
      const r = await cli(
        [
          "run",
          "--account",
          agentAddress,
          "--api-url",
          sim.apiUrl,
          "--state-dir",
          tmp.dir,
          "--health",
          "off",
        ],
        { env: env() },
      );
      expect(r.code).toBe(78);
      expect(r.stderr).toContain("is the signer itself");
    } finally {
      tmp.cleanup();
    }
  });

  test("default: --account MASTER with the agent key is accepted", async () => {
    const r = await cli(["config", "check", "--account", master, "--api-url", sim.apiUrl], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`account    ${master}`);
  });
});

describe("each one-shot command says its own words", () => {
  test("behavior: unschedule with an agent key says it removes the master's schedule, not run's words", async () => {
    const r = await cli(["unschedule", "--api-url", sim.apiUrl], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`removing ${master}'s scheduled cancel`);
    expect(r.stderr).not.toContain("keeping");
    const s = await cli(["schedule", "--in", "60s", "--api-url", sim.apiUrl], { env: env() });
    expect(s.stderr).toContain(`scheduling ${master}'s cancel`);
    expect(s.stderr).not.toContain("keeping");
  });

  test("behavior: the --account help of schedule and unschedule says what it means there", async () => {
    const schedule = await cli(["schedule", "--help"]);
    expect(schedule.stdout.replace(/\s+/g, " ")).toContain("the account whose scheduled cancel this sets");
    const unschedule = await cli(["unschedule", "--help"]);
    expect(unschedule.stdout.replace(/\s+/g, " ")).toContain(
      "the account whose scheduled cancel this removes",
    );
    expect(schedule.stdout + unschedule.stdout).not.toContain("whose schedule is kept");
  });
});

describe("a signature recovered as a stranger", () => {
  test("error: schedule --network testnet against a mainnet host says network or signature mismatch", async () => {
    const r = await cli(
      ["schedule", "--in", "60s", "--network", "testnet", "--account", master, "--api-url", sim.apiUrl],
      {
        env: env(),
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/User or API Wallet 0x[0-9a-f]{40} does not exist/);
    expect(r.stderr).toContain("network or signature mismatch");
    expect(r.stderr).toContain(`not the signer ${agentAddress}`);
    expect(r.stderr).toContain("signed for testnet");
  });

  test("behavior: the daemon's failure message carries the hint; our own address gets none", () => {
    const stranger = `0x${"c4f2".repeat(10)}`;
    const text = `User or API Wallet ${stranger} does not exist.`;
    const error = new HyperliquidApiError({
      kind: "unknown_signer",
      endpoint: "exchange",
      serverMessage: text,
      hint: signerMismatchHint(text, agentAddress, true),
    });
    expect(describeFailure(error).message).toContain(`${text} (the exchange recovered`);
    expect(describeFailure(error).message).toContain("network or signature mismatch");
    expect(signerMismatchHint(`User or API Wallet ${agentAddress} does not exist.`, agentAddress, true)).toBe(
      undefined,
    );
  });
});

describe("status --reconcile names what it tried", () => {
  test("error: an unreachable explorer and API are named in the record line", async () => {
    const tmp = tempDir();
    const port = await freePort();
    try {
      const r = await cli([
        "status",
        "--reconcile",
        "--state-dir",
        tmp.dir,
        "--account",
        master,
        "--api-url",
        `http://127.0.0.1:${port}`,
        "--explorer-url",
        `http://127.0.0.1:${port}/explorer`,
      ]);
      expect(r.stdout).toContain(
        `from explorer http://127.0.0.1:${port}/explorer, API http://127.0.0.1:${port}`,
      );
      expect(r.stdout).toContain("that `hl-deadman sim` prints");
    } finally {
      tmp.cleanup();
    }
  });
});

describe("the documented rehearsal: sim --user MASTER --agent DEMO=MASTER with the demo key", () => {
  beforeAll(() => assertBuilt());

  test("behavior: the daemon arms MASTER, which holds the demo book", async () => {
    const demoSim = spawnCli(["sim", "--port", "0", "--user", master, "--agent", `DEMO=${master}`]);
    const tmp = tempDir();
    let daemon: ReturnType<typeof spawnCli> | undefined;
    try {
      // the simulator's printed lines: API, DEMO account and key
      const printed = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no banner: ${demoSim.stdout()} ${demoSim.stderr()}`)),
          15_000,
        );
        demoSim.child.stdout?.on("data", () => {
          if (demoSim.stdout().includes("Running;")) {
            clearTimeout(timer);
            resolve(demoSim.stdout());
          }
        });
      });
      const apiUrl = /^API\s+(\S+)/m.exec(printed)?.[1];
      const demoKey = /^DEMO\s+key\s+(\S+)/m.exec(printed)?.[1];
      const demo = /^DEMO\s+account\s+(0x[0-9a-f]{40})/m.exec(printed)?.[1];
      expect(printed).toContain(`an API wallet of ${master}`);
      daemon = spawnCli(
        ["run", "--api-url", apiUrl!, "--interval", "1s", "--deadline", "10s", "--request-timeout", "1s"],
        { HL_PRIVATE_KEY: demoKey!, HL_STATE_DIR: tmp.dir, HL_HEALTH: "off" },
      );
      const said = await daemon.waitForEvent("accounts.master", 15_000);
      expect(said).toMatchObject({ signer: demo, master });
      const ok = await daemon.waitForEvent("heartbeat.ok", 15_000);
      expect(ok.account).toBe(master);
      const exposure = await daemon.waitForEvent("exposure", 15_000);
      expect(exposure.account).toBe(master);
      expect((exposure.positions as unknown[]).length).toBe(3);
    } finally {
      daemon?.kill("SIGTERM");
      await daemon?.exited;
      demoSim.kill("SIGTERM");
      await demoSim.exited;
      tmp.cleanup();
    }
  }, 45_000);
});
