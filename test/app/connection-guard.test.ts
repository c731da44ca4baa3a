/**
 * The daemon with the connection guard (`guardSocket`), in-process on the simulator's ManualClock, over a real Unix
 * socket: accounts are `waiting` (pushing, not ready) until an engine names them; each engine's close is engine down
 * for the accounts it named only, and with `--on-engine-down cancel` only their orders are cancelled.
 */
import { mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { type Harness, harness } from "./helpers.js";

let h: Harness | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await h?.close();
  h = undefined;
});

async function engine(path: string, accounts: string[]) {
  const s = connect({ path });
  sockets.push(s);
  s.setEncoding("utf8");
  let answer = "";
  s.on("data", (c: string) => {
    answer += c;
  });
  await new Promise<void>((r) => s.once("connect", () => r()));
  s.write(`hl-deadman-guard/1 ${accounts.join(",")}\n`);
  await eventually(() => answer.includes("\n"), { what: "the daemon's answer" });
  expect(answer).toBe("ok\n");
  return s;
}

describe("daemon: the connection guard drives each account on its own", () => {
  test("behavior: waiting until named, then one engine's death cancels only its account's orders", async () => {
    const wallet = Wallet.createRandom() as unknown as Wallet;
    const account = wallet.address.toLowerCase();
    const sub = Wallet.createRandom().address.toLowerCase();
    const socket = join(mkdtempSync(join(tmpdir(), "hl-guard-app-")), "guard.sock");
    h = await harness({
      wallet,
      config: { accounts: [account, sub], guardSocket: socket, onEngineDown: "cancel" },
      sim: {
        ipWeightPerMinute: null,
        users: [
          { address: account, vaults: [sub], orders: [{ coin: "BTC", side: "B", limitPx: 90_000, sz: 0.1 }] },
          { address: sub, orders: [{ coin: "ETH", side: "A", limitPx: 5_000, sz: 1 }] },
        ],
      },
    });
    // waiting: both pushed (the second 50 ms after the first: the spread), neither ready
    await h.advance(50, 50);
    expect(h.sim.state.getSchedule(account)).not.toBeNull();
    expect(h.sim.state.getSchedule(sub)).not.toBeNull();
    const reasons = h.daemon.readiness().reasons.join("\n");
    expect(reasons).toContain(`waiting for the engine to connect for ${account}, ${sub}`);
    const one = await engine(socket, [account]);
    await engine(socket, [sub]);
    await h.advance(1_000);
    expect(h.daemon.readiness().reasons.join("\n")).not.toContain("waiting for the engine");
    one.destroy();
    await eventually(() => h!.events("engine.down").length > 0, { what: "engine.down" });
    await h.advance(1_000);
    expect(h.events("engine.down").map((l) => l.account)).toEqual([account]);
    expect(h.sim.state.getOpenOrders(account)).toHaveLength(0);
    expect(h.sim.state.getOpenOrders(sub)).toHaveLength(1);
    expect(h.daemon.guardStatus()).toMatchObject({
      kind: "socket",
      up: false,
      accounts: { [account]: "down", [sub]: "up" },
    });
    expect(h.sim.state.getTriggers(account)).toHaveLength(0);
  });
});
