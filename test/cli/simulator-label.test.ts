/**
 * `npm start` (`run --sim`) as a new user sees it (issue 43, item 7): the logs and the status page call the network
 * `simulator`, not `mainnet` (a label only: the signatures stay mainnet's), and the page's JSON counts the demo
 * account's open orders, what a fire would cancel: the simulator's demo book, trigger and reduce-only ones included.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { demoUser } from "../../src/sim/demo.js";
import { eventually } from "../helpers/eventually.js";
import { assertBuilt, spawnCli } from "../helpers/process.js";

beforeAll(() => assertBuilt());

type StatusJson = {
  network: string;
  openOrdersRead: boolean;
  accounts: { account: string; openOrders: { total: number; trigger: number; reduceOnly: number } | null }[];
};

describe("run --sim", () => {
  test("behavior: daemon.start and the page say simulator; the page counts the demo account's open orders", async () => {
    const d = spawnCli(["run", "--sim", "--state-dir", mkdtempSync(path.join(tmpdir(), "hl-sim-label-"))]);
    try {
      const ready = await d.waitForEvent("sim.ready", 15_000);
      const start = d.lines.find((l) => l.event === "daemon.start");
      expect(start?.network).toBe("simulator");
      const url = new URL("status.json", String(ready.statusPage)).href;
      const demo = demoUser("0x0000000000000000000000000000000000000001").orders ?? [];
      const status = await eventually(
        async () => {
          const s = (await (await fetch(url)).json()) as StatusJson;
          return s.accounts[0]?.openOrders ? s : null;
        },
        { what: "the demo account's open orders on the page", timeoutMs: 15_000 },
      );
      expect(status.network).toBe("simulator");
      expect(status.openOrdersRead).toBe(true);
      expect(status.accounts[0]!.openOrders).toMatchObject({
        total: demo.length,
        reduceOnly: demo.filter((o) => o.reduceOnly === true).length,
        trigger: demo.filter((o) => o.orderType !== undefined && o.orderType !== "Limit").length,
      });
    } finally {
      d.kill("SIGINT");
    }
    expect((await d.exitWithin(10_000)).code).toBe(0);
  }, 40_000);
});
