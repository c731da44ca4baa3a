/**
 * The ledger's per-account layout (issue 41): `<stateDir>/ledger/<account>.json` and `ledger/meta.json`. A push
 * rewrites its own account's file only; the single `ledger.json` of earlier versions is migrated at the first start
 * (and a crash in the middle starts it over); a torn or damaged file costs only what it held; `status` reads both
 * layouts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, test } from "vitest";
import { runCli } from "../../src/cli/program.js";
import { ManualClock } from "../../src/core/clock.js";
import { Ledger, type LedgerEntry, readLedgerState } from "../../src/switch/ledger.js";
import { newEntry, withConfirmedPush } from "../../src/switch/ledger-model.js";
import { captureLogger } from "../app/helpers.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { ledgerBus } from "../helpers/switch-bus.js";

const T0 = Date.UTC(2026, 0, 1, 12);
const acct = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
const A = acct(0xa);
const B = acct(0xb);
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "hl-ledger-layout-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const open = (stateDir: string, clock: ManualClock, log = captureLogger(), nonce = 0) =>
  Ledger.open({ stateDir, clock, bus: ledgerBus(log.logger), triggerLimit: 10, nonceHint: () => nonce });

const entry = (account: string, triggersToday: number, armedUntil: number | null): LedgerEntry => ({
  ...newEntry(account, T0, { limit: 10 }),
  triggersToday,
  armedUntil,
  lastPushAt: T0 - 1_000,
});
/** A ledger.json as the single-file store wrote it. */
const single = (accounts: LedgerEntry[]) => ({
  version: 1,
  updatedAt: T0 - 60_000,
  assumeLimitOn: null,
  lastNonce: T0 - 50_000,
  accounts: Object.fromEntries(accounts.map((e) => [e.account, e])),
  engines: { [A]: { since: T0 - 3_600_000 } },
});

describe("ledger: one file per account", () => {
  test("a push rewrites its own account's file only, whatever the number of accounts", async () => {
    const dir = tmp();
    const clock = new ManualClock(T0);
    const l = await open(dir, clock);
    const accounts = Array.from({ length: 50 }, (_, i) => acct(i + 1));
    for (const a of accounts) l.put(withConfirmedPush(l.get(a), T0 + 60_000, T0));
    await l.flush();
    const inode = (a: string) => statSync(join(dir, "ledger", `${a}.json`)).ino;
    const before = new Map(accounts.map((a) => [a, inode(a)]));
    const metaBefore = statSync(join(dir, "ledger", "meta.json")).ino;
    const writes = l.writes;
    const pushed = accounts[17] as string;
    l.put(withConfirmedPush(l.get(pushed), T0 + 75_000, T0 + 15_000));
    expect(await l.durable(5_000)).toBe("written");
    expect(l.writes).toBe(writes + 1);
    // a rename gives the pushed account's file a new inode; every other file is the one it was
    for (const a of accounts) expect(inode(a) !== before.get(a)).toBe(a === pushed);
    expect(statSync(join(dir, "ledger", "meta.json")).ino).toBe(metaBefore);
    expect(ledgerOnDisk(dir).accounts[pushed].armedUntil).toBe(T0 + 75_000);
    await l.close();
  });

  test("the file-wide stamps: a restart takes the highest updatedAt and lastNonce over every file", async () => {
    const dir = tmp();
    const clock = new ManualClock(T0);
    let nonce = T0;
    const l = await Ledger.open({
      stateDir: dir,
      clock,
      bus: ledgerBus(captureLogger().logger),
      triggerLimit: 10,
      nonceHint: () => nonce,
    });
    l.put(withConfirmedPush(l.get(A), T0 + 60_000, T0));
    await l.flush();
    clock.advance(30_000);
    nonce = T0 + 30_500;
    l.put(withConfirmedPush(l.get(B), T0 + 90_000, T0 + 30_000));
    expect(await l.durable(5_000)).toBe("written");
    // the write that carried B's entry carried the stamp the write-ahead rule reads
    expect(l.writtenUpdatedAt).toBe(T0 + 30_000);
    await l.close();
    const a = JSON.parse(readFileSync(join(dir, "ledger", `${A}.json`), "utf8"));
    expect(a.updatedAt).toBe(T0);
    const again = await open(dir, clock);
    expect(again.loadedUpdatedAt).toBe(T0 + 30_000);
    expect(again.loadedLastNonce).toBe(T0 + 30_500);
    await again.close();
  });

  test("migration: ledger.json is read, written as one file per account, renamed aside and logged", async () => {
    const dir = tmp();
    const old = single([entry(A, 3, T0 + 30_000), entry(B, 1, null)]);
    const text = JSON.stringify(old);
    writeFileSync(join(dir, "ledger.json"), text);
    const log = captureLogger();
    const clock = new ManualClock(T0);
    const l = await open(dir, clock, log);
    expect(l.get(A)).toMatchObject({ triggersToday: 3, armedUntil: T0 + 30_000 });
    expect(l.loadedUpdatedAt).toBe(T0 - 60_000);
    expect(l.loadedLastNonce).toBe(T0 - 50_000);
    expect(log.events("ledger.migrated")[0]).toMatchObject({ kept: join(dir, `ledger.json.migrated-${T0}`) });
    await l.close();
    expect(readdirSync(dir).sort()).toEqual(["ledger", `ledger.json.migrated-${T0}`]);
    expect(readFileSync(join(dir, `ledger.json.migrated-${T0}`), "utf8")).toBe(text);
    const onDisk = ledgerOnDisk(dir);
    expect(Object.keys(onDisk.accounts).sort()).toEqual([A, B]);
    expect(onDisk.engines).toEqual(old.engines);
    expect(onDisk.lastNonce).toBe(T0 - 50_000);
    // the next start reads the new layout, and migrates nothing
    const log2 = captureLogger();
    const again = await open(dir, clock, log2);
    expect(again.get(B)).toMatchObject({ triggersToday: 1 });
    expect(again.enginesHeld()).toEqual([A]);
    expect(log2.events("ledger.migrated")).toEqual([]);
    await again.close();
  });

  test("a crash mid-migration (account files written, meta.json not): the next start migrates again from ledger.json", async () => {
    const dir = tmp();
    writeFileSync(
      join(dir, "ledger.json"),
      JSON.stringify(single([entry(A, 3, T0 + 30_000), entry(B, 1, null)])),
    );
    // what the interrupted run left: A's file (an older entry), a torn temp file, and a file of an account not in
    // this ledger.json (an older migration's)
    const C = acct(0xc);
    const l0 = await open(tmp(), new ManualClock(T0));
    l0.put(entry(A, 0, null));
    l0.put(entry(C, 5, null));
    await l0.close();
    const left = (l0.path as string).replace(/\/ledger$/, "");
    const { mkdirSync, copyFileSync } = await import("node:fs");
    mkdirSync(join(dir, "ledger"));
    copyFileSync(join(left, "ledger", `${A}.json`), join(dir, "ledger", `${A}.json`));
    copyFileSync(join(left, "ledger", `${C}.json`), join(dir, "ledger", `${C}.json`));
    writeFileSync(join(dir, "ledger", `.${B}.json.tmp-dead-0`), '{"version":2,"upd');
    const log = captureLogger();
    const l = await open(dir, new ManualClock(T0), log);
    expect(l.get(A)).toMatchObject({ triggersToday: 3, armedUntil: T0 + 30_000 });
    expect(l.accounts().sort()).toEqual([A, B]);
    expect(log.events("ledger.temp_removed")).toHaveLength(1);
    await l.close();
    expect(readdirSync(join(dir, "ledger")).sort()).toEqual([`${A}.json`, `${B}.json`, "meta.json"]);
    expect(ledgerOnDisk(dir).accounts[A].triggersToday).toBe(3);
  });

  test("a crash after meta.json, before ledger.json was renamed: the per-account ledger is the ledger", async () => {
    const dir = tmp();
    const l = await open(dir, new ManualClock(T0));
    l.put(entry(A, 4, null));
    await l.close();
    writeFileSync(join(dir, "ledger.json"), JSON.stringify(single([entry(A, 1, null)])));
    const log = captureLogger();
    const again = await open(dir, new ManualClock(T0 + 1), log);
    expect(again.get(A).triggersToday).toBe(4);
    expect(log.events("ledger.migrated")).toHaveLength(1);
    await again.close();
    expect(readdirSync(dir).sort()).toEqual(["ledger", `ledger.json.migrated-${T0 + 1}`]);
  });

  test("a torn account file: moved aside, that account assumed at the limit today, the others intact", async () => {
    const dir = tmp();
    const clock = new ManualClock(T0);
    const l = await open(dir, clock);
    l.put(entry(A, 2, T0 + 30_000));
    l.put(entry(B, 1, T0 + 30_000));
    await l.close();
    const path = join(dir, "ledger", `${A}.json`);
    const whole = readFileSync(path, "utf8");
    writeFileSync(path, whole.slice(0, Math.floor(whole.length / 2)));
    const log = captureLogger();
    const again = await open(dir, clock, log);
    expect(again.get(A)).toMatchObject({ triggersToday: 10, assumed: true });
    expect(again.get(A).history.map((e) => e.type)).toEqual(["corrupt"]);
    expect(again.get(B)).toMatchObject({ triggersToday: 1, assumed: false, armedUntil: T0 + 30_000 });
    expect(log.events("ledger.corrupt")[0]).toMatchObject({ level: 50, account: A, path });
    // an account the ledger never held starts from zero: only the torn file's account is assumed
    expect(again.get(acct(0xd))).toMatchObject({ triggersToday: 0, assumed: false });
    await again.close();
    expect(readdirSync(join(dir, "ledger")).some((f) => f.startsWith(`${A}.json.corrupt-`))).toBe(true);
    // the assumed entry is written: the next start still knows
    expect(ledgerOnDisk(dir).accounts[A]).toMatchObject({ triggersToday: 10, assumed: true });
  });

  test("a damaged meta.json: moved aside, every account not stored assumed at the limit today", async () => {
    const dir = tmp();
    const clock = new ManualClock(T0);
    const l = await open(dir, clock);
    l.put(entry(A, 2, null));
    await l.close();
    writeFileSync(join(dir, "ledger", "meta.json"), "{");
    const log = captureLogger();
    const again = await open(dir, clock, log);
    expect(again.get(A)).toMatchObject({ triggersToday: 2, assumed: false });
    expect(again.get(B)).toMatchObject({ triggersToday: 10, assumed: true });
    expect(log.events("ledger.corrupt")[0]).toMatchObject({ account: null });
    await again.close();
    expect(ledgerOnDisk(dir).assumeLimitOn).toBe("2026-01-01");
  });

  test("status reads both layouts, and names a damaged file", async () => {
    const clock = new ManualClock(T0);
    const status = async (stateDir: string) => {
      let stdout = "";
      let stderr = "";
      const sink = (f: (s: string) => void) =>
        new Writable({
          write(c, _e, cb) {
            f(String(c));
            cb();
          },
        });
      const code = await runCli(["node", "hl-deadman", "status", "--state-dir", stateDir, "--json"], {
        stdout: sink((s) => {
          stdout += s;
        }),
        stderr: sink((s) => {
          stderr += s;
        }),
        env: {},
        clock,
        cwd: process.cwd(),
      });
      return { code, stdout, stderr };
    };
    const old = tmp();
    writeFileSync(join(old, "ledger.json"), JSON.stringify(single([entry(A, 3, null)])));
    const a = await status(old);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout).accounts[0]).toMatchObject({ account: A, triggersToday: 3 });
    // status changes nothing: the old file is still unmigrated
    expect(readdirSync(old)).toEqual(["ledger.json"]);
    const now = tmp();
    const l = await open(now, clock);
    l.put(entry(B, 2, null));
    await l.close();
    const b = await status(now);
    expect(b.code).toBe(0);
    expect(JSON.parse(b.stdout).accounts[0]).toMatchObject({ account: B, triggersToday: 2 });
    writeFileSync(join(now, "ledger", `${B}.json`), '{"version":2');
    const c = await status(now);
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain(join(now, "ledger", `${B}.json`));
    expect(c.stderr).toContain("is not valid JSON");
    expect((await readLedgerState(now)).damaged).toHaveLength(1);
  });
});
