/**
 * The death gate's driver (src/fleet-death/gate.ts) carries out what the machine commands: the passes of one turn's
 * deaths go to the canceller in risk order, a pass that cannot be afforded is answered at once with the failure the
 * switch falls back on (`weight_unaffordable`, not retryable), and a confirming read waits for the window's weight.
 */
import { describe, expect, test } from "vitest";
import { createDeathGate, UNAFFORDABLE } from "../../src/fleet-death/gate.js";
import type { CancelOpenOrdersResult } from "../../src/protocol/hyperliquid/cancel.js";

function fakeTimers() {
  let now = 0;
  let timers: { due: number; fn: () => void; live: boolean }[] = [];
  return {
    mono: () => now,
    timers: {
      after(ms: number, fn: () => void) {
        const t = { due: now + ms, fn, live: true };
        timers.push(t);
        return {
          cancel() {
            t.live = false;
          },
        };
      },
    },
    /** runs every timer due up to `to`, in order */
    async advance(to: number) {
      for (;;) {
        await new Promise((r) => setImmediate(r));
        const due = timers.filter((t) => t.live && t.due <= to).sort((a, b) => a.due - b.due)[0];
        if (!due) break;
        due.live = false;
        now = Math.max(now, due.due);
        due.fn();
      }
      timers = timers.filter((t) => t.live);
      now = to;
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe("the death gate", () => {
  test("behavior: a host's death: passes in risk order, the unaffordable one answered at once, confirms wait", async () => {
    const t = fakeTimers();
    const ran: string[] = [];
    const confirmsSent: string[] = [];
    const gate = createDeathGate({
      // 100 a minute: two read-first passes of 42 (22 + a confirm of 20) fit, a third does not
      config: { budget: 100, windowMs: 60_000, reserveEach: 42 },
      canceller: () => async (p) => {
        ran.push(p.account);
        // the executor's confirming read waits on the gate
        if (await gate.beforeConfirm(p.account)) confirmsSent.push(p.account);
        return { confirmed: true, cancelled: 3, kept: 1 };
      },
      timers: t.timers,
      mono: t.mono,
      wall: () => 1_000_000,
      passCost: () => ({ inTime: 22, confirm: 20 }),
      confirmWeight: 20,
      marginMs: 10_000,
      accountOf: (u) => u,
    });
    gate.attach(() => 1_000_000 + 50_000);
    gate.risk({ account: "far", liquidationDistance: 0.5, notional: 10 });
    gate.risk({ account: "near", liquidationDistance: 0.01, notional: 10 });
    const answers = new Map<string, CancelOpenOrdersResult>();
    for (const a of ["far", "unknown", "near"]) gate.engine(a, false);
    for (const a of ["far", "unknown", "near"])
      void gate.cancel({ account: a, cancelStops: false }).then((r) => answers.set(a, r));
    // nothing runs in the turn the deaths arrive: they are gathered, then decided together
    expect(ran).toEqual([]);
    await t.advance(1);
    expect(ran).toEqual(["near", "far"]);
    expect(answers.get("unknown")).toMatchObject({
      confirmed: false,
      failure: { kind: UNAFFORDABLE, request: "read", retryable: false },
    });
    await t.advance(2);
    expect(confirmsSent).toEqual(["near", "far"]);
    expect(answers.get("near")).toMatchObject({ confirmed: true, cancelled: 3 });
    expect(answers.get("far")).toMatchObject({ confirmed: true });
    gate.close();
  });

  test("behavior: an engine up again before its pass ran: answered without a pass", async () => {
    const t = fakeTimers();
    const ran: string[] = [];
    const gate = createDeathGate({
      config: { budget: 1_000, windowMs: 60_000, reserveEach: 42 },
      canceller: () => async (p) => {
        ran.push(p.account);
        return { confirmed: true, cancelled: 0, kept: 0 };
      },
      timers: t.timers,
      mono: t.mono,
      wall: () => 0,
      passCost: () => ({ inTime: 2, confirm: 20 }),
      confirmWeight: 20,
      marginMs: 0,
      accountOf: (u) => u,
    });
    gate.attach(() => 60_000);
    gate.engine("a", false);
    const answer = gate.cancel({ account: "a", cancelStops: false });
    gate.engine("a", true);
    await t.advance(1);
    expect(ran).toEqual([]);
    expect(await answer).toMatchObject({ confirmed: false, detail: expect.stringContaining("up again") });
    gate.close();
  });
});
