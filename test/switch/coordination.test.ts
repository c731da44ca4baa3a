/**
 * Two replicas in the switch machine (src/switch/coordination.ts): what the lease gates and what it never gates,
 * one row per rule of docs/operations.md "High availability". Pure steps: no clock, no sockets, no etcd.
 */
import { describe, expect, test } from "vitest";
import type { EscalationConfig } from "../../src/core/feature.js";
import { auditSubscriber } from "../../src/surface/audit/events.js";
import type { AuditEntry } from "../../src/surface/audit/record.js";
import { logLineOf } from "../../src/surface/switch/index.js";
import { newEntry } from "../../src/switch/ledger-model.js";
import {
  type Event,
  initialModel,
  type Now,
  type SwitchConfig,
  type SwitchModel,
} from "../../src/switch/machine.js";
import { wakeOf } from "./features.js";
import { type ReadyView, stepView as step } from "./ready-view.js";
import { SWITCH_CFG } from "./world.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number): Now => ({ mono: ms, wall: T0 + ms, verified: true });
const ESC: EscalationConfig = {
  afterDownMs: 60_000,
  liquidationPct: null,
  drawdownPct: null,
  notionalCapUsd: null,
  retryMs: 30_000,
};
const LEADER = { type: "coordination", role: "leader", token: "42", othersAlive: true } as const;
const FOLLOWER = {
  type: "coordination",
  role: "follower",
  token: null,
  othersAlive: true,
  detail: "replica b",
} as const;
const LOST = {
  type: "coordination",
  role: "lost",
  token: null,
  othersAlive: null,
  detail: "deadline",
} as const;

const STOPPED_B = { id: "b", replica: "host-b", stopped: true } as const;
const UNMARKED_B = { id: "b", replica: "host-b", stopped: false } as const;
/** The kept/removed line of a stop's ReadyView, as logged. */
const r0 = (ready: ReadyView) =>
  ready.events
    .map(logLineOf)
    .flatMap((l) => (l ? [l] : []))
    .find((l) => l.event === "shutdown.kept" || l.event === "shutdown.removed");

class Run {
  model: SwitchModel;
  /** the answer to a removal this run sent (confirmed at once) */
  removal: ReadyView | undefined;
  constructor(cfg: Partial<SwitchConfig> = {}) {
    const entry = newEntry(SWITCH_CFG.account, T0, { limit: 10 });
    this.model = initialModel(
      { ...SWITCH_CFG, onEngineDown: "cancel", escalation: ESC, coordinated: true, ...cfg },
      entry,
    );
  }
  /** one event; a push it sends is confirmed at once */
  on(event: Event, ms: number): ReadyView {
    let ready: ReadyView;
    ({ model: this.model, ready } = step(this.model, event, at(ms)));
    if (ready.send?.kind === "push")
      ({ model: this.model } = step(
        this.model,
        { type: "pushConfirmed", id: ready.send.id, latencyMs: 5 },
        at(ms),
      ));
    if (ready.send?.kind === "removal")
      ({ model: this.model, ready: this.removal } = step(this.model, { type: "removalConfirmed" }, at(ms)));
    return ready;
  }
  logs(r: ReadyView) {
    return r.events.map(logLineOf).flatMap((l) => (l ? [l] : []));
  }
  /** started as `role`, engine down at 1 s (its orders cancelled) */
  downAs(role: Event) {
    this.on({ type: "start" }, 0);
    this.on(role, 10);
    this.on({ type: "engine", up: false, detail: "closed" }, 1_000);
    return this.on({ type: "ordersCancelled", confirmed: true, cancelled: 2, kept: 0 }, 1_010);
  }
}

describe("coordination: never gated", () => {
  test.each([
    ["follower", FOLLOWER],
    ["lost", LOST],
  ] as const)("a %s pushes and cancels on engine-down like a replica alone", (_name, role) => {
    const r = new Run();
    const started = r.on({ type: "start" }, 0);
    expect(started.send?.kind).toBe("push");
    r.on(role, 10);
    const tick = r.on({ type: "tick" }, 15_000);
    expect(tick.send?.kind).toBe("push");
    const down = r.on({ type: "engine", up: false, detail: "closed" }, 16_000);
    expect(down.cancelOrders).toEqual({ cancelStops: false });
  });
});

describe("coordination: escalation step 2", () => {
  test("a follower's rule holds: said once, nothing latched, no close; it closes once it wins the lease", () => {
    const r = new Run();
    r.downAs(FOLLOWER);
    const due = r.on({ type: "wake" }, 61_000);
    expect(due.closePositions).toBeUndefined();
    expect(r.model.entry.halted).toBeUndefined();
    expect(r.logs(due).map((l) => l.event)).toEqual(["escalation.held"]);
    expect(r.logs(r.on({ type: "tick" }, 75_000)).map((l) => l.event)).not.toContain("escalation.held");
    // the lease won (the leader died): the close goes, with the new holder's token in its log line
    const won = r.on({ ...LEADER, token: "77" }, 80_000);
    expect(won.closePositions).toEqual({ reason: expect.any(String), pass: 1 });
    const halted = r.logs(won).find((l) => l.event === "escalation.halted");
    expect(halted?.fields.token).toBe("77");
  });

  test("the leader closes, and its token is in the audit record", () => {
    const r = new Run();
    r.downAs(LEADER);
    const due = r.on({ type: "wake" }, 61_000);
    expect(due.closePositions?.pass).toBe(1);
    const audit: AuditEntry[] = [];
    const sub = auditSubscriber((e) => audit.push(e));
    for (const e of due.events) sub({ module: "switch", account: SWITCH_CFG.account, ...e } as never);
    expect(audit.find((a) => a.type === "escalation.halted")?.data).toMatchObject({ token: "42" });
  });

  test("etcd lost: no close, unless actAlone (then under the token `alone`)", () => {
    const r = new Run();
    r.downAs(LOST);
    expect(r.on({ type: "wake" }, 61_000).closePositions).toBeUndefined();
    const alone = new Run({ actAlone: true });
    alone.downAs(LOST);
    const due = alone.on({ type: "wake" }, 61_000);
    expect(due.closePositions?.pass).toBe(1);
    expect(alone.logs(due).find((l) => l.event === "escalation.halted")?.fields.token).toBe("alone");
  });

  test("a latched account whose lease went elsewhere: its next pass waits", () => {
    const r = new Run();
    r.downAs(LEADER);
    r.on({ type: "wake" }, 61_000);
    r.on(
      { type: "closeResult", flat: false, orders: 1, filledUsd: 0, dust: 0, refusal: "post_only" },
      62_000,
    );
    r.on(FOLLOWER, 63_000);
    const retry = r.on({ type: "wake" }, 92_000);
    expect(retry.closePositions).toBeUndefined();
    expect(wakeOf(r.model).escalate).toBe(92_000 + 30_000);
  });

  test("without coordination nothing changes: no token, the close goes", () => {
    const r = new Run({ coordinated: false });
    r.on({ type: "start" }, 0);
    r.on({ type: "engine", up: false, detail: "closed" }, 1_000);
    r.on({ type: "ordersCancelled", confirmed: true, cancelled: 2, kept: 0 }, 1_010);
    // an election input reaching an uncoordinated switch changes nothing
    r.on(FOLLOWER, 2_000);
    const due = r.on({ type: "wake" }, 61_000);
    expect(due.closePositions?.pass).toBe(1);
    expect(r.logs(due).find((l) => l.event === "escalation.halted")?.fields).not.toHaveProperty("token");
  });
});

describe("coordination: drill and reset", () => {
  test("a drill is refused unless this replica holds the lease", () => {
    for (const [role, started] of [
      [FOLLOWER, false],
      [LOST, false],
      [{ ...LEADER, othersAlive: false }, true],
    ] as const) {
      const r = new Run();
      r.on({ type: "start" }, 0);
      r.on(role, 10);
      const d = r.on({ type: "drillStart", id: "d1", by: "ops" }, 1_000);
      expect(d.drillPlace !== undefined, role.role).toBe(started);
      const line = r.logs(d)[0]!;
      expect(line.event).toBe(started ? "drill.started" : "drill.refused");
      if (started) expect(line.fields.token).toBe("42");
      else expect(String(line.fields.reason)).toMatch(/lease|etcd is unreachable/);
    }
  });

  test("the leader refuses a drill while another replica is alive: its pushes would replace the drill's schedule", () => {
    const r = new Run();
    r.on({ type: "start" }, 0);
    r.on(LEADER, 10);
    const d = r.on({ type: "drillStart", id: "d1", by: "ops" }, 1_000);
    expect(d.drillPlace).toBeUndefined();
    expect(String(r.logs(d)[0]?.fields.reason)).toMatch(/another replica is alive and pushing/);
  });

  test("a reset is refused by a follower; the leader releases, under its token", () => {
    const r = new Run();
    r.downAs(LEADER);
    r.on({ type: "wake" }, 61_000);
    r.on({ type: "closeResult", flat: true, orders: 1, filledUsd: 100, dust: 0, refusal: null }, 62_000);
    r.on(FOLLOWER, 63_000);
    const refused = r.on({ type: "reset", by: "ops" }, 64_000);
    expect(r.logs(refused)[0]?.event).toBe("escalation.reset_refused");
    expect(r.model.entry.halted).toBeDefined();
    r.on(LEADER, 65_000);
    const released = r.on({ type: "reset", by: "ops" }, 66_000);
    expect(r.logs(released)[0]).toMatchObject({ event: "escalation.reset", fields: { token: "42" } });
    expect(r.model.entry.halted).toBeUndefined();
  });
});

describe("coordination: the graceful stop", () => {
  const stop = (role: Event, cfg: Partial<SwitchConfig> = {}) => {
    const r = new Run(cfg);
    r.on({ type: "start" }, 0);
    r.on(role, 10);
    return { r, ready: r.on({ type: "shutdown", mode: "remove" }, 1_000) };
  };

  test("another live candidate: the schedule is kept, and why", () => {
    const { ready } = stop({ ...FOLLOWER, othersAlive: true });
    expect(ready.send).toBeUndefined();
    expect(ready.done).toMatchObject({ outcome: "kept", reason: "coordination" });
    expect(String(ready.events.find((e) => e.type === "kept")?.reason)).toMatch(/another replica is alive/);
  });

  test("no other candidate, every other member stopped: removed, under the revision of the read that found none", () => {
    const { r, ready } = stop({ ...FOLLOWER, token: "99", othersAlive: false, members: [STOPPED_B] });
    expect(ready.send?.kind).toBe("removal");
    expect(r.removal?.events.find((e) => e.type === "removed")).toMatchObject({ token: "99" });
    const leader = stop({ ...LEADER, othersAlive: false, members: [] });
    expect(leader.ready.send?.kind).toBe("removal");
  });

  // The stop's decision, one row per state of the other members (issue 40): only every other member's own
  // "stopped" mark lets a stop remove; a lease that expired without it (dead, or cut off from etcd and still
  // pushing) keeps the schedule, and so does a live candidate or a membership that was not read.
  test.each([
    ["no other member", false, [], "removed", null],
    [
      "every other member stopped",
      false,
      [STOPPED_B, { ...STOPPED_B, id: "c", replica: "host-c" }],
      "removed",
      null,
    ],
    [
      "another member unmarked, its lease expired",
      false,
      [UNMARKED_B],
      "kept",
      /replica b \(host-b\) is not marked stopped: its lease expired without a graceful stop \(dead, or cut off from etcd/,
    ],
    [
      "one stopped, one unmarked",
      false,
      [STOPPED_B, { ...UNMARKED_B, id: "c", replica: "host-c" }],
      "kept",
      /replica c \(host-c\) is not marked stopped/,
    ],
    ["another member live (its lease held)", true, [UNMARKED_B], "kept", /another replica is alive/],
    [
      "another candidate live though marked stopped (stopping now)",
      true,
      [STOPPED_B],
      "kept",
      /another replica is alive/,
    ],
    ["the membership not read", false, null, "kept", /membership was not read/],
    ["the membership absent from the input", false, undefined, "kept", /membership was not read/],
  ] as const)(
    "%s (another live candidate: %s; marks %j) → the schedule %s",
    (_name, othersAlive, members, outcome, reason) => {
      const { r, ready } = stop({
        ...FOLLOWER,
        token: "99",
        othersAlive,
        ...(members === undefined ? {} : { members }),
      });
      expect((ready.done ?? r.removal?.done)?.outcome).toBe(outcome);
      expect(ready.send?.kind).toBe(outcome === "removed" ? "removal" : undefined);
      if (reason !== null) {
        expect(ready.done).toMatchObject({ reason: "coordination" });
        const kept = r0(ready);
        expect(kept?.event).toBe("shutdown.kept");
        expect(String(kept?.fields.reason)).toMatch(reason);
      }
    },
  );

  test("the membership read at the stop is replaced by a later input without it (then kept)", () => {
    const r = new Run();
    r.on({ type: "start" }, 0);
    r.on({ ...FOLLOWER, othersAlive: false, members: [STOPPED_B] }, 10);
    r.on({ ...FOLLOWER, othersAlive: false }, 20);
    expect(r.on({ type: "shutdown", mode: "remove" }, 1_000).done?.outcome).toBe("kept");
  });

  test("malformed membership marks are refused", () => {
    for (const members of [[{ id: "b", replica: "x" }], "b", [{ id: 1, replica: "x", stopped: true }]]) {
      const r = new Run();
      r.on({ type: "start" }, 0);
      const bad = r.on({ ...FOLLOWER, members } as never, 5);
      expect(bad.events[0]).toMatchObject({ type: "eventRefused" });
    }
  });

  test("etcd unreachable at the stop: kept, unless actAlone", () => {
    const { ready } = stop(LOST);
    expect(ready.send).toBeUndefined();
    expect(String(ready.events.find((e) => e.type === "kept")?.reason)).toMatch(/etcd is unreachable/);
    expect(stop(LOST, { actAlone: true }).ready.send?.kind).toBe("removal");
  });

  test("keep stays keep; a malformed election input is refused", () => {
    const r = new Run();
    r.on({ type: "start" }, 0);
    const bad = r.on({ type: "coordination", role: "king", token: null, othersAlive: null } as never, 5);
    expect(bad.events[0]).toMatchObject({ type: "eventRefused" });
    expect(r.model.coord.role).toBe("lost");
    r.on(LEADER, 10);
    expect(r.on({ type: "shutdown", mode: "keep" }, 1_000).done).toEqual({
      account: SWITCH_CFG.account,
      outcome: "kept",
    });
  });
});
