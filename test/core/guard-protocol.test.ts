/**
 * The connection guard's protocol, versions 1 and 2 (src/core/guard-protocol.ts), pure: the first line names the version and the
 * accounts; later lines are heartbeats, `detach <ms>` a planned restart; anything malformed has a one-line reason.
 */
import { describe, expect, test } from "vitest";
import {
  GUARD_MAX_ACCOUNTS,
  GUARD_MAX_DETACH_MS,
  GUARD_MAX_LINE_BYTES,
  guardHelloLine,
  parseGuardHello,
  parseGuardLine,
} from "../../src/core/guard-protocol.js";

const A = `0x${"ab".repeat(20)}`;
const B = `0x${"Cd".repeat(20)}`;

describe("guard protocol: first line", () => {
  test("default: version and accounts, lower-cased and deduplicated; the client's line parses back", () => {
    expect(parseGuardHello(`hl-deadman-guard/1 ${A},${B}`)).toEqual({
      ok: true,
      version: 1,
      accounts: [A, B.toLowerCase()],
    });
    expect(parseGuardHello(`hl-deadman-guard/1 ${A}, ${A.toUpperCase().replace("0X", "0x")}\r`)).toEqual({
      ok: true,
      version: 1,
      accounts: [A],
    });
    expect(parseGuardHello(guardHelloLine([A, B]).trimEnd())).toEqual({
      ok: true,
      version: 2,
      accounts: [A, B.toLowerCase()],
    });
  });

  test("behavior: each malformed first line is refused with its reason", () => {
    const reason = (line: string) => {
      const r = parseGuardHello(line);
      return r.ok ? null : r.reason;
    };
    expect(reason("hello")).toMatch(/^expected "hl-deadman-guard\/2 <account>/);
    expect(reason(`hl-deadman-guard/3 ${A}`)).toBe(
      'protocol "hl-deadman-guard/3" not supported (this daemon speaks hl-deadman-guard/1 and hl-deadman-guard/2)',
    );
    expect(reason("hl-deadman-guard/1")).toBe("no account named");
    expect(reason("hl-deadman-guard/1 0x12")).toBe('"0x12" is not a 0x address');
    const many = Array.from(
      { length: GUARD_MAX_ACCOUNTS + 1 },
      (_, i) => `0x${i.toString(16).padStart(40, "0")}`,
    );
    expect(reason(`hl-deadman-guard/1 ${many.join(",")}`)).toBe(
      `${GUARD_MAX_ACCOUNTS + 1} accounts named (at most ${GUARD_MAX_ACCOUNTS})`,
    );
    expect(reason(`hl-deadman-guard/1 ${"x".repeat(GUARD_MAX_LINE_BYTES)}`)).toBe("first line too long");
  });
});

describe("guard protocol: later lines", () => {
  test("default: any line is a heartbeat; detach <ms> names its grace", () => {
    expect(parseGuardLine("")).toEqual({ type: "heartbeat" });
    expect(parseGuardLine("ping 42")).toEqual({ type: "heartbeat" });
    expect(parseGuardLine("detached")).toEqual({ type: "heartbeat" });
    expect(parseGuardLine("detach 5000\r")).toEqual({ type: "detach", ms: 5000 });
    expect(parseGuardLine(`detach ${GUARD_MAX_DETACH_MS}`)).toEqual({
      type: "detach",
      ms: GUARD_MAX_DETACH_MS,
    });
  });

  test("behavior: a detach without a grace in range is ignored with its reason (never an engine down)", () => {
    for (const bad of ["detach", "detach 0", "detach -5", "detach 1e3", `detach ${GUARD_MAX_DETACH_MS + 1}`])
      expect(parseGuardLine(bad), bad).toEqual({
        type: "ignored",
        reason: `"detach" needs a grace of 1..${GUARD_MAX_DETACH_MS} ms`,
      });
  });
});
