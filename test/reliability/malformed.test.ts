/**
 * Fault matrix, malformed answers: bad JSON, valid JSON of the wrong shape, and multi-MB bodies from /exchange
 * and from /info. Each is logged with its kind, the daemon survives, and the other loop is unaffected.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, test } from "vitest";
import { assertDeadlinesNeverMoveEarlier } from "./harness.js";
import { type InProcess, simArmed, startInProcess } from "./inprocess.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("malformed.test.ts");

/**
 * The heap this worker retains: heapUsed after a full collection, not the garbage the collector has not reached
 * yet (this worker also runs other files, whose garbage made a bare heapUsed read 590 MB once).
 */
function retainedHeap(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed;
}

let t: InProcess | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const FAULTS = [{ malformed: true }, { wrongShape: true }, { hugeBody: true }] as const;

describe("reliability: malformed answers", () => {
  test("behavior: malformed /exchange answers are logged and survived", async () => {
    t = await startInProcess({ label: "malformed-exchange", config: { exposureInterval: 30_000 } });
    const { sim, daemon, user } = t;
    let lapsed = false;
    for (const fault of FAULTS) {
      const failedBefore = t.events("heartbeat.failed").length;
      sim.faults.set("exchange", fault);
      await t.run(20_000, 1_000, () => {
        if (!simArmed(t!)) lapsed = true;
      });
      const failed = t.events("heartbeat.failed").slice(failedBefore);
      expect(failed.length, JSON.stringify(fault)).toBeGreaterThan(0);
      expect(new Set(failed.map((l) => l.reason))).toEqual(new Set(["malformed_response"]));
      sim.faults.clear("exchange");
      await t.run(20_000, 1_000, () => {
        if (!simArmed(t!)) lapsed = true;
      });
      expect(daemon.status()[0]!.state).toBe("armed");
    }
    // Survived: never lapsed, armed, no trigger, no crash, deadlines monotonic; the exposure loop kept going.
    expect(lapsed).toBe(false);
    expect(t.events("daemon.crash")).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    assertDeadlinesNeverMoveEarlier(sim.state.actions, user);
    expect(t.events("exposure").length).toBeGreaterThanOrEqual(4);
    expect(t.events("exposure.failed")).toHaveLength(0);
    // Multi-MB answers leave the heap bounded (nothing accumulates across them).
    expect(retainedHeap()).toBeLessThan(512 * 1024 * 1024);
    proven("malformed-exchange");
  });

  test("behavior: malformed /info answers are logged and survived", async () => {
    t = await startInProcess({ label: "malformed-info", config: { exposureInterval: 10_000 } });
    const { sim, daemon, user } = t;
    await t.run(10_000, 1_000);
    const pushesBefore = sim.state.actions.filter((a) => a.accepted).length;
    for (const fault of FAULTS) {
      const failedBefore = t.events("exposure.failed").length;
      sim.faults.set("info", fault);
      await t.run(20_000, 1_000);
      const failed = t.events("exposure.failed").slice(failedBefore);
      expect(failed.length, JSON.stringify(fault)).toBeGreaterThan(0);
      expect(failed.every((l) => l.kind === "malformed_response")).toBe(true);
      const okBefore = t.events("exposure").length;
      sim.faults.clear("info");
      await t.run(20_000, 1_000);
      expect(t.events("exposure").length, "the next poll succeeds").toBeGreaterThan(okBefore);
    }
    // The heartbeat never noticed: a push every interval, all accepted, armed throughout.
    const pushes = sim.state.actions.filter((a) => a.accepted).length - pushesBefore;
    expect(pushes).toBeGreaterThanOrEqual(Math.floor(120_000 / 15_000) - 1);
    expect(t.events("heartbeat.failed")).toHaveLength(0);
    expect(daemon.status()[0]!.state).toBe("armed");
    expect(simArmed(t)).toBe(true);
    expect(t.events("daemon.crash")).toHaveLength(0);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    proven("malformed-info");
  });

  test("behavior: malformed /evm answers are logged and survived", async () => {
    t = await startInProcess({ label: "malformed-evm", chainWatch: true });
    const { sim, daemon, user } = t;
    expect(t.chain).not.toBeNull();
    await t.run(5_000, 1_000);
    expect(t.events("chain.watch.started")).toHaveLength(1);
    const headBefore = t.chain!.status().headBlock!;
    expect(headBefore).toBeGreaterThan(0);
    for (const fault of FAULTS) {
      const errorsBefore = t.events("chain.error").length;
      sim.faults.set("evm", fault);
      await t.run(5_000, 1_000);
      const errors = t.events("chain.error").slice(errorsBefore);
      expect(errors.length, JSON.stringify(fault)).toBeGreaterThan(0);
      expect(t.chain!.status().lastError).not.toBeNull();
      sim.faults.clear("evm");
      await t.run(3_000, 1_000);
      expect(t.chain!.status().lastError, "the next tick succeeds").toBeNull();
    }
    // The watch caught up with the chain (blocks keep coming with the clock) and never took the daemon down.
    expect(t.chain!.status().headBlock!).toBeGreaterThan(headBefore + 20);
    expect(t.chain!.status().enabled).toBe(true);
    expect(t.events("daemon.crash")).toHaveLength(0);
    expect(t.events("heartbeat.failed")).toHaveLength(0);
    expect(daemon.status()[0]!.state).toBe("armed");
    expect(simArmed(t)).toBe(true);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    proven("malformed-evm");
  });
});
