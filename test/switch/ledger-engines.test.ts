/**
 * The ledger's record that an engine held an account (LedgerFile `engines`, src/switch/ledger-model.ts
 * `withEngineHeld`, src/switch/ledger.ts `markEngineHeld`; issue 38 finding 2): the first time is kept and written
 * once, a repeat writes nothing; it survives a reopen; a file written before the field existed reads as no engine
 * known, with every entry as it was.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { Ledger, LedgerFile, readLedgerState } from "../../src/switch/ledger.js";
import { withEngineHeld } from "../../src/switch/ledger-model.js";
import { captureLogger } from "../app/helpers.js";
import { ledgerOnDisk } from "../helpers/ledger-disk.js";
import { ledgerBus } from "../helpers/switch-bus.js";

const A = "0x1111111111111111111111111111111111111111";
const B = "0x2222222222222222222222222222222222222222";
const T0 = Date.UTC(2026, 0, 1, 12);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "hl-ledger-engines-"));
  dirs.push(d);
  return d;
};
const open = (stateDir: string, clock: ManualClock) =>
  Ledger.open({ stateDir, clock, bus: ledgerBus(captureLogger().logger), triggerLimit: 10 });

describe("ledger: the engines that held accounts", () => {
  test("default: withEngineHeld keeps the first time, lower-cases, and returns the same object when known", () => {
    const one = withEngineHeld({}, A.toUpperCase().replace("0X", "0x"), T0 + 0.7);
    expect(one).toEqual({ [A]: { since: T0 } });
    expect(withEngineHeld(one, A, T0 + 60_000)).toBe(one);
    expect(withEngineHeld(one, B, T0 + 1)).toEqual({ [A]: { since: T0 }, [B]: { since: T0 + 1 } });
  });

  test("behavior: marked once, written once, read back after a reopen", async () => {
    const dir = tmp();
    const clock = new ManualClock(T0);
    const l = await open(dir, clock);
    expect(l.enginesHeld()).toEqual([]);
    expect(l.markEngineHeld(A)).toBe(true);
    await l.flush();
    const writes = l.writes;
    // the fresh ledger's meta.json at open, then the mark
    expect(writes).toBe(2);
    clock.advance(5_000);
    // a reconnection, a second connection, every later up: nothing to write
    for (let i = 0; i < 100; i++) expect(l.markEngineHeld(A)).toBe(false);
    await l.flush();
    expect(l.writes).toBe(writes);
    await l.close();
    const read = await readLedgerState(dir);
    expect(read.file?.engines).toEqual({ [A]: { since: T0 } });
    const again = await open(dir, clock);
    expect(again.enginesHeld()).toEqual([A]);
    await again.close();
  });

  test("behavior: a file written before the field existed reads as no engine known, its entries unchanged", async () => {
    const dir = tmp();
    const old = {
      version: 1,
      updatedAt: T0 - 60_000,
      assumeLimitOn: null,
      lastNonce: T0 - 60_000,
      accounts: {
        [A]: {
          account: A,
          day: "2026-01-01",
          triggersToday: 2,
          limit: 10,
          assumed: false,
          armedUntil: T0 + 30_000,
          lastPushAt: T0 - 30_000,
          history: [],
        },
      },
    };
    writeFileSync(join(dir, "ledger.json"), JSON.stringify(old));
    expect(LedgerFile.parse(old).engines).toEqual({});
    const l = await open(dir, new ManualClock(T0));
    expect(l.enginesHeld()).toEqual([]);
    expect(l.get(A)).toMatchObject({ triggersToday: 2, armedUntil: T0 + 30_000 });
    l.markEngineHeld(A);
    await l.close();
    const written = ledgerOnDisk(dir);
    expect(written.engines).toEqual({ [A]: { since: T0 } });
    expect(written.accounts[A].triggersToday).toBe(2);
  });
});
