/**
 * `doctor`'s `clock-witness` check (issue 40): the built CLI, spawned, against the simulator over real HTTP on
 * 127.0.0.1, reading the HyperEVM block time from the simulator's RPC (`--rpc-url`). The Date and the block agree
 * (ok); a Date a minute off the block (warn: they disagree); no `--rpc-url` with a custom `--api-url` (ok: no block
 * witness, as for the explorer); the host's clock 2 h ahead (libfaketime, the simulator on true time): both witnesses
 * agree on the exchange's time and the local clock is beyond the clock.suspect limit (fail, exit 1).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { requireBinary } from "../helpers/binaries.js";
import { assertBuilt, runCliProcess } from "../helpers/process.js";
import { freePort, libfaketime, tempDir } from "../reliability/harness.js";

type Row = {
  check: string;
  status: "ok" | "warn" | "fail";
  finding: string;
  action: string;
  exitCode: number;
};
type Report = { ok: boolean; exitCode: number; checks: Row[] };

const master = new Wallet(id("hl-deadman doctor clock-witness test: master"));
let sim: SimulatorHandle;
const tmp = tempDir("hl-doctor-witness-");
let dirs = 0;

beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({ users: [{ address: master.address }], ipWeightPerMinute: null });
});
afterAll(async () => {
  tmp.cleanup();
  await sim?.close();
});

async function doctor(extra: string[], env: Record<string, string> = {}) {
  const state = path.join(tmp.dir, `state-${++dirs}`);
  mkdirSync(state, { mode: 0o700 });
  const guard = path.join(tmp.dir, `engine-${dirs}.alive`);
  writeFileSync(guard, "");
  const r = await runCliProcess(
    [
      "doctor",
      "--api-url",
      sim.apiUrl,
      "--explorer-url",
      sim.explorerUrl,
      "--state-dir",
      state,
      "--health",
      `127.0.0.1:${await freePort()}`,
      "--guard-file",
      guard,
      ...extra,
      "--json",
    ],
    { HL_PRIVATE_KEY: master.privateKey, ...env },
    { timeoutMs: 20_000 },
  );
  const report = JSON.parse(r.stdout) as Report;
  const row = report.checks.find((c) => c.check === "clock-witness");
  expect(row, JSON.stringify(report.checks.map((c) => c.check))).toBeDefined();
  return { code: r.code, report, row: row!, stderr: r.stderr };
}

describe("doctor clock-witness: the HyperEVM block time against the Date", () => {
  test("default: with --rpc-url the Date and the block agree: the exchange's time is verified, the local clock within 5 s", async () => {
    const r = await doctor(["--rpc-url", sim.rpcUrl]);
    expect(r.row.status, r.row.finding).toBe("ok");
    expect(r.row.finding).toMatch(
      /the exchange's Date and the HyperEVM block agree \(.* apart, within ± .*\): the exchange's time is verified; the local clock is .* (ahead of|behind) it/,
    );
    expect(r.code).toBe(0);
  });

  test("default: a custom --api-url and no --rpc-url: no block witness, ok, the action names --rpc-url", async () => {
    const r = await doctor([]);
    expect(r.row.status).toBe("ok");
    expect(r.row.finding).toContain("no block witness: a custom --api-url and no --rpc-url");
    expect(r.row.action).toContain("--rpc-url");
  });

  test("error: a Date a minute off the block: the witnesses disagree (warn), the clock check fails, exit 1", async () => {
    sim.faults.set("info", { dateOffsetMs: 60_000 });
    try {
      const r = await doctor(["--rpc-url", sim.rpcUrl]);
      expect(r.row.status).toBe("warn");
      expect(r.row.finding).toMatch(
        /the exchange's Date and the HyperEVM block disagree by (59\.\d+s|1m\S*) \(the Date ahead/,
      );
      expect(r.report.checks.filter((c) => c.status === "fail").map((c) => c.check)).toEqual(["clock"]);
      expect(r.code).toBe(1);
    } finally {
      sim.faults.clear("info");
    }
  });

  test("error: the host's clock 2 h ahead (libfaketime): both witnesses agree on the exchange's time, the local clock beyond the clock.suspect limit: fail, exit 1", async () => {
    requireBinary("faketime");
    const r = await doctor(["--rpc-url", sim.rpcUrl], {
      LD_PRELOAD: libfaketime(),
      FAKETIME: "+7200s",
      FAKETIME_DONT_FAKE_MONOTONIC: "1",
    });
    expect(r.row.status, r.row.finding).toBe("fail");
    expect(r.row.exitCode).toBe(1);
    expect(r.row.finding).toMatch(
      /the exchange's time is verified; the local clock is (1h59m\S*|2h\S*) ahead of it: beyond the clock\.suspect limit \(5 s\): readiness would fail \(\/readyz 503\)/,
    );
    expect(r.code).toBe(1);
  });
});
