/**
 * The clients' order-side answers are bounded and checked (real HTTP on 127.0.0.1 against a scripted server):
 * `order` statuses, `userFills`, `clearinghouseState` positions with their margin type, `meta` with szDecimals
 * and `metaAndAssetCtxs` marks. A malformed or oversized answer is a malformed_response, never a guess.
 */
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ManualClock } from "../../../src/core/clock.js";
import { HyperliquidApiError } from "../../../src/protocol/hyperliquid/errors.js";
import { ExchangeClient } from "../../../src/protocol/hyperliquid/exchange.js";
import { InfoClient } from "../../../src/protocol/hyperliquid/info.js";
import type { OrderRequest } from "../../../src/protocol/hyperliquid/order.js";
import { localSigner } from "../../../src/protocol/hyperliquid/signing.js";
import { type RecordedServer, startRecordedServer } from "../../helpers/recorded-server.js";

const START = Date.UTC(2026, 0, 1, 12, 0, 0);
const KEY = `0x${"11".repeat(32)}`;
const USER = `0x${"ab".repeat(20)}`;
let server: RecordedServer;
let info: InfoClient;
let exchange: ExchangeClient;

beforeEach(async () => {
  server = await startRecordedServer({ handler: () => ({ body: [] }) });
  const clock = new ManualClock(START);
  info = new InfoClient({ apiUrl: server.url, clock, retryLimit: 0 });
  exchange = new ExchangeClient({ apiUrl: server.url, signer: localSigner(KEY), isMainnet: true, clock });
});
afterEach(async () => {
  info.close();
  exchange.close();
  await server.close();
});

async function failure(promise: Promise<unknown>): Promise<HyperliquidApiError> {
  const e = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(HyperliquidApiError);
  return e as HyperliquidApiError;
}

const CLOSE: OrderRequest = {
  asset: 1,
  isBuy: false,
  price: "1653.50",
  size: "0.5987",
  reduceOnly: true,
  type: { limit: { tif: "Ioc" } },
};
const position = (coin: string, szi: string, leverage: Record<string, unknown>) => ({
  type: "oneWay",
  position: {
    coin,
    szi,
    entryPx: "100.0",
    leverage,
    liquidationPx: null,
    marginUsed: "10.0",
    maxLeverage: 20,
    positionValue: "100.0",
    returnOnEquity: "0.0",
    unrealizedPnl: "0.0",
  },
});
const zero = { accountValue: "0.0", totalMarginUsed: "0.0", totalNtlPos: "0.0", totalRawUsd: "0.0" };
const state = (assetPositions: unknown[]) => ({
  assetPositions,
  crossMaintenanceMarginUsed: "0.0",
  crossMarginSummary: zero,
  marginSummary: zero,
  time: START,
  withdrawable: "0.0",
});

describe("ExchangeClient.order", () => {
  test("behavior: sends the action in wire order without trailing zeros, and reads each status", async () => {
    server.setHandler(() => ({
      body: {
        status: "ok",
        response: {
          type: "order",
          data: {
            statuses: [
              { filled: { totalSz: "0.5", avgPx: "1660.1", oid: 7 } },
              { resting: { oid: 8 } },
              { error: "Only post-only orders allowed immediately after a network upgrade" },
            ],
          },
        },
      },
    }));
    const r = await exchange.order([CLOSE, { ...CLOSE, type: { limit: { tif: "Gtc" } } }, CLOSE]);
    expect(r.statuses).toEqual([
      { kind: "filled", oid: 7, totalSz: "0.5", avgPx: "1660.1" },
      { kind: "resting", oid: 8 },
      { kind: "error", error: "Only post-only orders allowed immediately after a network upgrade" },
    ]);
    const sent = server.requests[0]!.bodyText;
    expect(sent).toContain(
      '"action":{"type":"order","orders":[{"a":1,"b":false,"p":"1653.5","s":"0.5987","r":true,"t":{"limit":{"tif":"Ioc"}}}',
    );
    expect(sent).toContain('"grouping":"na"}');
  });

  test("failure: a status count that does not match, or a top-level refusal, is an error", async () => {
    server.setHandler(() => ({
      body: { status: "ok", response: { type: "order", data: { statuses: [] } } },
    }));
    expect((await failure(exchange.order([CLOSE]))).kind).toBe("malformed_response");
    server.setHandler(() => ({
      body: { status: "err", response: "User or API Wallet 0x1 does not exist." },
    }));
    expect((await failure(exchange.order([CLOSE]))).message).toContain("does not exist");
    // a size of megabytes is not a size
    server.setHandler(() => ({
      body: {
        status: "ok",
        response: {
          type: "order",
          data: { statuses: [{ filled: { totalSz: "1".repeat(41), avgPx: "1", oid: 1 } }] },
        },
      },
    }));
    expect((await failure(exchange.order([CLOSE]))).kind).toBe("malformed_response");
  });
});

describe("InfoClient: positions, fills, meta and marks", () => {
  test("behavior: positions carry margin type and leverage; flat entries are left out", async () => {
    server.setHandler(() => ({
      body: state([
        position("BTC", "0.5", { type: "cross", value: 10 }),
        position("ETH", "-2.0", { type: "isolated", value: 5, rawUsd: "-95.0" }),
        position("SOL", "0.0", { type: "cross", value: 3 }),
      ]),
    }));
    const r = await info.positions({ user: USER });
    expect(r.time).toBe(START);
    expect(r.positions.map((p) => [p.coin, p.szi, p.marginType, p.leverage])).toEqual([
      ["BTC", "0.5", "cross", 10],
      ["ETH", "-2.0", "isolated", 5],
    ]);
    expect(server.requests[0]!.json).toEqual({ type: "clearinghouseState", user: USER });
  });

  test("failure: more than 10,000 positions, or a bad size, is malformed", async () => {
    server.setHandler(() => ({
      body: state(
        Array.from({ length: 10_001 }, (_, i) => position(`C${i}`, "1", { type: "cross", value: 1 })),
      ),
    }));
    expect((await failure(info.positions({ user: USER }))).message).toMatch(/more than 10000 positions/);
    server.setHandler(() => ({ body: state([position("BTC", "1e3", { type: "cross", value: 1 })]) }));
    expect((await failure(info.positions({ user: USER }))).kind).toBe("malformed_response");
  });

  test("behavior and failure: userFills are parsed, and more than 2,000 refused", async () => {
    const fill = {
      coin: "BTC",
      px: "96903.0",
      sz: "0.1",
      side: "A",
      time: START,
      startPosition: "0.5",
      dir: "Close Long",
      closedPnl: "690.3",
      oid: 7,
      crossed: true,
    };
    server.setHandler(() => ({ body: [fill] }));
    expect(await info.userFills({ user: USER })).toEqual([fill]);
    expect(server.requests[0]!.json).toEqual({ type: "userFills", user: USER });
    server.setHandler(() => ({ body: Array.from({ length: 2001 }, () => fill) }));
    expect((await failure(info.userFills({ user: USER }))).kind).toBe("malformed_response");
  });

  test("behavior and failure: meta needs szDecimals 0..6; marks come per asset, a missing one left out", async () => {
    const meta = {
      universe: [
        { name: "BTC", szDecimals: 5 },
        { name: "ETH", szDecimals: 4 },
        { name: "XYZ", szDecimals: 2 },
      ],
    };
    server.setHandler(() => ({
      body: [meta, [{ markPx: "97000.0" }, { markPx: "3100.5" }, { markPx: null }]],
    }));
    const r = await info.metaAndMarks();
    expect(r.marks).toEqual({ BTC: "97000.0", ETH: "3100.5" });
    expect(r.meta.universe.map((a) => a.szDecimals)).toEqual([5, 4, 2]);
    // one context short: the index would no longer name the asset
    server.setHandler(() => ({ body: [meta, [{ markPx: "97000.0" }]] }));
    expect((await failure(info.metaAndMarks())).kind).toBe("malformed_response");
    server.setHandler(() => ({ body: { universe: [{ name: "BTC", szDecimals: 9 }] } }));
    expect((await failure(info.perpMeta())).kind).toBe("malformed_response");
  });
});
