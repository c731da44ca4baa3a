/**
 * The audit trail end to end (issue 29): a real daemon against the simulator writes it, `audit verify` passes on
 * it, and fails naming the record on a tampered copy, with the contract's exit codes.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { assertBuilt, runCliProcess, spawnCli } from "../helpers/process.js";

/**
 * A healthy run's cadence with room for a busy machine: the story below is a healthy run's. With FAST_CADENCE's 1 s
 * request time-out the run's trail once had two records more (7 instead of 5, a fresh-clone run with the cores 95 %
 * busy): a push that takes longer than its time-out is not a healthy run.
 */
const ROOMY_CADENCE = [
  "--interval",
  "1s",
  "--deadline",
  "15s",
  "--request-timeout",
  "3s",
  "--exposure-interval",
  "0",
];

beforeAll(() => assertBuilt());

describe("audit verify", () => {
  test("behavior: passes on a real run's trail, names the first broken record of a tampered one (exit 65)", async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "hl-audit-run-"));
    const d = spawnCli(["run", "--sim", "--state-dir", stateDir, ...ROOMY_CADENCE]);
    try {
      await d.waitForEvent("heartbeat.ok", 15_000);
      await d.waitForEvent("heartbeat.ok", 5_000);
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);

    const ok = await runCliProcess(["audit", "verify", "--state-dir", stateDir, "--json"]);
    expect(ok.code).toBe(0);
    const doc = JSON.parse(ok.stdout);
    expect(doc).toMatchObject({ ok: true, files: 1, torn: 0, tornTail: false, firstSequence: 1 });
    const file = path.join(stateDir, "audit", "audit.jsonl");
    const records = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    // the run's story, not every push: started, armed, removed on the graceful stop, disarmed, stopped
    expect(records.map((r) => r.type.replace("xyz.hl-deadman.", ""))).toEqual([
      "daemon.started",
      "switch.armed",
      "switch.removed",
      "switch.disarmed",
      "daemon.stopped",
    ]);
    expect(doc.records).toBe(records.length);

    // tamper: the armed record's deadline moved by an hour
    const lines = readFileSync(file, "utf8").split("\n");
    lines[1] = lines[1]!.replace(/"armedUntil":(\d+)/, (_, v) => `"armedUntil":${Number(v) + 3_600_000}`);
    writeFileSync(file, lines.join("\n"));
    const bad = await runCliProcess(["audit", "verify", "--state-dir", stateDir]);
    expect(bad.code).toBe(65);
    expect(bad.stderr).toContain(`The audit trail is broken at ${file} line 3 (record 3): prevhash`);
    expect(bad.stderr).toContain("2 record(s) before it verified");
    const badJson = await runCliProcess(["audit", "verify", "--state-dir", stateDir, "--json"]);
    expect(JSON.parse(badJson.stdout)).toMatchObject({ error: { code: "data", exitCode: 65 } });
  }, 40_000);

  test("error: no trail in the state directory is exit 66 with the directory named", async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "hl-audit-none-"));
    const r = await runCliProcess(["audit", "verify", "--state-dir", stateDir]);
    expect(r.code).toBe(66);
    expect(r.stderr).toContain(`There is no audit trail at ${path.join(stateDir, "audit")}`);
  });
});
