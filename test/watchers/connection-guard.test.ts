/**
 * The connection guard (src/watchers/connection-guard.ts) over a real Unix socket and loopback TCP, on a ManualClock
 * for its timers: waiting until an engine names an account; a close is engine down for the accounts it named, at
 * once and only for them; a second connection for the same account holds it up until both are gone; `detach`
 * covers a planned restart; silence past the heartbeat gap is down; a malformed or unknown first line is refused
 * with its reason and changes nothing; connections and lines are bounded. The engine client (`hl-deadman/engine`)
 * holds and reconnects.
 */
import { writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import path from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { GUARD_MAX_LINE_BYTES } from "../../src/core/guard-protocol.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
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

async function guardFor(opts: { heartbeatGapMs?: number; maxConnections?: number; tcp?: boolean } = {}) {
  const dir = tempDir("hl-guard-");
  cleanups.push(() => dir.cleanup());
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const timers = new ManualTimers(clock);
  const log = captureLogger();
  const metrics = createMetrics({ registry: new Registry(), defaultMetrics: false });
  const changes: Array<[string, boolean]> = [];
  const file = path.join(dir.dir, "guard.sock");
  const guard = createConnectionGuard({
    address: opts.tcp ? { kind: "tcp", host: "127.0.0.1", port: 0 } : { kind: "unix", path: file },
    accounts: [A, B],
    heartbeatGapMs: opts.heartbeatGapMs ?? 0,
    runtime: createRuntime({ clock, timers }),
    bus: watcherBus(log.logger, metrics),
    onChange: (account, up) => changes.push([account, up]),
    ...(opts.maxConnections ? { maxConnections: opts.maxConnections } : {}),
  });
  await guard.start();
  cleanups.push(
    () => guard.stop(),
    () => timers.dispose(),
  );
  const target = opts.tcp ? guard.address() : file;
  return { guard, clock, changes, log, file, target, metrics };
}

/** A raw engine connection: what the daemon answered, line by line. */
async function engine(target: string, first?: string) {
  const m = /^127\.0\.0\.1:(\d+)$/.exec(target);
  const socket: Socket = m ? connect({ host: "127.0.0.1", port: Number(m[1]) }) : connect({ path: target });
  socket.setEncoding("utf8");
  const answers: string[] = [];
  let closed = false;
  let buf = "";
  socket.on("data", (c: string) => {
    buf += c;
    const parts = buf.split("\n");
    buf = parts.pop()!;
    answers.push(...parts);
  });
  socket.on("close", () => {
    closed = true;
  });
  socket.on("error", () => undefined);
  await new Promise<void>((r) => socket.once("connect", () => r()));
  cleanups.push(() => socket.destroy());
  if (first !== undefined) {
    socket.write(first);
    await eventually(() => answers.length > 0, { what: "the daemon's answer" });
  }
  return {
    socket,
    answers,
    closed: () => closed,
    close: () => new Promise<void>((r) => (socket.destroyed ? r() : socket.end(() => r()))),
  };
}

const hello = (...accounts: string[]) => `hl-deadman-guard/1 ${accounts.join(",")}\n`;

describe("connection guard", () => {
  test("default: waiting until named; a close is down at once for the named account only", async () => {
    const { guard, changes, file, log } = await guardFor();
    expect(guard.status()).toMatchObject({
      configured: true,
      up: false, // a waiting account's engine was never seen: not "up" (the switch still pushes: engine(A).up)
      kind: "socket",
      accounts: { [A]: "waiting", [B]: "waiting" },
    });
    expect(guard.engine(A).up).toBe(true);
    const { statSync } = await import("node:fs");
    expect(statSync(file).mode & 0o777).toBe(0o660);
    const e = await engine(file, hello(A));
    expect(e.answers).toEqual(["ok"]);
    expect(guard.status().accounts).toEqual({ [A]: "up", [B]: "waiting" });
    expect(changes).toEqual([]); // waiting -> up: the switch was pushing all along
    e.socket.destroy();
    await eventually(() => changes.length > 0, { what: "the engine-down change" });
    expect(changes).toEqual([[A, false]]);
    expect(guard.engine(A)).toMatchObject({ up: false });
    expect(guard.engine(B).up).toBe(true);
    expect(guard.status()).toMatchObject({ up: false, accounts: { [A]: "down", [B]: "waiting" } });
    expect(log.events("guard.engine_down").map((l) => l.account)).toEqual([A]);
    // the engine back: up again
    await engine(file, hello(A));
    expect(changes).toEqual([
      [A, false],
      [A, true],
    ]);
  });

  test("behavior: a malformed or unknown first line is refused with its reason, logged, and changes nothing", async () => {
    const { guard, changes, file, log } = await guardFor();
    const bad = await engine(file, "hello there\n");
    expect(bad.answers[0]).toMatch(/^refused expected "hl-deadman-guard\/2 <account>/);
    await eventually(() => bad.closed(), { what: "the refused connection closed" });
    const stranger = await engine(file, hello(`0x${"cc".repeat(20)}`));
    expect(stranger.answers[0]).toBe(`refused not an account of this daemon: 0x${"cc".repeat(20)}`);
    const long = await engine(file);
    long.socket.write("x".repeat(GUARD_MAX_LINE_BYTES + 10));
    await eventually(() => long.answers.length > 0, { what: "the long line refused" });
    expect(long.answers[0]).toBe(`refused first line longer than ${GUARD_MAX_LINE_BYTES} bytes`);
    expect(log.events("guard.refused")).toHaveLength(3);
    expect(changes).toEqual([]);
    expect(guard.status().accounts).toEqual({ [A]: "waiting", [B]: "waiting" });
  });

  test("behavior: a second connection for the same account holds it up; down only when both are gone", async () => {
    const { changes, file } = await guardFor();
    const first = await engine(file, hello(A, B));
    const second = await engine(file, hello(A));
    await first.close();
    await eventually(() => changes.length > 0, { what: "B down" });
    expect(changes).toEqual([[B, false]]); // B had only the first; A still has the second
    await second.close();
    await eventually(() => changes.length > 1, { what: "A down" });
    expect(changes).toEqual([
      [B, false],
      [A, false],
    ]);
  });

  test("behavior: detach then close is no down within its grace; no engine back by its end is down", async () => {
    const { guard, changes, file, clock } = await guardFor();
    const old = await engine(file, hello(A));
    old.socket.write("detach 5000\n");
    await old.close();
    await eventually(() => guard.status().accounts?.[A] === "detached", { what: "detached" });
    clock.advance(4_000);
    await engine(file, hello(A)).then((e) => {
      expect(e.answers).toEqual(["ok"]);
      e.socket.write("detach 1000\n");
      return e.close();
    });
    clock.advance(2_000); // the first grace's end passes: the new engine holds it, then detached again
    await eventually(() => guard.status().accounts?.[A] === "detached", { what: "detached again" });
    expect(changes).toEqual([]);
    clock.advance(1_000);
    expect(changes).toEqual([[A, false]]);
  });

  test("behavior: silence past the heartbeat gap is down and the connection closed; heartbeats keep it up", async () => {
    const { guard, changes, file, clock } = await guardFor({ heartbeatGapMs: 1_000 });
    const e = await engine(file, hello(A));
    for (let i = 0; i < 3; i++) {
      clock.advance(800);
      e.socket.write("\n");
      await eventually(() => guard.status().lastCheckAt !== null || true, { what: "a turn" });
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(changes).toEqual([]);
    clock.advance(1_001);
    // judged after one I/O turn (what the socket holds is read first)
    await eventually(() => changes.length > 0, { what: "the silent engine down" });
    expect(changes).toEqual([[A, false]]);
    await eventually(() => e.closed(), { what: "the silent connection closed by the daemon" });
  });

  test("behavior: connections are bounded; the one over is refused and the others keep working", async () => {
    const { changes, target } = await guardFor({ maxConnections: 2, tcp: true });
    await engine(target, hello(A));
    await engine(target, hello(B));
    const third = await engine(target, hello(A));
    expect(third.answers[0]).toBe("refused too many connections (at most 2)");
    expect(changes).toEqual([]);
  });

  test("behavior: a file that is not a socket at the path is never deleted: start fails", async () => {
    const dir = tempDir("hl-guard-");
    cleanups.push(() => dir.cleanup());
    const file = path.join(dir.dir, "not-a-socket");
    writeFileSync(file, "keep me");
    const clock = new ManualClock(0);
    const guard = createConnectionGuard({
      address: { kind: "unix", path: file },
      accounts: [A],
      heartbeatGapMs: 0,
      runtime: createRuntime({ clock, timers: new ManualTimers(clock) }),
      bus: watcherBus(
        captureLogger().logger,
        createMetrics({ registry: new Registry(), defaultMetrics: false }),
      ),
      onChange: () => undefined,
    });
    await expect(guard.start()).rejects.toThrow(`guard socket ${file} exists and is not a socket`);
  });

  test("behavior: holdSwitch (hl-deadman/engine) connects, survives a guard restart by reconnecting, and its close is down", async () => {
    const first = await guardFor();
    const states: string[] = [];
    const hold = holdSwitch({
      socket: first.file,
      accounts: [A],
      heartbeatMs: 50,
      reconnectMs: 20,
      onState: (s) => states.push(s),
    });
    cleanups.push(() => hold.close());
    await eventually(() => first.guard.status().accounts?.[A] === "up", { what: "engine up" });
    // the daemon restarts: a new guard on the same path; the engine reconnects, nothing went down
    await first.guard.stop();
    const { createConnectionGuard: make } = await import("../../src/watchers/connection-guard.js");
    const clock = new ManualClock(0);
    const changes: Array<[string, boolean]> = [];
    const second = make({
      address: { kind: "unix", path: first.file },
      accounts: [A],
      heartbeatGapMs: 0,
      runtime: createRuntime({ clock, timers: new ManualTimers(clock) }),
      bus: watcherBus(
        captureLogger().logger,
        createMetrics({ registry: new Registry(), defaultMetrics: false }),
      ),
      onChange: (a, up) => changes.push([a, up]),
    });
    await second.start();
    cleanups.push(() => second.stop());
    await eventually(() => second.status().accounts?.[A] === "up", { what: "the engine reconnected" });
    expect(first.changes).toEqual([]);
    // (a reconnect that reaches the stopping guard is refused before the new one listens: what counts is that the
    // engine was connected, lost it, and is connected again)
    const held = states.filter((st) => st !== "refused");
    const transitions = held.filter((st, i) => st !== held[i - 1]);
    expect(transitions.slice(0, 3)).toEqual(["connected", "disconnected", "connected"]);
    await hold.close();
    await eventually(() => changes.length > 0, { what: "down after close" });
    expect(changes).toEqual([[A, false]]);
  });
});

/** Lets the guard's turn run: a check deferred one I/O turn (ManualTimers: the next macrotask) and its socket reads. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

// Issue 38: silence counts only over time the daemon was awake to hear it (src/watchers/liveness.ts).
describe("connection guard: silence counts only over time the daemon was awake", () => {
  test("behavior: a late wake-up (a stall of the daemon) postpones the judgement: silence counts again from it", async () => {
    const { guard, changes, file, clock, log } = await guardFor({ heartbeatGapMs: 1_000 });
    await engine(file, hello(A));
    // the daemon stopped for 3 s: its check, due at 1 s, runs 2 s late and judges nothing
    clock.advance(3_000);
    await turns();
    expect(changes).toEqual([]);
    expect(guard.status().accounts?.[A]).toBe("up");
    // silence counts from the wake-up: still up 999 ms after it
    clock.advance(999);
    await turns();
    expect(changes).toEqual([]);
    // a hung engine: down once the daemon was awake for the gap (plus the confirming turn)
    clock.advance(1);
    await eventually(() => changes.length > 0, { what: "the hung engine down" });
    expect(changes).toEqual([[A, false]]);
    expect(String(log.events("guard.engine_down")[0]?.detail)).toBe(
      "engine connection silent: no heartbeat for 1000 ms (gap 1000 ms)",
    );
  });

  test("behavior: what the socket already holds is read before the connection is judged silent", async () => {
    const { changes, file, clock } = await guardFor({ heartbeatGapMs: 1_000 });
    const e = await engine(file, hello(A));
    // a heartbeat already waiting in the socket when the (on-time) check runs: it is read, then judged
    e.socket.write("\n");
    clock.advance(1_000);
    await turns();
    expect(changes).toEqual([]);
    // the line read reset the silence: down one gap after it, not before
    clock.advance(999);
    await turns();
    expect(changes).toEqual([]);
    clock.advance(1);
    await eventually(() => changes.length > 0, { what: "down a gap after the last line" });
    expect(changes).toEqual([[A, false]]);
  });

  test("behavior: a hung engine (connected, silent) on an awake daemon is down within the gap plus one check", async () => {
    const { changes, file, clock, guard } = await guardFor({ heartbeatGapMs: 1_000 });
    const e = await engine(file, hello(A));
    clock.advance(999);
    await turns();
    expect(changes).toEqual([]);
    clock.advance(1);
    // no more time passes: the confirming check is one I/O turn later
    await eventually(() => changes.length > 0, { what: "the hung engine down" });
    expect(changes).toEqual([[A, false]]);
    expect(guard.status().accounts?.[A]).toBe("down");
    await eventually(() => e.closed(), { what: "the silent connection closed" });
  });
});
