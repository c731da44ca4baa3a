import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { InvalidAddressError } from "../../../src/core/address.js";
import { ManualClock } from "../../../src/core/clock.js";
import { HyperliquidApiError } from "../../../src/protocol/hyperliquid/errors.js";
import { InfoClient, type InfoClientOptions } from "../../../src/protocol/hyperliquid/info.js";
import { DOCUMENTED_OPEN_ORDER } from "../../fixtures/documented.js";
import {
  type RecordedRequest,
  type RecordedServer,
  type ScriptedResponse,
  startRecordedServer,
} from "../../helpers/recorded-server.js";

const START = Date.UTC(2026, 0, 1, 12, 0, 0);

/** Upper-case hex on purpose: the client must send lower case. */
const user = (i: number) => `0x${"AB".repeat(18)}${i.toString(16).padStart(4, "0")}`;

/** A zeroed state whose `withdrawable` carries the user's number, so order can be checked. */
function stateFor(address: string) {
  const n = Number.parseInt(address.slice(-4), 16);
  const zero = { accountValue: "0.0", totalMarginUsed: "0.0", totalNtlPos: "0.0", totalRawUsd: "0.0" };
  return {
    assetPositions: [],
    crossMaintenanceMarginUsed: "0.0",
    crossMarginSummary: zero,
    marginSummary: { ...zero, accountValue: `${n}.5` },
    time: START,
    withdrawable: `${n}.0`,
  };
}

type BatchBody = { type: string; users: string[]; dex?: string };

function echoStates(extra: (req: RecordedRequest, index: number) => Partial<ScriptedResponse> = () => ({})) {
  return (req: RecordedRequest, index: number): ScriptedResponse => ({
    body: (req.json as BatchBody).users.map(stateFor),
    ...extra(req, index),
  });
}

let server: RecordedServer;
let clock: ManualClock;
let client: InfoClient;

function makeClient(overrides: Partial<InfoClientOptions> = {}): InfoClient {
  return new InfoClient({ apiUrl: server.url, clock, retryLimit: 0, retryDelayMs: 10, ...overrides });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

beforeEach(async () => {
  server = await startRecordedServer({ handler: echoStates() });
  clock = new ManualClock(START);
  client = makeClient();
});

afterEach(async () => {
  client.close();
  await server.close();
});

describe("batchClearinghouseStates", () => {
  test("default: one request, lower-case users, states in order", async () => {
    const users = [user(3), user(1), user(2)];
    const states = await client.batchClearinghouseStates({ users });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.path).toBe("/info");
    expect(server.requests[0]!.json).toEqual({
      type: "batchClearinghouseStates",
      users: users.map((u) => u.toLowerCase()),
    });
    expect(states.map((s) => s.withdrawable)).toEqual(["3.0", "1.0", "2.0"]);
    expect(states[0]!.marginSummary.accountValue).toBe("3.5");
  });

  test("behavior: dex is sent when given", async () => {
    await client.batchClearinghouseStates({ users: [user(1)], dex: "xyz" });
    expect(server.requests[0]!.json).toEqual({
      type: "batchClearinghouseStates",
      users: [user(1).toLowerCase()],
      dex: "xyz",
    });
  });

  test("behavior: 7 users in chunks of 3 → 3 requests, at most 2 in flight, order kept", async () => {
    client.close();
    client = makeClient({ chunkSize: 3, concurrency: 2 });
    server.setHandler(echoStates(() => ({ delayMs: 60 })));
    const users = Array.from({ length: 7 }, (_, i) => user(i + 1));
    const meta = await client.batchClearinghouseStatesWithMeta({ users });
    expect(server.requests.map((r) => (r.json as BatchBody).users.length).sort()).toEqual([1, 3, 3]);
    expect(meta.chunks).toBe(3);
    expect(server.maxInFlight).toBe(2);
    expect(meta.states.map((s) => s.withdrawable)).toEqual(users.map((_, i) => `${i + 1}.0`));
  });

  test("behavior: concurrency 1 sends chunks one at a time", async () => {
    client.close();
    client = makeClient({ chunkSize: 2, concurrency: 1 });
    server.setHandler(echoStates(() => ({ delayMs: 20 })));
    await client.batchClearinghouseStates({ users: Array.from({ length: 5 }, (_, i) => user(i)) });
    expect(server.requests).toHaveLength(3);
    expect(server.maxInFlight).toBe(1);
  });

  test("behavior: order is preserved when the first chunk answers last", async () => {
    client.close();
    client = makeClient({ chunkSize: 2, concurrency: 3 });
    // The chunk holding user(1) is slow; the others answer at once.
    server.setHandler(
      echoStates((req) => ({
        delayMs: (req.json as BatchBody).users.includes(user(1).toLowerCase()) ? 200 : 0,
      })),
    );
    const users = Array.from({ length: 6 }, (_, i) => user(i + 1));
    const states = await client.batchClearinghouseStates({ users });
    // The slow chunk went first and the others were answered while it was pending.
    expect((server.requests[0]!.json as BatchBody).users).toContain(user(1).toLowerCase());
    expect(server.maxInFlight).toBeGreaterThanOrEqual(2);
    expect(states.map((s) => s.withdrawable)).toEqual(["1.0", "2.0", "3.0", "4.0", "5.0", "6.0"]);
  });

  test("behavior: serverDate is the newest Date header; sentAt/receivedAt come from the clock", async () => {
    client.close();
    client = makeClient({ chunkSize: 1, concurrency: 1 });
    const dates = [
      "Thu, 01 Jan 2026 12:00:01 GMT",
      "Thu, 01 Jan 2026 12:00:04 GMT",
      "Thu, 01 Jan 2026 12:00:02 GMT",
    ];
    server.setHandler(
      echoStates((_req, index) => {
        clock.advance(100);
        return { headers: { date: dates[index]! } };
      }),
    );
    const meta = await client.batchClearinghouseStatesWithMeta({ users: [user(1), user(2), user(3)] });
    expect(meta.serverDate).toBe(START + 4000);
    expect(meta.sentAt).toBe(START);
    expect(meta.receivedAt).toBe(START + 300);
  });

  test("behavior: no users → no request", async () => {
    const meta = await client.batchClearinghouseStatesWithMeta({ users: [] });
    expect(meta).toMatchObject({ states: [], chunks: 0, serverDate: undefined });
    expect(server.requests).toHaveLength(0);
  });

  test("args: an invalid address is named with its index and nothing is sent", async () => {
    const e = await failure(
      client.batchClearinghouseStates({ users: [user(1), user(2), "0xnothex", user(4)] }),
    );
    expect(e).toBeInstanceOf(InvalidAddressError);
    expect((e as Error).message).toContain('"0xnothex"');
    expect((e as Error).message).toContain("users[2]");
    expect(server.requests).toHaveLength(0);
  });

  test("args: chunkSize and concurrency must be positive integers", () => {
    expect(() => makeClient({ chunkSize: 0 })).toThrow(/chunkSize must be a positive integer, got 0/);
    expect(() => makeClient({ concurrency: 1.5 })).toThrow(/concurrency/);
  });

  test("error: a length mismatch is malformed_response", async () => {
    server.setHandler((req) => ({ body: (req.json as BatchBody).users.slice(1).map(stateFor) }));
    const e = (await failure(
      client.batchClearinghouseStates({ users: [user(1), user(2)] }),
    )) as HyperliquidApiError;
    expect(e).toBeInstanceOf(HyperliquidApiError);
    expect(e.kind).toBe("malformed_response");
    expect(e.endpoint).toBe("info");
    expect(e.message).toMatch(/asked for 2 users, got 1 states/);
  });

  test("error: an invalid state is malformed_response naming the user and field", async () => {
    server.setHandler((req) => {
      const states = (req.json as BatchBody).users.map(stateFor) as Record<string, unknown>[];
      delete states[1]!.marginSummary;
      return { body: states };
    });
    const e = (await failure(
      client.batchClearinghouseStates({ users: [user(1), user(2)] }),
    )) as HyperliquidApiError;
    expect(e.kind).toBe("malformed_response");
    expect(e.message).toContain(user(2).toLowerCase());
    expect(e.message).toContain("marginSummary");
  });

  test("error: a non-array body is malformed_response", async () => {
    server.setHandler(() => ({ body: { successful_states: [] } }));
    const e = (await failure(client.batchClearinghouseStates({ users: [user(1)] }))) as HyperliquidApiError;
    expect(e.kind).toBe("malformed_response");
  });

  test.each([
    [429, "", "rate_limited"],
    [422, "Failed to deserialize the JSON body into the target type", "bad_request"],
    [500, "null", "server_error"],
  ] as const)("error: HTTP %i → %s", async (status, body, kind) => {
    server.setHandler(() => ({ status, body }));
    const e = (await failure(client.batchClearinghouseStates({ users: [user(1)] }))) as HyperliquidApiError;
    expect(e).toMatchObject({ kind, status, endpoint: "info", serverMessage: body });
  });

  test("behavior: one failed chunk fails the call and stops the others", async () => {
    client.close();
    client = makeClient({ chunkSize: 1, concurrency: 1 });
    server.setHandler((req, index) =>
      index === 1 ? { status: 422, body: "bad" } : { body: (req.json as BatchBody).users.map(stateFor) },
    );
    const e = (await failure(
      client.batchClearinghouseStates({ users: [user(1), user(2), user(3), user(4)] }),
    )) as HyperliquidApiError;
    expect(e.kind).toBe("bad_request");
    expect(server.requests).toHaveLength(2);
  });

  test("behavior: info retries once on 5xx by default (retryLimit 1)", async () => {
    client.close();
    client = new InfoClient({ apiUrl: server.url, clock, retryDelayMs: 10 });
    server.push({ status: 502, body: "bad gateway" });
    const states = await client.batchClearinghouseStates({ users: [user(7)] });
    expect(states[0]!.withdrawable).toBe("7.0");
    expect(server.requests).toHaveLength(2);
  });

  test("behavior: which statuses are retried is the policy table's: an unexpected 3xx (malformed_response, retryable) is", async () => {
    client.close();
    client = new InfoClient({ apiUrl: server.url, clock, retryDelayMs: 10 });
    server.push({ status: 302, body: "" });
    const states = await client.batchClearinghouseStates({ users: [user(7)] });
    expect(states[0]!.withdrawable).toBe("7.0");
    expect(server.requests).toHaveLength(2);
  });

  test("behavior: retries are bounded by retryLimit, and 4xx is not retried", async () => {
    client.close();
    client = makeClient({ retryLimit: 2 });
    server.setHandler(() => ({ status: 503, body: "" }));
    const e = (await failure(client.batchClearinghouseStates({ users: [user(1)] }))) as HyperliquidApiError;
    expect(e.kind).toBe("server_error");
    expect(server.requests).toHaveLength(3);
    server.requests.length = 0;
    server.setHandler(() => ({ status: 422, body: "bad" }));
    await failure(client.batchClearinghouseStates({ users: [user(1)] }));
    expect(server.requests).toHaveLength(1);
  });

  test("error: a time-out is transport", async () => {
    client.close();
    client = makeClient({ timeoutMs: 100 });
    server.setHandler(() => ({ delayMs: 1500 }));
    const e = (await failure(client.batchClearinghouseStates({ users: [user(1)] }))) as HyperliquidApiError;
    expect(e.kind).toBe("transport");
    expect(e.endpoint).toBe("info");
  });

  test("error: an outer abort stops the call", async () => {
    server.setHandler(() => ({ delayMs: 1500 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const e = (await failure(
      client.batchClearinghouseStates({ users: [user(1)], signal: controller.signal }),
    )) as HyperliquidApiError;
    expect(e.kind).toBe("transport");
    expect(e.aborted).toBe(true);
  });
});

describe("openOrders", () => {
  test("default: sends the user lower-case and parses the orders", async () => {
    const order = { ...DOCUMENTED_OPEN_ORDER };
    server.setHandler(() => ({ body: [order] }));
    const orders = await client.openOrders({ user: user(9), dex: "" });
    expect(server.requests[0]!.json).toEqual({ type: "openOrders", user: user(9).toLowerCase(), dex: "" });
    expect(orders).toEqual([order]);
  });

  test("error: an invalid order is malformed_response", async () => {
    server.setHandler(() => ({ body: [{ coin: "BTC", side: "A", limitPx: "abc" }] }));
    const e = (await failure(client.openOrders({ user: user(9) }))) as HyperliquidApiError;
    expect(e.kind).toBe("malformed_response");
  });

  test("args: an invalid user is refused before sending", async () => {
    await expect(client.openOrders({ user: "bob" })).rejects.toBeInstanceOf(InvalidAddressError);
    expect(server.requests).toHaveLength(0);
  });
});
