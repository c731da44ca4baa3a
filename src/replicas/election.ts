/**
 * The replicas' election (docs/operations.md, "High availability"), an input source beside the watchers: replicas
 * of the same account set run a lease-backed election in etcd (the `etcd3` client's election recipe: a key under
 * the election's prefix per candidate, bound to the candidate's lease; the lowest create revision holds it), and
 * this replica's standing in it is published as a feed of `CoordinationState` (the switch machine's `coordination`
 * event). The switch machine decides what that allows (src/switch/coordination.ts); nothing here gates a push or a
 * cancel. The daemon's coordination component (src/app/parts/coordination.ts) only wires it.
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
 * - Membership (src/replicas/membership.ts): besides its candidacy, this replica keeps a key with no lease that
 *   says `running` (written at every poll where it says otherwise) and `stopped` when it stops on purpose.
 * - It words and counts nothing: what it finds and does is published on the daemon's bus as typed events
 *   (src/core/replica-events.ts); its log lines and metrics are their subscribers (src/surface/replicas.ts).
 * - On a graceful stop (`beforeStop`) this replica marks itself stopped, resigns (its candidacy goes), then reads
 *   the candidates and the members: the switches remove the schedule only when no other candidate remains and
 *   every other member is marked stopped (src/switch/coordination.ts). Each marks before it resigns and reads
 *   after, so of two replicas stopping together the later reader finds both marked and gone and removes (at
 *   least once); one stopping beside a live one, or beside one whose lease expired without the mark (dead, or cut
 *   off from etcd and still pushing), keeps.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type { Etcd3 } from "etcd3";
import { type CoordinateTarget, parseCoordinate } from "../config/coordinate.js";
import type { Config } from "../config/schema.js";
import { monotonicOf } from "../core/clock.js";
import type { EventBus } from "../core/events.js";
import { type Feed, feed } from "../core/feed.js";
import type { CoordinationFact } from "../core/replica-events.js";
import type { Runtime, TimerHandle } from "../core/runtime.js";
import type { CoordinationStatus } from "../core/status.js";
import {
  type Candidacy,
  type Candidate,
  candidatesOf,
  electionName,
  errorText,
  LEASE_MARGIN_MS,
  MAX_CANDIDATES_READ,
  MAX_CANDIDATES_SHOWN,
} from "./candidacy.js";
import { loadEtcd3 } from "./etcd3.js";
import {
  MAX_MEMBERS_READ,
  type MemberRecord,
  type MemberState,
  marksOf,
  membersPrefix,
  parseMember,
  replicaId,
} from "./membership.js";

export { electionName, LEASE_MARGIN_MS } from "./candidacy.js";

/** What the switches are told (the machine's `coordination` event). */
export type CoordinationState = {
  role: "leader" | "follower" | "lost";
  /** the fencing token: this replica's election key's create revision while it holds the lease; at a stop, the
   * revision of the read that found no other candidate */
  token: string | null;
  othersAlive: boolean | null;
  /** at a stop: the other replicas' membership marks as read after resigning; otherwise absent (not read) */
  members?: { id: string; replica: string; stopped: boolean }[] | null;
  detail: string | null;
};

export type Coordination = Feed<CoordinationState> & {
  now(): CoordinationState;
  status(): CoordinationStatus;
  /** Resign, then read the candidates once more: the state the switches' stop decides on. */
  beforeStop(): Promise<void>;
};

export type ElectionParameters = {
  config: Pick<
    Config,
    "coordinate" | "coordinateTtl" | "shutdownTimeout" | "interval" | "deadline" | "actAlone"
  > & { coordinate: string };
  /** the accounts this replica arms: the election is theirs (`electionName`) */
  accounts: readonly string[];
  /** this replica for people: host, pid, health address, state directory (the app knows its process) */
  replica: string;
  /** where this replica's membership id is kept (`replica-id`) */
  stateDir: string;
  runtime: Runtime;
  /** the daemon's bus: the election's events (src/core/replica-events.ts) */
  bus: EventBus;
};

/** A running election: its feed, and `close` (marks this replica stopped, resigns, closes the client). */
export type Election = { coordination: Coordination; close(): Promise<void> };

/**
 * Starts campaigning and returns after the first answer (bounded: etcd unreachable never holds the pushes back).
 */
export async function startElection({
  config,
  accounts,
  replica,
  stateDir,
  runtime,
  bus,
}: ElectionParameters): Promise<Election> {
  const life = { closed: false };
  const target = parseCoordinate(config.coordinate) as CoordinateTarget;
  const tell = (e: CoordinationFact) => bus.publish({ ...e, module: "coordination" });
  const ttlMs = config.coordinateTtl;
  const ttl = Math.round(ttlMs / 1_000);
  const pollMs = Math.max(250, Math.floor(ttlMs / 4));
  const callTimeoutMs = Math.max(1_000, pollMs);
  // a stop's three rounds (the mark, the resignation, the reads): within a sixth of the stop's bound each, half
  // in all (the removal that may follow needs the rest); one that does not answer ends them (the schedule is kept)
  const stopMs = Math.max(250, Math.min(callTimeoutMs, Math.floor(config.shutdownTimeout / 6)));
  const mono = () => monotonicOf(runtime.clock);
  const { timers } = runtime;
  const name = electionName(accounts);
  const electionPrefix = `${target.prefix}/election/${name}/`;
  const memberPrefix = membersPrefix(target.prefix, name);

  // The membership's id, kept in the state directory; a directory that cannot hold it still coordinates (an id of
  // the host and the directory): coordination is never a reason not to protect.
  const member = await replicaId(stateDir).catch((error: unknown) => ({
    id: createHash("sha256").update(`${hostname()}\0${stateDir}`).digest("hex").slice(0, 16),
    created: false,
    replaced: undefined,
    unwritable: errorText(error),
  }));
  if ("unwritable" in member)
    tell({ type: "memberIdUnkept", cause: "unwritable", member: member.id, error: member.unwritable });
  else if (member.replaced)
    tell({ type: "memberIdUnkept", cause: "replaced", member: member.id, error: member.replaced });
  const memberId = member.id;
  const memberKey = `${memberPrefix}${memberId}`;
  const mine: Candidacy = {
    replica,
    intervalMs: config.interval,
    deadlineMs: config.deadline,
    member: memberId,
  };

  // Loaded here only: a replica without --coordinate never imports etcd3 (test/app/coordination.test.ts).
  const etcd3 = await loadEtcd3("--coordinate");
  const client: Etcd3 = new etcd3.Etcd3({
    hosts: target.endpoints,
    dialTimeout: callTimeoutMs,
    // every unary call is bounded; the election's watch streams are not (they wait by design)
    defaultCallOptions: (context) =>
      context.isStream ? {} : { deadline: runtime.clock.now() + callTimeoutMs },
  });
  const closeClient = () => client.close();
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
  let others: Candidate[] = [];
  let state: CoordinationState = { role: "lost", token: null, othersAlive: null, detail: lastError };
  let warned = "";
  const states = feed<CoordinationState>();
  /** what this replica's membership key was last seen or written to say */
  let memberState: MemberState | null = null;

  // Unconditional for `stopped` (this replica's own last word); `running` only if the key is as last read (a
  // compare-and-swap on its mod revision): a `running` written by a poll already in flight never overwrites the
  // `stopped` of a stop that began meanwhile.
  const writeMember = async (state: MemberState, ifModRevision?: string | null) => {
    const record: MemberRecord = {
      id: memberId,
      replica,
      state,
      at: new Date(runtime.clock.now()).toISOString(),
    };
    const put = client.put(memberKey).value(JSON.stringify(record));
    const what = state === "stopped" ? "marking this replica stopped" : "marking this replica running";
    if (ifModRevision === undefined) await bounded(what, put.exec(), stopMs);
    else {
      const txn =
        ifModRevision === null
          ? client.if(memberKey, "Version", "==", 0)
          : client.if(memberKey, "Mod", "==", ifModRevision);
      const done = await bounded(what, txn.then(put).commit());
      if (!done.succeeded) return;
    }
    if (memberState !== state) tell({ type: "memberMarked", member: memberId, state, key: memberKey });
    memberState = state;
  };

  const campaignNow = () => {
    if (life.closed || stopping) return;
    ourKey = null;
    const c = election.campaign(JSON.stringify(mine));
    campaign = c;
    // the lease lost (etcd3 says so after missing keep-alives) or the campaign failed: resign, campaign again
    c.on("error", (error) => {
      if (campaign !== c) return;
      // told as repeated when the error is the last one's (etcd down, it fails every second)
      const text = errorText(error);
      tell({ type: "campaignFailed", error: text, repeated: text === lastCampaignError });
      lastCampaignError = text;
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
    tell({
      type: "coordinationEvaluated",
      role: next.role,
      token: next.token,
      othersAlive: next.othersAlive,
      detail: next.detail,
      candidates: others.length,
      changed,
      election: electionPrefix,
      actAlone: config.actAlone,
    });
    if (changed) states.publish(next);
  };

  // Bounded: the oldest candidates first (the holder is the oldest); a flood of keys under the prefix costs one
  // page, and this replica, if not among them, is simply not the holder.
  const candidatesQuery = () =>
    client.getAll().prefix(electionPrefix).sort("Create", "Ascend").limit(MAX_CANDIDATES_READ);
  const readCandidates = () => bounded("reading the candidates", candidatesQuery().exec());

  const differ = () => {
    const diff = others.filter((o) => o.intervalMs !== mine.intervalMs || o.deadlineMs !== mine.deadlineMs);
    const key = diff.map((o) => `${o.replica}:${o.intervalMs}:${o.deadlineMs}`).join("|");
    if (key === warned) return diff;
    warned = key;
    if (diff.length > 0)
      tell({
        type: "settingsDiffer",
        mine: { intervalMs: mine.intervalMs, deadlineMs: mine.deadlineMs },
        differing: diff,
        shown: diff.slice(0, MAX_CANDIDATES_SHOWN),
      });
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
      const [range, life, own] = await Promise.all([
        readCandidates(),
        leaseId === null
          ? Promise.resolve(null)
          : bounded("reading the lease", client.leaseClient.leaseTimeToLive({ ID: leaseId })),
        bounded("reading this replica's membership", client.get(memberKey).exec()),
      ]);
      lastOk = mono();
      // standing: the membership says running (written again if it says otherwise, or was forgotten)
      const ownKv = own.kvs[0];
      const ownMark = ownKv ? parseMember(ownKv.value) : null;
      const standing = ownMark?.state === "running" && ownMark.id === memberId && ownMark.replica === replica;
      if (standing) memberState = "running";
      const kvs = range.kvs.map((kv) => ({ key: kv.key.toString("utf8"), kv }));
      const ours = kvs.find((x) => x.key === ourKey);
      others = candidatesOf(range.kvs, ourKey);
      const remaining = life === null ? -1 : Number(life.TTL);
      token = ours ? ours.kv.create_revision : null;
      lowest =
        ours !== undefined && others.every((o) => BigInt(o.createRevision) > BigInt(ours.kv.create_revision));
      validUntil = remaining > 0 ? sent + remaining * 1_000 - LEASE_MARGIN_MS : 0;
      differ();
      // (a key not there yet while its lease lives is a campaign whose put has not landed: wait for it)
      if (c && life !== null && remaining <= 0) {
        // our lease expired on etcd (a long partition): a new candidacy, with a new lease
        tell({ type: "leaseExpired" });
        c.resign().catch(() => undefined);
        campaign = null;
        campaignNow();
      }
      if (!standing && !stopping) await writeMember("running", ownKv ? ownKv.mod_revision : null);
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
  const stopTimers = () => {
    loop.stop();
    expiry?.cancel();
  };

  tell({
    type: "coordinationStarted",
    endpoints: target.endpoints,
    election: electionPrefix,
    ttlSeconds: ttl,
    actAlone: config.actAlone,
    member: memberId,
  });
  campaignNow();
  // The first answer before the switches start (bounded: etcd unreachable never holds the pushes back).
  // Until this replica's own key is seen (its campaign's put landed), within one call's time-out.
  await poll();
  for (let waited = 0; lastOk !== null && token === null && waited < callTimeoutMs; waited += 100) {
    await new Promise<void>((resolve) => timers.after(100, resolve));
    await poll();
  }

  const resign = async () => {
    const c = campaign;
    campaign = null;
    await bounded("resigning", c?.resign() ?? Promise.resolve(), stopMs).catch(() => undefined);
  };
  // A close that is no graceful stop with removal (`--on-shutdown keep`, a failed start) still stops on purpose:
  // the mark says so (once; a stop that marked already is not marked again).
  const markStopped = async () => {
    stopping = true;
    if (memberState === "stopped") return;
    await writeMember("stopped").catch((error: unknown) =>
      tell({ type: "memberMarkFailed", member: memberId, error: errorText(error) }),
    );
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
      stopTimers();
      const c = campaign;
      campaign = null;
      // Marked stopped BEFORE resigning, read AFTER: any other replica that finds this one's candidacy gone finds
      // its mark too. A call that does not answer ends it: etcd cannot say who is alive, the schedule is kept.
      try {
        await writeMember("stopped");
        await bounded("resigning", c?.resign() ?? Promise.resolve(), stopMs);
        const [range, membership] = await Promise.all([
          bounded("reading the candidates", candidatesQuery().exec(), stopMs),
          bounded(
            "reading the members",
            client
              .getAll()
              .prefix(memberPrefix)
              .limit(MAX_MEMBERS_READ + 1)
              .exec(),
            stopMs,
          ),
        ]);
        const marks = marksOf(membership.kvs, memberPrefix, memberKey);
        // more than can be read: the stop cannot see them all
        const members = membership.kvs.length > MAX_MEMBERS_READ ? null : marks;
        const unmarked = marks.filter((x) => !x.stopped);
        const rest = range.kvs.filter((kv) => kv.key.toString("utf8") !== ourKey);
        others = candidatesOf(rest, ourKey);
        lowest = false;
        publish(
          {
            role: "follower",
            token: range.header.revision,
            othersAlive: rest.length > 0,
            members,
            detail:
              rest.length > 0
                ? `${others.map((o) => o.replica).join(", ")} still a candidate`
                : members === null
                  ? `resigned; more than ${MAX_MEMBERS_READ} members under ${memberPrefix}`
                  : unmarked.length > 0
                    ? `resigned; no other candidate, ${unmarked.length} other member(s) not marked stopped`
                    : "resigned; no other candidate, every other member stopped",
          },
          true,
        );
      } catch (error) {
        lastError = errorText(error);
        publish({ role: "lost", token: null, othersAlive: null, detail: `at the stop: ${lastError}` }, true);
      }
    },
  };
  return {
    coordination,
    async close() {
      life.closed = true;
      stopTimers();
      // a stop that kept the schedule (or a failed start) is marked, and still hands the lease over at once, not
      // after its TTL
      await markStopped();
      await resign();
      closeClient();
    },
  };
}
