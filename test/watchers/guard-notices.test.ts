/**
 * The connection guard's protocol version 2 (src/core/guard-protocol.ts): the daemon tells an engine that speaks it
 * what it does to the engine's accounts (`halted`, `resumed`, `drill`), over a real Unix socket; a version 1 engine
 * is never sent a line (engines written for version 1 keep working); a HALTED account is told again to an engine
 * that connects later; the engine client (`hl-deadman/engine`) raises the notices and falls back to version 1 against
 * a daemon that speaks only 1.
 */
import { connect, createServer, type Socket } from "node:net";
import path from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import {
  type GuardNotice,
  guardHelloLine,
  guardNoticeLine,
  parseGuardHello,
  parseGuardNotice,
} from "../../src/core/guard-protocol.js";
import { createRuntime, ManualTimers, systemTimers } from "../../src/core/runtime.js";
import { holdSwitch } from "../../src/engine/index.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createConnectionGuard } from "../../src/watchers/connection-guard.js";
import { captureLogger } from "../app/helpers.js";
import { eventually } from "../helpers/eventually.js";
import { watcherBus } from "../helpers/watcher-bus.js";
import { tempDir } from "../reliability/harness.js";

const A = `0x${"aa".repeat(20)}`;
const B = `0x${"bb".repeat(20)}`;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function guardFor() {
  const dir = tempDir("hl-notice-");
  cleanups.push(() => dir.cleanup());
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const timers = new ManualTimers(clock);
  const file = path.join(dir.dir, "guard.sock");
  const guard = createConnectionGuard({
    address: { kind: "unix", path: file },
    accounts: [A, B],
    heartbeatGapMs: 0,
    runtime: createRuntime({ clock, timers }),
    bus: watcherBus(
      captureLogger().logger,
      createMetrics({ registry: new Registry(), defaultMetrics: false }),
    ),
    onChange: () => undefined,
  });
  await guard.start();
  cleanups.push(
    () => guard.stop(),
    () => timers.dispose(),
  );
  return { guard, clock, file };
}

/** A raw engine: every line the daemon wrote to it. */
async function engine(file: string, first: string) {
  const socket: Socket = connect({ path: file });
  socket.setEncoding("utf8");
  const lines: string[] = [];
  let buf = "";
  socket.on("data", (c: string) => {
    buf += c;
    const parts = buf.split("\n");
    buf = parts.pop()!;
    lines.push(...parts);
  });
  socket.on("error", () => undefined);
  await new Promise<void>((r) => socket.once("connect", () => r()));
  cleanups.push(() => socket.destroy());
  socket.write(first);
  await eventually(() => lines.length > 0, { what: "the daemon's answer" });
  return { socket, lines };
}

describe("guard protocol version 2: notices", () => {
  test("default: lines round-trip; a reason is folded to one printable line; unknown lines are null", () => {
    const notices: GuardNotice[] = [
      { type: "halted", account: A, reason: "rule liquidation: 2.9 % from liquidation" },
      { type: "resumed", account: A },
      { type: "drill", account: B, until: 1_790_000_000_123 },
    ];
    for (const n of notices) expect(parseGuardNotice(guardNoticeLine(n).trimEnd())).toEqual(n);
    expect(guardNoticeLine({ type: "halted", account: A, reason: "a\nb\u0000c" })).toBe(
      `halted ${A} a b c\n`,
    );
    expect(parseGuardNotice("ok")).toBeNull();
    expect(parseGuardNotice(`orders ${A} 1:0`)).toBeNull(); // a later version's line: ignored
    expect(parseGuardNotice(`drill ${A} soon`)).toBeNull();
    expect(parseGuardHello(guardHelloLine([A]).trimEnd())).toEqual({ ok: true, version: 2, accounts: [A] });
    expect(parseGuardHello(guardHelloLine([A], 1).trimEnd())).toEqual({
      ok: true,
      version: 1,
      accounts: [A],
    });
    expect(parseGuardHello(`hl-deadman-guard/3 ${A}`)).toMatchObject({
      ok: false,
      version: "hl-deadman-guard/3",
      reason: expect.stringContaining("this daemon speaks hl-deadman-guard/1 and hl-deadman-guard/2"),
    });
  });

  test("behavior: a version 2 engine is told; a version 1 engine on the same account is sent nothing", async () => {
    const { guard, file } = await guardFor();
    const v2 = await engine(file, guardHelloLine([A], 2));
    const v1 = await engine(file, guardHelloLine([A], 1));
    expect(v2.lines).toEqual(["ok"]);
    expect(v1.lines).toEqual(["ok"]);
    expect(guard.tell({ type: "halted", account: A, reason: "rule liquidation" })).toBe(1);
    await eventually(() => v2.lines.length === 2, { what: "the halted notice" });
    expect(v2.lines[1]).toBe(`halted ${A} rule liquidation`);
    expect(guard.tell({ type: "resumed", account: A.toUpperCase().replace("0X", "0x") })).toBe(1);
    await eventually(() => v2.lines.length === 3, { what: "the resumed notice" });
    expect(v2.lines[2]).toBe(`resumed ${A}`);
    // nothing reached the version 1 engine, which reads every line it gets as the daemon's
    await new Promise((r) => setTimeout(r, 50));
    expect(v1.lines).toEqual(["ok"]);
    // an account no engine holds: told to no one, kept for later
    expect(guard.tell({ type: "drill", account: B, until: Date.UTC(2026, 0, 1, 0, 1) })).toBe(0);
  });

  test("behavior: a HALTED account (and a drill not yet past) is told to an engine that connects later; resumed clears it", async () => {
    const { guard, file, clock } = await guardFor();
    guard.tell({ type: "halted", account: A, reason: "operator kill" });
    guard.tell({ type: "drill", account: B, until: clock.now() + 60_000 });
    const late = await engine(file, guardHelloLine([A, B]));
    await eventually(() => late.lines.length === 3, { what: "the replayed notices" });
    expect(late.lines).toEqual(["ok", `halted ${A} operator kill`, `drill ${B} ${clock.now() + 60_000}`]);
    guard.tell({ type: "resumed", account: A });
    clock.advance(61_000); // the drill is past
    const later = await engine(file, guardHelloLine([A, B]));
    await new Promise((r) => setTimeout(r, 50));
    expect(later.lines).toEqual(["ok"]);
  });

  test("behavior: holdSwitch raises the notices, and falls back to version 1 against a daemon that speaks only 1", async () => {
    const { guard, file } = await guardFor();
    const seen: GuardNotice[] = [];
    const hold = holdSwitch({
      socket: file,
      accounts: [A],
      onNotice: (n) => seen.push(n),
      heartbeatMs: 1_000,
    });
    cleanups.push(() => hold.close());
    await eventually(() => hold.connected, { what: "the engine connected" });
    guard.tell({ type: "halted", account: A, reason: "rule margin" });
    await eventually(() => seen.length === 1, { what: "the notice raised" });
    expect(seen).toEqual([{ type: "halted", account: A, reason: "rule margin" }]);

    // an older daemon: refuses version 2, accepts 1
    const dir = tempDir("hl-notice-old-");
    cleanups.push(() => dir.cleanup());
    const oldFile = path.join(dir.dir, "old.sock");
    const firsts: string[] = [];
    const old = createServer((s) => {
      s.setEncoding("utf8");
      s.once("data", (d: string) => {
        const first = d.split("\n")[0] as string;
        firsts.push(first);
        if (first.startsWith("hl-deadman-guard/1 ")) s.write("ok\n");
        else
          s.end(
            'refused protocol "hl-deadman-guard/2" not supported (this daemon speaks hl-deadman-guard/1)\n',
          );
      });
      s.on("error", () => undefined);
    });
    await new Promise<void>((r) => old.listen(oldFile, () => r()));
    cleanups.push(() => new Promise<void>((r) => old.close(() => r())));
    const states: string[] = [];
    const back = holdSwitch({
      socket: oldFile,
      accounts: [A],
      reconnectMs: 20,
      timers: systemTimers(),
      onState: (s) => states.push(s),
    });
    cleanups.push(() => back.close());
    await eventually(() => back.connected, { what: "connected with version 1" });
    expect(firsts).toEqual([`hl-deadman-guard/2 ${A}`, `hl-deadman-guard/1 ${A}`]);
    expect(states).toEqual(["refused", "connected"]);
  });
});
