/**
 * Fault matrix, permanent refusals: the exchange refuses the switch for reasons only an operator can fix
 * (volume gate, unknown signer, vault not registered, address budget). The daemon must say NOT PROTECTED in
 * every channel (state, log, metric, /readyz) and must not hammer the exchange: requests are counted.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { SimulatorHandle } from "../../src/sim/server.js";
import { type InProcess, type StartInProcessParameters, startInProcess, walletFor } from "./inprocess.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("refusals.test.ts");

let t: InProcess | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const RECHECK_MS = 300_000; // DEFAULTS.permanentRecheckInterval

/**
 * Starts a daemon the exchange refuses, runs 20 simulated minutes, and checks the report and the request
 * count: the first attempt, then one recheck every 5 minutes (at most 1 + 20/5 = 5 requests, where a naive
 * 0.5 s retry would send 2,400). Returns the handle for row-specific checks.
 */
async function refusedRow(reason: string, message: RegExp, params: Omit<StartInProcessParameters, "label">) {
  t = await startInProcess({ label: `refusal ${reason}`, ...params });
  const account = t.daemon.accounts[0]!;
  await t.run(20 * 60_000, 10_000);
  const requests = t.sim.state.requestCount("exchange");
  expect(requests).toBeGreaterThanOrEqual(2); // it does recheck
  expect(requests).toBeLessThanOrEqual(1 + (20 * 60_000) / RECHECK_MS);

  const status = t.daemon.status()[0]!;
  expect(status.state).toBe("not_protected");
  expect(status.notProtectedReason).toBe(reason);
  const logged = t.events("switch.not_protected");
  expect(logged).toHaveLength(1); // once per episode, not once per recheck
  expect(logged[0]!.account).toBe(account);
  expect(logged[0]!.reason).toBe(reason);
  expect(String(logged[0]!.message)).toMatch(message);
  expect(logged[0]!.level).toBe(50); // error
  const gauge = await t.daemon.metrics.notProtected.get();
  expect(gauge.values.find((v) => v.labels.reason === reason && v.labels.account === account)?.value).toBe(1);
  const res = await fetch(`${t.daemon.healthUrl}/readyz`);
  expect(res.status).toBe(503);
  const body = (await res.json()) as { reasons: string[] };
  expect(body.reasons.join("\n")).toContain(`refused permanently by the exchange (${reason})`);
  // Nothing was ever armed for this account.
  expect(t.sim.state.getSchedule(account)).toBeNull();
  return t;
}

/** After the operator fixes the cause, the next recheck arms the switch and the report clears. */
async function recovers(fix: (sim: SimulatorHandle) => void) {
  fix(t!.sim);
  await t!.run(RECHECK_MS + 20_000, 10_000);
  const status = t!.daemon.status()[0]!;
  expect(status.state).toBe("armed");
  expect(t!.events("switch.protected")).toHaveLength(1);
  expect(t!.sim.state.getSchedule(t!.daemon.accounts[0]!)).not.toBeNull();
  expect((await fetch(`${t!.daemon.healthUrl}/readyz`)).status).toBe(200);
}

describe("reliability: permanent refusals", () => {
  test("behavior: volume gate → not protected, no retry storm", async () => {
    const user = walletFor("refusal volume_gate").address.toLowerCase();
    await refusedRow("volume_gate", /Cannot set scheduled cancel time until enough volume traded/, {
      sim: { users: [{ address: user, volumeUsd: 373.47 }] },
    });
    proven("volume-gate");
  });

  test("behavior: unknown signer → not protected, no retry storm", async () => {
    await refusedRow("unknown_signer", /User or API Wallet 0x[0-9a-f]{40} does not exist/, {
      register: false,
    });
    proven("unknown-signer");
  });

  test("behavior: vault not registered → not protected, no retry storm", async () => {
    const vault = "0x1111111111111111111111111111111111111111";
    await refusedRow("vault_not_registered", /Vault not registered: 0x/, { config: { vault } });
    expect(t!.daemon.accounts).toEqual([vault]);
    proven("vault-not-registered");
  });

  test("behavior: address budget exhausted → not protected, no retry storm", async () => {
    const label = "refusal address_budget";
    // The budget allows 3 requests: the first pushes are accepted, then the exchange refuses.
    const user = walletFor(label).address.toLowerCase();
    t = await startInProcess({ label, sim: { users: [{ address: user, addressBudget: 3 }] } });
    await t.run(20 * 60_000, 10_000);
    const status = t.daemon.status()[0]!;
    expect(status.state).toBe("not_protected");
    expect(status.notProtectedReason).toBe("address_budget");
    const logged = t.events("switch.not_protected");
    expect(logged).toHaveLength(1);
    expect(String(logged[0]!.message)).toMatch(/Too many cumulative requests sent/);
    // 3 accepted pushes, one refusal, then one recheck per 5 minutes at most.
    const accepted = t.sim.state.actions.filter((a) => a.accepted).length;
    expect(accepted).toBe(3);
    const requests = t.sim.state.requestCount("exchange");
    expect(requests).toBeLessThanOrEqual(3 + 1 + (20 * 60_000) / RECHECK_MS);
    expect((await fetch(`${t.daemon.healthUrl}/readyz`)).status).toBe(503);
    proven("address-budget");
  });
});

describe("reliability: permanent refusals clear once fixed", () => {
  test("behavior: volume gate lifted → armed at the next recheck", async () => {
    const label = "refusal volume_gate fixed";
    const user = walletFor(label).address.toLowerCase();
    t = await startInProcess({ label, sim: { users: [{ address: user, volumeUsd: 373.47 }] } });
    await t.run(60_000, 10_000);
    expect(t.daemon.status()[0]!.notProtectedReason).toBe("volume_gate");
    await recovers((sim) => sim.state.setVolume(user, 2_000_000));
  });
});
