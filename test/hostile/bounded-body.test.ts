/**
 * Bounded input (issue 16, item 1), in process: the size cap counts decompressed bytes whatever Content-Length
 * says, the depth and value bounds run before JSON.parse, and each endpoint (info, exchange, EVM RPC) turns an
 * over-bound body into its own typed error. The same bodies under the shipped heap cap: test/reliability/hostile.test.ts.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { afterEach, describe, expect, test } from "vitest";
import { EvmClient } from "../../src/protocol/evm/client.js";
import { EvmMalformedResponseError } from "../../src/protocol/evm/errors.js";
import {
  BodyLimitError,
  checkJsonBounds,
  DEFAULT_BODY_LIMITS,
  EXCHANGE_BODY_LIMITS,
} from "../../src/protocol/http/bounded-body.js";
import { HyperliquidApiError } from "../../src/protocol/hyperliquid/errors.js";
import { createHttpTransport } from "../../src/protocol/hyperliquid/transport.js";
import { bigFlatObject, gzipBomb, type HostileServer, nestedArray, startHostileServer } from "./bodies.js";

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("the fixture", () => {
  test("behavior: gzipBomb is a valid gzip of the spaces and `null` it names (gunzip checks its CRC and length)", async () => {
    const bomb = await gzipBomb(64 * 1024 * 1024 + 1);
    const text = zlib.gunzipSync(bomb, { maxOutputLength: 128 * 1024 * 1024 });
    expect(text.length).toBe(64 * 1024 * 1024 + 64 * 1024 + 4); // rounded up to 64 KiB, then `null`
    expect(text.subarray(-4).toString()).toBe("null");
    expect(text.subarray(0, -4).every((b) => b === 0x20)).toBe(true);
  });
});

describe("checkJsonBounds", () => {
  test("default: real-sized answers pass; strings holding brackets and commas are not counted", () => {
    const ok = Buffer.from(JSON.stringify({ a: [1, 2, { b: "[[[,,,]]]", c: 'x\\"[' }], d: null }));
    expect(() => checkJsonBounds(ok, { maxDepth: 3, maxValues: 10 })).not.toThrow();
  });

  test("error: one level too deep and one value too many are refused", () => {
    const deep = Buffer.from("[[[[1]]]]");
    expect(() => checkJsonBounds(deep, { maxDepth: 4, maxValues: 100 })).not.toThrow();
    const e = (() => {
      try {
        checkJsonBounds(deep, { maxDepth: 3, maxValues: 100 });
      } catch (error) {
        return error as BodyLimitError;
      }
    })();
    expect(e).toBeInstanceOf(BodyLimitError);
    expect(e?.limit).toBe("depth");
    const many = Buffer.from(`[${Array(11).fill(0).join(",")}]`); // 1 array + 10 commas
    expect(() => checkJsonBounds(many, { maxDepth: 3, maxValues: 11 })).not.toThrow();
    expect(() => checkJsonBounds(many, { maxDepth: 3, maxValues: 10 })).toThrow(/more than 10 JSON values/);
  });
});

describe("the trading API transport", () => {
  test("behavior: an 8 MB nested array from /info is malformed_response (depth), not a parse", async () => {
    const body = nestedArray(8_000_000);
    server = await startHostileServer(() => ({ body }));
    const transport = createHttpTransport({ baseUrl: server.url });
    try {
      const e = await failure(transport.postJson("/info", { type: "clearinghouseState" }));
      expect(e).toBeInstanceOf(HyperliquidApiError);
      expect((e as HyperliquidApiError).kind).toBe("malformed_response");
      expect((e as HyperliquidApiError).message).toMatch(/nested deeper than 64 levels/);
    } finally {
      transport.close();
    }
  });

  test("behavior: a 10 MB body from /exchange is refused at the 1 MiB exchange cap", async () => {
    server = await startHostileServer(() => ({ body: bigFlatObject(10_000_000) }));
    const transport = createHttpTransport({ baseUrl: server.url });
    try {
      const e = (await failure(transport.postJson("/exchange", {}))) as HyperliquidApiError;
      expect(e.kind).toBe("malformed_response");
      expect(e.endpoint).toBe("exchange");
      expect(e.message).toContain(`exceeds ${EXCHANGE_BODY_LIMITS.maxBytes} bytes`);
    } finally {
      transport.close();
    }
  });

  test("behavior: gzip with a small Content-Length is counted after decompression", async () => {
    // 64 MiB of spaces then "null": valid JSON, ~64 KiB on the wire, Content-Length = the compressed size.
    const bomb = await gzipBomb(64 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    server = await startHostileServer(() => ({ headers: { "content-encoding": "gzip" }, body: bomb }));
    const transport = createHttpTransport({ baseUrl: server.url });
    try {
      const e = (await failure(transport.postJson("/info", { type: "meta" }))) as HyperliquidApiError;
      expect(e.kind).toBe("malformed_response");
      expect(e.message).toContain(`exceeds ${DEFAULT_BODY_LIMITS.maxBytes} bytes after decompression`);
    } finally {
      transport.close();
    }
  });

  test("default: gzip, deflate and br bodies under the cap are decoded", async () => {
    const json = Buffer.from(JSON.stringify({ ok: [1, 2, 3] }));
    const encodings = {
      gzip: zlib.gzipSync(json),
      deflate: zlib.deflateSync(json),
      br: zlib.brotliCompressSync(json),
    };
    let current: keyof typeof encodings = "gzip";
    server = await startHostileServer(() => ({
      headers: { "content-encoding": current },
      body: encodings[current],
    }));
    const transport = createHttpTransport({ baseUrl: server.url });
    try {
      for (const enc of Object.keys(encodings) as Array<keyof typeof encodings>) {
        current = enc;
        const r = await transport.postJson("/info", {});
        expect(r.json, enc).toEqual({ ok: [1, 2, 3] });
      }
    } finally {
      transport.close();
    }
  });
});

describe("an uncompressed body read as it comes", () => {
  /** A server that answers with `write(res)`: chunked bodies, cut-off bodies. */
  async function rawServer(write: (res: http.ServerResponse) => void) {
    const srv = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => write(res));
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const { port } = srv.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => new Promise<void>((r) => srv.close(() => r())),
    };
  }

  test("behavior: a chunked body (no Content-Length) is refused once it passes the cap, and the read stops there", async () => {
    let sent = 0;
    const srv = await rawServer((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      // 4 MiB in 64 KiB chunks, far past the exchange's 1 MiB cap
      const more = () => {
        while (sent < 4 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end("null");
      };
      res.on("close", () => undefined);
      more();
    });
    const transport = createHttpTransport({ baseUrl: srv.url });
    try {
      const e = (await failure(transport.postJson("/exchange", {}))) as HyperliquidApiError;
      expect(e.kind).toBe("malformed_response");
      expect(e.message).toContain(`exceeds ${EXCHANGE_BODY_LIMITS.maxBytes} bytes`);
    } finally {
      transport.close();
      await srv.close();
    }
  });

  test("behavior: a body cut off before its Content-Length is a transport failure, not a hang", async () => {
    const srv = await rawServer((res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"status":"ok","resp');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    // A time-out far past the test's own: only the cut itself can end the call (a hang fails the test).
    const transport = createHttpTransport({ baseUrl: srv.url, timeoutMs: 600_000 });
    try {
      const e = (await failure(transport.postJson("/exchange", {}))) as HyperliquidApiError;
      expect(e.kind).toBe("transport");
      expect(e.message).not.toMatch(/time-?out|timed out/i);
    } finally {
      transport.close();
      await srv.close();
    }
  });

  test("default: a body in many small chunks is put back together", async () => {
    const text = JSON.stringify({ status: "ok", response: { type: "default", data: "x".repeat(5_000) } });
    const srv = await rawServer((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      let i = 0;
      const next = () => {
        if (i >= text.length) return void res.end();
        res.write(text.slice(i, i + 97));
        i += 97;
        setImmediate(next);
      };
      next();
    });
    const transport = createHttpTransport({ baseUrl: srv.url });
    try {
      const r = await transport.postJson("/info", {});
      expect(r.bodyText).toBe(text);
    } finally {
      transport.close();
      await srv.close();
    }
  });
});

describe("the EVM JSON-RPC client", () => {
  test("behavior: a 1 MiB gzip expanding to 1 GiB is EvmMalformedResponseError at the cap", async () => {
    const bomb = await gzipBomb(1024 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1.1 * 1024 * 1024);
    server = await startHostileServer(() => ({ headers: { "content-encoding": "gzip" }, body: bomb }));
    const client = new EvmClient({ rpcUrl: `${server.url}/evm` });
    const rssBefore = process.memoryUsage().rss;
    try {
      const e = await failure(client.blockNumber());
      expect(e).toBeInstanceOf(EvmMalformedResponseError);
      expect((e as Error).message).toContain("after decompression");
      // Read and dropped at the cap: nowhere near the 1 GiB the bomb expands to.
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
    } finally {
      client.close();
    }
  }, 60_000);

  test("behavior: an 8 MB nested array from the RPC is refused before JSON.parse", async () => {
    const body = nestedArray(8_000_000);
    server = await startHostileServer(() => ({ body }));
    const client = new EvmClient({ rpcUrl: `${server.url}/evm` });
    try {
      const e = await failure(client.blockNumber());
      expect(e).toBeInstanceOf(EvmMalformedResponseError);
      expect((e as Error).message).toMatch(/nested deeper than 64 levels/);
    } finally {
      client.close();
    }
  });
});
