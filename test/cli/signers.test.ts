/**
 * `run` with several signers from the config file (docs/operations.md, "Many accounts, several signers"): the real
 * CLI against the simulator; one signer's key from a key file, one from an environment variable (an agent of a
 * master). Each account is armed by its own signer, the variable is taken out of the environment, no key is
 * logged, and a graceful stop removes every account's schedule.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { fastCadence, runCliProcess } from "../helpers/process.js";
import { assertBuilt, eventually, freePort, spawnCli, tempDir } from "../reliability/harness.js";

const a = new Wallet(id("hl-deadman signers test: a"));
const agent = new Wallet(id("hl-deadman signers test: agent"));
const master = new Wallet(id("hl-deadman signers test: master")).address.toLowerCase();
const vault = new Wallet(id("hl-deadman signers test: vault")).address.toLowerCase();
let sim: SimulatorHandle;
beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({
    users: [
      { address: a.address.toLowerCase(), vaults: [vault] },
      { address: master, agents: [agent.address] },
    ],
  });
});
afterAll(async () => {
  await sim?.close();
});

/** A temporary directory holding signer a's key file and a config of two signers (b's key from HL_KEY_ENGINE_B). */
function twoSigners() {
  const tmp = tempDir();
  writeFileSync(join(tmp.dir, "a.key"), a.privateKey, { mode: 0o600 });
  const config = join(tmp.dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      signers: [
        { name: "desk-a", keyFile: "a.key", account: a.address, vaults: [vault] },
        { name: "engine-b", keyEnv: "HL_KEY_ENGINE_B", account: master },
      ],
    }),
  );
  return { tmp, config };
}

describe("run with several signers", () => {
  test("behavior: each account armed by its own signer; the variable scrubbed; SIGTERM removes every schedule", async () => {
    const { tmp, config } = twoSigners();
    const port = await freePort();
    const d = spawnCli(
      [
        "run",
        "--config",
        config,
        "--api-url",
        sim.apiUrl,
        ...fastCadence(),
        "--state-dir",
        join(tmp.dir, "state"),
        "--health",
        `127.0.0.1:${port}`,
      ],
      { HL_KEY_ENGINE_B: agent.privateKey },
      { cwd: tmp.dir },
    );
    try {
      const started = await d.waitForEvent("daemon.start", 15_000);
      expect(started.signers).toBe(2);
      await eventually(() => {
        for (const account of [a.address.toLowerCase(), vault, master])
          expect(sim.state.getSchedule(account), account).not.toBeNull();
        return true;
      });
      const loaded = d.lines.filter((l) => l.event === "key.loaded").map((l) => [l.signer, l.source]);
      expect(loaded).toEqual([
        [a.address.toLowerCase(), `key file ${join(tmp.dir, "a.key")} (signer desk-a)`],
        [agent.address.toLowerCase(), "env HL_KEY_ENGINE_B (signer engine-b)"],
      ]);
      expect(d.lines.find((l) => l.event === "key.environment")).toMatchObject({ scrubbed: true });
      const pushes = sim.state.actions.filter((x) => x.accepted);
      expect(pushes.find((x) => x.user === master)?.signer).toBe(agent.address.toLowerCase());
      expect(pushes.find((x) => x.vaultAddress === vault)?.signer).toBe(a.address.toLowerCase());
      d.kill("SIGTERM");
      const exit = await d.exited;
      expect(exit.code).toBe(0);
      for (const account of [a.address.toLowerCase(), vault, master])
        expect(sim.state.getSchedule(account)).toBeNull();
      const output = d.stdout() + d.stderr();
      expect(output).not.toContain(a.privateKey.slice(2, 14));
      expect(output).not.toContain(agent.privateKey.slice(2, 14));
    } finally {
      d.kill("SIGKILL");
      await d.exited;
      tmp.cleanup();
    }
  }, 40_000);
});

describe("kill --all with several signers and no daemon", () => {
  test("behavior: every account of every signer is killed, each under its own key (not only the first key's)", async () => {
    const { tmp, config } = twoSigners();
    mkdirSync(join(tmp.dir, "state"), { mode: 0o700 });
    const accounts = [a.address.toLowerCase(), vault, master];
    for (const user of accounts) {
      sim.state.addOrder(user, { coin: "BTC", side: "B", limitPx: "30000", sz: "0.001" });
      sim.state.addOrder(user, { coin: "ETH", side: "A", limitPx: "9000", sz: "0.01" });
    }
    for (const user of accounts) expect(sim.state.getOpenOrders(user).length, user).toBeGreaterThanOrEqual(2);
    const r = await runCliProcess(
      [
        "kill",
        "--all",
        "--yes",
        "--json",
        "--config",
        config,
        "--api-url",
        sim.apiUrl,
        "--state-dir",
        join(tmp.dir, "state"),
      ],
      { HL_KEY_ENGINE_B: agent.privateKey },
      { cwd: tmp.dir, timeoutMs: 30_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const answer = JSON.parse(r.stdout) as { ok: boolean; accounts: { account: string }[] };
    expect(answer.ok).toBe(true);
    expect(answer.accounts.map((x) => x.account).sort()).toEqual([...accounts].sort());
    for (const user of accounts) expect(sim.state.getOpenOrders(user), user).toEqual([]);
    // each account's cancels went out under its own signer's key
    const cancels = sim.state.actions.filter(
      (x) => x.accepted && (x.action as { type?: string } | null)?.type === "cancel",
    );
    expect(cancels.find((x) => x.user === master)?.signer).toBe(agent.address.toLowerCase());
    expect(cancels.find((x) => x.vaultAddress === vault)?.signer).toBe(a.address.toLowerCase());
    tmp.cleanup();
  }, 40_000);
});
