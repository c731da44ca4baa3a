/**
 * An agent key without --account (issue 16, item 6): the exchange applies the push to the agent's master, so
 * `schedule` and the daemon ask `userRole` and name the master in their output, logs, exposure and budget; an
 * agent the exchange names no master for is a configuration error naming --account.
 */
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { cli } from "../helpers/cli.js";
import { fastCadence } from "../helpers/process.js";
import { startHostileServer } from "../hostile/bodies.js";
import { assertBuilt, freePort, spawnCli, tempDir } from "../reliability/harness.js";

const master = new Wallet(id("hl-deadman agent test: master")).address.toLowerCase();
const agent = new Wallet(id("hl-deadman agent test: agent"));
let sim: SimulatorHandle;
beforeAll(async () => {
  sim = await startSimulator({ users: [{ address: master, agents: [agent.address], balanceUsd: 25_000 }] });
});
afterAll(async () => {
  await sim?.close();
});

describe("userRole in the simulator", () => {
  test("default: the real shapes for an agent, a user and an unknown address", async () => {
    const ask = async (user: string) =>
      (await (
        await fetch(`${sim.apiUrl}/info`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ type: "userRole", user }),
        })
      ).json()) as unknown;
    expect(await ask(agent.address)).toEqual({ role: "agent", data: { user: master } });
    expect(await ask(master)).toEqual({ role: "user" });
    expect(await ask(`0x${"9".repeat(40)}`)).toEqual({ role: "missing" });
  });
});

describe("schedule with an agent key", () => {
  test("behavior: names the master it scheduled, and says the signer is its agent", async () => {
    const r = await cli(["schedule", "--in", "60s", "--api-url", sim.apiUrl], {
      env: {
        HL_PRIVATE_KEY: agent.privateKey,
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Scheduled cancel of ${master}`);
    expect(r.stdout).not.toContain(agent.address.toLowerCase());
    expect(r.stderr).toContain(`is an API (agent) wallet of ${master}`);
    expect(sim.state.getSchedule(master)).not.toBeNull();
    const json = await cli(["schedule", "--in", "60s", "--json", "--api-url", sim.apiUrl], {
      env: {
        HL_PRIVATE_KEY: agent.privateKey,
      },
    });
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      account: master,
      signer: agent.address.toLowerCase(),
    });
  });

  test("error: an agent with no master named is a configuration error naming --account", async () => {
    const server = await startHostileServer(() => ({ body: JSON.stringify({ role: "agent" }) }));
    try {
      const r = await cli(["schedule", "--in", "60s", "--api-url", server.url], {
        env: {
          HL_PRIVATE_KEY: agent.privateKey,
        },
      });
      expect(r.code).toBe(78);
      expect(r.stderr).toContain("--account");
      expect(r.stderr).toContain("no master");
      expect(server.seen.some((s) => s.path === "/exchange")).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe("run with an agent key", () => {
  beforeAll(() => assertBuilt());

  test("behavior: one log line names the master; pushes, exposure and budget are the master's", async () => {
    const tmp = tempDir();
    const port = await freePort();
    const d = spawnCli(
      [
        "run",
        "--api-url",
        sim.apiUrl,
        ...fastCadence("1s"),
        "--budget-interval",
        "1s",
        "--state-dir",
        tmp.dir,
        "--health",
        `127.0.0.1:${port}`,
      ],
      { HL_PRIVATE_KEY: agent.privateKey },
    );
    try {
      const said = await d.waitForEvent("accounts.master", 15_000);
      expect(said).toMatchObject({ signer: agent.address.toLowerCase(), master });
      const ok = await d.waitForEvent("heartbeat.ok", 15_000);
      expect(ok.account).toBe(master);
      const exposure = await d.waitForEvent("exposure", 15_000);
      expect(exposure.account).toBe(master);
      expect(Number(exposure.accountValue)).toBeGreaterThan(0);
      expect(d.lines.filter((l) => l.event === "accounts.master")).toHaveLength(1);
      const agentLower = agent.address.toLowerCase();
      const aboutAgent = d.lines.filter(
        (l) => l.account === agentLower || (typeof l.msg === "string" && l.msg.includes(`for ${agentLower}`)),
      );
      expect(aboutAgent).toEqual([]);
    } finally {
      d.kill("SIGTERM");
      await d.exited;
      tmp.cleanup();
    }
  }, 40_000);
});
