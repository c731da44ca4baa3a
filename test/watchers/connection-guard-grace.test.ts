/**
 * The connection guard's connect grace after a restart (src/watchers/connection-guard.ts, issue 38 finding 2), over a
 * real Unix socket on a ManualClock: an account the ledger says an engine held waits for an engine only the grace,
 * then is engine down with the cause `absent`; one an engine names within it is up and never goes down at the
 * grace's end; one no engine ever held stays `waiting`. The first `up` of an account is reported once (the ledger
 * records it). A refused first line is an error naming the version and the accounts it tried.
 */

import { connect, type Socket } from "node:net";
import path from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { EngineDownCause } from "../../src/core/events.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { ABSENT_DETAIL, createConnectionGuard } from "../../src/watchers/connection-guard.js";
import { captureLogger } from "../app/helpers.js";
import { eventually } from "../helpers/eventually.js";
import { watcherBus } from "../helpers/watcher-bus.js";
import { tempDir } from "../reliability/harness.js";

const A = `0x${"aa".repeat(20)}`;
const B = `0x${"bb".repeat(20)}`;
const GRACE = 45_000;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function guardFor(heldBefore: string[]) {
  const dir = tempDir("hl-grace-");
  cleanups.push(() => dir.cleanup());
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const timers = new ManualTimers(clock);
  const log = captureLogger();
  const changes: Array<[string, boolean, string | null, EngineDownCause]> = [];
  const held: string[] = [];
  const file = path.join(dir.dir, "guard.sock");
  const guard = createConnectionGuard({
    address: { kind: "unix", path: file },
    accounts: [A, B],
    heartbeatGapMs: 0,
    runtime: createRuntime({ clock, timers }),
    bus: watcherBus(log.logger, createMetrics({ registry: new Registry(), defaultMetrics: false })),
    onChange: (account, up, detail, cause) => changes.push([account, up, detail, cause]),
    heldBefore,
    connectGraceMs: GRACE,
    onHeld: (account) => held.push(account),
  });
  await guard.start();
  cleanups.push(
    () => guard.stop(),
    () => timers.dispose(),
  );
  return { guard, clock, changes, held, log, file };
}

/** An engine's connection: sends its first line, resolves with the daemon's answer. */
async function engine(file: string, first: string) {
  const socket: Socket = connect({ path: file });
  socket.setEncoding("utf8");
  socket.on("error", () => undefined);
  cleanups.push(() => socket.destroy());
  const answer = await new Promise<string>((resolve) => {
    let buf = "";
    socket.on("data", (c: string) => {
      buf += c;
      if (buf.includes("\n")) resolve(buf.split("\n")[0]!);
    });
    socket.write(first);
  });
  return { socket, answer };
}

describe("connection guard: the connect grace after a restart", () => {
  test("default: an account an engine held and none named within the grace is down (absent) at its end, not before", async () => {
    const { guard, clock, changes } = await guardFor([A]);
    expect(guard.status().accounts).toEqual({ [A]: "waiting", [B]: "waiting" });
    expect(guard.engine(A).detail).toContain(`down if none names it within ${GRACE} ms`);
    clock.advance(GRACE - 1);
    expect(changes).toEqual([]);
    expect(guard.engine(A).up).toBe(true);
    clock.advance(1);
    expect(changes).toEqual([[A, false, ABSENT_DETAIL(GRACE), "absent"]]);
    expect(ABSENT_DETAIL(GRACE)).toContain("no engine named it within the grace after a restart");
    expect(guard.engine(A)).toEqual({ up: false, detail: ABSENT_DETAIL(GRACE), cause: "absent" });
    // B: no engine ever held it: waiting for ever, as before
    clock.advance(10 * GRACE);
    expect(guard.status().accounts).toEqual({ [A]: "down", [B]: "waiting" });
    expect(changes).toHaveLength(1);
  });

  test("behavior: an engine naming the account within the grace holds it: no down at the grace's end; a later close is seen", async () => {
    const { guard, clock, changes, held, file } = await guardFor([A]);
    clock.advance(GRACE / 2);
    const e = await engine(file, `hl-deadman-guard/1 ${A}\n`);
    expect(e.answer).toBe("ok");
    expect(guard.status().accounts?.[A]).toBe("up");
    clock.advance(GRACE);
    expect(changes).toEqual([]);
    expect(held).toEqual([]); // already recorded by the ledger: nothing to write
    e.socket.destroy();
    await eventually(() => changes.length > 0, { what: "the close seen" });
    expect(changes[0]).toMatchObject([A, false, expect.stringContaining("closed"), "seen"]);
  });

  test("behavior: the first up of an account no engine held is reported once (the ledger's one write)", async () => {
    const { held, file } = await guardFor([]);
    const first = await engine(file, `hl-deadman-guard/1 ${B},${A}\n`);
    first.socket.destroy();
    await engine(file, `hl-deadman-guard/1 ${A}\n`);
    await engine(file, `hl-deadman-guard/1 ${B}\n`);
    expect(held).toEqual([B, A]);
  });

  test("behavior: a stop before the grace's end changes nothing", async () => {
    const { guard, clock, changes } = await guardFor([A, B]);
    await guard.stop();
    clock.advance(2 * GRACE);
    expect(changes).toEqual([]);
  });

  test("error: a refused first line is an error naming the version and accounts it tried; the grace still ends", async () => {
    const { clock, changes, log, file } = await guardFor([A]);
    const wrong = await engine(file, `hl-deadman-guard/9 ${A},${B.toUpperCase().replace("0X", "0x")}\n`);
    expect(wrong.answer).toBe(
      'refused protocol "hl-deadman-guard/9" not supported (this daemon speaks hl-deadman-guard/1 and hl-deadman-guard/2)',
    );
    const stranger = `0x${"cc".repeat(20)}`;
    await engine(file, `hl-deadman-guard/1 ${stranger}\n`);
    const refused = log.events("guard.refused");
    expect(refused.map((l) => [l.level, l.version, l.accounts])).toEqual([
      [50, "hl-deadman-guard/9", [A, B]],
      [50, "hl-deadman-guard/1", [stranger]],
    ]);
    expect(String(refused[0]!.msg)).toContain(`hl-deadman-guard/9 for ${A}, ${B}`);
    clock.advance(GRACE);
    expect(changes).toEqual([[A, false, ABSENT_DETAIL(GRACE), "absent"]]);
  });
});
