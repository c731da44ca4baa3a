/**
 * The coordination component (docs/operations.md, "High availability"): replicas of the same account set run a
 * lease-backed election in etcd (the `etcd3` client's election recipe: a key under the election's prefix per
 * candidate, bound to the candidate's lease; the lowest create revision holds it), and this component tells the
 * switches where this replica stands. The switch machine decides what that allows (src/switch/coordination.ts);
 * nothing here gates a push or a cancel.
 *
 * Rules, and why:
 * - Loaded only when `coordinate` is set: `etcd3` (and gRPC under it) is imported here, dynamically; a replica
 *   alone never loads it.
 * - Held means proven: this replica counts itself the lease holder only while its key has the lowest create
 *   revision AND its lease is known to live: until (when the last read of the lease's remaining time left + that
 *   time) - 1 s. etcd reports whole seconds rounded down, and expires a lease no earlier than that, so a replica
 *   cut off from etcd stops counting itself the holder before etcd can give the lease to another.
 * - Lost means etcd has not answered for a whole TTL (so any lease this replica held has expired there too); a
 *   slow answer in between leaves the role as it was proven (a follower stays a follower: never more).
 * - Never a reason not to protect: etcd unreachable at start, or later, leaves the daemon pushing; the role is
 *   `lost` and says so on /readyz, the metrics and the status page.
 * - On a graceful stop (`beforeStop`) this replica resigns first (its key goes), then reads the candidates: the
 *   switches remove the schedule only when none remains; two replicas stopping together both find none and both
 *   remove (at least once), one stopping beside a live one finds it and keeps.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type { Etcd3 } from "etcd3";
import { type CoordinateTarget, parseCoordinate } from "../../config/coordinate.js";
import { monotonicOf } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import type { TimerHandle } from "../../core/runtime.js";
import type { CoordinationStatus } from "../../core/status.js";
import type { Component } from "../components.js";
import type { Base, Feed } from "../context.js";
import { feed } from "../context.js";

/** What the switches are told (the machine's `coordination` event). */
export type CoordinationState = {
  role: "leader" | "follower" | "lost";
  /** the fencing token: this replica's election key's create revision while it holds the lease; at a stop, the
   * revision of the read that found no other candidate */
  token: string | null;
  othersAlive: boolean | null;
  detail: string | null;
};

export type Coordination = Feed<CoordinationState> & {
  now(): CoordinationState;
  status(): CoordinationStatus;
  /** Resign, then read the candidates once more: the state the switches' stop decides on. */
  beforeStop(): Promise<void>;
};

/** What each candidate says of itself (its key's value): compared to warn when the replicas differ. */
type Candidacy = { replica: string; intervalMs: number; deadlineMs: number };

/** The lease is counted held until this long before etcd could expire it. */
export const LEASE_MARGIN_MS = 1_000;
const MAX_VALUE_BYTES = 1_024;
const MAX_CANDIDATES_SHOWN = 16;
const MAX_CANDIDATES_READ = 64;

/** The election's name: the prefix and a hash of the sorted accounts (replicas of the same set meet there). */
export function electionName(accounts: readonly string[]): string {
  const set = [...new Set(accounts.map((a) => a.toLowerCase()))].sort().join(",");
  return createHash("sha256").update(set).digest("hex").slice(0, 16);
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 200);

function parseCandidacy(value: Buffer): Candidacy | null {
  if (value.length > MAX_VALUE_BYTES) return null;
  try {
    const v = JSON.parse(value.toString("utf8")) as Record<string, unknown>;
    if (typeof v.replica !== "string" || !Number.isFinite(v.intervalMs) || !Number.isFinite(v.deadlineMs))
      return null;
    return {
      replica: v.replica.slice(0, 100),
      intervalMs: Number(v.intervalMs),
      deadlineMs: Number(v.deadlineMs),
    };
  } catch {
    return null;
  }
}

export function coordinationComponent(): Component<
  Base & { logger: Logger },
  { coordination: Coordination | null }
> {
  let closeClient: (() => void) | null = null;
  let stopTimers: (() => void) | null = null;
  let resign: (() => Promise<void>) | null = null;
  const life = { closed: false };
  return {
    name: "coordination",
    async start({ config, runtime, logger, metrics, accounts, listen, params }) {
      if (config.coordinate === undefined) return { coordination: null };
      const target = parseCoordinate(config.coordinate) as CoordinateTarget;
      const log = logger.child({ module: "coordination" });
      const ttlMs = config.coordinateTtl;
      const ttl = Math.round(ttlMs / 1_000);
      const pollMs = Math.max(250, Math.floor(ttlMs / 4));
      const callTimeoutMs = Math.max(1_000, pollMs);
      // a stop's calls: within a quarter of the stop's bound each (the removal that may follow needs the rest)
      const stopMs = Math.max(250, Math.min(callTimeoutMs, Math.floor(config.shutdownTimeout / 4)));
      const mono = () => monotonicOf(runtime.clock);
      const { timers } = runtime;
      const name = electionName(accounts);
      const electionPrefix = `${target.prefix}/election/${name}/`;
      const replica = `${hostname()}:${process.pid}${listen ? ` (health ${listen.host}:${listen.port})` : ""} ${params.stateDir}`;
      const mine: Candidacy = { replica, intervalMs: config.interval, deadlineMs: config.deadline };

      // Loaded here only: a replica without --coordinate never imports etcd3 (test/app/coordination.test.ts).
      const loaded = await import("etcd3");
      // etcd3 is CommonJS: its exports are named, or under `default` when node's loader cannot list them
      const etcd3 = (
        loaded.Etcd3 ? loaded : (loaded as unknown as { default: typeof loaded }).default
      ) as typeof loaded;
      const client: Etcd3 = new etcd3.Etcd3({
        hosts: target.endpoints,
        dialTimeout: callTimeoutMs,
        // every unary call is bounded; the election's watch streams are not (they wait by design)
        defaultCallOptions: (context) =>
          context.isStream ? {} : { deadline: runtime.clock.now() + callTimeoutMs },
      });
      closeClient = () => client.close();
      const election = client.namespace(`${target.prefix}/`).election(name, ttl);

      const bounded = <T>(what: string, p: Promise<T>, ms = callTimeoutMs): Promise<T> =>
        new Promise<T>((resolve, reject) => {
          const t = timers.after(ms, () => reject(new Error(`${what}: no answer from etcd within ${ms} ms`)));
          p.then(
            (v) => {
              t.cancel();
              resolve(v);
            },
            (e: unknown) => {
              t.cancel();
              reject(e);
            },
          );
        });

      let campaign: ReturnType<typeof election.campaign> | null = null;
      let lastCampaignError = "";
      let ourKey: string | null = null;
      let stopping = false;
      let lastOk: number | null = null;
      let lastError = "etcd not reached yet";
      let validUntil = 0;
      let lowest = false;
      let token: string | null = null;
      let others: (Candidacy & { key: string; createRevision: string })[] = [];
      let state: CoordinationState = { role: "lost", token: null, othersAlive: null, detail: lastError };
      let warned = "";
      const states = feed<CoordinationState>();

      const campaignNow = () => {
        if (life.closed || stopping) return;
        ourKey = null;
        const c = election.campaign(JSON.stringify(mine));
        campaign = c;
        // the lease lost (etcd3 says so after missing keep-alives) or the campaign failed: resign, campaign again
        c.on("error", (error) => {
          if (campaign !== c) return;
          // said once per distinct error (etcd down, it fails every second), at debug after that
          const text = errorText(error);
          const level = text === lastCampaignError ? "debug" : "warn";
          lastCampaignError = text;
          log[level](
            { event: "coordination.campaign_failed", error: errorText(error) },
            `the coordination campaign failed (${errorText(error)}); campaigning again`,
          );
          c.resign().catch(() => undefined);
          campaign = null;
          timers.after(1_000, campaignNow);
        });
        c.on("elected", () => {
          if (campaign === c) void poll();
        });
      };

      const evaluate = () => {
        const t = mono();
        const reachable = lastOk !== null && t - lastOk < ttlMs;
        const leader = lowest && t < validUntil;
        const holder = others.find((o) => BigInt(o.createRevision) < BigInt(token ?? "0"));
        const next: CoordinationState = leader
          ? { role: "leader", token, othersAlive: others.length > 0, detail: null }
          : reachable
            ? {
                role: "follower",
                token: null,
                othersAlive: others.length > 0,
                detail: holder
                  ? `${holder.replica} holds it`
                  : lowest
                    ? "the lease's life is not confirmed"
                    : "campaigning",
              }
            : {
                role: "lost",
                token: null,
                othersAlive: null,
                detail:
                  lastOk === null
                    ? lastError
                    : `no answer from etcd for ${Math.round((t - lastOk) / 1000)} s: ${lastError}`,
              };
        publish(next);
      };

      let announced = false;
      const publish = (next: CoordinationState, force = false) => {
        const changed =
          force ||
          !announced ||
          next.role !== state.role ||
          next.token !== state.token ||
          next.othersAlive !== state.othersAlive;
        announced = true;
        state = next;
        metrics.coordinationLeader.set(next.role === "leader" ? 1 : 0);
        metrics.coordinationLost.set(next.role === "lost" ? 1 : 0);
        metrics.coordinationCandidates.set(next.role === "lost" ? 0 : others.length);
        if (!changed) return;
        const fields = {
          event: `coordination.${next.role}`,
          token: next.token,
          othersAlive: next.othersAlive,
          detail: next.detail,
          election: electionPrefix,
        };
        if (next.role === "leader")
          log.warn(fields, `this replica holds the coordination lease (fencing token ${next.token})`);
        else if (next.role === "follower")
          log.info(fields, `another replica holds the coordination lease or is campaigning (${next.detail})`);
        else
          log.error(
            fields,
            `etcd is unreachable (${next.detail}): pushing and cancelling go on; ${config.actAlone ? "gated actions are taken alone (actAlone)" : "no closing, drill, reset or removal on stop is taken (actAlone is off)"}`,
          );
        states.publish(next);
      };

      // Bounded: the oldest candidates first (the holder is the oldest); a flood of keys under the prefix costs one
      // page, and this replica, if not among them, is simply not the holder.
      const candidatesQuery = () =>
        client.getAll().prefix(electionPrefix).sort("Create", "Ascend").limit(MAX_CANDIDATES_READ);
      const readCandidates = () => bounded("reading the candidates", candidatesQuery().exec());

      const differ = () => {
        const diff = others.filter(
          (o) => o.intervalMs !== mine.intervalMs || o.deadlineMs !== mine.deadlineMs,
        );
        const key = diff.map((o) => `${o.replica}:${o.intervalMs}:${o.deadlineMs}`).join("|");
        if (key === warned) return diff;
        warned = key;
        if (diff.length > 0)
          log.warn(
            {
              event: "coordination.settings_differ",
              mine: { intervalMs: mine.intervalMs, deadlineMs: mine.deadlineMs },
              others: diff.slice(0, MAX_CANDIDATES_SHOWN),
            },
            `the replicas' settings differ (${diff.map((o) => `${o.replica}: interval ${o.intervalMs} ms, deadline ${o.deadlineMs} ms`).join("; ")}; here interval ${mine.intervalMs} ms, deadline ${mine.deadlineMs} ms): each push replaces the schedule, so the shorter deadline is what the exchange holds half the time; give both the same`,
          );
        return diff;
      };

      let polling = false;
      const poll = async () => {
        if (polling || life.closed || stopping) return;
        polling = true;
        const sent = mono();
        try {
          const c = campaign;
          if (c && ourKey === null) ourKey = await bounded("granting the lease", c.getCampaignKey());
          const leaseId = ourKey?.slice(electionPrefix.length) ?? null;
          const [range, life] = await Promise.all([
            readCandidates(),
            leaseId === null
              ? Promise.resolve(null)
              : bounded("reading the lease", client.leaseClient.leaseTimeToLive({ ID: leaseId })),
          ]);
          lastOk = mono();
          const kvs = range.kvs.map((kv) => ({ key: kv.key.toString("utf8"), kv }));
          const ours = kvs.find((x) => x.key === ourKey);
          others = kvs
            .filter((x) => x.key !== ourKey)
            .map((x) => ({
              key: x.key,
              createRevision: x.kv.create_revision,
              ...(parseCandidacy(x.kv.value) ?? {
                replica: "unreadable candidate",
                intervalMs: 0,
                deadlineMs: 0,
              }),
            }));
          const remaining = life === null ? -1 : Number(life.TTL);
          token = ours ? ours.kv.create_revision : null;
          lowest =
            ours !== undefined &&
            others.every((o) => BigInt(o.createRevision) > BigInt(ours.kv.create_revision));
          validUntil = remaining > 0 ? sent + remaining * 1_000 - LEASE_MARGIN_MS : 0;
          differ();
          // (a key not there yet while its lease lives is a campaign whose put has not landed: wait for it)
          if (c && life !== null && remaining <= 0) {
            // our lease expired on etcd (a long partition): a new candidacy, with a new lease
            log.warn(
              { event: "coordination.lease_expired" },
              "this replica's coordination lease expired on etcd; campaigning again",
            );
            c.resign().catch(() => undefined);
            campaign = null;
            campaignNow();
          }
        } catch (error) {
          lastError = errorText(error);
        } finally {
          polling = false;
        }
        evaluate();
        armExpiry();
      };

      // The held lease ends at `validUntil` and etcd counts as lost at lastOk + TTL even if no poll answers.
      let expiry: TimerHandle | null = null;
      const armExpiry = () => {
        expiry?.cancel();
        expiry = null;
        if (life.closed || stopping) return;
        const t = mono();
        const at = [validUntil, lastOk === null ? 0 : lastOk + ttlMs].filter((x) => x > t);
        if (at.length > 0) expiry = timers.after(Math.min(...at) - t + 1, evaluate);
      };
      const loop = runtime.every(pollMs, () => void poll(), { name: "coordination" });
      stopTimers = () => {
        loop.stop();
        expiry?.cancel();
      };

      log.info(
        {
          event: "coordination.start",
          endpoints: target.endpoints,
          election: electionPrefix,
          ttlSeconds: ttl,
          actAlone: config.actAlone,
        },
        `coordinating through etcd (${target.endpoints.join(", ")}), election ${electionPrefix}, lease ${ttl} s`,
      );
      campaignNow();
      // The first answer before the switches start (bounded: etcd unreachable never holds the pushes back).
      // Until this replica's own key is seen (its campaign's put landed), within one call's time-out.
      await poll();
      for (let waited = 0; lastOk !== null && token === null && waited < callTimeoutMs; waited += 100) {
        await new Promise<void>((resolve) => timers.after(100, resolve));
        await poll();
      }

      resign = async () => {
        const c = campaign;
        campaign = null;
        await bounded("resigning", c?.resign() ?? Promise.resolve(), stopMs).catch(() => undefined);
      };
      const coordination: Coordination = {
        subscribe: states.subscribe,
        now: () => state,
        status: () => ({
          role: state.role,
          token: state.token,
          reachable: state.role !== "lost",
          actAlone: config.actAlone,
          detail: state.detail,
          election: electionPrefix,
          ttlSeconds: ttl,
          candidates: others.slice(0, MAX_CANDIDATES_SHOWN).map((o) => ({
            replica: o.replica,
            intervalMs: o.intervalMs,
            deadlineMs: o.deadlineMs,
          })),
          settingsDiffer: others.some(
            (o) => o.intervalMs !== mine.intervalMs || o.deadlineMs !== mine.deadlineMs,
          ),
        }),
        async beforeStop() {
          if (stopping) return;
          stopping = true;
          stopTimers?.();
          const c = campaign;
          campaign = null;
          // A resign that does not answer ends it: etcd cannot say who is alive, the schedule is kept.
          try {
            await bounded("resigning", c?.resign() ?? Promise.resolve(), stopMs);
            const range = await bounded("reading the candidates", candidatesQuery().exec(), stopMs);
            const rest = range.kvs.filter((kv) => kv.key.toString("utf8") !== ourKey);
            others = rest.map((kv) => ({
              key: kv.key.toString("utf8"),
              createRevision: kv.create_revision,
              ...(parseCandidacy(kv.value) ?? {
                replica: "unreadable candidate",
                intervalMs: 0,
                deadlineMs: 0,
              }),
            }));
            lowest = false;
            publish(
              {
                role: "follower",
                token: range.header.revision,
                othersAlive: rest.length > 0,
                detail:
                  rest.length > 0
                    ? `${others.map((o) => o.replica).join(", ")} still a candidate`
                    : "resigned; no other candidate",
              },
              true,
            );
          } catch (error) {
            lastError = errorText(error);
            publish(
              { role: "lost", token: null, othersAlive: null, detail: `at the stop: ${lastError}` },
              true,
            );
          }
        },
      };
      return { coordination };
    },
    async close() {
      life.closed = true;
      stopTimers?.();
      // a stop that kept the schedule (or a failed start) still hands the lease over at once, not after its TTL
      await resign?.();
      closeClient?.();
    },
  };
}
