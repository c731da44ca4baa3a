/**
 * The election's candidates as etcd holds them (src/replicas/election.ts): the election's name, and what each
 * candidate's key says of itself, read bounded and never trusted beyond its shape.
 */
import { createHash } from "node:crypto";

/** What each candidate says of itself (its key's value): compared to warn when the replicas differ. */
export type Candidacy = { replica: string; intervalMs: number; deadlineMs: number; member?: string };

/** Another candidate as read: its key, its create revision (the lowest holds the lease) and its candidacy. */
export type Candidate = Candidacy & { key: string; createRevision: string };

/** The lease is counted held until this long before etcd could expire it. */
export const LEASE_MARGIN_MS = 1_000;
const MAX_VALUE_BYTES = 1_024;
export const MAX_CANDIDATES_SHOWN = 16;
export const MAX_CANDIDATES_READ = 64;

/** The election's name: the prefix and a hash of the sorted accounts (replicas of the same set meet there). */
export function electionName(accounts: readonly string[]): string {
  const set = [...new Set(accounts.map((a) => a.toLowerCase()))].sort().join(",");
  return createHash("sha256").update(set).digest("hex").slice(0, 16);
}

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 200);

export function parseCandidacy(value: Buffer): Candidacy | null {
  if (value.length > MAX_VALUE_BYTES) return null;
  try {
    const v = JSON.parse(value.toString("utf8")) as Record<string, unknown>;
    if (typeof v.replica !== "string" || !Number.isFinite(v.intervalMs) || !Number.isFinite(v.deadlineMs))
      return null;
    return {
      replica: v.replica.slice(0, 100),
      intervalMs: Number(v.intervalMs),
      deadlineMs: Number(v.deadlineMs),
      ...(typeof v.member === "string" ? { member: v.member.slice(0, 64) } : {}),
    };
  } catch {
    return null;
  }
}

/** The candidates of a read of the election's prefix but this replica's own key (`ours`), in the read's order. */
export function candidatesOf(
  kvs: readonly { key: Buffer; value: Buffer; create_revision: string }[],
  ours: string | null,
): Candidate[] {
  return kvs
    .filter((kv) => kv.key.toString("utf8") !== ours)
    .map((kv) => ({
      key: kv.key.toString("utf8"),
      createRevision: kv.create_revision,
      ...(parseCandidacy(kv.value) ?? {
        replica: "unreadable candidate",
        intervalMs: 0,
        deadlineMs: 0,
      }),
    }));
}
