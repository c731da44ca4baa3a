/**
 * The engine guard's URL check (src/watchers/guard.ts) against a real loopback health server, through the one HTTP
 * transport: a GET answered 2xx is up; a non-2xx, a refused connection, a hung server (its time-out) or an answer
 * over the body bound is a failed check; two in a row call the engine down, one success brings it back; the URL's
 * secrets never reach a detail; `stop` closes its transport and a check in flight then changes nothing.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { createRuntime, ManualTimers } from "../../src/core/runtime.js";
import { createMetrics } from "../../src/surface/metrics.js";
import { createGuard, GUARD_URL_MAX_BODY_BYTES } from "../../src/watchers/guard.js";
import { captureLogger } from "../app/helpers.js";

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function health(initial: Answer) {
  let answer = initial;
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    answer(req, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { port, seen, set: (a: Answer) => (answer = a) };
}

const status =
  (code: number): Answer =>
  (_req, res) =>
    res.writeHead(code).end("x");

function guardFor(url: string, intervalMs = 1_000) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const timers = new ManualTimers(clock);
  const changes: Array<[boolean, string | null]> = [];
  const guard = createGuard({
    url,
    intervalMs,
    runtime: createRuntime({ clock, timers }),
    logger: captureLogger().logger,
    metrics: createMetrics({ registry: new Registry(), defaultMetrics: false }),
    onChange: (up, detail) => changes.push([up, detail]),
  })!;
  cleanups.push(() => {
    guard.stop();
    timers.dispose();
  });
  return { guard, changes };
}

describe("the guard's URL check over the one transport", () => {
  test("behavior: 2xx is up; two failed checks in a row are down; one success is up again", async () => {
    const h = await health(status(204));
    const { guard, changes } = guardFor(`http://127.0.0.1:${h.port}/health/S3CRET-segment?token=T0KEN-value`);
    expect(await guard.check()).toBe(true);
    expect(guard.status().detail).toBe(`http://127.0.0.1:${h.port}/***/***?*** answered 204`);
    h.set(status(503));
    expect(await guard.check()).toBe(true);
    expect(await guard.check()).toBe(false);
    h.set(status(200));
    expect(await guard.check()).toBe(true);
    expect(changes.map(([up]) => up)).toEqual([false, true]);
    expect(changes[0]![1]).toBe(`http://127.0.0.1:${h.port}/***/***?*** answered 503`);
    expect(h.seen.every((s) => s === "GET /health/S3CRET-segment?token=T0KEN-value")).toBe(true);
    expect(JSON.stringify(changes)).not.toMatch(/S3CRET|T0KEN/);
  });

  test("behavior: refused, hung (time-out) and over-the-bound answers are failed checks, named", async () => {
    const h = await health(status(200));
    const { guard } = guardFor(`http://127.0.0.1:${h.port}/`, 300);
    h.set(() => {}); // never answers: the check's time-out (the interval, 300 ms) ends it
    expect(await guard.check()).toBe(true);
    expect(guard.status().detail).toBe(`http://127.0.0.1:${h.port}: ETIMEDOUT`);
    h.set((_req, res) => res.writeHead(200).end(Buffer.alloc(GUARD_URL_MAX_BODY_BYTES + 1, "x")));
    expect(await guard.check()).toBe(false);
    expect(guard.status().detail).toMatch(/: body exceeds 1048576 bytes$/);

    const closed = await health(status(200));
    const port = closed.port;
    await cleanups.pop()!();
    const { guard: refused } = guardFor(`http://127.0.0.1:${port}/`);
    expect(await refused.check()).toBe(true);
    expect(refused.status().detail).toBe(`http://127.0.0.1:${port}: ECONNREFUSED`);
  });

  test("behavior: stop closes the transport; a check in flight then reports no change", async () => {
    const h = await health(() => {});
    const { guard, changes } = guardFor(`http://127.0.0.1:${h.port}/`, 2_000);
    const first = guard.check();
    await new Promise((r) => setTimeout(r, 50));
    guard.stop();
    expect(await first).toBe(true);
    expect(await guard.check()).toBe(true);
    expect(await guard.check()).toBe(true);
    expect(changes).toEqual([]);
  });
});
