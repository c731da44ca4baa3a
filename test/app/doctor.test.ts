/**
 * `doctor`'s pure parts (docs/cli.md, "doctor"): the severity order that turns many rows into one exit code, and
 * the verdicts of the checks that need no network (volume, budget, clock, weight, lock). The checks against a real
 * exchange run in test/cli/doctor.test.ts.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  checkBudget,
  checkClock,
  checkLock,
  checkVolume,
  checkWeight,
  roleRow,
} from "../../src/app/doctor/checks.js";
import {
  type CheckResult,
  exitCodeOf,
  fail,
  formatTable,
  ok,
  SEVERITY,
  summaryLine,
  warn,
} from "../../src/app/doctor/report.js";
import { loadConfig } from "../../src/config/load.js";
import { ExitCode } from "../../src/core/exit-codes.js";

const failing = (code: ExitCode) => fail("x", null, "found", "do", code);
const A = "0x00000000000000000000000000000000000000aa";

describe("the exit code of a report", () => {
  test("default: no row, ok rows and warnings exit 0", () => {
    expect(exitCodeOf([])).toBe(0);
    expect(exitCodeOf([ok("a", null, "fine"), warn("b", null, "look", "do")])).toBe(0);
  });

  test("behavior: one failure exits with its own code", () => {
    for (const code of SEVERITY) expect(exitCodeOf([ok("a", null, "fine"), failing(code)])).toBe(code);
  });

  test("behavior: the most severe wins: 78 over 73 over 1 over 69 over 75, whatever the order of the rows", () => {
    expect(SEVERITY).toEqual([78, 73, 1, 69, 75]);
    expect(exitCodeOf([failing(1), failing(73)])).toBe(73);
    expect(exitCodeOf([failing(75), failing(69)])).toBe(69);
    expect(exitCodeOf([failing(69), failing(1)])).toBe(1);
    expect(exitCodeOf([failing(1), failing(78), failing(75)])).toBe(78);
    expect(exitCodeOf([failing(75), warn("w", null, "", "")])).toBe(75);
  });

  test("property: the code is the failing code of least rank, and 0 exactly when nothing fails", () => {
    const row = fc.oneof(
      fc.constant(ok("a", null, "fine")),
      fc.constant(warn("b", null, "look", "do")),
      fc.constantFrom(...SEVERITY).map(failing),
    );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 12 }), (rows) => {
        const fails = rows.filter((r) => r.status === "fail").map((r) => SEVERITY.indexOf(r.exitCode));
        const expected = fails.length === 0 ? 0 : SEVERITY[Math.min(...fails)];
        expect(exitCodeOf(rows)).toBe(expected);
      }),
    );
  });

  test("error: a failure with a code outside the order still fails (as 1)", () => {
    expect(exitCodeOf([failing(ExitCode.usage)])).toBe(1);
  });

  test("behavior: the table has a row per check and the summary says how many fail and the code", () => {
    const rows: CheckResult[] = [ok("lock", null, "free"), failing(69), warn("guard", A, "none", "set one")];
    const table = formatTable(rows);
    expect(table.split("\n")).toHaveLength(4);
    expect(table).toMatch(/^x\s+-\s+FAIL \(69\)\s+found -> do$/m);
    expect(table).toMatch(new RegExp(`^guard\\s+${A}\\s+warn\\s+none -> set one$`, "m"));
    expect(summaryLine(rows)).toBe("1 of 3 checks fail, 1 warn: exit 69");
    expect(summaryLine([ok("lock", null, "free")])).toBe("all 1 checks pass: ready to go live");
  });
});

describe("the checks' verdicts", () => {
  const limit = (cumVlm: string, used = 0, cap = 20_000) => ({
    cumVlm,
    nRequestsUsed: used,
    nRequestsCap: cap,
  });

  test("behavior: the volume gate: below $1,000,000 fails with exit 1, at it passes", () => {
    const below = checkVolume(A, A, limit("999999.99"));
    expect(below.status).toBe("fail");
    expect(below.exitCode).toBe(1);
    expect(below.action).toContain("$1 more");
    expect(checkVolume(A, A, limit("1000000.0")).status).toBe("ok");
    expect(checkVolume(A, A, null, new Error("down")).exitCode).toBe(69);
  });

  test("behavior: the budget: used up fails (1), fewer days than budgetWarnDays warns, else ok", () => {
    expect(checkBudget(A, limit("0", 20_000), 5_760, 14).exitCode).toBe(1);
    const low = checkBudget(A, limit("0", 0, 57_600), 5_760, 14);
    expect(low.status).toBe("warn");
    expect(low.finding).toContain("10.0 days at 5,760 pushes a day");
    expect(checkBudget(A, limit("0", 0, 2_000_000), 5_760, 14).status).toBe("ok");
  });

  test("behavior: the clock: suspect beyond 5 s fails (1), beyond clockSkewWarn warns, close passes", () => {
    const at = Date.UTC(2026, 10, 26, 12, 0, 0);
    const sample = (offsetMs: number) => ({ date: at + offsetMs, sentAt: at + 400, receivedAt: at + 500 });
    const off = checkClock(sample(60_000), 2_000);
    expect([off.status, off.exitCode]).toEqual(["fail", 1]);
    expect(off.finding).toContain("behind the exchange's Date");
    expect(checkClock(sample(-3_000), 2_000).status).toBe("warn");
    expect(checkClock(sample(0), 2_000).status).toBe("ok");
    // beyond what the model bridges, the Date is refused outright
    expect(checkClock(sample(3_600_000), 2_000).finding).toContain("refused");
    expect(checkClock(null, 2_000, new Error("down")).exitCode).toBe(69);
  });

  test("behavior: the weight: a configuration that does not fit the IP's limit fails with 78 and says what fits", () => {
    const { config } = loadConfig({
      options: { interval: "1s", deadline: "10s", requestTimeout: "1s" },
      env: {},
      cwd: "/",
    });
    const fits = checkWeight(config, 1);
    expect(fits.status).toBe("ok");
    const many = checkWeight(config, 100);
    expect([many.status, many.exitCode]).toEqual(["fail", 78]);
    expect(many.action).toMatch(/--interval \d+s or more/);
  });

  test("behavior: weight: a configuration that keeps no room for a death of every guarded engine fails (78)", () => {
    const cancel = {
      ...loadConfig({ options: {}, env: {}, cwd: "/tmp" }).config,
      onEngineDown: "cancel" as const,
      guardSocket: "/tmp/g.sock",
      exposureInterval: 0,
      budgetInterval: 0,
    };
    // the room counts each pass's confirming read and renewing push (issue 41): 25 accounts fit at 15 s
    expect(checkWeight(cancel, 25).status).toBe("ok");
    expect(checkWeight(cancel, 25).finding).toMatch(/weight kept for a death of every guarded engine/);
    // 60 accounts at 15 s: the steady spend fits, the room for a death does not
    const tight = checkWeight(cancel, 60);
    expect([tight.status, tight.exitCode]).toEqual(["fail", 78]);
    expect(tight.finding).toMatch(
      /= 2380 weight, the confirming reads and the renewing pushes included, within 45 s/,
    );
    expect(tight.action).toMatch(/lengthen the interval or the deadline/);
  });

  test("behavior: the lock: held names the holder's pid and fails with 75; free and stale pass", () => {
    const held = checkLock({ state: "held", path: "/s/daemon.lock", holder: { pid: 4242, host: "h1" } });
    expect([held.status, held.exitCode]).toEqual(["fail", 75]);
    expect(held.finding).toContain("pid 4242 on h1");
    expect(checkLock({ state: "free", path: "/s/daemon.lock" }).status).toBe("ok");
    expect(checkLock({ state: "stale", path: "/s/daemon.lock", holder: { pid: 1 } }).status).toBe("ok");
    expect(checkLock({ state: "foreign", path: "/s/daemon.lock", message: "a FIFO" }).exitCode).toBe(78);
  });

  test("behavior: the role: missing fails with 78; an agent names its master", () => {
    expect(roleRow(A, { role: "missing" }).exitCode).toBe(78);
    expect(roleRow(A, { role: "agent", data: { user: "0xbb" } }).finding).toContain(
      "API (agent) wallet of 0xbb",
    );
    expect(roleRow(A, { role: "user" }).status).toBe("ok");
  });
});
