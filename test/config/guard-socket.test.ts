/**
 * `guardSocket` (src/config/listen.ts parseGuardSocket, the rules in src/config/rules.ts): a Unix socket path or a
 * loopback TCP address; anything else is a configuration error (exit 78) that says why; one engine guard only.
 */
import { describe, expect, test } from "vitest";
import { parseGuardSocket } from "../../src/config/listen.js";
import { loadConfig } from "../../src/config/load.js";
import { guardConnectGraceOf } from "../../src/config/rules.js";
import { cli } from "../helpers/cli.js";
import { issuesOf } from "./helpers.js";

describe("guardSocket", () => {
  test("default: a path is a Unix socket; 127.x and [::1] are loopback TCP", () => {
    expect(parseGuardSocket("/run/hl-deadman/guard.sock")).toEqual({
      kind: "unix",
      path: "/run/hl-deadman/guard.sock",
    });
    expect(parseGuardSocket("./guard.sock")).toEqual({ kind: "unix", path: "./guard.sock" });
    expect(parseGuardSocket("127.0.0.1:9470")).toEqual({ kind: "tcp", host: "127.0.0.1", port: 9470 });
    expect(parseGuardSocket("127.0.0.2:9470")).toEqual({ kind: "tcp", host: "127.0.0.2", port: 9470 });
    expect(parseGuardSocket("[::1]:9470")).toEqual({ kind: "tcp", host: "::1", port: 9470 });
    expect(
      loadConfig({ options: { guardSocket: "/run/hl-deadman/guard.sock", guardHeartbeatGap: "500ms" } })
        .config,
    ).toMatchObject({
      guardSocket: "/run/hl-deadman/guard.sock",
      guardHeartbeatGap: 500,
    });
  });

  test("behavior: a non-loopback or named host is refused with exit 78 and the reason", () => {
    for (const value of ["0.0.0.0:9470", "10.0.0.5:9470", ":9470", "[::]:9470", "localhost:9470"]) {
      const issue = issuesOf(() => loadConfig({ options: { guardSocket: value } }))[0];
      expect(issue, value).toContain(
        "is not a loopback address: the guard connection decides when orders are cancelled",
      );
    }
    expect(issuesOf(() => loadConfig({ options: { guardSocket: "9470" } }))[0]).toContain(
      "expected a Unix socket path (with a /",
    );
  });

  test("behavior: one engine guard; the heartbeat gap needs the socket and at least 100 ms", () => {
    expect(
      issuesOf(() => loadConfig({ options: { guardSocket: "/tmp/g.sock", guardFile: "/tmp/alive" } }))[0],
    ).toContain("set one engine guard, not a socket beside guardFile");
    expect(issuesOf(() => loadConfig({ options: { guardHeartbeatGap: "1s" } }))[0]).toContain(
      "only the connection guard (guardSocket) hears heartbeats",
    );
    expect(
      issuesOf(() => loadConfig({ options: { guardSocket: "/tmp/g.sock", guardHeartbeatGap: "50ms" } }))[0],
    ).toContain("must be 0 (off) or at least 100ms");
  });

  test("behavior: the connect grace defaults to deadline - interval, needs the socket, and is bounded (exit 78)", async () => {
    const { config } = loadConfig({
      options: { guardSocket: "/tmp/g.sock", deadline: "60s", interval: "15s" },
    });
    expect(config.guardConnectGrace).toBeUndefined();
    expect(guardConnectGraceOf(config)).toBe(45_000);
    const set = loadConfig({ options: { guardSocket: "/tmp/g.sock", guardConnectGrace: "5s" } }).config;
    expect(guardConnectGraceOf(set)).toBe(5_000);
    expect(issuesOf(() => loadConfig({ options: { guardConnectGrace: "5s" } }))[0]).toContain(
      "guardConnectGrace (flag --guard-connect-grace): only the connection guard (guardSocket) knows which engine held an account",
    );
    for (const value of ["500ms", "61s"])
      expect(
        issuesOf(() =>
          loadConfig({ options: { guardSocket: "/tmp/g.sock", deadline: "60s", guardConnectGrace: value } }),
        )[0],
        value,
      ).toContain("must be from 1s (time for a live engine to reconnect) to the deadline (1m)");
    const refused = await cli([
      "config",
      "check",
      "--no-key",
      "--guard-socket",
      "/tmp/g.sock",
      "--guard-connect-grace",
      "2h",
    ]);
    expect(refused.code).toBe(78);
    expect(refused.stderr).toContain("guardConnectGrace = 2h (flag --guard-connect-grace): must be from 1s");
  });
});
