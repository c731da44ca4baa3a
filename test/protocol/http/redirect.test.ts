/**
 * No HTTP call follows a redirect (src/protocol/http/http.ts): every client the daemon has (exchange, info, explorer,
 * EVM RPC, the engine guard, the webhook notifier) meets a real 127.0.0.1 server answering 301/302/303/307/308 with
 * a Location on another port (another origin) and fails with the kind `redirect`, which the policy table classifies
 * (src/core/errors/policy.ts): not retried, not permanent, exit 69. The other origin is a live server too, so a followed
 * redirect would show up there as a request.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Wallet } from "ethers";
import { Registry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { systemClock } from "../../../src/core/clock.js";
import { systemTimers } from "../../../src/core/runtime.js";
import { EvmClient } from "../../../src/protocol/evm/client.js";
import { EvmRedirectError } from "../../../src/protocol/evm/errors.js";
import { TransportError } from "../../../src/protocol/http/errors.js";
import { createHttpTransport } from "../../../src/protocol/http/http.js";
import { HyperliquidApiError } from "../../../src/protocol/hyperliquid/errors.js";
import { ExchangeClient } from "../../../src/protocol/hyperliquid/exchange.js";
import { ExplorerClient } from "../../../src/protocol/hyperliquid/explorer.js";
import { InfoClient } from "../../../src/protocol/hyperliquid/info.js";
import { classify, shouldRetry } from "../../../src/protocol/policy.js";
import { createNotifier } from "../../../src/surface/notify/notifier.js";
import { captureLogger } from "../../app/helpers.js";
import { urlGuardFor } from "../../watchers/helpers.js";

type Seen = { method: string; url: string; headers: IncomingMessage["headers"] };

/** A loopback server answering every request with `answer`; it records what it saw. */
async function server(
  answer: (req: IncomingMessage) => { status: number; headers?: Record<string, string> },
) {
  const seen: Seen[] = [];
  const s: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
      const a = answer(req);
      const body = a.status === 200 ? '{"status":"ok","response":{"type":"default"}}' : "moved";
      res.writeHead(a.status, { "content-type": "application/json", ...(a.headers ?? {}) }).end(body);
    });
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  const handle = {
    seen,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
  cleanups.push(handle.close);
  return handle;
}

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The other origin (a live server: a followed redirect would be seen there) and a server redirecting to it. */
async function redirecting(status = 302, path = "/secret-path-XYZ123?token=TOKEN-abc123") {
  const target = await server(() => ({ status: 200 }));
  const origin = await server(() => ({ status, headers: { location: `${target.url}${path}` } }));
  return { target, origin };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const USER = new Wallet(KEY).address.toLowerCase();

describe("the transport follows no redirect", () => {
  test.each([301, 302, 303, 307, 308])(
    "behavior: %i to another origin is a redirect error naming where (redacted); nothing reaches it",
    async (status) => {
      const { target, origin } = await redirecting(status);
      const t = createHttpTransport({ baseUrl: origin.url, retryLimit: 3, retryDelayMs: 1 });
      cleanups.push(() => t.close());
      const e = await rejection(t.postJson("/info", { type: "meta" }, { idempotent: true }));
      expect(e).toBeInstanceOf(TransportError);
      const te = e as TransportError;
      expect({ kind: te.kind, status: te.status, sameOrigin: te.sameOrigin, location: te.location }).toEqual({
        kind: "redirect",
        status,
        sameOrigin: false,
        location: `${target.url}/***?***`,
      });
      expect(te.message).toContain(`a redirect to another origin (${target.url}/***?***)`);
      expect(te.message).toContain("configure the final URL");
      expect(te.message).not.toMatch(/secret-path|TOKEN-abc/);
      // not retried (idempotent, retryLimit 3): one request, and none at the other origin
      expect(origin.seen).toHaveLength(1);
      expect(target.seen).toHaveLength(0);
      expect(shouldRetry(e)).toBe(false);
      expect(classify(e)).toMatchObject({
        domain: "transport",
        key: "redirect",
        policy: { retryable: false, permanent: false, outcomeUnknown: false, exitCode: 69 },
      });
    },
  );

  test("behavior: a redirect to the same origin is not followed either, and says so", async () => {
    const origin = await server((req) =>
      req.url === "/info" ? { status: 301, headers: { location: "/info/" } } : { status: 200 },
    );
    const t = createHttpTransport({ baseUrl: origin.url });
    cleanups.push(() => t.close());
    const e = (await rejection(t.postJson("/info", {}))) as TransportError;
    expect({ kind: e.kind, sameOrigin: e.sameOrigin, location: e.location }).toEqual({
      kind: "redirect",
      sameOrigin: true,
      location: `${origin.url}/info`,
    });
    expect(e.message).toContain("a redirect to the same origin");
    expect(origin.seen.map((s) => s.url)).toEqual(["/info"]);
  });

  test("default: a 3xx without a Location, and a 304, are ordinary statuses for the caller", async () => {
    const origin = await server((req) => ({ status: req.url === "/a" ? 300 : 304 }));
    const t = createHttpTransport({ baseUrl: origin.url });
    cleanups.push(() => t.close());
    expect((await t.postJson("/a", {})).status).toBe(300);
    expect((await t.request("/b", { method: "GET", parseJson: false })).status).toBe(304);
  });
});

describe("every client fails with its family's redirect kind", () => {
  test("behavior: exchange (a signed scheduleCancel): HyperliquidApiError redirect, sent once", async () => {
    const { target, origin } = await redirecting(307);
    const client = new ExchangeClient({
      apiUrl: origin.url,
      signer: new Wallet(KEY),
      isMainnet: true,
      clock: systemClock,
    });
    cleanups.push(() => client.close());
    const e = await rejection(client.scheduleCancel({ time: Date.now() + 60_000 }));
    expect(e).toBeInstanceOf(HyperliquidApiError);
    expect(e).toMatchObject({ kind: "redirect", endpoint: "exchange", status: 307, retryable: false });
    expect(e.message).toContain("redirect to another origin");
    expect(classify(e)?.policy).toMatchObject({ retryable: false, permanent: false, outcomeUnknown: false });
    expect(origin.seen.map((s) => s.url)).toEqual(["/exchange"]);
    expect(target.seen).toHaveLength(0);
  });

  test("behavior: info (a read with retries): HyperliquidApiError redirect, not retried", async () => {
    const { target, origin } = await redirecting(302);
    const info = new InfoClient({ apiUrl: origin.url, retryLimit: 3, retryDelayMs: 1 });
    cleanups.push(() => info.close());
    const e = await rejection(info.openOrders({ user: USER }));
    expect(e).toMatchObject({ name: "HyperliquidApiError", kind: "redirect", endpoint: "info", status: 302 });
    expect(origin.seen).toHaveLength(1);
    expect(target.seen).toHaveLength(0);
  });

  test("behavior: explorer: HyperliquidApiError redirect", async () => {
    const { target, origin } = await redirecting(308);
    const explorer = new ExplorerClient({ explorerUrl: `${origin.url}/explorer`, retryDelayMs: 1 });
    cleanups.push(() => explorer.close());
    const e = await rejection(explorer.userDetails({ user: USER }));
    expect(e).toMatchObject({ name: "HyperliquidApiError", kind: "redirect", status: 308 });
    expect(origin.seen).toHaveLength(1);
    expect(target.seen).toHaveLength(0);
  });

  test("behavior: EVM RPC (the chain watch's client): EvmRedirectError, the key in its URL never shown", async () => {
    const { target, origin } = await redirecting(301, "/evm");
    const client = new EvmClient({ rpcUrl: `${origin.url}/K3Y-a1b2c3d4e5f6/evm` });
    cleanups.push(() => client.close());
    const e = await rejection(client.blockNumber());
    expect(e).toBeInstanceOf(EvmRedirectError);
    expect(e).toMatchObject({
      kind: "redirect",
      status: 301,
      sameOrigin: false,
      location: `${target.url}/evm`,
    });
    expect(classify(e)).toMatchObject({ domain: "evm", key: "redirect", policy: { exitCode: 69 } });
    expect(JSON.stringify({ m: e.message, s: String(e) })).not.toContain("K3Y-a1b2c3d4e5f6");
    expect(origin.seen).toHaveLength(1);
    expect(target.seen).toHaveLength(0);
  });

  test("behavior: the engine guard: a redirect is a failed check (down after two), never followed", async () => {
    const { target, origin } = await redirecting(302);
    const { guard, changes } = urlGuardFor(`${origin.url}/health`, (close) => cleanups.push(close));
    expect(await guard.check()).toBe(true); // one failure is not enough
    expect(await guard.check()).toBe(false);
    expect(changes).toEqual([
      [
        false,
        `${origin.url}/***: answered 302, a redirect to another origin (${target.url}/***?***); redirects are not followed: configure the final URL`,
      ],
    ]);
    expect(origin.seen.map((s) => [s.method, s.url])).toEqual([
      ["GET", "/health"],
      ["GET", "/health"],
    ]);
    expect(target.seen).toHaveLength(0);
  });

  test("behavior: the webhook notifier: given up at once, not retried; the credentials never reach the other origin", async () => {
    const { target, origin } = await redirecting(307);
    const { logger, events } = captureLogger();
    const notifier = createNotifier({
      urls: [`http://alice:s3cr3t-pw@127.0.0.1:${origin.port}/hook`],
      logger,
      registry: new Registry(),
      backoffMs: 1,
      timers: systemTimers(),
    });
    notifier.send({ event: "trigger.counted", text: "x" } as never);
    const end = Date.now() + 5_000;
    while (events("notify.gave_up").length === 0 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 10));
    expect(events("notify.gave_up")[0]).toMatchObject({
      attempts: 1,
      err: `answered 307, a redirect to another origin (${target.url}/***?***); redirects are not followed: configure the final URL`,
    });
    expect(origin.seen).toHaveLength(1);
    expect(origin.seen[0]!.headers.authorization).toBeDefined();
    expect(target.seen).toHaveLength(0);
    await notifier.close(0);
  });
});
