/**
 * The engine is told (issue 39, guard protocol version 2): a version 2 engine connected to the running daemon hears
 * `halted` when the operator's kill latches its account and `resumed` after `reset`; an engine that connects while
 * the account is HALTED hears `halted` first thing. The real CLI (`run --sim`, `kill`, `reset`) and the engine client
 * `hl-deadman/engine` over a real Unix socket.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import type { GuardNotice } from "../../src/core/guard-protocol.js";
import { holdSwitch, type SwitchHold } from "../../src/engine/index.js";
import { eventually } from "../helpers/eventually.js";
import { assertBuilt, runCliProcess, type SpawnedProcess, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("the engine is told (protocol version 2)", () => {
  test("behavior: kill → halted to the connected engine and to one that connects later; reset → resumed", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-told-"));
    const stateDir = path.join(dir, "state");
    const guard = path.join(dir, "guard.sock");
    const d: SpawnedProcess = spawnCli([
      "run",
      "--sim",
      "--state-dir",
      stateDir,
      "--interval",
      "1s",
      "--deadline",
      "15s",
      "--request-timeout",
      "1s",
      "--guard-socket",
      guard,
      "--on-engine-down",
      "cancel",
      "--health",
      "127.0.0.1:0",
    ]);
    cleanups.push(() => d.kill("SIGKILL"));
    const account = String((await d.waitForEvent("sim.start", 15_000)).account);
    await d.waitForEvent("guard.listening", 15_000);
    const heard: GuardNotice[] = [];
    const hold: SwitchHold = holdSwitch({
      socket: guard,
      accounts: [account],
      onNotice: (n) => heard.push(n),
    });
    cleanups.push(() => hold.close());
    await eventually(() => hold.connected, { what: "the engine connected" });
    await d.waitForEvent("heartbeat.ok", 15_000);

    const kill = await runCliProcess(
      ["kill", "--account", account, "--state-dir", stateDir, "--yes"],
      {},
      {
        timeoutMs: 20_000,
      },
    );
    expect(kill.code, kill.stderr).toBe(0);
    await eventually(() => heard.some((n) => n.type === "halted"), { what: "halted told to the engine" });
    expect(heard[0]).toMatchObject({ type: "halted", account, reason: expect.stringContaining("kill") });

    // an engine that connects while the account is HALTED learns it first thing
    const late: GuardNotice[] = [];
    const second = holdSwitch({ socket: guard, accounts: [account], onNotice: (n) => late.push(n) });
    cleanups.push(() => second.close());
    await eventually(() => late.length > 0, { what: "halted replayed to a later engine" });
    expect(late[0]).toMatchObject({ type: "halted", account });

    const reset = await runCliProcess(
      ["reset", "--account", account, "--state-dir", stateDir, "--yes"],
      {},
      {
        timeoutMs: 20_000,
      },
    );
    expect(reset.code, reset.stderr).toBe(0);
    await eventually(() => heard.some((n) => n.type === "resumed"), { what: "resumed told to the engine" });
    expect(heard.filter((n) => n.type === "halted")).toHaveLength(1);
  }, 60_000);
});
