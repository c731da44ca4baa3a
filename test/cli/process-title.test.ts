/**
 * The process title names the instance (issue 43): several daemons on one host tell apart in `ps`. The title is
 * what /proc/PID/cmdline shows of the real spawned CLI; the rule (file name, else accounts, else --sim) is pure.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { instanceTitle } from "../../src/app/shutdown.js";
import { assertBuilt, FAST_CADENCE, spawnCli } from "../helpers/process.js";

const A = `0x${"ab".repeat(20)}`;
const B = `0x${"cd".repeat(20)}`;

describe("process title", () => {
  test("default: the config file's name, else the accounts, else --sim", () => {
    expect(instanceTitle({ file: "/etc/hl-deadman/desk-a.json", accounts: [A, B] })).toBe(
      "hl-deadman run desk-a.json",
    );
    expect(instanceTitle({ accounts: [A] })).toBe(`hl-deadman run ${A}`);
    expect(instanceTitle({ accounts: [A, B] })).toBe(`hl-deadman run ${A} +1`);
    expect(instanceTitle({ accounts: [], sim: true })).toBe("hl-deadman run --sim");
  });

  test("behavior: a running daemon's title in /proc names its instance", async () => {
    assertBuilt();
    const p = spawnCli(["run", "--sim", "--health", "127.0.0.1:0", ...FAST_CADENCE]);
    try {
      await p.waitForEvent("heartbeat.ok", 20_000);
      const cmdline = readFileSync(`/proc/${p.child.pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      expect(cmdline).toBe("hl-deadman run --sim");
    } finally {
      p.kill("SIGTERM");
      await p.exitWithin(10_000);
    }
  });
});
