/**
 * Process test of issue 40, finding 1: the host's wall clock 2 h ahead from the start (libfaketime `+7200s`, the
 * monotonic clock untouched), the simulator on true time (this process). Before issue 40 every answer's Date was
 * refused, the pushes were made on the local clock and the simulator held the schedule ~7,200 s ahead while
 * /readyz said 200. Now: within 30 s of the start the simulator holds a schedule within deadline + interval of its
 * own time, and /readyz is never 200 while it holds one further out. Both with the HyperEVM block time as second
 * witness (`--rpc-url`) and without it (the answers' Date and the exchange's verdicts alone).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { requireBinary } from "../helpers/binaries.js";
import { assertBuilt, libfaketime, processSetup, sleep } from "../reliability/harness.js";

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
beforeAll(() => assertBuilt());

const INTERVAL_MS = 2_000;
const DEADLINE_MS = 20_000;
/** the simulator's answer and our reading of it are a few ms apart: what "further out" allows for */
const TOLERANCE_MS = 1_000;

async function run(label: string, withRpc: boolean) {
  requireBinary("faketime"); // the Debian package that ships libfaketime (fails with the install command)
  const LIBFAKETIME = libfaketime();
  const { user, sim, start, readyz } = await processSetup(`issue 40 clock ahead: ${label}`, cleanups, {
    orders: "one",
    health: true,
    cadence: [
      "--interval",
      `${INTERVAL_MS / 1000}s`,
      "--deadline",
      `${DEADLINE_MS / 1000}s`,
      "--request-timeout",
      "2s",
      "--exposure-interval",
      "0",
    ],
  });
  const p = start(withRpc ? ["--rpc-url", sim.rpcUrl] : [], {
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME: "+7200s",
    FAKETIME_DONT_FAKE_MONOTONIC: "1",
  });
  const began = Date.now();
  const bound = DEADLINE_MS + INTERVAL_MS + TOLERANCE_MS;
  let within: number | null = null;
  let readyWhileFar = 0;
  let ready = 0;
  let maxAhead = Number.NEGATIVE_INFINITY;
  while (Date.now() - began < 30_000) {
    const before = sim.state.getSchedule(user);
    const r = await readyz().catch(() => ({ status: 0, body: null }));
    const after = sim.state.getSchedule(user);
    const now = Date.now();
    // the farthest of what the simulator held around the readiness answer
    const held = Math.max(before ?? Number.NEGATIVE_INFINITY, after ?? Number.NEGATIVE_INFINITY);
    if (held > Number.NEGATIVE_INFINITY) {
      maxAhead = Math.max(maxAhead, held - now);
      if (held - now > bound && r.status === 200) readyWhileFar++;
      if (after !== null && after - now <= DEADLINE_MS + INTERVAL_MS && within === null) within = now - began;
    }
    if (r.status === 200) ready++;
    await sleep(200);
  }
  const lines = p.lines;
  p.kill("SIGTERM");
  await p.exited;
  return { within, readyWhileFar, ready, lines, sim, user };
}

// The two cases concurrent: each has its own simulator, state directory and daemon, and spends its 30 s watching
// them (waiting on timers, not the CPU); cleaned up after the file.
describe.concurrent("issue 40: a local clock 2 h ahead from the start (libfaketime)", () => {
  test("behavior: with the block time as second witness, the schedule is within deadline + interval of the exchange's time, never ready while further out", async () => {
    const { within, readyWhileFar, ready, lines, sim, user } = await run("with rpc", true);
    expect(readyWhileFar).toBe(0);
    expect(within).not.toBeNull();
    expect(within!).toBeLessThan(30_000);
    // the last schedule is within the bound of the simulator's own time, and the exchange never fired
    const held = sim.state.getSchedule(user)!;
    expect(held - Date.now()).toBeLessThanOrEqual(DEADLINE_MS + INTERVAL_MS);
    expect(sim.state.getTriggers(user)).toHaveLength(0);
    // the local clock 2 h off the verified time is never ready (clock.suspect), and the witnesses said so
    expect(ready).toBe(0);
    expect(lines.some((l) => l.event === "clock.verified" && l.by === "date+block")).toBe(true);
    expect(lines.some((l) => l.event === "clock.suspect")).toBe(true);
  }, 60_000);

  test("behavior: without a block witness, the exchange's verdicts rule the local clock out: the same bounds hold", async () => {
    const { within, readyWhileFar, ready, lines, sim, user } = await run("without rpc", false);
    // the second witness is the exchange's acceptance of a push planned on the Date (never the local clock)
    expect(lines.some((l) => l.event === "clock.verified" && l.by === "date+verdict")).toBe(true);
    expect(readyWhileFar).toBe(0);
    expect(within).not.toBeNull();
    expect(within!).toBeLessThan(30_000);
    const held = sim.state.getSchedule(user)!;
    expect(held - Date.now()).toBeLessThanOrEqual(DEADLINE_MS + INTERVAL_MS);
    expect(ready).toBe(0);
  }, 60_000);
});
