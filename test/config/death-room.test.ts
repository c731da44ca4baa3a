/**
 * The room a plan keeps for a death of every guarded engine at once (src/config/weight.ts, issue 41): the weight
 * the passes need in time, the weight left in the window before the scheduled cancel fires, the verdict (a new
 * configuration refused, one that ran before warned), the passes ordered by risk and the ones that fall back.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { configRanBefore } from "../../src/app/death-room.js";
import { loadConfig } from "../../src/config/load.js";
import {
  type AccountRisk,
  affordPasses,
  deathRoom,
  deathRoomVerdict,
  IP_WEIGHT_PER_MINUTE,
  orderByRisk,
  PASS_WEIGHT,
  passWeight,
  shortestIntervalWithRoom,
  weightPlan,
} from "../../src/config/weight.js";

const accounts = (n: number) =>
  Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
const load = (options: Record<string, unknown>) => loadConfig({ options, env: {}, cwd: "/tmp" }).config;
const cancel = (n: number, extra: Record<string, unknown> = {}) => ({
  ...load({}),
  accounts: accounts(n),
  onEngineDown: "cancel" as const,
  guardSocket: "/tmp/g.sock",
  ...extra,
});

describe("the room for a death", () => {
  test("default: none under expedite or lapse (no pass runs); one account under cancel keeps room", () => {
    expect(deathRoom(load({}))).toBeNull();
    const room = deathRoom(cancel(1))!;
    expect(room).toMatchObject({ accounts: 1, fits: true, afforded: 1 });
    expect(deathRoomVerdict(room, { heldBefore: false })).toEqual({ kind: "ok" });
  });

  test("arithmetic: the reserve, the window, and what is left in it, named in the message", () => {
    // 40 accounts at 15 s, deadline 60 s: the order feed knows 10, 30 read first
    const config = cancel(40, { interval: 15_000, deadline: 60_000, orderFeedAccounts: 10 });
    const room = deathRoom(config)!;
    const peak = weightPlan(config).peakPerMinute;
    expect(room.known).toBe(10);
    // each whole pass: its in-time part, its confirming read (the switch holds its pushes until it answers) and the
    // push that renews the schedule after it
    expect(room.reserve).toBe(
      10 * (PASS_WEIGHT.knownInTime + PASS_WEIGHT.confirm + PASS_WEIGHT.renewal) +
        30 * (PASS_WEIGHT.readInTime + PASS_WEIGHT.confirm + PASS_WEIGHT.renewal),
    );
    expect(room.windowMs).toBe(45_000);
    expect(room.available).toBe(Math.floor(IP_WEIGHT_PER_MINUTE - peak));
    expect(room.arithmetic).toContain(
      `10 × (2 + 20 + 1) (orders known from the order feed) + 30 × (22 + 20 + 1) (read first) = 1520 weight`,
    );
    expect(room.fits).toBe(false);
  });

  test("behavior: 300 accounts at 17 s (the steady spend fits) keep no room: refused new, warned when run before", () => {
    const config = cancel(300, {
      interval: 17_000,
      deadline: 60_000,
      exposureInterval: 0,
      budgetInterval: 0,
    });
    expect(weightPlan(config).fits).toBe(true);
    const room = deathRoom(config)!;
    expect(room.fits).toBe(false);
    expect(room.afforded).toBeLessThan(300);
    // the afforded passes fit what is left, one more would not
    const cost = (n: number) =>
      Math.min(n, room.known) * passWeight(true) + Math.max(0, n - room.known) * passWeight(false);
    expect(cost(room.afforded)).toBeLessThanOrEqual(room.available);
    expect(cost(room.afforded + 1)).toBeGreaterThan(room.available);
    const refused = deathRoomVerdict(room, { heldBefore: false });
    expect(refused.kind).toBe("refuse");
    if (refused.kind === "ok") throw new Error("unreachable");
    expect(refused.message).toContain(
      `= ${room.reserve} weight, the confirming reads and the renewing pushes included, within 43 s`,
    );
    expect(refused.message).toContain(`the IP has ${room.available} left`);
    expect(refused.message).toContain(`only ${room.afforded} of 300`);
    const warned = deathRoomVerdict(room, { heldBefore: true });
    expect(warned.kind).toBe("warn");
    if (warned.kind === "ok") throw new Error("unreachable");
    expect(warned.message).toContain("starting anyway");
  });

  test("behavior: the verdict flips exactly where the reserve passes the weight left", () => {
    let seen = { fits: false, refused: false };
    for (let n = 1; n <= 80; n++) {
      const room = deathRoom(cancel(n, { interval: 15_000, deadline: 60_000 }))!;
      expect(room.fits).toBe(room.reserve <= room.available);
      if (room.fits) seen = { ...seen, fits: true };
      else seen = { ...seen, refused: true };
    }
    expect(seen).toEqual({ fits: true, refused: true });
  });

  test("behavior: a longer window than a minute has a minute's room for each minute", () => {
    const short = deathRoom(cancel(100, { interval: 60_000, deadline: 120_000 }))!;
    const long = deathRoom(cancel(100, { interval: 60_000, deadline: 240_000 }))!;
    expect(long.available).toBe(
      Math.floor((IP_WEIGHT_PER_MINUTE - weightPlan(cancel(100, { interval: 60_000 })).peakPerMinute) * 3),
    );
    expect(long.available).toBeGreaterThan(short.available);
  });
});

describe("the engines' announcements", () => {
  test("behavior: every announced account's pass is a known one; the saving is named, the verdict follows it", () => {
    // 100 accounts at 60 s, deadline 240 s (3,299 left in the window): read first (10 followed by the order feed)
    // they need 10 × 23 + 90 × 43 = 4,100; announced, 100 × 23 = 2,300
    const base = { interval: 60_000, deadline: 240_000, exposureInterval: 0, budgetInterval: 0 };
    const read = deathRoom(cancel(100, base))!;
    const announced = deathRoom(cancel(100, { ...base, guardAnnouncedOrders: true }))!;
    expect(read.reserve).toBe(10 * 23 + 90 * 43);
    expect(announced).toMatchObject({ known: 100, announced: 100, reserve: 100 * 23 });
    expect(announced.savedByAnnouncements).toBe(read.reserve - announced.reserve);
    expect(announced.arithmetic).toContain("100 × (2 + 20 + 1) (orders announced by their engines)");
    expect(announced.arithmetic).toContain(`the engines' announcements save ${90 * 20} in reads`);
    expect(read.fits).toBe(false);
    expect(announced.fits).toBe(true);
    // without the connection guard nothing is announced (the file guard has no line to say it on)
    const filed = deathRoom({
      ...cancel(100, { ...base, guardAnnouncedOrders: true }),
      guardSocket: undefined,
    })!;
    expect(filed).toMatchObject({ known: 0, announced: 0, savedByAnnouncements: 0 });
    // and the shortest interval that keeps room shortens with them
    const at = (x: Record<string, unknown>) =>
      shortestIntervalWithRoom(
        cancel(100, { deadline: 240_000, exposureInterval: 0, budgetInterval: 0, ...x }),
      );
    expect(at({ guardAnnouncedOrders: true })!).toBeLessThan(at({}) ?? Number.POSITIVE_INFINITY);
  });
});

describe("the shortest interval that keeps room", () => {
  test("behavior: the first whole second at which the steady spend fits and the death keeps room; null when none", () => {
    const config = cancel(60, { deadline: 300_000 });
    const i = shortestIntervalWithRoom(config)!;
    expect(i).toBe(7_000);
    const at = (interval: number) => ({ ...config, interval });
    expect(weightPlan(at(i)).fits && deathRoom(at(i))!.fits).toBe(true);
    expect(weightPlan(at(i - 1_000)).fits && deathRoom(at(i - 1_000))!.fits).toBe(false);
    // at a 60 s deadline no interval keeps room for 60 accounts read first
    expect(shortestIntervalWithRoom(cancel(60, { deadline: 60_000 }))).toBeNull();
    const refused = deathRoomVerdict(deathRoom(cancel(60, { deadline: 300_000, interval: 4_000 })), {
      heldBefore: false,
      shortest: i,
    });
    expect(refused.kind === "refuse" && refused.message).toContain(
      "an interval of 7 s keeps room at this deadline",
    );
    // another policy: the steady spend's alone
    expect(shortestIntervalWithRoom({ ...load({}), accounts: accounts(60) })).toBe(
      weightPlan({ ...load({}), accounts: accounts(60) }).fittingIntervalMs,
    );
  });
});

describe("the passes in risk order", () => {
  const risk = (account: string, liquidationDistance: number | null, notional: number): AccountRisk => ({
    account,
    liquidationDistance,
    notional,
  });
  test("default: nearest liquidation first, then the largest notional; no liquidation price last", () => {
    const ordered = orderByRisk([
      risk("a", null, 1_000_000),
      risk("b", 0.2, 10),
      risk("c", 0.05, 5),
      risk("d", 0.2, 500),
      risk("e", null, 2_000_000),
    ]);
    expect(ordered.map((r) => r.account)).toEqual(["c", "d", "b", "e", "a"]);
  });

  test("behavior: the weight left goes to the riskiest passes; the others fall back to the 5 s schedule", () => {
    const ordered = orderByRisk([risk("x", null, 1), risk("y", 0.01, 1), risk("z", 0.5, 1)]);
    expect(affordPasses(ordered, () => 22, 50)).toEqual({ inTime: ["y", "z"], fallback: ["x"] });
    // a cheaper pass further down still fits what is left
    expect(affordPasses(ordered, (a) => (a === "x" ? 2 : 22), 46)).toEqual({
      inTime: ["y", "z", "x"],
      fallback: [],
    });
    expect(affordPasses(ordered, () => 22, 0)).toEqual({ inTime: [], fallback: ["y", "z", "x"] });
  });
});

describe("a configuration that ran before", () => {
  test("behavior: its ledger holds every account it names (and as many as it arms); else it is new", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-ran-"));
    const config = cancel(3);
    expect(await configRanBefore(dir, config)).toBe(false);
    const write = (list: string[]) =>
      writeFileSync(
        path.join(dir, "ledger.json"),
        JSON.stringify({ accounts: Object.fromEntries(list.map((a) => [a, {}])) }),
      );
    write(accounts(2));
    expect(await configRanBefore(dir, config)).toBe(false);
    // as many accounts, but not these: another configuration's ledger
    write(
      accounts(4)
        .slice(1)
        .map((a) => a.replace(/0x0/, "0xf")),
    );
    expect(await configRanBefore(dir, config)).toBe(false);
    write(accounts(3).map((a) => a.toUpperCase().replace("0X", "0x")));
    expect(await configRanBefore(dir, config)).toBe(true);
    writeFileSync(path.join(dir, "ledger.json"), "{torn");
    expect(await configRanBefore(dir, config)).toBe(false);
  });

  test("behavior: the per-account ledger (ledger/<account>.json) is read as well as ledger.json", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hl-ran-files-"));
    const config = cancel(3);
    mkdirSync(path.join(dir, "ledger"));
    for (const a of accounts(2)) writeFileSync(path.join(dir, "ledger", `${a.toLowerCase()}.json`), "{}");
    expect(await configRanBefore(dir, config)).toBe(false);
    for (const a of accounts(3)) writeFileSync(path.join(dir, "ledger", `${a.toLowerCase()}.json`), "{}");
    expect(await configRanBefore(dir, config)).toBe(true);
  });

  // (a plain read of ledger.json read /dev/zero until the heap ran out, and blocked on a FIFO forever: run never
  // reached the ledger, which moves such a file aside and assumes the limit)
  test("behavior: a ledger.json symlinked to /dev/zero, or a FIFO, is not read: a new configuration", async () => {
    const config = cancel(3);
    const linked = mkdtempSync(path.join(tmpdir(), "hl-ran-zero-"));
    symlinkSync("/dev/zero", path.join(linked, "ledger.json"));
    expect(await configRanBefore(linked, config)).toBe(false);
    const fifo = mkdtempSync(path.join(tmpdir(), "hl-ran-fifo-"));
    expect(spawnSync("mkfifo", [path.join(fifo, "ledger.json")]).status, "mkfifo (coreutils)").toBe(0);
    expect(await configRanBefore(fifo, config)).toBe(false);
  });
});
