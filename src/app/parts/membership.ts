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
import { checkStateFile, writeFileAtomic } from "../../core/files.js";

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
