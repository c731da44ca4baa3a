/**
 * Issue 41 through the real CLI and real sockets: `run --sim --on-engine-down cancel` with the connection guard and
 * no order feed (`--order-feed-accounts 0`), so what a pass knows without a read can only be the engine's own
 * announcement (protocol version 2, `orders` lines). The engine announces the demo account's resting orders and
 * stops, then dies: the pass cancels them at once and reads once, to confirm (weight 1 action + 20), where without
 * the announcement it reads first and again (41); the stops are kept; no trigger is spent.
 */
import { mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { type AnnouncedOrder, guardHelloLine, guardOrdersLines } from "../../src/core/guard-protocol.js";
import { assetIndexOf } from "../../src/protocol/hyperliquid/cancel.js";
import { InfoClient } from "../../src/protocol/hyperliquid/info.js";
import { assertBuilt, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());

function engineV2(socket: string, account: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    s.setEncoding("utf8");
    s.once("error", reject);
    s.once("data", (d: string) =>
      d.startsWith("ok") ? resolve(s) : reject(new Error(`guard answered ${d}`)),
    );
    s.on("connect", () => s.write(guardHelloLine([account], 2)));
  });
}

async function deathWith(announce: boolean) {
  const dir = mkdtempSync(path.join(tmpdir(), `hl-announced-${announce}-`));
  const guard = path.join(dir, "guard.sock");
  const d = spawnCli([
    "run",
    "--sim",
    "--state-dir",
    path.join(dir, "s"),
    "--exposure-interval",
    "0",
    "--guard-socket",
    guard,
    "--on-engine-down",
    "cancel",
    "--order-feed-accounts",
    "0",
  ]);
  const sim = await d.waitForEvent("sim.start", 15_000);
  const account = String(sim.account).toLowerCase();
  const info = new InfoClient({ apiUrl: String(sim.apiUrl), timeoutMs: 5_000, retryLimit: 0 });
  try {
    await d.waitForEvent("guard.listening", 15_000);
    const e = await engineV2(guard, account);
    await d.waitForEvent("heartbeat.ok", 10_000);
    const open = await info.frontendOpenOrders({ user: account });
    const meta = await info.meta();
    expect(open.length).toBe(6);
    if (announce) {
      const orders: AnnouncedOrder[] = open.map((o) => ({
        oid: o.oid,
        asset: assetIndexOf(o.coin, meta)!,
        trigger: o.isTrigger === true,
        reduceOnly: o.reduceOnly === true,
      }));
      e.write(guardOrdersLines(account, orders).join(""));
    }
    // the daemon reads what the connection holds before its close
    e.destroy();
    await d.waitForEvent("engine.down", 5_000);
    const done = await d.waitForEvent("orders.cancelled", 15_000);
    const left = await info.frontendOpenOrders({ user: account });
    return { d, done, left };
  } finally {
    info.close();
    d.kill("SIGINT");
    await d.exitWithin(15_000);
  }
}

describe("a dead engine's announced orders (process)", () => {
  test("behavior: announced, the pass cancels without a read first (21 weight, not 41); stops kept; no trigger", async () => {
    const withIt = await deathWith(true);
    expect(withIt.done).toMatchObject({ confirmed: true, cancelled: 4, kept: 2 });
    expect(withIt.left.map((o) => o.reduceOnly && o.isTrigger)).toEqual([true, true]);
    expect(withIt.d.lines.filter((l) => l.event === "trigger.counted")).toEqual([]);
    const without = await deathWith(false);
    expect(without.done).toMatchObject({ confirmed: true, cancelled: 4, kept: 2 });
    // one fast cancel (1) and the confirming read (20), against a first read, the cancel and a second read
    expect(withIt.done.weight).toBe(21);
    expect(without.done.weight).toBe(41);
  }, 90_000);
});
