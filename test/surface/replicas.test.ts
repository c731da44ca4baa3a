/**
 * The replicas' election's wording and metrics (src/surface/replicas.ts): the typed events the election publishes
 * (src/core/replica-events.ts) become its `coordination.*` lines (docs/daemon.md) and the coordination gauges, on
 * the subscribers the daemon subscribes. The election against a real etcd is test/app/coordination.test.ts's; the
 * cases it rarely reaches (a repeated campaign failure, settings that differ, an id not kept) are published here.
 */
import { Registry } from "prom-client";
import { describe, expect, test } from "vitest";
import { createEventBus } from "../../src/core/events.js";
import type { CoordinationFact } from "../../src/core/replica-events.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { replicaSubscribers } from "../../src/surface/replicas.js";
import { captureLogger } from "../app/helpers.js";

const ELECTION = "hl/election/0123456789abcdef/";

function world() {
  const log = captureLogger();
  const registry = new Registry();
  const metrics = createMetrics({ registry, defaultMetrics: false });
  const bus = createEventBus(...replicaSubscribers(log.logger, metrics));
  const tell = (e: CoordinationFact) => bus.publish({ ...e, module: "coordination" });
  const lines = () => log.lines.map(({ time: _t, pid: _p, hostname: _h, ...l }) => l);
  const gauge = async (name: string) =>
    (await registry.getSingleMetric(`hl_deadman_coordination_${name}`)?.get())?.values[0]?.value;
  return { tell, lines, gauge };
}

const evaluated = (
  role: "leader" | "follower" | "lost",
  changed: boolean,
  candidates = 1,
): CoordinationFact => ({
  type: "coordinationEvaluated",
  role,
  token: role === "leader" ? "42" : null,
  othersAlive: role === "lost" ? null : candidates > 0,
  detail: role === "follower" ? "b holds it" : role === "lost" ? "etcd not reached yet" : null,
  candidates,
  changed,
  election: ELECTION,
  actAlone: false,
});

describe("the election's events as lines and gauges", () => {
  test("behavior: each standing is said once, when it changes, at its level; the gauges follow every evaluation", async () => {
    const { tell, lines, gauge } = world();
    tell({
      type: "coordinationStarted",
      endpoints: ["127.0.0.1:2379"],
      election: ELECTION,
      ttlSeconds: 10,
      actAlone: false,
      member: "m1",
    });
    tell(evaluated("follower", true, 2));
    expect([await gauge("leader"), await gauge("lost"), await gauge("candidates")]).toEqual([0, 0, 2]);
    tell(evaluated("leader", true, 1));
    tell(evaluated("leader", false, 0));
    expect([await gauge("leader"), await gauge("lost"), await gauge("candidates")]).toEqual([1, 0, 0]);
    tell(evaluated("lost", true, 3));
    expect([await gauge("leader"), await gauge("lost"), await gauge("candidates")]).toEqual([0, 1, 0]);
    expect(lines()).toEqual([
      {
        level: 30,
        module: "coordination",
        event: "coordination.start",
        endpoints: ["127.0.0.1:2379"],
        election: ELECTION,
        ttlSeconds: 10,
        actAlone: false,
        member: "m1",
        msg: `coordinating through etcd (127.0.0.1:2379), election ${ELECTION}, lease 10 s`,
      },
      {
        level: 30,
        module: "coordination",
        event: "coordination.follower",
        token: null,
        othersAlive: true,
        detail: "b holds it",
        election: ELECTION,
        msg: "another replica holds the coordination lease or is campaigning (b holds it)",
      },
      {
        level: 40,
        module: "coordination",
        event: "coordination.leader",
        token: "42",
        othersAlive: true,
        detail: null,
        election: ELECTION,
        msg: "this replica holds the coordination lease (fencing token 42)",
      },
      {
        level: 50,
        module: "coordination",
        event: "coordination.lost",
        token: null,
        othersAlive: null,
        detail: "etcd not reached yet",
        election: ELECTION,
        msg: "etcd is unreachable (etcd not reached yet): pushing and cancelling go on; no closing, drill, reset or removal on stop is taken (actAlone is off)",
      },
    ]);
  });

  test("behavior: a repeated campaign failure drops to debug; differing settings, membership and id lines keep their fields", () => {
    const { tell, lines } = world();
    tell({ type: "campaignFailed", error: "connect ECONNREFUSED", repeated: false });
    tell({ type: "campaignFailed", error: "connect ECONNREFUSED", repeated: true });
    tell({ type: "leaseExpired" });
    const b = { replica: "b", intervalMs: 2_000, deadlineMs: 20_000, key: "k/b", createRevision: "7" };
    const c = { ...b, replica: "c", key: "k/c", createRevision: "8" };
    tell({
      type: "settingsDiffer",
      mine: { intervalMs: 1_000, deadlineMs: 10_000 },
      differing: [b, c],
      shown: [b],
    });
    tell({ type: "memberMarked", member: "m1", state: "running", key: "hl/members/x/m1" });
    tell({ type: "memberMarkFailed", member: "m1", error: "no answer" });
    tell({ type: "memberIdUnkept", cause: "unwritable", member: "m2", error: "EACCES" });
    const got = lines();
    expect(got.map((l) => [l.level, l.event])).toEqual([
      [40, "coordination.campaign_failed"],
      [20, "coordination.campaign_failed"],
      [40, "coordination.lease_expired"],
      [40, "coordination.settings_differ"],
      [30, "coordination.member"],
      [40, "coordination.member_failed"],
      [40, "coordination.member_id"],
    ]);
    expect(got[3]).toMatchObject({ mine: { intervalMs: 1_000, deadlineMs: 10_000 } });
    expect(got[3]?.others).toHaveLength(1);
    expect(got[3]?.msg).toContain("b: interval 2000 ms, deadline 20000 ms; c: interval 2000 ms");
    // the membership key is said as `memberKey`: the logger removes every field named `key` (src/core/logger.ts)
    expect(got[4]).toMatchObject({ member: "m1", state: "running", memberKey: "hl/members/x/m1" });
    expect(got[6]).toMatchObject({ member: "m2", error: "EACCES" });
    expect(got.every((l) => l.module === "coordination")).toBe(true);
  });
});
