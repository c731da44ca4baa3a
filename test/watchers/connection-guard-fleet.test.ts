/**
 * The connection guard at fleet size (docs/operations.md, "Cancel on disconnect", "A fleet"): 300 accounts, the
 * benchmark's largest row, carried with one connection per account and with several accounts per connection, over a
 * real Unix socket; each engine's death is
 * that engine's accounts down, and no other's.
 */
import { connect, type Socket } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { GUARD_MAX_ACCOUNTS, guardHelloLine } from "../../src/core/guard-protocol.js";
import { GUARD_MAX_CONNECTIONS } from "../../src/watchers/connection-guard.js";
import { eventually } from "../helpers/eventually.js";
import { socketGuard } from "../helpers/guard.js";
import { tempDir } from "../reliability/harness.js";

const N = 300;
const accounts = Array.from({ length: N }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function fleetGuard() {
  const dir = tempDir("hl-fleet-");
  cleanups.push(() => dir.cleanup());
  const socket = path.join(dir.dir, "guard.sock");
  const guard = socketGuard(socket, accounts);
  await guard.g.start();
  cleanups.push(
    () => guard.g.stop(),
    () => guard.timers.dispose(),
  );
  return { ...guard, socket };
}

/** An engine naming `names`: resolves with its socket and the daemon's answer. */
function engine(socket: string, names: readonly string[]): Promise<{ s: Socket; answer: string }> {
  return new Promise((resolve) => {
    const s = connect({ path: socket });
    s.setEncoding("utf8");
    s.on("error", () => undefined);
    let heard = "";
    s.on("data", (c: string) => {
      heard += c;
      const nl = heard.indexOf("\n");
      if (nl >= 0) resolve({ s, answer: heard.slice(0, nl) });
    });
    s.once("connect", () => s.write(guardHelloLine(names)));
    cleanups.push(() => s.destroy());
  });
}

const upCount = (status: ReturnType<ReturnType<typeof socketGuard>["g"]["status"]>) =>
  Object.values(status.accounts ?? {}).filter((v) => v === "up").length;

describe("connection guard: a fleet of 300 accounts", () => {
  test("bounds: room for 300 engines handing over (two holders each) and accounts per connection for several", () => {
    expect(GUARD_MAX_CONNECTIONS).toBeGreaterThanOrEqual(2 * N);
    expect(Math.ceil(N / GUARD_MAX_ACCOUNTS)).toBeLessThanOrEqual(10);
  });

  test("behavior: one connection per account; each death is its own account's only", async () => {
    const { g, changes, socket } = await fleetGuard();
    const engines = await Promise.all(accounts.map((a) => engine(socket, [a])));
    expect(engines.every((e) => e.answer === "ok")).toBe(true);
    await eventually(() => upCount(g.status()) === N, { what: () => `${upCount(g.status())} of ${N} up` });
    for (const i of [0, 150, 299]) engines[i]!.s.destroy();
    await eventually(() => changes.length === 3, { what: "three deaths seen" });
    expect(changes.map(([a]) => a).sort()).toEqual([accounts[0], accounts[150], accounts[299]].sort());
    expect(upCount(g.status())).toBe(N - 3);
  }, 20_000);

  test("behavior: several accounts per connection (the most each); a death is its engine's accounts only", async () => {
    const { g, changes, socket } = await fleetGuard();
    const groups: string[][] = [];
    for (let i = 0; i < N; i += GUARD_MAX_ACCOUNTS) groups.push(accounts.slice(i, i + GUARD_MAX_ACCOUNTS));
    const engines = await Promise.all(groups.map((names) => engine(socket, names)));
    expect(engines.every((e) => e.answer === "ok")).toBe(true);
    await eventually(() => upCount(g.status()) === N, { what: () => `${upCount(g.status())} of ${N} up` });
    engines[1]!.s.destroy();
    await eventually(() => changes.length === groups[1]!.length, { what: "one engine's accounts down" });
    expect(changes.map(([a]) => a)).toEqual(groups[1]);
  }, 20_000);
});
