/**
 * The `coordinate`, `coordinateTtl` and `actAlone` options (src/config/coordinate.ts, src/config/rules.ts): an
 * etcd URL or a clear refusal (exit 78), and the lease's timing rule against interval and deadline.
 */
import { describe, expect, test } from "vitest";
import { parseCoordinate } from "../../src/config/coordinate.js";
import { cli } from "../helpers/cli.js";

const check = (...flags: string[]) => cli(["config", "check", "--no-key", "--json", ...flags]);

describe("coordinate", () => {
  test("behavior: members and prefix are read; the prefix defaults to hl-deadman", () => {
    expect(parseCoordinate("etcd://10.0.0.5:2379,etcd-2.internal:2380/desk/a")).toEqual({
      endpoints: ["http://10.0.0.5:2379", "http://etcd-2.internal:2380"],
      prefix: "desk/a",
    });
    expect(parseCoordinate("etcd://[::1]:2379/")).toEqual({
      endpoints: ["http://[::1]:2379"],
      prefix: "hl-deadman",
    });
  });

  test.each([
    ["http://127.0.0.1:2379", /must start with etcd:\/\//],
    ["etcd://127.0.0.1", /is not HOST:PORT/],
    ["etcd://127.0.0.1:99999", /port 99999 is not 1-65535/],
    ["etcd://a:1,,b:2", /is not HOST:PORT/],
    ["etcd://a:1/bad prefix", /the prefix must be/],
  ])("error: %s is refused with the rule, exit 78", async (url, rule) => {
    expect(parseCoordinate(url)).toMatch(rule);
    const r = await check("--coordinate", url);
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(rule);
    expect(r.stderr).toContain("coordinate");
  });

  test("error: the lease's TTL is whole seconds from 5 s to 60 s and at most deadline - interval", async () => {
    const base = ["--coordinate", "etcd://127.0.0.1:2379"];
    expect((await check(...base, "--coordinate-ttl", "4s")).stderr).toMatch(/whole seconds from 5s to 60s/);
    expect((await check(...base, "--coordinate-ttl", "2500ms")).code).toBe(78);
    const late = await check(...base, "--interval", "15s", "--deadline", "40s", "--coordinate-ttl", "30s");
    expect(late.code).toBe(78);
    expect(late.stderr).toMatch(/at most deadline - interval = 25s/);
    const ok = await check(...base, "--interval", "15s", "--deadline", "40s", "--coordinate-ttl", "25s");
    expect(ok.code, ok.stderr).toBe(0);
    // no coordination: the TTL is not judged
    expect((await check("--coordinate-ttl", "2s")).code).toBe(0);
  });
});
