/**
 * The replicas' membership (src/replicas/membership.ts) against a real etcd (test/helpers/etcd.ts): the replica
 * id kept in the state directory, and what `replicas list` / `forget` read and delete, keys seeded as the
 * coordination component writes them. The daemon's own writes are the process tests' (coordination.test.ts).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  forgetMember,
  listMembers,
  membersPrefix,
  parseMember,
  REPLICA_ID_FILE,
  replicaId,
} from "../../src/replicas/membership.js";
import { type EtcdHandle, startEtcd } from "../helpers/etcd.js";

let etcd: EtcdHandle;
let client: Etcd3;
beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: `http://${etcd.endpoint}` });
}, 30_000);
afterAll(async () => {
  client?.close();
  await etcd?.stop();
});

const A = "aaaaaaaaaaaaaaaa";
const B = "bbbbbbbbbbbbbbbb";
const member = (id: string, state: "running" | "stopped") =>
  JSON.stringify({
    id,
    replica: `host-${id.slice(0, 1)}:1 /var/lib/x`,
    state,
    at: "2026-11-28T12:00:00.000Z",
  });
const params = (prefix: string) => ({
  endpoints: [`http://${etcd.endpoint}`],
  prefix,
  timeoutMs: 3_000,
  now: () => Date.now(),
});

describe("the replica id", () => {
  test("behavior: made once and kept in the state directory; the same id after a restart", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-member-"));
    const first = await replicaId(dir);
    expect(first).toMatchObject({ created: true });
    expect(first.id).toMatch(/^[0-9a-f]{16}$/);
    expect(readFileSync(path.join(dir, REPLICA_ID_FILE), "utf8")).toBe(`${first.id}\n`);
    expect(await replicaId(dir)).toEqual({ id: first.id, created: false });
  });

  test("error: a file that holds no id is replaced by a new id, and says so", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-member-"));
    writeFileSync(path.join(dir, REPLICA_ID_FILE), "not an id\n");
    const made = await replicaId(dir);
    expect(made).toMatchObject({ created: true, replaced: "it did not hold a replica id" });
    expect(readFileSync(path.join(dir, REPLICA_ID_FILE), "utf8").trim()).toBe(made.id);
  });

  test("error: a membership value that is not one is unreadable (never taken for a stopped mark)", () => {
    expect(parseMember(Buffer.from(member(A, "stopped")))).toMatchObject({ id: A, state: "stopped" });
    for (const bad of [
      "{",
      JSON.stringify({ id: A, replica: "x", state: "gone", at: "" }),
      "x".repeat(2_000),
    ])
      expect(parseMember(Buffer.from(bad))).toBeNull();
  });
});

describe("replicas list / forget (real etcd)", () => {
  test("behavior: list shows state and liveness per election; forget refuses a live member and deletes a dead one", async () => {
    const prefix = "mlist";
    const e1 = "1111111111111111";
    const e2 = "2222222222222222";
    await client.put(`${membersPrefix(prefix, e1)}${A}`).value(member(A, "running"));
    await client.put(`${membersPrefix(prefix, e1)}${B}`).value(member(B, "running"));
    await client.put(`${membersPrefix(prefix, e2)}${B}`).value(member(B, "stopped"));
    // A's candidacy under its lease: A is live
    const lease = client.lease(10);
    await lease
      .put(`${prefix}/election/${e1}/${await lease.grant()}`)
      .value(JSON.stringify({ replica: "a", intervalMs: 1, deadlineMs: 2, member: A }));
    const all = await listMembers(params(prefix));
    expect(all.map((m) => [m.election, m.id, m.state, m.live]).sort()).toEqual([
      [e1, A, "running", true],
      [e1, B, "running", false],
      [e2, B, "stopped", false],
    ]);
    expect((await listMembers({ ...params(prefix), election: e2 })).map((m) => m.id)).toEqual([B]);
    // live: refused, nothing deleted
    expect(await forgetMember({ ...params(prefix), id: A })).toMatchObject({
      forgotten: [],
      live: [{ id: A }],
    });
    // of one election only
    const one = await forgetMember({ ...params(prefix), id: B, election: e2 });
    expect(one.forgotten.map((m) => m.election)).toEqual([e2]);
    expect((await listMembers(params(prefix))).map((m) => `${m.election}/${m.id}`).sort()).toEqual([
      `${e1}/${A}`,
      `${e1}/${B}`,
    ]);
    expect((await forgetMember({ ...params(prefix), id: B })).forgotten).toHaveLength(1);
    expect(await forgetMember({ ...params(prefix), id: B })).toEqual({ forgotten: [], live: [] });
    await lease.revoke();
  });

  test("error: etcd not answering is EtcdUnavailableError (the command's exit 69)", async () => {
    await expect(
      listMembers({
        endpoints: ["http://127.0.0.1:1"],
        prefix: "x",
        timeoutMs: 1_000,
        now: () => Date.now(),
      }),
    ).rejects.toMatchObject({ name: "EtcdUnavailableError" });
  });
});
