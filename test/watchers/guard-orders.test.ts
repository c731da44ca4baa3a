/**
 * The engine's announcement of its orders (protocol version 2, `orders` lines: src/core/guard-protocol.ts): split to
 * the protocol's 2,048-byte lines and read back whole; the connection guard keeps the latest whole announcement per
 * account over a real Unix socket (a part out of order, an account not named, or a version 1 engine changes
 * nothing); the engine client (`hl-deadman/engine`) sends it and sends it again after a reconnect; the cancel pass's
 * known orders are built from it with each order's kind (src/protocol/hyperliquid/announced.ts).
 */
import { connect, type Socket } from "node:net";
import path from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import {
  type AnnouncedOrder,
  GUARD_MAX_LINE_BYTES,
  GUARD_MAX_ORDERS,
  guardHelloLine,
  guardOrdersLines,
  parseGuardLine,
} from "../../src/core/guard-protocol.js";
import { createRuntime, ManualTimers, systemTimers } from "../../src/core/runtime.js";
import { holdSwitch } from "../../src/engine/index.js";
import { announcedOpenOrders, coinOfAsset } from "../../src/protocol/hyperliquid/announced.js";
import { assetIndexOf, isProtectiveStop, splitCancels } from "../../src/protocol/hyperliquid/cancel.js";
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

/** `n` orders: every fourth a reduce-only trigger (a stop), every fourth a plain trigger, the rest resting limits. */
const fleetOrders = (n: number, base = 90_000_000_000): AnnouncedOrder[] =>
  Array.from({ length: n }, (_, i) => ({
    oid: base + i,
    asset: i % 3 === 2 ? 10_000 + (i % 7) : i % 5,
    trigger: i % 4 >= 2,
    reduceOnly: i % 4 === 3,
  }));

const parseAll = (lines: string[]) =>
  lines.map((l) => {
    const p = parseGuardLine(l.slice(0, -1));
    if (p.type !== "orders") throw new Error(`not an orders line: ${JSON.stringify(p)}`);
    return p;
  });

describe("guard protocol version 2: orders lines", () => {
  test("default: a set round-trips; none is one line; each line fits 2,048 bytes with its newline", () => {
    expect(guardOrdersLines(A, [])).toEqual([`orders ${A} 1/1\n`]);
    expect(parseGuardLine(`orders ${A} 1/1`)).toEqual({
      type: "orders",
      account: A,
      part: 1,
      parts: 1,
      orders: [],
    });
    for (const n of [1, 80, 81, 1_000, GUARD_MAX_ORDERS]) {
      const orders = fleetOrders(n);
      const lines = guardOrdersLines(A, orders);
      for (const l of lines) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(GUARD_MAX_LINE_BYTES);
      const parsed = parseAll(lines);
      expect(parsed.map((p) => `${p.part}/${p.parts}`)).toEqual(
        lines.map((_, i) => `${i + 1}/${lines.length}`),
      );
      expect(parsed.flatMap((p) => p.orders)).toEqual(orders);
    }
    expect(() => guardOrdersLines(A, fleetOrders(GUARD_MAX_ORDERS + 1))).toThrow(/at most 5000/);
  });

  test("behavior: each malformed orders line is ignored with its reason (a heartbeat still)", () => {
    const reason = (line: string) => {
      const p = parseGuardLine(line);
      return p.type === "ignored" ? p.reason : p.type;
    };
    expect(reason("orders")).toMatch(/needs/);
    expect(reason(`orders ${A} 2/1 1:0`)).toMatch(/part 2\/1/);
    expect(reason(`orders ${A} 0/1`)).toMatch(/part 0\/1/);
    expect(reason(`orders ${A} 1/1 1:0:x`)).toMatch(/is not <oid>/);
    expect(reason(`orders ${A} 1/1 99999999999999999:0`)).toMatch(/is not <oid>/);
    expect(reason(`orders ${A} 1/1 12:3:tr`)).toBe("orders");
    // version 1 knows no orders line: a heartbeat, silently, as before
    expect(parseGuardLine(`orders ${A} 1/1 12:3:tr`, 1)).toEqual({ type: "heartbeat" });
    expect(parseGuardLine("orders nonsense", 1)).toEqual({ type: "heartbeat" });
  });

  test("default: the pass's known orders carry each order's kind; meta names the coin; unknown assets left to the read", () => {
    const meta = { universe: [{ name: "BTC" }, { name: "ETH" }] };
    expect(coinOfAsset(1, meta)).toBe("ETH");
    expect(coinOfAsset(10_007, meta)).toBe("@7");
    expect(coinOfAsset(5, meta)).toBeNull();
    expect(coinOfAsset(110_000, meta)).toBeNull();
    const orders: AnnouncedOrder[] = [
      { oid: 1, asset: 0, trigger: false, reduceOnly: false },
      { oid: 2, asset: 1, trigger: true, reduceOnly: true },
      { oid: 3, asset: 10_002, trigger: true, reduceOnly: false },
      { oid: 4, asset: 9, trigger: false, reduceOnly: false },
    ];
    expect(announcedOpenOrders(orders, null, 0)).toBeNull();
    const known = announcedOpenOrders(orders, meta, 0)!;
    expect(known.map((o) => [o.coin, o.oid])).toEqual([
      ["BTC", 1],
      ["ETH", 2],
      ["@2", 3],
    ]);
    for (const [i, o] of known.entries()) expect(assetIndexOf(o.coin, meta)).toBe(orders[i]!.asset);
    // the stop is kept, the trigger goes without the fast flag, the limit with it
    expect(known.filter(isProtectiveStop).map((o) => o.oid)).toEqual([2]);
    expect(
      splitCancels(
        known.filter((o) => !isProtectiveStop(o)),
        meta,
        { unknownKindIsTrigger: true },
      ),
    ).toEqual([
      { fast: true, orders: [{ asset: 0, oid: 1 }] },
      { fast: false, orders: [{ asset: 10_002, oid: 3 }] },
    ]);
  });
});

async function guardFor() {
  const dir = tempDir("hl-orders-");
  cleanups.push(() => dir.cleanup());
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const timers = new ManualTimers(clock);
  const file = path.join(dir.dir, "guard.sock");
  const log = captureLogger();
  const guard = createConnectionGuard({
    address: { kind: "unix", path: file },
    accounts: [A, B],
    heartbeatGapMs: 0,
    runtime: createRuntime({ clock, timers }),
    bus: watcherBus(log.logger, createMetrics({ registry: new Registry(), defaultMetrics: false })),
    onChange: () => undefined,
  });
  await guard.start();
  cleanups.push(
    () => guard.stop(),
    () => timers.dispose(),
  );
  return { guard, file, log };
}

async function engine(file: string, first: string) {
  const socket: Socket = connect({ path: file });
  socket.setEncoding("utf8");
  let heard = "";
  socket.on("data", (c: string) => {
    heard += c;
  });
  socket.on("error", () => undefined);
  await new Promise<void>((r) => socket.once("connect", () => r()));
  cleanups.push(() => socket.destroy());
  socket.write(first);
  await eventually(() => heard.includes("\n"), { what: "the daemon's answer" });
  return socket;
}

describe("connection guard: announced orders", () => {
  test("behavior: the latest whole announcement is kept per account, and kept after the engine's death", async () => {
    const { guard, file } = await guardFor();
    const s = await engine(file, guardHelloLine([A]));
    expect(guard.orders(A)).toBeUndefined();
    const first = fleetOrders(300);
    s.write(guardOrdersLines(A, first).join(""));
    await eventually(() => guard.orders(A)?.length === 300, { what: "the announcement kept" });
    expect(guard.orders(A)).toEqual(first);
    const second = fleetOrders(2, 7);
    s.write(guardOrdersLines(A, second).join(""));
    await eventually(() => guard.orders(A)?.length === 2, { what: "the new set replaces the old" });
    expect(guard.orders(A)).toEqual(second);
    s.destroy();
    await eventually(() => guard.status().accounts?.[A] === "down", { what: "the engine's death" });
    expect(guard.orders(A)).toEqual(second);
  });

  test("behavior: a part out of order, an account not named, and a version 1 engine change nothing", async () => {
    const { guard, file, log } = await guardFor();
    const s = await engine(file, guardHelloLine([A]));
    const kept = fleetOrders(1);
    s.write(guardOrdersLines(A, kept).join(""));
    await eventually(() => guard.orders(A) !== undefined, { what: "the first set" });
    const lines = guardOrdersLines(A, fleetOrders(400));
    expect(lines.length).toBeGreaterThan(2);
    // part 1, then part 3: the announcement is dropped, the set before stays
    s.write(lines[0]! + lines[2]!);
    s.write(guardOrdersLines(B, fleetOrders(3)).join(""));
    await eventually(() => log.lines.filter((l) => l.event === "guard.line_ignored").length >= 2, {
      what: () => `the ignored lines logged: ${JSON.stringify(log.lines.map((l) => l.event))}`,
    });
    expect(guard.orders(A)).toEqual(kept);
    expect(guard.orders(B)).toBeUndefined();
    const v1 = await engine(file, guardHelloLine([B], 1));
    v1.write(guardOrdersLines(B, fleetOrders(3)).join(""));
    v1.write("\n");
    // a marker after it: the v2 engine's set arrives later, so the v1 lines were read first
    s.write(guardOrdersLines(A, []).join(""));
    await eventually(() => guard.orders(A)?.length === 0, { what: "the marker set" });
    expect(guard.orders(B)).toBeUndefined();
  });

  test("behavior: holdSwitch announces, and announces again after the daemon restarts", async () => {
    const { guard, file } = await guardFor();
    const timers = systemTimers();
    const hold = holdSwitch({ socket: file, accounts: [A], heartbeatMs: 60_000, reconnectMs: 20, timers });
    cleanups.push(() => hold.close());
    expect(() => hold.announceOrders(B, [])).toThrow(/not an account this engine named/);
    const orders = fleetOrders(150);
    hold.announceOrders(A, orders); // before the connection: kept, sent on `ok`
    await eventually(() => guard.orders(A)?.length === 150, { what: "the announcement on connect" });
    expect(guard.orders(A)).toEqual(orders);
    await guard.stop();
    // a new daemon on the same path hears the engine reconnect and its announcement
    const clock = new ManualClock(0);
    const second = createConnectionGuard({
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
    await second.start();
    cleanups.push(() => second.stop());
    await eventually(() => second.orders(A)?.length === 150, { what: "announced again after the reconnect" });
    expect(hold.announceOrders(A, [])).toBe(true);
    await eventually(() => second.orders(A)?.length === 0, { what: "the empty set" });
  });
});
