import { Wallet } from "ethers";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { InvalidAddressError } from "../../../src/core/address.js";
import { ManualClock } from "../../../src/core/clock.js";
import { ValidationError } from "../../../src/core/errors/base.js";
import { HyperliquidApiError } from "../../../src/protocol/hyperliquid/errors.js";
import { ExchangeClient, type ExchangeClientOptions } from "../../../src/protocol/hyperliquid/exchange.js";
import { NonceSource } from "../../../src/protocol/hyperliquid/nonce.js";
import { recoverL1ActionSigner } from "../../../src/protocol/hyperliquid/signing.js";
import { createHttpTransport } from "../../../src/protocol/hyperliquid/transport.js";
import { shouldRetry as isRetryable } from "../../../src/protocol/policy.js";
import { type RecordedServer, startRecordedServer } from "../../helpers/recorded-server.js";

// A throwaway key used only in tests.
const KEY = "0x0123456789012345678901234567890123456789012345678901234567890123";
const wallet = new Wallet(KEY);
const START = Date.UTC(2026, 0, 1, 12, 0, 0);
const VAULT = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01";

let server: RecordedServer;
let clock: ManualClock;
let client: ExchangeClient;

function makeClient(overrides: Partial<ExchangeClientOptions> = {}): ExchangeClient {
  return new ExchangeClient({ apiUrl: server.url, signer: wallet, isMainnet: true, clock, ...overrides });
}

async function failure(promise: Promise<unknown>): Promise<HyperliquidApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HyperliquidApiError);
  return error as HyperliquidApiError;
}

type SentBody = {
  action: Record<string, unknown>;
  nonce: number;
  signature: { r: string; s: string; v: number };
  vaultAddress?: string;
  expiresAfter?: number;
};

beforeEach(async () => {
  server = await startRecordedServer();
  clock = new ManualClock(START);
  client = makeClient();
});

afterEach(async () => {
  client.close();
  await server.close();
});

describe("scheduleCancel: the request", () => {
  test("default: sets a time; body, nonce, expiresAfter and signature", async () => {
    const result = await client.scheduleCancel({ time: START + 60_000 });
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/exchange");
    expect(req.headers["content-type"]).toMatch(/^application\/json/);
    expect(req.headers["user-agent"]).toMatch(/^hl-deadman\/\d+\.\d+\.\d+/);
    const body = req.json as SentBody;
    // Key order of the action is part of the hash: type, then time.
    expect(req.bodyText).toContain(`"action":{"type":"scheduleCancel","time":${START + 60_000}}`);
    expect(Object.keys(body)).toEqual(["action", "nonce", "signature", "expiresAfter"]);
    expect(body.nonce).toBe(START);
    expect(body.expiresAfter).toBe(START + 5000);
    expect(body.signature.r).toMatch(/^0x[0-9a-f]{64}$/);
    const signer = await recoverL1ActionSigner({
      action: body.action,
      nonce: body.nonce,
      expiresAfter: body.expiresAfter,
      isMainnet: true,
      signature: body.signature,
    });
    expect(signer).toBe(wallet.address);
    expect(result).toMatchObject({
      nonce: START,
      expiresAfter: START + 5000,
      time: START + 60_000,
      responseType: "default",
    });
    expect(result.latencyMs).toBeGreaterThan(0);
    expect(client.signerAddress).toBe(wallet.address.toLowerCase());
  });

  test("behavior: removal sends no time key (never null)", async () => {
    const result = await client.scheduleCancel();
    const body = server.requests[0]!.json as SentBody;
    expect(body.action).toEqual({ type: "scheduleCancel" });
    expect(server.requests[0]!.bodyText).not.toContain('"time"');
    expect(result.time).toBeUndefined();
    const signer = await recoverL1ActionSigner({
      action: body.action,
      nonce: body.nonce,
      expiresAfter: body.expiresAfter,
      isMainnet: true,
      signature: body.signature,
    });
    expect(signer).toBe(wallet.address);
  });

  test("behavior: vaultAddress is lower-case and signed; testnet signs with source b", async () => {
    client.close();
    client = makeClient({ isMainnet: false });
    await client.scheduleCancel({ time: START + 30_000, vaultAddress: VAULT });
    const body = server.requests[0]!.json as SentBody;
    expect(body.vaultAddress).toBe(VAULT.toLowerCase());
    expect(Object.keys(body)).toEqual(["action", "nonce", "signature", "vaultAddress", "expiresAfter"]);
    const params = {
      action: body.action,
      nonce: body.nonce,
      vaultAddress: body.vaultAddress,
      expiresAfter: body.expiresAfter,
      signature: body.signature,
    };
    expect(await recoverL1ActionSigner({ ...params, isMainnet: false })).toBe(wallet.address);
    expect(await recoverL1ActionSigner({ ...params, isMainnet: true })).not.toBe(wallet.address);
  });

  test("behavior: nonce and expiresAfter follow the clock per request", async () => {
    await client.scheduleCancel({ time: START + 60_000 });
    clock.advance(15_000);
    await client.scheduleCancel({ time: START + 75_000, expiresAfterMs: 2000 });
    clock.advance(15_000);
    await client.scheduleCancel({ time: START + 90_000, expiresAfterMs: null });
    const bodies = server.requests.map((r) => r.json as SentBody);
    expect(bodies.map((b) => b.nonce)).toEqual([START, START + 15_000, START + 30_000]);
    expect(bodies.map((b) => b.expiresAfter)).toEqual([START + 5000, START + 17_000, undefined]);
    expect(server.requests[2]!.bodyText).not.toContain("expiresAfter");
  });

  test("behavior: a client-wide null window omits expiresAfter", async () => {
    client.close();
    client = makeClient({ expiresAfterMs: null });
    const r = await client.scheduleCancel({ time: START + 60_000 });
    expect(r.expiresAfter).toBeUndefined();
    expect(Object.keys(server.requests[0]!.json as object)).toEqual(["action", "nonce", "signature"]);
  });

  test("behavior: nonces strictly increase in a burst of 50 concurrent calls", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client.scheduleCancel({ time: START + 60_000 + i })),
    );
    expect(server.requests).toHaveLength(50);
    const nonces = results.map((r) => r.nonce);
    expect(nonces).toEqual(Array.from({ length: 50 }, (_, i) => START + i));
    const sent = server.requests.map((r) => (r.json as SentBody).nonce).sort((a, b) => a - b);
    expect(sent).toEqual(nonces);
  });

  test("behavior: a shared NonceSource keeps nonces unique across clients", async () => {
    const nonces = new NonceSource(clock);
    client.close();
    client = makeClient({ nonces });
    const other = makeClient({ nonces });
    try {
      const [a, b] = await Promise.all([client.scheduleCancel(), other.scheduleCancel()]);
      expect(new Set([a.nonce, b.nonce]).size).toBe(2);
      expect(nonces.last).toBe(START + 1);
    } finally {
      other.close();
    }
  });

  test("args: a bad time, vault or window is refused before anything is sent", async () => {
    await expect(client.scheduleCancel({ time: 1.5 })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.scheduleCancel({ time: -1 })).rejects.toThrow(/non-negative integer/);
    await expect(client.scheduleCancel({ time: Number.MAX_SAFE_INTEGER + 2 })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(client.scheduleCancel({ vaultAddress: "0x123" })).rejects.toBeInstanceOf(
      InvalidAddressError,
    );
    await expect(client.scheduleCancel({ expiresAfterMs: -5 })).rejects.toThrow(/expiresAfterMs/);
    expect(server.requests).toHaveLength(0);
  });
});

describe("scheduleCancel: responses", () => {
  test("behavior: both success types are accepted and reported", async () => {
    server.push({ body: { status: "ok", response: { type: "scheduleCancel" } } });
    expect((await client.scheduleCancel({ time: START + 60_000 })).responseType).toBe("scheduleCancel");
    expect((await client.scheduleCancel({ time: START + 60_000 })).responseType).toBe("default");
  });

  test("behavior: the Date header becomes serverDate", async () => {
    server.push({ headers: { date: "Thu, 01 Jan 2026 12:00:03 GMT" } });
    const r = await client.scheduleCancel({ time: START + 60_000 });
    expect(r.serverDate).toBe(START + 3000);
  });

  test.each([
    ["Scheduled cancel time too early, must be at least 5 seconds from now.", "too_early", false, false],
    ["Too many scheduled cancel triggers today", "daily_limit", false, false],
    [
      "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $373.47205.",
      "volume_gate",
      false,
      true,
    ],
    ["Invalid nonce: duplicate nonce 1754922717871", "nonce", true, false],
    ["Invalid nonce: nonce too low 1776584283874 < 1776584799101", "nonce", false, false],
    ["Action already expired", "expired", true, false],
    [
      "L1 error: User or API Wallet 0x0123456789abcdef0123456789abcdef01234589 does not exist.",
      "unknown_signer",
      false,
      true,
    ],
    ["Vault not registered: 0x1111111111111111111111111111111111111111", "vault_not_registered", false, true],
    [
      "Too many cumulative requests sent (97460 > 97456) for cumulative volume traded $87457.46. Place taker orders to free up 1 request per USDC traded.",
      "address_budget",
      false,
      true,
    ],
    ["Something new", "rejected", false, false],
  ] as const)("error: 200 err %s", async (text, kind, retryable, permanent) => {
    server.push({ body: { status: "err", response: text } });
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    expect(e).toMatchObject({
      kind,
      retryable,
      permanent,
      status: 200,
      serverMessage: text,
      endpoint: "exchange",
    });
    expect(server.requests).toHaveLength(1);
  });

  test.each([
    [429, "", "rate_limited", true],
    [422, "Failed to deserialize the JSON body into the target type", "bad_request", false],
    [500, "null", "server_error", true],
    [502, "<html>bad gateway</html>", "server_error", true],
  ] as const)("error: HTTP %i → %s, no retry", async (status, body, kind, retryable) => {
    server.push({ status, body });
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    expect(e).toMatchObject({ kind, retryable, status, serverMessage: body, endpoint: "exchange" });
    expect(server.requests).toHaveLength(1);
  });

  test("error: a non-JSON 200 is malformed_response", async () => {
    server.push({ body: "<html>maintenance</html>" });
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    expect(e.kind).toBe("malformed_response");
    expect(e.status).toBe(200);
    expect(e.serverMessage).toBe("<html>maintenance</html>");
    expect(e.message).toMatch(/not JSON/);
  });

  test.each([
    [{ status: "ok" }],
    [{ status: "ok", response: { type: "order", data: {} } }],
    [{ status: "err", response: { code: 1 } }],
    [[1, 2]],
    [null],
  ])("error: JSON of the wrong shape is malformed_response (%j)", async (body) => {
    server.push({ body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    expect(e.kind).toBe("malformed_response");
    expect(e.retryable).toBe(true);
  });

  test("error: a time-out is transport, and the request is not retried", async () => {
    client.close();
    client = makeClient({ timeoutMs: 150 });
    server.push({ delayMs: 1500 });
    const started = performance.now();
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    const elapsed = performance.now() - started;
    expect(e.kind).toBe("transport");
    expect(e.retryable).toBe(true);
    expect(e.status).toBeUndefined();
    expect(e.message).toMatch(/ETIMEDOUT|[Tt]imeout/);
    expect(elapsed).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1);
  });

  test("error: a reset socket is transport, not retried", async () => {
    server.push({ destroy: true });
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    expect(e.kind).toBe("transport");
    expect(isRetryable(e)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test("error: a refused connection is transport", async () => {
    const url = server.url;
    await server.close();
    client.close();
    client = new ExchangeClient({ apiUrl: url, signer: wallet, isMainnet: true, clock });
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    expect(e.kind).toBe("transport");
    expect(e.message).toMatch(/ECONNREFUSED/);
    server = await startRecordedServer(); // for afterEach
  });

  test("error: an aborted request is transport, aborted, not retryable", async () => {
    server.push({ delayMs: 1500 });
    const controller = new AbortController();
    const pending = client.scheduleCancel({ time: START + 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const e = await failure(pending);
    expect(e.kind).toBe("transport");
    expect(e.aborted).toBe(true);
    expect(e.retryable).toBe(false);
  });

  test("behavior: no error message contains the private key", async () => {
    server.push({ body: { status: "err", response: "Unable to recover signer." } });
    const e = await failure(client.scheduleCancel({ time: START + 60_000 }));
    expect(e.message).not.toContain(KEY.slice(2));
    expect(JSON.stringify(server.requests[0]!.json)).not.toContain(KEY.slice(2));
  });
});

describe("transport", () => {
  test("behavior: keep-alive reuses one connection for sequential requests", async () => {
    for (let i = 0; i < 5; i++) await client.scheduleCancel({ time: START + 60_000 + i });
    expect(server.requests).toHaveLength(5);
    expect(server.connections).toBe(1);
  });

  test("behavior: /exchange is never retried, whatever retryLimit says", async () => {
    const transport = createHttpTransport({ baseUrl: server.url, retryLimit: 3, retryDelayMs: 1 });
    try {
      server.setHandler(() => ({ status: 500, body: "null" }));
      const response = await transport.postJson("/exchange", { a: 1 });
      expect(response.status).toBe(500);
      expect(response.attempts).toBe(1);
      expect(server.requests).toHaveLength(1);
      const info = await transport.postJson("/info", { type: "x" });
      expect(info.attempts).toBe(4);
      expect(server.requests).toHaveLength(5);
    } finally {
      transport.close();
    }
  });

  test("error: a body over maxBodyBytes is malformed_response", async () => {
    const transport = createHttpTransport({ baseUrl: server.url, maxBodyBytes: 1024 });
    try {
      server.push({ body: JSON.stringify({ big: "x".repeat(200_000) }) });
      const e = await failure(transport.postJson("/info", {}));
      expect(e.kind).toBe("malformed_response");
      expect(e.message).toMatch(/exceeds 1024 bytes/);
    } finally {
      transport.close();
    }
  });

  test("behavior: JSON null body is parsed as null, HTML as undefined", async () => {
    const transport = createHttpTransport({ baseUrl: server.url });
    try {
      server.push({ status: 500, body: "null" }, { body: "<html>" });
      const a = await transport.postJson("/info", {});
      expect(a.json).toBeNull();
      const b = await transport.postJson("/info", {});
      expect(b.json).toBeUndefined();
      expect(b.bodyText).toBe("<html>");
    } finally {
      transport.close();
    }
  });

  test("error: a closed transport refuses to send", async () => {
    const transport = createHttpTransport({ baseUrl: server.url });
    transport.close();
    transport.close();
    const e = await failure(transport.postJson("/exchange", {}));
    expect(e.kind).toBe("transport");
    expect(server.requests).toHaveLength(0);
  });
});
