/**
 * The election's reads as pure functions (src/replicas/candidacy.ts, membership.ts `marksOf`): the other
 * candidates of a read (this replica's own key left out, an unreadable value kept as an unreadable candidate) and
 * the other members' marks at a stop (an unreadable member is never taken for a stopped one).
 */
import { describe, expect, test } from "vitest";
import { candidatesOf, electionName, parseCandidacy } from "../../src/replicas/candidacy.js";
import { marksOf } from "../../src/replicas/membership.js";

const kv = (key: string, value: unknown, createRevision = "1") => ({
  key: Buffer.from(key),
  value: Buffer.from(typeof value === "string" ? value : JSON.stringify(value)),
  create_revision: createRevision,
});

describe("candidacy", () => {
  test("default: the other candidates in the read's order, this replica's own key left out", () => {
    const mine = { replica: "a", intervalMs: 15_000, deadlineMs: 60_000, member: "0123456789abcdef" };
    const other = { replica: "b", intervalMs: 15_000, deadlineMs: 30_000 };
    const kvs = [
      kv("p/election/x/1", mine, "5"),
      kv("p/election/x/2", other, "7"),
      kv("p/election/x/3", "{", "9"),
    ];
    expect(candidatesOf(kvs, "p/election/x/1")).toEqual([
      { key: "p/election/x/2", createRevision: "7", ...other },
      {
        key: "p/election/x/3",
        createRevision: "9",
        replica: "unreadable candidate",
        intervalMs: 0,
        deadlineMs: 0,
      },
    ]);
    expect(candidatesOf(kvs, null)).toHaveLength(3);
    expect(parseCandidacy(Buffer.from(JSON.stringify(mine)))).toEqual(mine);
  });

  test("error: a value too large or without its figures is no candidacy", () => {
    expect(
      parseCandidacy(
        Buffer.from(JSON.stringify({ replica: "x".repeat(2_000), intervalMs: 1, deadlineMs: 1 })),
      ),
    ).toBeNull();
    expect(
      parseCandidacy(Buffer.from(JSON.stringify({ replica: "b", intervalMs: "15000", deadlineMs: 1 }))),
    ).toBeNull();
  });

  test("default: the election's name is the account set's, whatever the order and case", () => {
    expect(electionName(["0xB", "0xa", "0xb"])).toBe(electionName(["0xa", "0xb"]));
    expect(electionName(["0xa"])).not.toBe(electionName(["0xa", "0xb"]));
  });
});

describe("members at a stop", () => {
  test("default: the other members' marks; an unreadable member is not stopped", () => {
    const prefix = "p/members/x/";
    const stopped = { id: "1111111111111111", replica: "r1", state: "stopped", at: "2026-01-01T00:00:00Z" };
    const running = { id: "2222222222222222", replica: "r2", state: "running", at: "2026-01-01T00:00:00Z" };
    const kvs = [
      kv(`${prefix}0000000000000000`, { ...running, id: "0000000000000000" }),
      kv(`${prefix}1111111111111111`, stopped),
      kv(`${prefix}2222222222222222`, running),
      kv(`${prefix}3333333333333333`, "not json"),
    ];
    expect(marksOf(kvs, prefix, `${prefix}0000000000000000`)).toEqual([
      { id: "1111111111111111", replica: "r1", stopped: true },
      { id: "2222222222222222", replica: "r2", stopped: false },
      { id: "3333333333333333", replica: "unreadable member", stopped: false },
    ]);
  });
});
