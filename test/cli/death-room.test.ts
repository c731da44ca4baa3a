/**
 * The room for a death of every guarded engine at once, through the real CLI (`run --sim`: the simulator enforces
 * the IP's 1,200 weight a minute, as the official API does): a new configuration that leaves no room is refused
 * with the arithmetic (exit code 78, configuration); the same configuration on a state directory whose ledger holds
 * its accounts (it ran before this version) starts, with a loud warning on stderr and in the log.
 * The configuration is made tight on purpose: an address budget read every second spends the IP's whole minute.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { assertBuilt, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());

const args = (dir: string, extra: string[]) => [
  "run",
  "--sim",
  "--state-dir",
  path.join(dir, "s"),
  "--guard-socket",
  path.join(dir, "guard.sock"),
  "--on-engine-down",
  "cancel",
  "--exposure-interval",
  "0",
  ...extra,
];
const TIGHT = ["--budget-interval", "1s"];

describe("the room for a death (process)", () => {
  test("behavior: a new configuration without room is refused with the arithmetic", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-death-new-"));
    const d = spawnCli(args(dir, TIGHT));
    const { code } = await d.exitWithin(15_000);
    expect(code).toBe(78);
    const err = d.stderr();
    expect(err).toMatch(/keeps no room in the IP's weight for a death of every guarded engine/);
    expect(err).toMatch(
      /1 × 2 \(orders known from the order feed\) \+ 0 × 22 \(read first\) = 2 weight within 45 s/,
    );
    expect(err).toMatch(/the IP has 0 left in it \(1200 − 1204.3, the busiest minute's steady spend\)/);
  }, 30_000);

  test("behavior: the same configuration where it ran before starts, loudly", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-death-old-"));
    // it ran before: a start with room writes the ledger
    const first = spawnCli(args(dir, []));
    await first.waitForEvent("heartbeat.ok", 20_000);
    first.kill("SIGINT");
    await first.exitWithin(15_000);

    const d = spawnCli(args(dir, TIGHT));
    try {
      const warning = await d.waitForEvent("config.warning", 15_000, (l) =>
        /for a death of every guarded engine/.test(String(l.msg)),
      );
      expect(String(warning.msg)).toMatch(/starting anyway: this configuration ran before this version/);
      await d.waitForEvent("guard.listening", 15_000);
      expect(d.stderr()).toMatch(/WARNING: the configuration keeps no room/);
    } finally {
      d.kill("SIGINT");
      await d.exitWithin(15_000);
    }
  }, 60_000);
});
