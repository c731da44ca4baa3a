/**
 * A wrong API URL (issue 31, item 6): a 404 names the URL asked and how it is made, and a graceful stop when no
 * push was ever accepted says nothing was armed and exits 0, never "it fires at the armed deadline".
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertBuilt, spawnCli } from "../helpers/process.js";
import { tempDir } from "../reliability/harness.js";

// the next push comes 5 s after a failure: the stop meets no push in flight
const CADENCE = [
  "--interval",
  "5s",
  "--deadline",
  "20s",
  "--request-timeout",
  "1s",
  "--exposure-interval",
  "0",
];
let sim: SimulatorHandle;
beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({ demo: true });
});
afterAll(async () => {
  await sim?.close();
});

test("error: pushes to a path that is not the API say the URL; the stop says nothing was armed, exit 0", async () => {
  const tmp = tempDir();
  const d = spawnCli(
    ["run", "--api-url", `${sim.apiUrl}/v1`, "--account", sim.demo!.address, "--health", "off", ...CADENCE],
    { HL_PRIVATE_KEY: sim.demo!.privateKey, HL_STATE_DIR: tmp.dir },
  );
  try {
    const failed = await d.waitForEvent("heartbeat.failed", 15_000);
    expect(String(failed.message)).toContain("Not Found");
    expect(String(failed.message)).toContain(`no such endpoint: ${sim.apiUrl}/***/exchange`);
    expect(String(failed.message)).toContain("--api-url takes the API's base URL");
    d.kill("SIGTERM");
    const exit = await d.exitWithin(10_000);
    const stop = d.lines.find((l) => String(l.event).startsWith("shutdown.") && l.account !== undefined);
    expect(stop?.event).toBe("shutdown.nothing_armed");
    expect(d.stdout()).not.toContain("fires at the armed deadline");
    expect(exit.code).toBe(0);
  } finally {
    d.kill("SIGKILL");
    tmp.cleanup();
  }
}, 30_000);
