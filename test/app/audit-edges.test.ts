/**
 * The audit trail of an engine's death under `--on-engine-down cancel` (issue 38, "Words"): the daemon in-process
 * on the simulator's ManualClock, the connection guard over a real Unix socket. While the engine stays down a
 * cancel pass runs each interval; the trail keeps the first pass (what it cancelled) and a repeat pass only when it
 * cancelled something (an order placed meanwhile), read back from `<stateDir>/audit/audit.jsonl`.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { AUDIT_TYPE_PREFIX } from "../../src/surface/audit/record.js";
import { eventually } from "../helpers/eventually.js";
import { type Harness, harness } from "./helpers.js";

let h: Harness | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await h?.close();
  h = undefined;
});

describe("audit trail: a death's cancel passes as edges", () => {
  test("behavior: the first pass and a repeat pass that cancelled an order are kept; the empty repeats are not", async () => {
    const socket = join(mkdtempSync(join(tmpdir(), "hl-audit-edges-")), "guard.sock");
    h = await harness({ config: { guardSocket: socket, onEngineDown: "cancel", interval: 1_000 } });
    const { account, stateDir } = h;
    const engine = connect({ path: socket });
    sockets.push(engine);
    engine.setEncoding("utf8");
    let answer = "";
    engine.on("data", (c: string) => {
      answer += c;
    });
    await new Promise<void>((r) => engine.once("connect", () => r()));
    engine.write(`hl-deadman-guard/1 ${account}\n`);
    await eventually(() => answer === "ok\n", { what: "the daemon's ok" });
    await h.advance(2_000);
    engine.destroy();
    await eventually(() => h!.events("engine.orders_cancelled").length > 0, { what: "the first pass" });
    await h.advance(5_000); // five empty repeat passes
    h.sim.state.addOrder(account, { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" });
    await h.advance(5_000); // the next pass cancels it, four more find nothing
    const passes = h.events("engine.orders_cancelled").map((l) => [l.pass, l.cancelled]);
    expect(passes.length).toBeGreaterThanOrEqual(9);
    expect(passes.filter(([, n]) => Number(n) > 0)).toEqual([
      [1, 1],
      [expect.any(Number), 1],
    ]);
    expect(h.sim.state.getOpenOrders(account)).toHaveLength(0);
    await h.close();
    h = undefined;
    const records = readFileSync(join(stateDir, "audit", "audit.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> })
      .filter((r) => r.type.startsWith(`${AUDIT_TYPE_PREFIX}cancel.`));
    expect(
      records.map((r) => [r.type.slice(AUDIT_TYPE_PREFIX.length), r.data.pass, r.data.cancelled]),
    ).toEqual([
      ["cancel.done", 1, 1],
      ["cancel.done", passes.find(([p, n]) => p !== 1 && Number(n) > 0)![0], 1],
    ]);
  });
});
