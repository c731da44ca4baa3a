/**
 * The replicas' election's wording and metrics: the election (src/replicas/election.ts) publishes typed events on
 * the daemon's bus (src/core/replica-events.ts) and words nothing; these subscribers turn them into the
 * `coordination.*` lines of docs/daemon.md (module `coordination`) and the `hl_deadman_coordination_*` gauges. The
 * app subscribes them once, on the daemon's bus (src/app/parts/notifications.ts).
 * - `coordination.start` (info); `coordination.leader` (warn), `.follower` (info), `.lost` (error) when the
 *   standing changes; `coordination.member` (info) when the membership's mark changes; `coordination.member_id`,
 *   `.member_failed`, `.settings_differ`, `.lease_expired` (warn); `coordination.campaign_failed` (warn once per
 *   distinct error, debug after);
 * - on every evaluation: `coordination_leader` and `coordination_lost` (1 or 0) and `coordination_candidates` (the
 *   other candidates seen; 0 while lost).
 */
import type { EventSubscriber } from "../core/events.js";
import type { Logger } from "../core/logger.js";
import type { Metrics } from "./metrics.js";

export function coordinationLog(logger: Logger): EventSubscriber {
  const log = logger.child({ module: "coordination" });
  return (e) => {
    if (e.module !== "coordination") return;
    switch (e.type) {
      case "coordinationStarted":
        log.info(
          {
            event: "coordination.start",
            endpoints: e.endpoints,
            election: e.election,
            ttlSeconds: e.ttlSeconds,
            actAlone: e.actAlone,
            member: e.member,
          },
          `coordinating through etcd (${e.endpoints.join(", ")}), election ${e.election}, lease ${e.ttlSeconds} s`,
        );
        return;
      case "coordinationEvaluated": {
        if (!e.changed) return;
        const fields = {
          event: `coordination.${e.role}`,
          token: e.token,
          othersAlive: e.othersAlive,
          detail: e.detail,
          election: e.election,
        };
        if (e.role === "leader")
          log.warn(fields, `this replica holds the coordination lease (fencing token ${e.token})`);
        else if (e.role === "follower")
          log.info(fields, `another replica holds the coordination lease or is campaigning (${e.detail})`);
        else
          log.error(
            fields,
            `etcd is unreachable (${e.detail}): pushing and cancelling go on; ${e.actAlone ? "gated actions are taken alone (actAlone)" : "no closing, drill, reset or removal on stop is taken (actAlone is off)"}`,
          );
        return;
      }
      case "memberIdUnkept": {
        const fields = { event: "coordination.member_id", member: e.member, error: e.error };
        if (e.cause === "unwritable")
          log.warn(
            fields,
            `the replica id could not be kept in the state directory (${e.error}); using ${e.member}, made of the host name and the directory`,
          );
        else
          log.warn(
            fields,
            `the state directory's replica id file ${e.error}; a new id ${e.member} is used (the old one's membership stays in etcd until forgotten: 'hl-deadman replicas forget')`,
          );
        return;
      }
      case "memberMarked":
        log.info(
          { event: "coordination.member", member: e.member, state: e.state, memberKey: e.key },
          e.state === "running"
            ? `this replica's membership (${e.member}) says running: a stop of another replica keeps the schedule while it has no stopped mark`
            : `this replica's membership (${e.member}) is marked stopped`,
        );
        return;
      case "memberMarkFailed":
        log.warn(
          { event: "coordination.member_failed", member: e.member, error: e.error },
          `this replica's membership could not be marked stopped (${e.error}): the other replicas' stops keep the schedule until it stands again or is forgotten`,
        );
        return;
      case "campaignFailed":
        // said once per distinct error (etcd down, it fails every second), at debug after that
        log[e.repeated ? "debug" : "warn"](
          { event: "coordination.campaign_failed", error: e.error },
          `the coordination campaign failed (${e.error}); campaigning again`,
        );
        return;
      case "leaseExpired":
        log.warn(
          { event: "coordination.lease_expired" },
          "this replica's coordination lease expired on etcd; campaigning again",
        );
        return;
      case "settingsDiffer": {
        const { mine } = e;
        log.warn(
          { event: "coordination.settings_differ", mine: { ...mine }, others: e.shown },
          `the replicas' settings differ (${e.differing.map((o) => `${o.replica}: interval ${o.intervalMs} ms, deadline ${o.deadlineMs} ms`).join("; ")}; here interval ${mine.intervalMs} ms, deadline ${mine.deadlineMs} ms): each push replaces the schedule, so the shorter deadline is what the exchange holds half the time; give both the same`,
        );
        return;
      }
    }
  };
}

export function coordinationMetrics(metrics: Metrics): EventSubscriber {
  return (e) => {
    if (e.module !== "coordination" || e.type !== "coordinationEvaluated") return;
    metrics.coordinationLeader.set(e.role === "leader" ? 1 : 0);
    metrics.coordinationLost.set(e.role === "lost" ? 1 : 0);
    metrics.coordinationCandidates.set(e.role === "lost" ? 0 : e.candidates);
  };
}

/** The election's log and metrics subscribers, on `logger` and `metrics`. */
export function replicaSubscribers(logger: Logger, metrics: Metrics): EventSubscriber[] {
  return [coordinationLog(logger), coordinationMetrics(metrics)];
}
