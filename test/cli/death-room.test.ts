/**
 * The room for a death of every guarded engine at once, through the real CLI (`run` for the official API; the
 * verdict comes before the key is read or the network reached, so no request is made): 60 accounts at 15 s, whose
 * steady spend fits, keep no room (10 passes known from the order feed at 2, 50 read first at 22: 1,120 against the
 * 959 the IP has left). A new configuration is refused with the arithmetic (exit code 78, configuration); the same
 * configuration on a state directory whose ledger holds its accounts (it ran before this version) is not refused:
 * it goes on to start, with a loud warning on stderr (here it then stops at the missing key, a later step).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { assertBuilt, runCliProcess } from "../helpers/process.js";

beforeAll(() => assertBuilt());

const accounts = Array.from({ length: 60 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
const args = (stateDir: string) => [
  "run",
  "--state-dir",
  stateDir,
  ...accounts.flatMap((a) => ["--account", a]),
  "--guard-socket",
  path.join(stateDir, "..", "guard.sock"),
  "--on-engine-down",
  "cancel",
  "--exposure-interval",
  "0",
  "--budget-interval",
  "0",
];
const NO_KEY = { HL_PRIVATE_KEY: undefined, HL_PRIVATE_KEY_FILE: undefined };

describe("the room for a death (process)", () => {
  test("behavior: a new configuration without room is refused with the arithmetic", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-death-new-"));
    const { code, stderr } = await runCliProcess(args(path.join(dir, "s")), NO_KEY);
    expect(code).toBe(78);
    expect(stderr).toMatch(/keeps no room in the IP's weight for a death of every guarded engine/);
    expect(stderr).toMatch(
      /10 × \(2 \+ 20 \+ 1\) \(orders known from the order feed\) \+ 50 × \(22 \+ 20 \+ 1\) \(read first\) = 2380 weight, the confirming reads and the renewing pushes included, within 45 s/,
    );
    expect(stderr).toMatch(/the IP has 959 left in it \(1200 − 240\.3, the busiest minute's steady spend\)/);
    expect(stderr).toMatch(/only 26 of 60 pass\(es\) fit in time/);
    expect(stderr).toMatch(/no push interval keeps room at this deadline/);
  }, 30_000);

  test("behavior: the same configuration where it ran before is not refused: it starts, loudly", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-death-old-"));
    const state = path.join(dir, "s");
    mkdirSync(state, { mode: 0o700 });
    writeFileSync(
      path.join(state, "ledger.json"),
      JSON.stringify({ accounts: Object.fromEntries(accounts.map((a) => [a, {}])) }),
    );
    const { code, stderr } = await runCliProcess(args(state), NO_KEY);
    expect(stderr).toMatch(/WARNING: the configuration keeps no room in the IP's weight/);
    expect(stderr).toMatch(/starting anyway: this configuration ran before this version/);
    // past the verdict: what stops it here is the next step, the key
    expect(stderr).not.toMatch(/Invalid configuration: the configuration keeps no room/);
    expect(stderr).toMatch(/key/i);
    expect(code).not.toBe(0);
  }, 30_000);
});
