/**
 * The Python engine module the package ships (engines/python/hl_deadman_guard.py), run under the real `python3`
 * against a real connection guard (src/watchers/connection-guard.ts) on a Unix socket, as an engine would use it:
 * connected and the account up; the daemon's notices (protocol version 2) reach the engine's callback; a graceful
 * restart of the daemon in the middle neither kills the engine nor leaves the account waiting (it reconnects); and
 * the engine's OWN process killed (kill -9 of its pid, not its process group, as a crash or the OOM killer does) is
 * the engine down: nothing outlives the engine to hold the connection.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { type AnnouncedOrder, guardOrdersLines } from "../../src/core/guard-protocol.js";
import { requireBinary } from "../helpers/binaries.js";
import { eventually } from "../helpers/eventually.js";
import { socketGuard } from "../helpers/guard.js";
import { ROOT } from "../helpers/process.js";
import { tempDir } from "../reliability/harness.js";

const ACCOUNT = "0x1111111111111111111111111111111111111111";
const MODULE_DIR = path.join(ROOT, "engines/python");

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const startGuard = (socket: string) => socketGuard(socket, [ACCOUNT]);

const ENGINE = `
import json, sys, time
sys.path.insert(0, sys.argv[1])
from hl_deadman_guard import Guard
def say(kind, **fields):
    print(json.dumps(dict(kind=kind, **fields)), flush=True)
guard = Guard(sys.argv[2], [sys.argv[3]], heartbeat=0.2, backoff=(0.05, 0.2),
              on_notice=lambda n: say("notice", notice=n),
              on_state=lambda s, d=None: say("state", state=s, detail=d))
guard.start()
while True:  # the engine's own work
    time.sleep(0.05)
`;

describe("engines/python/hl_deadman_guard.py", () => {
  test("behavior: holds the switch, hears the daemon, survives a daemon restart, dies with the engine's own process", async () => {
    const python = requireBinary("python3");
    const dir = tempDir("hl-py-");
    cleanups.push(() => dir.cleanup());
    const socket = path.join(dir.dir, "guard.sock");
    let guard = startGuard(socket);
    await guard.g.start();
    cleanups.push(
      () => guard.g.stop(),
      () => guard.timers.dispose(),
    );

    const child = spawn(python, ["-c", ENGINE, MODULE_DIR, socket, ACCOUNT], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.push(() => child.kill("SIGKILL"));
    const said: Array<Record<string, unknown>> = [];
    let stderr = "";
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      const lines = out.split("\n");
      out = lines.pop()!;
      for (const l of lines) said.push(JSON.parse(l));
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    let exited: number | null | undefined;
    child.on("exit", (code) => {
      exited = code;
    });

    await eventually(() => guard.g.status().accounts?.[ACCOUNT] === "up", {
      what: () => `the Python engine connected (stderr: ${stderr})`,
      timeoutMs: 10_000,
    });
    guard.g.tell({ type: "halted", account: ACCOUNT, reason: "rule liquidation" });
    await eventually(() => said.some((s) => s.kind === "notice"), { what: "the notice heard" });
    expect(said.find((s) => s.kind === "notice")).toEqual({
      kind: "notice",
      notice: { type: "halted", account: ACCOUNT, reason: "rule liquidation" },
    });

    // a graceful restart of the daemon: the engine lives on and reconnects to the new one
    await guard.g.stop();
    guard.timers.dispose();
    guard = startGuard(socket);
    await guard.g.start();
    await eventually(() => guard.g.status().accounts?.[ACCOUNT] === "up", {
      what: () => `the Python engine reconnected after the daemon's restart (stderr: ${stderr})`,
      timeoutMs: 10_000,
    });
    expect(exited).toBeUndefined();
    expect(stderr).not.toMatch(/BrokenPipe|Traceback/);
    // the engine hears `ok` a moment after the guard counts it up
    await eventually(() => said.filter((s) => s.kind === "state").length >= 3, {
      what: "the engine's states",
    });
    expect(said.filter((s) => s.kind === "state").map((s) => s.state)).toEqual([
      "connected",
      "disconnected",
      "connected",
    ]);

    // the engine's own process killed, not its group: the daemon sees it down
    process.kill(child.pid!, "SIGKILL");
    await eventually(() => guard.changes.length > 0, { what: "the engine's death seen" });
    expect(guard.changes).toEqual([[ACCOUNT, false]]);
  }, 30_000);

  test("behavior: announce_orders writes the protocol's lines, byte for byte the TypeScript client's, and the daemon keeps the set", async () => {
    const python = requireBinary("python3");
    const dir = tempDir("hl-py-orders-");
    cleanups.push(() => dir.cleanup());
    const socket = path.join(dir.dir, "guard.sock");
    const guard = startGuard(socket);
    await guard.g.start();
    cleanups.push(
      () => guard.g.stop(),
      () => guard.timers.dispose(),
    );
    // 400 orders: several lines; a resting limit, a trigger, a reduce-only stop, spot and perp assets
    const orders: AnnouncedOrder[] = Array.from({ length: 400 }, (_, i) => ({
      oid: 91_000_000_000 + i,
      asset: i % 3 === 2 ? 10_000 + i : i % 7,
      trigger: i % 4 >= 2,
      reduceOnly: i % 4 === 3,
    }));
    const asPython = JSON.stringify(
      orders.map((o) => ({ oid: o.oid, asset: o.asset, trigger: o.trigger, reduce_only: o.reduceOnly })),
    );
    const script = `
import json, sys, time
sys.path.insert(0, sys.argv[1])
from hl_deadman_guard import Guard, orders_lines
orders = json.loads(sys.argv[4])
try:
    orders_lines(sys.argv[3], [dict(oid=i, asset=0) for i in range(5001)])
    too_many = "accepted"
except ValueError as e:
    too_many = str(e)
print(json.dumps([orders_lines(sys.argv[3], orders), orders_lines(sys.argv[3], []), too_many]), flush=True)
guard = Guard(sys.argv[2], [sys.argv[3]], heartbeat=0.2, backoff=(0.05, 0.2))
guard.announce_orders(sys.argv[3], orders)  # before the connection: sent once the daemon answers ok
guard.start()
while True:
    time.sleep(0.05)
`;
    const child = spawn(python, ["-c", script, MODULE_DIR, socket, ACCOUNT, asPython], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.push(() => child.kill("SIGKILL"));
    let out = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    await eventually(() => out.includes("\n"), {
      what: () => `the lines printed (stderr: ${stderr})`,
      timeoutMs: 10_000,
    });
    const [lines, none, tooMany] = JSON.parse(out.slice(0, out.indexOf("\n"))) as [
      string[],
      string[],
      string,
    ];
    expect(lines.length).toBeGreaterThan(1);
    expect(lines).toEqual(guardOrdersLines(ACCOUNT, orders));
    expect(none).toEqual(guardOrdersLines(ACCOUNT, []));
    expect(tooMany).toMatch(/5001 orders announced .* \(at most 5000\)/);
    await eventually(() => guard.g.orders(ACCOUNT)?.length === orders.length, {
      what: () => `the announcement kept by the daemon (stderr: ${stderr})`,
      timeoutMs: 10_000,
    });
    expect(guard.g.orders(ACCOUNT)).toEqual(orders);
    // the engine's death: the set is what the daemon cancels from
    process.kill(child.pid!, "SIGKILL");
    await eventually(() => guard.changes.length > 0, { what: "the engine's death seen" });
    expect(guard.g.orders(ACCOUNT)).toEqual(orders);
  }, 30_000);
});
