/**
 * The replicas' membership in etcd (docs/operations.md, "High availability"): beside its election key (bound to
 * its lease, gone when the lease expires), each coordinated replica keeps a membership key with NO lease, at
 * `<prefix>/members/<election>/<replica id>`, holding its identity and whether it is `running` or `stopped`.
 *
 * Rules, and why:
 * - The key outlives the lease on purpose: an expired lease cannot tell a dead replica from one cut off from etcd
 *   (still pushing, still needing the schedule); the membership key remembers that the replica existed.
 * - Only the replica itself writes `stopped`, when it resigns on a graceful stop (or closes), and it writes
 *   `running` again when it stands (at every poll, if the key says otherwise or is gone). `stopped` is therefore
 *   that replica's own word that it no longer pushes; nothing else is (src/switch/coordination.ts decides).
 * - The replica id is stable across restarts: a random id kept in the state directory (`replica-id`), so a
 *   replica that restarts clears its own mark rather than leaving a second member behind.
 * - Retired replicas' keys are removed only by the operator (`hl-deadman replicas forget ID`): a stale `stopped`
 *   mark changes no decision (a stopped member never keeps a schedule), a stale `running` one keeps every stop
 *   from removing until the operator declares that replica gone (the safe side).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { checkStateFile, writeFileAtomic } from "../core/files.js";
import { loadEtcd3 } from "./etcd3.js";

export const REPLICA_ID_FILE = "replica-id";
const ID_PATTERN = /^[0-9a-f]{16}$/;
export const MAX_VALUE_BYTES = 1_024;
/** At most this many members are read; more (a flood of keys) and the stop cannot see them all: it keeps. */
export const MAX_MEMBERS_READ = 64;

export type MemberState = "running" | "stopped";
export type MemberRecord = {
  id: string;
  /** host, pid, health address and state directory, for people */
  replica: string;
  state: MemberState;
  /** when the state was written (ISO-8601, the writer's clock) */
  at: string;
};

export const isReplicaId = (id: string) => ID_PATTERN.test(id);

/** The prefix of every election's members, and of one election's. */
export const membersRoot = (prefix: string) => `${prefix}/members/`;
export const membersPrefix = (prefix: string, election: string) => `${membersRoot(prefix)}${election}/`;

export function parseMember(value: Buffer): MemberRecord | null {
  if (value.length > MAX_VALUE_BYTES) return null;
  try {
    const v = JSON.parse(value.toString("utf8")) as Record<string, unknown>;
    if (
      typeof v.id !== "string" ||
      !isReplicaId(v.id) ||
      typeof v.replica !== "string" ||
      (v.state !== "running" && v.state !== "stopped") ||
      typeof v.at !== "string"
    )
      return null;
    return { id: v.id, replica: v.replica.slice(0, 300), state: v.state, at: v.at.slice(0, 40) };
  } catch {
    return null;
  }
}

/**
 * The other members' marks as a stop reads them (every member under `prefix` but this replica's own `ownKey`): an
 * unreadable member is no one's word that it stopped.
 */
export function marksOf(
  kvs: readonly { key: Buffer; value: Buffer }[],
  prefix: string,
  ownKey: string,
): { id: string; replica: string; stopped: boolean }[] {
  return kvs
    .filter((kv) => kv.key.toString("utf8") !== ownKey)
    .map((kv) => {
      const m = parseMember(kv.value);
      return {
        id: kv.key.toString("utf8").slice(prefix.length, prefix.length + 64),
        replica: m?.replica ?? "unreadable member",
        stopped: m?.state === "stopped",
      };
    });
}

/**
 * This replica's id: read from `<stateDir>/replica-id`, or made (random) and written there atomically the first
 * time. A file that is not a regular file or not an id is replaced by a new id: the old id's membership then stays
 * behind, which keeps schedules (the safe side) until the operator forgets it.
 */
export async function replicaId(
  stateDir: string,
): Promise<{ id: string; created: boolean; replaced?: string }> {
  const file = path.join(stateDir, REPLICA_ID_FILE);
  const read = await checkStateFile(file, 256);
  if (read.ok && read.exists && isReplicaId(read.text.trim()))
    return { id: read.text.trim(), created: false };
  const id = randomBytes(8).toString("hex");
  await writeFileAtomic(file, `${id}\n`);
  return {
    id,
    created: true,
    ...(read.ok && !read.exists ? {} : { replaced: read.ok ? "it did not hold a replica id" : read.reason }),
  };
}

/** One member as `hl-deadman replicas list` shows it. */
export type MemberView = {
  id: string;
  /** the election (a hash of the account set, src/replicas/election.ts electionName) */
  election: string;
  state: MemberState | "unreadable";
  /** a candidacy naming this member is in the election now (its lease is held) */
  live: boolean;
  replica: string | null;
  at: string | null;
};

/** etcd unreachable, or an answer missing: the command's exit code is 69 (docs/cli.md). */
export class EtcdUnavailableError extends Error {
  override name = "EtcdUnavailableError";
}

type Client = import("etcd3").Etcd3;

/** A client for a one-shot command: every call bounded by `timeoutMs`. */
async function oneShotClient(endpoints: string[], timeoutMs: number, now: () => number): Promise<Client> {
  const etcd3 = await loadEtcd3("hl-deadman replicas");
  return new etcd3.Etcd3({
    hosts: endpoints,
    dialTimeout: timeoutMs,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: now() + timeoutMs }),
  });
}

async function answered<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (error) {
    throw new EtcdUnavailableError(
      `${what}: etcd did not answer (${(error instanceof Error ? error.message : String(error)).slice(0, 200)})`,
    );
  }
}

/** Every member under `prefix` (of one election when given), with whether its candidacy is live. */
export async function listMembers(params: {
  endpoints: string[];
  prefix: string;
  election?: string | undefined;
  timeoutMs: number;
  now: () => number;
}): Promise<MemberView[]> {
  const client = await oneShotClient(params.endpoints, params.timeoutMs, params.now);
  try {
    return await readMembers(client, params.prefix, params.election);
  } finally {
    client.close();
  }
}

async function readMembers(client: Client, prefix: string, election?: string): Promise<MemberView[]> {
  const root = election === undefined ? membersRoot(prefix) : membersPrefix(prefix, election);
  const electionRoot = `${prefix}/election/${election ?? ""}`;
  const [members, candidates] = await Promise.all([
    answered("reading the members", client.getAll().prefix(root).limit(1_000).exec()),
    answered("reading the candidates", client.getAll().prefix(electionRoot).limit(1_000).exec()),
  ]);
  const live = new Set<string>();
  for (const kv of candidates.kvs) {
    try {
      const v = JSON.parse(kv.value.toString("utf8")) as { member?: unknown };
      const name = kv.key.toString("utf8").slice(`${prefix}/election/`.length).split("/")[0];
      if (typeof v.member === "string") live.add(`${name}/${v.member}`);
    } catch {
      // not a candidacy of ours
    }
  }
  return members.kvs.map((kv) => {
    const [name = "", id = ""] = kv.key.toString("utf8").slice(membersRoot(prefix).length).split("/");
    const m = parseMember(kv.value);
    return {
      id,
      election: name,
      state: m?.state ?? "unreadable",
      live: live.has(`${name}/${id}`),
      replica: m?.replica ?? null,
      at: m?.at ?? null,
    };
  });
}

/**
 * Deletes member `id`'s key (of one election when given, else of every election it is in), unless a candidacy
 * naming it is live: a replica whose lease is held is not gone. Returns the members deleted (none: not found).
 */
export async function forgetMember(params: {
  endpoints: string[];
  prefix: string;
  id: string;
  election?: string | undefined;
  timeoutMs: number;
  now: () => number;
}): Promise<{ forgotten: MemberView[]; live: MemberView[] }> {
  const client = await oneShotClient(params.endpoints, params.timeoutMs, params.now);
  try {
    const found = (await readMembers(client, params.prefix, params.election)).filter(
      (m) => m.id === params.id,
    );
    const live = found.filter((m) => m.live);
    if (live.length > 0) return { forgotten: [], live };
    for (const m of found)
      await answered(
        "forgetting the member",
        client
          .delete()
          .key(`${membersPrefix(params.prefix, m.election)}${m.id}`)
          .exec(),
      );
    return { forgotten: found, live: [] };
  } finally {
    client.close();
  }
}
