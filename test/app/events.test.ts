/**
 * The daemon's bus as assembled (src/app/parts/notifications.ts): each part's log and metrics subscribers are registered
 * once, and the parts publish on that bus only. A push confirmed is one `heartbeat.ok` line and one count; the
 * budget's first read one `budget` line; the guard's engine gauge is set through its subscriber.
 */
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { type Harness, harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function value(h: Harness, name: string, labels: Record<string, string>) {
  const m = (await h.daemon.metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  return m.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
}

test("behavior: every line and count of the switch, the budget and the guard is written once, by its subscriber", async () => {
  const start = Date.UTC(2026, 0, 1, 12, 0, 0);
  const guardFile = join(mkdtempSync(join(tmpdir(), "hl-deadman-events-")), "alive");
  writeFileSync(guardFile, "");
  utimesSync(guardFile, start / 1000, start / 1000);
  h = await harness({ start, config: { guardFile, guardMaxAge: 3_600_000, budgetInterval: 600_000 } });
  await h.advance(45_000);
  const pushes = await value(h, "hl_deadman_pushes_total", { account: h.account, outcome: "ok" });
  expect(pushes).toBeGreaterThanOrEqual(3);
  expect(h.events("heartbeat.ok")).toHaveLength(pushes!);
  expect(h.events("heartbeat.ok").every((l) => l.module === "switch" && l.account === h!.account)).toBe(true);
  expect(h.events("budget")).toHaveLength(1);
  expect(await value(h, "hl_deadman_address_requests_used", { account: h.account })).toBeGreaterThan(0);
  expect(h.events("guard.check").length).toBeGreaterThanOrEqual(1);
  expect(await value(h, "hl_deadman_engine_up", { guard: "file" })).toBe(1);
});
